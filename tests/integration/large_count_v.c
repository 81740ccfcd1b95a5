/*
 * The v and w collectives' large-count forms with displacements beyond
 * INT_MAX (8 GiB into sparse buffers: only the pages holding data are
 * touched), blocking, nonblocking and persistent: gatherv (MPI_IN_PLACE at
 * the root too), scatterv, allgatherv, alltoallv, alltoallw (byte
 * displacements; both in place too), the neighborhood allgatherv and alltoallv on a ring.
 * Members mix the forms: the root of a gatherv takes the typed path, the
 * others their int one. Reduce-scatter of a vector longer than the split
 * threshold (lowered by FTMPI_TEST_SPLIT_ABOVE, so the path a vector over
 * INT_MAX takes runs on small data): int and MPI_Count forms, in place,
 * nonblocking, persistent, the block form, and a user op that must see the
 * user's datatype. On an inter-communicator (at 3 ranks): allgatherv and
 * reduce-scatter likewise. A derived type freed while a nonblocking alltoallw that
 * uses it runs. A negative count among counts beyond INT_MAX is
 * MPI_ERR_COUNT. The datatype constructors with counts, strides and
 * displacements beyond INT_MAX: data through them, their contents
 * (MPI_Type_get_envelope_c / _contents_c; the int forms refuse them).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#include "testlib.h"

#define FAR (((MPI_Aint)1 << 31) + 17) /* an element displacement beyond INT_MAX */
#define SPAN ((size_t)(FAR + 4096) * sizeof(int))

static int *sparse(void) {
    void *p = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %zu bytes failed", SPAN);
    return p;
}

static void clear(int *b) { memset(b + FAR, 0, 4096 * sizeof(int)); }

enum form { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *form_name[] = {"blocking", "nonblocking", "persistent"};

/* Completes what a form started (a persistent request: started twice). */
static void finish(enum form f, MPI_Request *r) {
    if (f == BLOCKING) return;
    if (f == PERSISTENT) {
        MPI_OK(MPI_Start(r));
        MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Start(r));
    }
    MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
    if (f == PERSISTENT) MPI_OK(MPI_Request_free(r));
}

