/*
 * MPI_BOTTOM as the buffer of every kind of call, the data's absolute
 * addresses in the datatypes (or, for MPI_Neighbor_alltoallw, in the MPI_Aint
 * displacements). Needs nprocs >= 2.
 *
 *   coll     Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v,w),
 *            Reduce, Allreduce, Reduce_scatter_block, Scan, Exscan,
 *            Reduce_local; Ibcast, Ialltoallw, Iallreduce.
 *   neighbor Neighbor_allgather, Neighbor_alltoall, Neighbor_alltoallw (with
 *            absolute types, and with predefined types at absolute MPI_Aint
 *            displacements), Ineighbor_alltoallw, on a ring.
 *   p2p      Sendrecv, Isend/Irecv.
 *   rma      Put, Get and Accumulate with the origin at MPI_BOTTOM.
 *   io       File_write_at/read_at with MPI_BOTTOM.
 *   errors   still MPI_ERR_BUFFER where data would start at address 0:
 *            Send(MPI_BOTTOM, 2, MPI_INT), Alltoallw(MPI_BOTTOM, MPI_INT
 *            at displacement 0), Neighbor_alltoallw likewise, Put.
 */
#define _XOPEN_SOURCE 700 /* mkstemp */
#include <unistd.h>

#include "testlib.h"

static int rank, size;