static void gatherv(int rank, int size, int *far) {
    const int root = 1 % size;
    int mine[16];
    for (int j = 0; j < 5 + rank; ++j) mine[j] = 1000 * rank + j;
    MPI_Count counts[16];
    MPI_Aint displs[16];
    for (int r = 0; r < size; ++r) counts[r] = 5 + r, displs[r] = FAR + 100 * r;
    for (int f = BLOCKING; f <= PERSISTENT; ++f)
        for (int in_place = 0; in_place < 2; ++in_place) {
            MPI_Request q;
            if (rank == root) clear(far);
            const void *send = mine;
            if (rank == root && in_place) {
                for (int j = 0; j < 5 + rank; ++j) far[FAR + 100 * rank + j] = mine[j];
                send = MPI_IN_PLACE;
            }
            if (f == BLOCKING)
                MPI_OK(MPI_Gatherv_c(send, 5 + rank, MPI_INT, far, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
            else if (f == NONBLOCKING)
                MPI_OK(MPI_Igatherv_c(send, 5 + rank, MPI_INT, far, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &q));
            else
                MPI_OK(MPI_Gatherv_init_c(send, 5 + rank, MPI_INT, far, counts, displs, MPI_INT, root, MPI_COMM_WORLD,
                                          MPI_INFO_NULL, &q));
            finish(f, &q);
            if (rank != root) continue;
            for (int r = 0; r < size; ++r)
                for (int j = 0; j < 5 + r; ++j)
                    CHECK(far[FAR + 100 * r + j] == 1000 * r + j, "gatherv_c (%s%s): block %d [%d] = %d", form_name[f],
                          in_place ? ", in place" : "", r, j, far[FAR + 100 * r + j]);
        }
}

static void scatterv(int rank, int size, int *far) {
    MPI_Count counts[16];
    MPI_Aint displs[16];
    for (int r = 0; r < size; ++r) {
        counts[r] = 3 + r, displs[r] = FAR + 100 * r;
        if (rank == 0)
            for (int j = 0; j < 3 + r; ++j) far[FAR + 100 * r + j] = 7000 + 10 * r + j;
    }
    for (int f = BLOCKING; f <= PERSISTENT; ++f) {
        int got[16] = {0};
        MPI_Request q;
        if (f == BLOCKING)
            MPI_OK(MPI_Scatterv_c(far, counts, displs, MPI_INT, got, 3 + rank, MPI_INT, 0, MPI_COMM_WORLD));
        else if (f == NONBLOCKING)
            MPI_OK(MPI_Iscatterv_c(far, counts, displs, MPI_INT, got, 3 + rank, MPI_INT, 0, MPI_COMM_WORLD, &q));
        else
            MPI_OK(MPI_Scatterv_init_c(far, counts, displs, MPI_INT, got, 3 + rank, MPI_INT, 0, MPI_COMM_WORLD,
                                       MPI_INFO_NULL, &q));
        finish(f, &q);
        for (int j = 0; j < 3 + rank; ++j)
            CHECK(got[j] == 7000 + 10 * rank + j, "scatterv_c (%s): [%d] = %d", form_name[f], j, got[j]);
    }
}

static void allgatherv(int rank, int size, int *far) {
    int mine[16];
    for (int j = 0; j < 2 + rank; ++j) mine[j] = 500 * rank + j;
    MPI_Count counts[16];
    MPI_Aint displs[16];
    for (int r = 0; r < size; ++r) counts[r] = 2 + r, displs[r] = FAR + 100 * r;
    for (int f = BLOCKING; f <= PERSISTENT; ++f) {
        MPI_Request q;
        clear(far);
        if (f == BLOCKING)
            MPI_OK(MPI_Allgatherv_c(mine, 2 + rank, MPI_INT, far, counts, displs, MPI_INT, MPI_COMM_WORLD));
        else if (f == NONBLOCKING)
            MPI_OK(MPI_Iallgatherv_c(mine, 2 + rank, MPI_INT, far, counts, displs, MPI_INT, MPI_COMM_WORLD, &q));
        else
            MPI_OK(MPI_Allgatherv_init_c(mine, 2 + rank, MPI_INT, far, counts, displs, MPI_INT, MPI_COMM_WORLD,
                                         MPI_INFO_NULL, &q));
        finish(f, &q);
        for (int r = 0; r < size; ++r)
            for (int j = 0; j < 2 + r; ++j)
                CHECK(far[FAR + 100 * r + j] == 500 * r + j, "allgatherv_c (%s): block %d [%d] = %d", form_name[f], r,
                      j, far[FAR + 100 * r + j]);
    }
}

/* Rank a sends rank b 2 + a + b ints: 10000 a + 100 b + j. */
static void alltoall(int rank, int size, int *sfar, int *rfar, int w) {
    MPI_Count sc[16], rc[16];
    MPI_Aint sd[16], rd[16];
    MPI_Datatype types[16];
    for (int p = 0; p < size; ++p) {
        sc[p] = rc[p] = 2 + rank + p;
        sd[p] = rd[p] = (FAR + 100 * p) * (w ? (MPI_Aint)sizeof(int) : 1);
        types[p] = MPI_INT;
        for (int j = 0; j < 2 + rank + p; ++j) sfar[FAR + 100 * p + j] = 10000 * rank + 100 * p + j;
    }
    for (int f = BLOCKING; f <= PERSISTENT; ++f) {
        MPI_Request q;
        clear(rfar);
        if (w) {
            if (f == BLOCKING) MPI_OK(MPI_Alltoallw_c(sfar, sc, sd, types, rfar, rc, rd, types, MPI_COMM_WORLD));
            else if (f == NONBLOCKING)
                MPI_OK(MPI_Ialltoallw_c(sfar, sc, sd, types, rfar, rc, rd, types, MPI_COMM_WORLD, &q));
            else
                MPI_OK(
                    MPI_Alltoallw_init_c(sfar, sc, sd, types, rfar, rc, rd, types, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        } else {
            if (f == BLOCKING) MPI_OK(MPI_Alltoallv_c(sfar, sc, sd, MPI_INT, rfar, rc, rd, MPI_INT, MPI_COMM_WORLD));
            else if (f == NONBLOCKING)
                MPI_OK(MPI_Ialltoallv_c(sfar, sc, sd, MPI_INT, rfar, rc, rd, MPI_INT, MPI_COMM_WORLD, &q));
            else
                MPI_OK(MPI_Alltoallv_init_c(sfar, sc, sd, MPI_INT, rfar, rc, rd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                                            &q));
        }
        finish(f, &q);
        for (int p = 0; p < size; ++p)
            for (int j = 0; j < 2 + rank + p; ++j)
                CHECK(rfar[FAR + 100 * p + j] == 10000 * p + 100 * rank + j, "alltoall%s_c (%s): from %d [%d] = %d",
                      w ? "w" : "v", form_name[f], p, j, rfar[FAR + 100 * p + j]);
    }
    /* In place: the receive buffer holds what goes out (only the bytes its
       blocks span are copied aside, not the 8 GiB before them). */
    for (int p = 0; p < size; ++p)
        for (int j = 0; j < 2 + rank + p; ++j) rfar[FAR + 100 * p + j] = 10000 * rank + 100 * p + j;
    if (w) MPI_OK(MPI_Alltoallw_c(MPI_IN_PLACE, NULL, NULL, NULL, rfar, rc, rd, types, MPI_COMM_WORLD));
    else MPI_OK(MPI_Alltoallv_c(MPI_IN_PLACE, NULL, NULL, MPI_INT, rfar, rc, rd, MPI_INT, MPI_COMM_WORLD));
    for (int p = 0; p < size; ++p)
        for (int j = 0; j < 2 + rank + p; ++j)
            CHECK(rfar[FAR + 100 * p + j] == 10000 * p + 100 * rank + j, "alltoall%s_c in place: from %d [%d] = %d",
                  w ? "w" : "v", p, j, rfar[FAR + 100 * p + j]);
}

/* A periodic ring: in-neighbours and out-neighbours are (left, right). */
static void neighbors(int rank, int size, int *sfar, int *rfar) {
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    MPI_Count c[2] = {4, 4};
    MPI_Aint d[2] = {FAR, FAR + 100};
    for (int b = 0; b < 2; ++b)
        for (int j = 0; j < 4; ++j) sfar[FAR + 100 * b + j] = 100 * rank + 10 * b + j;
    for (int f = BLOCKING; f <= PERSISTENT; ++f) {
        MPI_Request q;
        clear(rfar);
        if (f == BLOCKING) MPI_OK(MPI_Neighbor_alltoallv_c(sfar, c, d, MPI_INT, rfar, c, d, MPI_INT, ring));
        else if (f == NONBLOCKING)
            MPI_OK(MPI_Ineighbor_alltoallv_c(sfar, c, d, MPI_INT, rfar, c, d, MPI_INT, ring, &q));
        else MPI_OK(MPI_Neighbor_alltoallv_init_c(sfar, c, d, MPI_INT, rfar, c, d, MPI_INT, ring, MPI_INFO_NULL, &q));
        finish(f, &q);
        /* From the left its block for the right (1), from the right its block 0. */
        for (int j = 0; j < 4; ++j) {
            CHECK(rfar[FAR + j] == 100 * left + 10 + j, "neighbor_alltoallv_c (%s): left [%d] = %d", form_name[f], j,
                  rfar[FAR + j]);
            CHECK(rfar[FAR + 100 + j] == 100 * right + j, "neighbor_alltoallv_c (%s): right [%d] = %d", form_name[f], j,
                  rfar[FAR + 100 + j]);
        }
        clear(rfar);
        if (f == BLOCKING) MPI_OK(MPI_Neighbor_allgatherv_c(sfar + FAR, 4, MPI_INT, rfar, c, d, MPI_INT, ring));
        else if (f == NONBLOCKING)
            MPI_OK(MPI_Ineighbor_allgatherv_c(sfar + FAR, 4, MPI_INT, rfar, c, d, MPI_INT, ring, &q));
        else
            MPI_OK(
                MPI_Neighbor_allgatherv_init_c(sfar + FAR, 4, MPI_INT, rfar, c, d, MPI_INT, ring, MPI_INFO_NULL, &q));
        finish(f, &q);
        for (int j = 0; j < 4; ++j)
            CHECK(rfar[FAR + j] == 100 * left + j && rfar[FAR + 100 + j] == 100 * right + j,
                  "neighbor_allgatherv_c (%s): [%d] = %d, %d", form_name[f], j, rfar[FAR + j], rfar[FAR + 100 + j]);
    }
    MPI_OK(MPI_Comm_free(&ring));
}

static int op_saw_other_type;
static void add_ints(void *in, void *inout, int *len, MPI_Datatype *type) {
    if (*type != MPI_INT) op_saw_other_type = 1;
    for (int i = 0; i < *len; ++i) ((int *)inout)[i] += ((int *)in)[i];
}

/* Member r's block: counts[r] = 10 + 5 r elements; every member holds
   1000 rank + i at element i, so block r's sum at j is 1000 (0 + ... + n-1)
   + n (offset of r + j). The vector (45 at 3 members) is longer than the
   split threshold (40). */
static void reduce_scatter(int rank, int size) {
    int counts[16], total = 0, off = 0;
    MPI_Count ccounts[16];
    for (int r = 0; r < size; ++r) {
        counts[r] = 10 + 5 * r, ccounts[r] = counts[r];
        if (r < rank) off += counts[r];
        total += counts[r];
    }
    int *v = malloc(sizeof(int) * (size_t)total), *out = malloc(sizeof(int) * (size_t)total);
    MPI_Op user;
    MPI_OK(MPI_Op_create(add_ints, 1, &user));
    for (int k = 0; k < 9; ++k) {
        const MPI_Op op = k == 8 ? user : MPI_SUM;
        const int in_place = k == 1;
        for (int i = 0; i < total; ++i) v[i] = 1000 * rank + i, out[i] = in_place ? v[i] : -1;
        MPI_Request q;
        const void *send = in_place ? MPI_IN_PLACE : v;
        switch (k) {
        case 0: MPI_OK(MPI_Reduce_scatter(send, out, counts, MPI_INT, op, MPI_COMM_WORLD)); break;
        case 1: MPI_OK(MPI_Reduce_scatter_c(send, out, ccounts, MPI_INT, op, MPI_COMM_WORLD)); break;
        case 2: MPI_OK(MPI_Reduce_scatter_c(send, out, ccounts, MPI_INT, op, MPI_COMM_WORLD)); break;
        case 3: MPI_OK(MPI_Ireduce_scatter(send, out, counts, MPI_INT, op, MPI_COMM_WORLD, &q)); break;
        case 4: MPI_OK(MPI_Ireduce_scatter_c(send, out, ccounts, MPI_INT, op, MPI_COMM_WORLD, &q)); break;
        case 5:
            MPI_OK(MPI_Reduce_scatter_init_c(send, out, ccounts, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
            break;
        case 6:
            MPI_OK(MPI_Reduce_scatter_init(send, out, counts, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
            break;
        default: MPI_OK(MPI_Reduce_scatter_c(send, out, ccounts, MPI_INT, op, MPI_COMM_WORLD)); break;
        }
        finish(k == 3 || k == 4 ? NONBLOCKING : k == 5 || k == 6 ? PERSISTENT : BLOCKING, &q);
        for (int j = 0; j < counts[rank]; ++j) {
            const int want = 1000 * (size * (size - 1) / 2) + size * (off + j);
            CHECK(out[j] == want, "reduce_scatter case %d: [%d] = %d, expected %d", k, j, out[j], want);
        }
    }
    CHECK(!op_saw_other_type, "the user op was given another datatype than MPI_INT");
    /* The block form: 15 per member, 45 in all. */
    for (int i = 0; i < 15 * size; ++i) v[i] = 1000 * rank + i;
    MPI_OK(MPI_Reduce_scatter_block_c(v, out, 15, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int j = 0; j < 15; ++j)
        CHECK(out[j] == 1000 * (size * (size - 1) / 2) + size * (15 * rank + j), "reduce_scatter_block_c [%d] = %d", j,
              out[j]);
    MPI_Op_free(&user);
    free(v);
    free(out);
}

/* Sends one element of t from far to itself, received as n ints, each the
   value of the element it came from (far[i] = i - FAR, where set). */
static void self_copy(MPI_Datatype t, int *far, const MPI_Aint *at, int n, const char *what) {
    int got[16] = {0}, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 0; i < n; ++i) far[at[i]] = (int)(at[i] % 100000) + 1;
    MPI_OK(MPI_Sendrecv(far, 1, t, me, 5, got, n, MPI_INT, me, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i)
        CHECK(got[i] == (int)(at[i] % 100000) + 1, "%s: int %d is %d, expected %d", what, i, got[i],
              (int)(at[i] % 100000) + 1);
}

/* The envelope and contents of a type made with counts beyond INT_MAX:
   only the _c forms report them. */
static void check_contents(MPI_Datatype t, int combiner, const MPI_Count *large, int nlarge, const char *what) {
    MPI_Count ni = -1, na = -1, nl = -1, nd = -1;
    int comb = -1;
    MPI_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == combiner && ni == 0 && na == 0 && nl == nlarge, "%s: envelope_c %d %lld %lld %lld", what, comb,
          (long long)ni, (long long)na, (long long)nl);
    MPI_Count got[8] = {0};
    MPI_Datatype types[4];
    MPI_OK(MPI_Type_get_contents_c(t, 0, 0, 8, 4, NULL, NULL, got, types));
    for (int i = 0; i < nlarge; ++i)
        CHECK(got[i] == large[i], "%s: large count %d is %lld, expected %lld", what, i, (long long)got[i],
              (long long)large[i]);
    for (MPI_Count i = 0; i < nd; ++i)
        if (types[i] != MPI_INT && types[i] != MPI_BYTE && types[i] != MPI_DOUBLE) MPI_Type_free(&types[i]);
    int a, b, c, d;
    int rc = MPI_Type_get_envelope(t, &a, &b, &c, &d);
    CHECK(tl_class_of(rc) == MPI_ERR_TYPE, "%s: the int MPI_Type_get_envelope gave %d", what, rc);
}

/* Datatype constructors with counts, strides and displacements beyond
   INT_MAX, moving data through a sparse buffer. */
static void constructors(int *far) {
    MPI_Datatype t;
    /* Two blocks of 3 ints FAR ints apart. */
    MPI_OK(MPI_Type_vector_c(2, 3, FAR, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    const MPI_Aint vec_at[6] = {0, 1, 2, FAR, FAR + 1, FAR + 2};
    self_copy(t, far, vec_at, 6, "vector_c");
    const MPI_Count vec_large[3] = {2, 3, FAR};
    check_contents(t, MPI_COMBINER_VECTOR, vec_large, 3, "vector_c");
    MPI_Type_free(&t);
    /* Small values too: a _c constructor's counts are large counts. */
    MPI_OK(MPI_Type_vector_c(2, 3, 4, MPI_INT, &t));
    const MPI_Count small_large[3] = {2, 3, 4};
    check_contents(t, MPI_COMBINER_VECTOR, small_large, 3, "vector_c of small values");
    MPI_Datatype r;
    MPI_OK(MPI_Type_create_resized_c(t, 0, 64, &r));
    const MPI_Count resized_large[2] = {0, 64};
    check_contents(r, MPI_COMBINER_RESIZED, resized_large, 2, "resized_c");
    MPI_Type_free(&r);
    MPI_Type_free(&t);
    /* hvector: the same in bytes. */
    MPI_OK(MPI_Type_create_hvector_c(2, 3, FAR * (MPI_Count)sizeof(int), MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    self_copy(t, far, vec_at, 6, "hvector_c");
    MPI_Type_free(&t);
    /* indexed: 2 ints at FAR + 10, 1 at 4. */
    const MPI_Count lens[2] = {2, 1}, idx[2] = {FAR + 10, 4};
    MPI_OK(MPI_Type_indexed_c(2, lens, idx, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    const MPI_Aint idx_at[3] = {FAR + 10, FAR + 11, 4};
    self_copy(t, far, idx_at, 3, "indexed_c");
    const MPI_Count idx_large[5] = {2, 2, 1, FAR + 10, 4};
    check_contents(t, MPI_COMBINER_INDEXED, idx_large, 5, "indexed_c");
    MPI_Type_free(&t);
    /* hindexed, indexed_block, hindexed_block, struct: the same places. */
    const MPI_Count bytes[2] = {(FAR + 10) * 4, 16};
    MPI_OK(MPI_Type_create_hindexed_c(2, lens, bytes, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    self_copy(t, far, idx_at, 3, "hindexed_c");
    MPI_Type_free(&t);
    const MPI_Count one[2] = {FAR + 20, 7};
    MPI_OK(MPI_Type_create_indexed_block_c(2, 1, one, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    const MPI_Aint block_at[2] = {FAR + 20, 7};
    self_copy(t, far, block_at, 2, "indexed_block_c");
    MPI_Type_free(&t);
    const MPI_Count one_bytes[2] = {(FAR + 20) * 4, 28};
    MPI_OK(MPI_Type_create_hindexed_block_c(2, 1, one_bytes, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    self_copy(t, far, block_at, 2, "hindexed_block_c");
    MPI_Type_free(&t);
    const MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
    MPI_OK(MPI_Type_create_struct_c(2, lens, bytes, ints, &t));
    MPI_OK(MPI_Type_commit(&t));
    self_copy(t, far, idx_at, 3, "struct_c");
    MPI_Type_free(&t);
    /* A struct with a block beyond INT_MAX (no data). */
    const MPI_Count struct_lens[2] = {FAR, 1}, struct_at[2] = {0, FAR + 8};
    const MPI_Datatype mixed[2] = {MPI_BYTE, MPI_DOUBLE};
    MPI_OK(MPI_Type_create_struct_c(2, struct_lens, struct_at, mixed, &t));
    MPI_Count struct_size = 0;
    MPI_OK(MPI_Type_size_c(t, &struct_size));
    CHECK(struct_size == FAR + 8, "struct_c beyond INT_MAX: size %lld", (long long)struct_size);
    const MPI_Count struct_large[5] = {2, FAR, 1, 0, FAR + 8};
    check_contents(t, MPI_COMBINER_STRUCT, struct_large, 5, "struct_c");
    MPI_Type_free(&t);
}

/* Constructors with sizes beyond INT_MAX (no data), and their contents. */
static void large_types(int *far) {
    MPI_Datatype t;
    const MPI_Count one[2] = {FAR + 20, 7};
    /* Sizes past INT_MAX (no data): a contiguous type of an uncommitted
       type, and a block length beyond INT_MAX. */
    MPI_Datatype pair, big;
    MPI_OK(MPI_Type_contiguous(2, MPI_BYTE, &pair));
    MPI_OK(MPI_Type_contiguous_c(FAR, pair, &big));
    MPI_Count size = 0;
    MPI_OK(MPI_Type_size_c(big, &size));
    CHECK(size == 2 * FAR, "contiguous_c of an uncommitted type: size %lld", (long long)size);
    const MPI_Count count_large[1] = {FAR};
    check_contents(big, MPI_COMBINER_CONTIGUOUS, count_large, 1, "contiguous_c");
    MPI_Type_free(&big);
    MPI_Type_free(&pair);
    MPI_OK(MPI_Type_create_indexed_block_c(2, FAR, one, MPI_BYTE, &big));
    MPI_OK(MPI_Type_size_c(big, &size));
    CHECK(size == 2 * FAR, "indexed_block_c of blocks beyond INT_MAX: size %lld", (long long)size);
    MPI_Type_free(&big);
    /* A subarray of a 1 x FAR array: 3 ints at FAR - 10. */
    const MPI_Count sizes[2] = {1, FAR}, subsizes[2] = {1, 3}, starts[2] = {0, FAR - 10};
    MPI_OK(MPI_Type_create_subarray_c(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    const MPI_Aint sub_at[3] = {FAR - 10, FAR - 9, FAR - 8};
    self_copy(t, far, sub_at, 3, "subarray_c");
    MPI_Count ni = 0, na = 0, nl = 0, nd = 0, got[6] = {0};
    int comb = 0, order_etc[2] = {0};
    MPI_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 2 && na == 0 && nl == 6 && nd == 1, "subarray_c: envelope_c");
    MPI_Datatype old;
    MPI_OK(MPI_Type_get_contents_c(t, 2, 0, 6, 1, order_etc, NULL, got, &old));
    CHECK(order_etc[0] == 2 && order_etc[1] == MPI_ORDER_C && got[1] == FAR && got[5] == FAR - 10 && old == MPI_INT,
          "subarray_c: contents %d %d %lld %lld", order_etc[0], order_etc[1], (long long)got[1], (long long)got[5]);
    MPI_Type_free(&t);
    /* A darray of one process over FAR bytes (no data). */
    const MPI_Count gsizes[1] = {FAR};
    const int distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {1};
    MPI_OK(MPI_Type_create_darray_c(1, 0, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_BYTE, &t));
    MPI_OK(MPI_Type_size_c(t, &size));
    MPI_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb));
    CHECK(size == FAR && comb == MPI_COMBINER_DARRAY && ni == 7 && nl == 1, "darray_c: size %lld, %lld ints",
          (long long)size, (long long)ni);
    MPI_Type_free(&t);
    MPI_Count neg[2] = {FAR, -1};
    int rc = MPI_Type_indexed_c(2, neg, one, MPI_INT, &big);
    CHECK(tl_class_of(rc) == MPI_ERR_ARG, "a negative block length among large ones: %d", rc);
}

/* An inter-communicator between the even and the odd ranks: an allgatherv
   beyond INT_MAX, and a reduce-scatter of a vector longer than the split
   threshold (45: 20 + 25 in the even group, 45 in the odd one). */
static void inter(int rank, int size, int *far) {
    MPI_Comm half, ic;
    const int even = rank % 2 == 0;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, !even, rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, even ? 1 : 0, 9, &ic));
    int lrank, lsize, rsize;
    MPI_Comm_rank(half, &lrank);
    MPI_Comm_size(half, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    /* Remote rank j is world rank 2 j + 1 (for the even group) or 2 j. */
    const int other = even ? 1 : 0;
    int mine[16];
    for (int j = 0; j < 3 + rank; ++j) mine[j] = 100 * rank + j;
    MPI_Count counts[16];
    MPI_Aint displs[16];
    for (int j = 0; j < rsize; ++j) counts[j] = 3 + 2 * j + other, displs[j] = FAR + 100 * j;
    clear(far);
    MPI_OK(MPI_Allgatherv_c(mine, 3 + rank, MPI_INT, far, counts, displs, MPI_INT, ic));
    for (int j = 0; j < rsize; ++j)
        for (int k = 0; k < counts[j]; ++k)
            CHECK(far[FAR + 100 * j + k] == 100 * (2 * j + other) + k, "inter allgatherv_c: block %d [%d] = %d", j, k,
                  far[FAR + 100 * j + k]);
    MPI_Count rs[2] = {20, 25};
    if (!even || lsize == 1) rs[0] = 45;
    int v[45], out[45], off = lrank == 1 ? 20 : 0;
    for (int i = 0; i < 45; ++i) v[i] = 1000 * rank + i;
    MPI_OK(MPI_Reduce_scatter_c(v, out, rs, MPI_INT, MPI_SUM, ic));
    /* The other group's vectors summed: world ranks 1 (even group's result)
       or 0 and 2 (the odd one's). */
    const int senders = even ? 1 : (size + 1) / 2, base = even ? 1000 : 1000 * (size - 1 == 2 ? 2 : 0);
    for (int j = 0; j < rs[lrank]; ++j)
        CHECK(out[j] == base + senders * (off + j), "inter reduce_scatter_c [%d] = %d, expected %d", j, out[j],
              base + senders * (off + j));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&half));
}

/* A derived type freed by the user while the alltoallw using it runs. */
static void freed_type(int rank, int size) {
    MPI_Datatype pair;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MPI_OK(MPI_Type_commit(&pair));
    int s[32], r[32], c[16], d[16];
    MPI_Datatype t[16];
    for (int p = 0; p < size; ++p) {
        c[p] = 1, d[p] = (int)(2 * p * sizeof(int)), t[p] = pair;
        s[2 * p] = 100 * rank + p, s[2 * p + 1] = -(100 * rank + p), r[2 * p] = r[2 * p + 1] = 0;
    }
    MPI_Request q;
    MPI_OK(MPI_Ialltoallw(s, c, d, t, r, c, d, t, MPI_COMM_WORLD, &q));
    MPI_OK(MPI_Type_free(&pair));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int p = 0; p < size; ++p)
        CHECK(r[2 * p] == 100 * p + rank && r[2 * p + 1] == -(100 * p + rank), "ialltoallw with a freed type: %d %d",
              r[2 * p], r[2 * p + 1]);
}

int main(int argc, char **argv) {
    setenv("FTMPI_TEST_SPLIT_ABOVE", "40", 1);
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 3);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *a = sparse(), *b = sparse();
    gatherv(rank, size, a);
    scatterv(rank, size, a);
    allgatherv(rank, size, a);
    alltoall(rank, size, a, b, 0);
    alltoall(rank, size, a, b, 1);
    neighbors(rank, size, a, b);
    reduce_scatter(rank, size);
    freed_type(rank, size);
    constructors(a);
    large_types(a);
    if (size == 3) inter(rank, size, a);
    /* Counts beyond INT_MAX with a negative one. */
    MPI_Count bad[16];
    MPI_Aint d[16];
    for (int r = 0; r < size; ++r) bad[r] = r == 0 ? ((MPI_Count)1 << 32) : -1, d[r] = 0;
    int rc = MPI_Alltoallv_c(a, bad, d, MPI_INT, b, bad, d, MPI_INT, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPI_ERR_COUNT, "a negative count among large ones: %d", rc);
    munmap(a, SPAN);
    munmap(b, SPAN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("large_count_v: ok\n");
    MPI_Finalize();
    return 0;
}