/* A type of n elements of `base` at the absolute address of p. */
static MPI_Datatype abs_type(const void *p, int n, MPI_Datatype base) {
    MPI_Aint a;
    MPI_Datatype t;
    MPI_OK(MPI_Get_address(p, &a));
    MPI_OK(MPI_Type_create_hindexed(1, &n, &a, base, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

static void fill(int *a, int n, int base) {
    for (int i = 0; i < n; ++i) a[i] = base + i;
}

#define N 4 /* ints per rank */

/* Gatherv, Scatterv, Allgatherv and Alltoallv: displacements in extents of r1. */
static void coll_vector(int *sb, int *rb, MPI_Datatype s1, MPI_Datatype r1, size_t ranks) {
    int *counts = malloc(sizeof(int) * ranks), *displs = malloc(sizeof(int) * ranks);
    for (int r = 0; r < size; ++r) counts[r] = 1, displs[r] = size - 1 - r;
    memset(rb, 0xff, sizeof(int) * N * ranks);
    MPI_OK(MPI_Gatherv(MPI_BOTTOM, 1, s1, MPI_BOTTOM, counts, displs, r1, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; ++r) CHECK(rb[(size - 1 - r) * N] == 10 * r, "Gatherv: block of rank %d", r);
    /* Scatterv back */
    if (rank == 0) fill(sb, N * size, 500);
    fill(rb, N, -1);
    MPI_OK(MPI_Scatterv(MPI_BOTTOM, counts, displs, s1, MPI_BOTTOM, 1, r1, 0, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i) CHECK(rb[i] == 500 + (size - 1 - rank) * N + i, "Scatterv: rb[%d] = %d", i, rb[i]);
    /* Allgatherv */
    fill(sb, N, 20 * rank);
    memset(rb, 0xff, sizeof(int) * N * ranks);
    MPI_OK(MPI_Allgatherv(MPI_BOTTOM, 1, s1, MPI_BOTTOM, counts, displs, r1, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) CHECK(rb[(size - 1 - r) * N + 1] == 20 * r + 1, "Allgatherv: block of %d", r);
    /* Alltoallv */
    fill(sb, N * size, 1000 * rank);
    memset(rb, 0xff, sizeof(int) * N * ranks);
    int *zero = calloc(ranks, sizeof(int));
    for (int r = 0; r < size; ++r) displs[r] = r;
    MPI_OK(MPI_Alltoallv(MPI_BOTTOM, counts, displs, s1, MPI_BOTTOM, counts, displs, r1, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r)
        CHECK(rb[r * N + 2] == 1000 * r + rank * N + 2, "Alltoallv: from %d: %d", r, rb[r * N + 2]);
    free(zero);
    free(counts);
    free(displs);
}

/* Alltoallw (blocking and not): a type per peer holding its absolute address,
   displacement 0; and a predefined type at displacement 0: data at address 0. */
static void coll_alltoallw(int *sb, int *rb, size_t ranks) {
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * ranks), *rt = malloc(sizeof(MPI_Datatype) * ranks);
    int *ones = malloc(sizeof(int) * ranks), *zeros = calloc(ranks, sizeof(int));
    for (int r = 0; r < size; ++r) {
        st[r] = abs_type(sb + r * N, N, MPI_INT);
        rt[r] = abs_type(rb + (size - 1 - r) * N, N, MPI_INT);
        ones[r] = 1;
    }
    for (int nb = 0; nb < 2; ++nb) {
        fill(sb, N * size, 10000 * rank + 1000 * nb);
        memset(rb, 0xff, sizeof(int) * N * ranks);
        if (nb) {
            MPI_Request q;
            MPI_OK(MPI_Ialltoallw(MPI_BOTTOM, ones, zeros, st, MPI_BOTTOM, ones, zeros, rt, MPI_COMM_WORLD, &q));
            MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Alltoallw(MPI_BOTTOM, ones, zeros, st, MPI_BOTTOM, ones, zeros, rt, MPI_COMM_WORLD));
        }
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < N; ++i) {
                const int got = rb[(size - 1 - r) * N + i], want = 10000 * r + 1000 * nb + rank * N + i;
                CHECK(got == want, "%s: from %d item %d: %d, expected %d", nb ? "Ialltoallw" : "Alltoallw", r, i, got,
                      want);
            }
    }
    /* A predefined type at displacement 0 of MPI_BOTTOM: data at address 0. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype *ints = malloc(sizeof(MPI_Datatype) * ranks);
    for (int r = 0; r < size; ++r) ints[r] = MPI_INT;
    int rc = MPI_Alltoallw(MPI_BOTTOM, ones, zeros, ints, MPI_BOTTOM, ones, zeros, rt, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPI_ERR_BUFFER, "Alltoallw(MPI_BOTTOM, MPI_INT at 0) gave %d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    for (int r = 0; r < size; ++r) {
        MPI_OK(MPI_Type_free(&st[r]));
        MPI_OK(MPI_Type_free(&rt[r]));
    }
    free(ints);
    free(st);
    free(rt);
    free(ones);
    free(zeros);
}

/* The reductions, MPI_BOTTOM as their send or receive buffer. */
static void coll_reductions(int *sb, int *rb, MPI_Datatype s1, MPI_Datatype r1) {
    /* Reductions: sendbuf MPI_BOTTOM with s1 (absolute: sb); the receive
       buffer, of the same type, at MPI_BOTTOM + (rb - sb) = rb. */
    void *delta = (void *)((char *)rb - (char *)sb);
    fill(sb, N, rank);
    fill(rb, N, -1);
    MPI_OK(MPI_Reduce(MPI_BOTTOM, delta, 1, s1, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int i = 0; i < N; ++i) CHECK(rb[i] == size * i + size * (size - 1) / 2, "Reduce: rb[%d] = %d", i, rb[i]);
    fill(rb, N, rank);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, r1, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i)
        CHECK(rb[i] == size * i + size * (size - 1) / 2, "Allreduce in place: rb[%d] = %d", i, rb[i]);
    fill(sb, N, 3 * rank);
    MPI_OK(MPI_Allreduce(MPI_BOTTOM, delta, 1, s1, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i) CHECK(rb[i] == 3 * (size - 1) + i, "Allreduce: rb[%d] = %d", i, rb[i]);
    fill(sb, N, rank + 1);
    MPI_OK(MPI_Scan(MPI_BOTTOM, delta, 1, s1, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i)
        CHECK(rb[i] == (rank + 1) * i + (rank + 1) * (rank + 2) / 2, "Scan: rb[%d] = %d", i, rb[i]);
    fill(rb, N, -5);
    MPI_OK(MPI_Exscan(MPI_BOTTOM, delta, 1, s1, MPI_SUM, MPI_COMM_WORLD));
    if (rank > 0)
        for (int i = 0; i < N; ++i) CHECK(rb[i] == rank * i + rank * (rank + 1) / 2, "Exscan: rb[%d] = %d", i, rb[i]);
    fill(sb, N * size, 10 * rank);
    MPI_OK(MPI_Reduce_scatter_block(MPI_BOTTOM, delta, 1, s1, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i)
        CHECK(rb[i] == size * (rank * N + i) + 10 * size * (size - 1) / 2, "Reduce_scatter_block: rb[%d] = %d", i,
              rb[i]);
    fill(sb, N, 1);
    fill(rb, N, 2);
    MPI_OK(MPI_Reduce_local(MPI_BOTTOM, delta, 1, s1, MPI_PROD));
    for (int i = 0; i < N; ++i) CHECK(rb[i] == (1 + i) * (2 + i), "Reduce_local: rb[%d] = %d", i, rb[i]);
    {
        MPI_Request q;
        fill(rb, N, 2 * rank);
        MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, r1, MPI_MAX, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; ++i) CHECK(rb[i] == 2 * (size - 1) + i, "Iallreduce: rb[%d] = %d", i, rb[i]);
        fill(rb, N, rank == 0 ? 77 : -1);
        MPI_OK(MPI_Ibcast(MPI_BOTTOM, 1, r1, 0, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; ++i) CHECK(rb[i] == 77 + i, "Ibcast: rb[%d] = %d", i, rb[i]);
    }
}

static void part_coll(void) {
    const size_t ranks = (size_t)(size > 0 ? size : 1);
    int *sb = calloc(N * ranks, sizeof(int)), *rb = calloc(N * ranks, sizeof(int));
    MPI_Datatype s1 = abs_type(sb, N, MPI_INT), r1 = abs_type(rb, N, MPI_INT);

    /* Bcast from 1 */
    fill(rb, N, rank == 1 ? 100 : -1000);
    MPI_OK(MPI_Bcast(MPI_BOTTOM, 1, r1, 1, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i) CHECK(rb[i] == 100 + i, "Bcast: rb[%d] = %d", i, rb[i]);

    /* Gather to 0: block i at MPI_BOTTOM + i * extent(r1) = rb + i * N */
    fill(sb, N, 10 * rank);
    memset(rb, 0xff, sizeof(int) * N * ranks);
    MPI_OK(MPI_Gather(MPI_BOTTOM, 1, s1, MPI_BOTTOM, 1, r1, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < N; ++i)
                CHECK(rb[r * N + i] == 10 * r + i, "Gather: rb[%d][%d] = %d", r, i, rb[r * N + i]);

    /* Gatherv: displacements in extents of r1 */
    coll_vector(sb, rb, s1, r1, ranks);

    /* Scatter from 0 */
    if (rank == 0) fill(sb, N * size, 300);
    fill(rb, N, -1);
    MPI_OK(MPI_Scatter(MPI_BOTTOM, 1, s1, MPI_BOTTOM, 1, r1, 0, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i) CHECK(rb[i] == 300 + rank * N + i, "Scatter: rb[%d] = %d", i, rb[i]);

    /* Allgather, Alltoall */
    fill(sb, N, 7 * rank);
    memset(rb, 0xff, sizeof(int) * N * ranks);
    MPI_OK(MPI_Allgather(MPI_BOTTOM, 1, s1, MPI_BOTTOM, 1, r1, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) CHECK(rb[r * N + 3] == 7 * r + 3, "Allgather: from %d", r);
    fill(sb, N * size, 100 * rank);
    MPI_OK(MPI_Alltoall(MPI_BOTTOM, 1, s1, MPI_BOTTOM, 1, r1, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r)
        for (int i = 0; i < N; ++i)
            CHECK(rb[r * N + i] == 100 * r + rank * N + i, "Alltoall: from %d item %d: %d", r, i, rb[r * N + i]);

    /* Alltoallw (blocking and not): a type per peer holding its absolute address, displacement 0 */
    coll_alltoallw(sb, rb, ranks);

    coll_reductions(sb, rb, s1, r1);
    free(sb);
    free(rb);
    MPI_OK(MPI_Type_free(&s1));
    MPI_OK(MPI_Type_free(&r1));
}

/* On a periodic ring: neighbours left (index 0) and right (index 1). */
static void part_neighbor(void) {
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int sb[2 * N] = {0}, rb[2 * N] = {0};
    MPI_Datatype s1 = abs_type(sb, N, MPI_INT), r1 = abs_type(rb, N, MPI_INT);

    fill(sb, 2 * N, 100 * rank);
    memset(rb, 0xff, sizeof rb);
    MPI_OK(MPI_Neighbor_allgather(MPI_BOTTOM, 1, s1, MPI_BOTTOM, 1, r1, ring));
    for (int i = 0; i < N; ++i)
        CHECK(rb[i] == 100 * left + i && rb[N + i] == 100 * right + i, "Neighbor_allgather: item %d: %d %d", i, rb[i],
              rb[N + i]);
    memset(rb, 0xff, sizeof rb);
    MPI_OK(MPI_Neighbor_alltoall(MPI_BOTTOM, 1, s1, MPI_BOTTOM, 1, r1, ring));
    /* from the left: its block for its right neighbour (1); from the right: its block 0 */
    for (int i = 0; i < N; ++i)
        CHECK(rb[i] == 100 * left + N + i && rb[N + i] == 100 * right + i, "Neighbor_alltoall: item %d: %d %d", i,
              rb[i], rb[N + i]);

    int counts[2] = {1, 1};
    MPI_Aint zeros[2] = {0, 0};
    MPI_Datatype st[2] = {abs_type(sb, N, MPI_INT), abs_type(sb + N, N, MPI_INT)};
    MPI_Datatype rt[2] = {abs_type(rb + N, N, MPI_INT), abs_type(rb, N, MPI_INT)}; /* swapped on purpose */
    for (int nb = 0; nb < 2; ++nb) {
        fill(sb, 2 * N, 1000 * rank + 100 * nb);
        memset(rb, 0xff, sizeof rb);
        if (nb) {
            MPI_Request q;
            MPI_OK(MPI_Ineighbor_alltoallw(MPI_BOTTOM, counts, zeros, st, MPI_BOTTOM, counts, zeros, rt, ring, &q));
            MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, zeros, st, MPI_BOTTOM, counts, zeros, rt, ring));
        }
        for (int i = 0; i < N; ++i)
            CHECK(rb[N + i] == 1000 * left + 100 * nb + N + i && rb[i] == 1000 * right + 100 * nb + i,
                  "%s (absolute types): item %d: %d %d", nb ? "Ineighbor_alltoallw" : "Neighbor_alltoallw", i,
                  rb[N + i], rb[i]);
    }
    /* Predefined types, the absolute addresses in the MPI_Aint displacements. */
    int ncounts[2] = {N, N};
    MPI_Aint sd[2], rd[2];
    MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
    MPI_OK(MPI_Get_address(sb, &sd[0]));
    MPI_OK(MPI_Get_address(sb + N, &sd[1]));
    MPI_OK(MPI_Get_address(rb + N, &rd[0]));
    MPI_OK(MPI_Get_address(rb, &rd[1]));
    fill(sb, 2 * N, 10 * rank);
    memset(rb, 0xff, sizeof rb);
    MPI_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, ncounts, sd, ints, MPI_BOTTOM, ncounts, rd, ints, ring));
    for (int i = 0; i < N; ++i)
        CHECK(rb[N + i] == 10 * left + N + i && rb[i] == 10 * right + i,
              "Neighbor_alltoallw (absolute displacements): item %d: %d %d", i, rb[N + i], rb[i]);
    /* ... but MPI_INT at displacement 0 of MPI_BOTTOM is address 0. */
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    int rc = MPI_Neighbor_alltoallw(MPI_BOTTOM, ncounts, zeros, ints, MPI_BOTTOM, ncounts, rd, ints, ring);
    CHECK(tl_class_of(rc) == MPI_ERR_BUFFER, "Neighbor_alltoallw(MPI_BOTTOM, MPI_INT at 0) gave %d", rc);
    for (int k = 0; k < 2; ++k) {
        MPI_OK(MPI_Type_free(&st[k]));
        MPI_OK(MPI_Type_free(&rt[k]));
    }
    MPI_OK(MPI_Type_free(&s1));
    MPI_OK(MPI_Type_free(&r1));
    MPI_OK(MPI_Comm_free(&ring));
}

static void part_p2p_rma_io(void) {
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int sb[N] = {0}, rb[N] = {0}, wmem[N];
    MPI_Datatype s1 = abs_type(sb, N, MPI_INT), r1 = abs_type(rb, N, MPI_INT);
    fill(sb, N, 50 * rank);
    fill(rb, N, -1);
    MPI_OK(MPI_Sendrecv(MPI_BOTTOM, 1, s1, right, 3, MPI_BOTTOM, 1, r1, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) CHECK(rb[i] == 50 * left + i, "Sendrecv: rb[%d] = %d", i, rb[i]);
    {
        MPI_Request q[2];
        fill(rb, N, -1);
        MPI_OK(MPI_Irecv(MPI_BOTTOM, 1, r1, right, 4, MPI_COMM_WORLD, &q[0]));
        MPI_OK(MPI_Isend(MPI_BOTTOM, 1, s1, left, 4, MPI_COMM_WORLD, &q[1]));
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; ++i) CHECK(rb[i] == 50 * right + i, "Isend/Irecv: rb[%d] = %d", i, rb[i]);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(MPI_BOTTOM, 2, MPI_INT, right, 5, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPI_ERR_BUFFER, "Send(MPI_BOTTOM, 2, MPI_INT) gave %d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* RMA: Put to the right, Get from the left, Accumulate, origin at MPI_BOTTOM. */
    MPI_Win win;
    fill(wmem, N, -1);
    MPI_OK(MPI_Win_create(wmem, sizeof wmem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(MPI_BOTTOM, 1, s1, right, 0, N, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; ++i) CHECK(wmem[i] == 50 * left + i, "Put: wmem[%d] = %d", i, wmem[i]);
    fill(rb, N, -1);
    MPI_OK(MPI_Get(MPI_BOTTOM, 1, r1, left, 0, N, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; ++i) {
        const int l2 = (left + size - 1) % size;
        CHECK(rb[i] == 50 * l2 + i, "Get: rb[%d] = %d", i, rb[i]);
    }
    MPI_OK(MPI_Accumulate(MPI_BOTTOM, 1, s1, right, 0, N, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; ++i) CHECK(wmem[i] == 100 * left + 2 * i, "Accumulate: wmem[%d] = %d", i, wmem[i]);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    rc = MPI_Put(MPI_BOTTOM, N, MPI_INT, right, 0, N, MPI_INT, win);
    CHECK(tl_class_of(rc) == MPI_ERR_BUFFER, "Put(MPI_BOTTOM, N, MPI_INT) gave %d", rc);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_free(&win));

    /* I/O: write from MPI_BOTTOM, read into MPI_BOTTOM. */
    char path[64] = "";
    if (rank == 0) {
        snprintf(path, sizeof path, "/tmp/ftmpi-bottom-XXXXXX");
        const int fd = mkstemp(path);
        CHECK(fd >= 0, "mkstemp");
        close(fd);
    }
    MPI_OK(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    fill(sb, N, 7000 + 10 * rank);
    MPI_OK(MPI_File_write_at(fh, (MPI_Offset)rank * N * (MPI_Offset)sizeof(int), MPI_BOTTOM, 1, s1, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    fill(rb, N, -1);
    MPI_OK(MPI_File_read_at_all(fh, (MPI_Offset)right * N * (MPI_Offset)sizeof(int), MPI_BOTTOM, 1, r1,
                                MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) CHECK(rb[i] == 7000 + 10 * right + i, "File read: rb[%d] = %d", i, rb[i]);
    rc = MPI_File_write_at(fh, 0, MPI_BOTTOM, N, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(tl_class_of(rc) == MPI_ERR_BUFFER, "File_write_at(MPI_BOTTOM, N, MPI_INT) gave %d", rc);
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) unlink(path);
    MPI_OK(MPI_Type_free(&s1));
    MPI_OK(MPI_Type_free(&r1));
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    part_coll();
    part_neighbor();
    part_p2p_rma_io();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("bottom: all checks passed on %d ranks\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
