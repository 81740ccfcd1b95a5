/*
 * MPI 4.0's large-count (_c) functions at 2 ranks. With argument "big":
 * 3 GiB in one MPI_Send_c/MPI_Recv_c, counted back with MPI_Get_count_c,
 * MPI_Bcast_c of 2^31 + 3 bytes and MPI_Ibcast_c of 3 GiB (the built type
 * must outlive the call: a nonblocking collective's later rounds use it),
 * a contiguous type of over 2^31 elements, and an MPI_Gatherv_c of a
 * block of 2^31 + 3 bytes. With "kill": rank 1 dies,
 * and rank 0's MPI_Send_c of 3 GiB to it and MPI_Bcast_c fail with
 * MPI_ERR_PROC_FAILED. Always: the small-count forms give what their int
 * twins give (p2p, collectives, v collectives, a user op made with
 * MPI_Op_create_c, pack, windows, files, a data representation made with
 * MPI_Register_datarep_c), and the errors have the right classes.
 */
#include <signal.h>

#include "testlib.h"

#define BIG (((MPI_Count)3 << 30) + 5) /* 3 GiB and 5 bytes */
#define OVER_INT (((MPI_Count)1 << 31) + 3)

static unsigned char pattern(MPI_Count i, int salt) { return (unsigned char)((i * 7 + salt) % 251); }

static void check_bytes(const unsigned char *b, MPI_Count n, int salt) {
    /* The ends and a spread of points in between. */
    for (MPI_Count i = 0; i < n; i += (i < 4096 || n - i < 4096) ? 1 : 1048573)
        CHECK(b[i] == pattern(i, salt), "byte %lld is %d, expected %d", (long long)i, b[i], pattern(i, salt));
}

static void big(int rank) {
    const MPI_Count n = BIG;
    unsigned char *buf = malloc((size_t)n);
    CHECK(buf != NULL, "no memory for %lld bytes", (long long)n);
    for (MPI_Count i = 0; i < n; ++i) buf[i] = rank == 0 ? pattern(i, 1) : 0;
    MPI_Status st;
    if (rank == 0) {
        MPI_OK(MPI_Send_c(buf, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv_c(buf, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st));
        MPI_Count got = 0;
        int small = 0;
        MPI_OK(MPI_Get_count_c(&st, MPI_BYTE, &got));
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &small));
        CHECK(got == n && small == MPI_UNDEFINED, "count %lld (int: %d)", (long long)got, small);
        check_bytes(buf, n, 1);
    }
    /* Broadcasts of more than 2^31 elements: blocking from rank 0, then
       nonblocking from rank 1 of a new pattern. */
    const MPI_Count m = OVER_INT;
    MPI_OK(MPI_Bcast_c(buf, m, MPI_BYTE, 0, MPI_COMM_WORLD));
    check_bytes(buf, m, 1);
    if (rank == 1)
        for (MPI_Count i = 0; i < n; ++i) buf[i] = pattern(i, 2);
    MPI_Request r;
    MPI_OK(MPI_Ibcast_c(buf, n, MPI_BYTE, 1, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_bytes(buf, n, 2);
    /* A type of over 2^31 elements. */
    MPI_Datatype t;
    MPI_Count size = 0, lb = -1, extent = 0;
    MPI_OK(MPI_Type_contiguous_c(n, MPI_BYTE, &t));
    MPI_OK(MPI_Type_size_c(t, &size));
    MPI_OK(MPI_Type_get_extent_c(t, &lb, &extent));
    CHECK(size == n && lb == 0 && extent == n, "size %lld lb %lld extent %lld", (long long)size, (long long)lb,
          (long long)extent);
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD)); /* rank 0 still has pattern 2 */
    check_bytes(buf, n, 2);
    MPI_OK(MPI_Type_free(&t));
    /* A gatherv whose block from rank 1 is over 2^31 elements: the root
       takes it as a typed block, rank 1 sends it by its int path. */
    if (rank == 1)
        for (MPI_Count i = 0; i < m; ++i) buf[i] = pattern(i, 3);
    const MPI_Count counts[2] = {0, m};
    const MPI_Aint displs[2] = {0, 0};
    MPI_OK(MPI_Gatherv_c(rank == 0 ? MPI_IN_PLACE : buf, rank == 1 ? m : 0, MPI_BYTE, buf, counts, displs, MPI_BYTE, 0,
                         MPI_COMM_WORLD));
    if (rank == 0) check_bytes(buf, m, 3);
    free(buf);
}

static void add_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *type) {
    (void)type;
    for (MPI_Count i = 0; i < *len; ++i) ((long long *)inout)[i] += ((long long *)in)[i] * 10;
}

/* A data representation whose conversions take MPI_Count counts: the file
   holds each int plus 1. */
static MPI_Count converted;
static int to_file(void *user, MPI_Datatype t, MPI_Count count, void *file, MPI_Offset pos, void *extra) {
    (void)t, (void)pos, (void)extra;
    for (MPI_Count i = 0; i < count; ++i) ((int *)file)[i] = ((int *)user)[i] + 1;
    converted += count;
    return MPI_SUCCESS;
}
static int from_file(void *user, MPI_Datatype t, MPI_Count count, void *file, MPI_Offset pos, void *extra) {
    (void)t, (void)pos, (void)extra;
    for (MPI_Count i = 0; i < count; ++i) ((int *)user)[i] = ((int *)file)[i] - 1;
    converted += count;
    return MPI_SUCCESS;
}
static int extent_of(MPI_Datatype t, MPI_Aint *extent, void *extra) {
    (void)extra;
    MPI_Aint lb;
    return MPI_Type_get_extent(t, &lb, extent);
}

static void datarep(int rank) {
    MPI_OK(MPI_Register_datarep_c("ftmpi_plus1_c", from_file, to_file, extent_of, NULL));
    const char *path = "/tmp/ftmpi_large_count_rep.bin";
    MPI_File f;
    int v[2] = {10 * rank, 10 * rank + 1}, w[2] = {0, 0};
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &f));
    MPI_OK(MPI_File_set_view(f, 0, MPI_INT, MPI_INT, "ftmpi_plus1_c", MPI_INFO_NULL));
    MPI_OK(MPI_File_write_at_all_c(f, 2 * rank, v, 2, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_read_at_all_c(f, 2 * rank, w, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(w[0] == v[0] && w[1] == v[1] && converted == 4, "datarep_c: %d %d (%lld converted)", w[0], w[1],
          (long long)converted);
    MPI_OK(MPI_File_set_view(f, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_read_at_all(f, 2 * rank, w, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(w[0] == v[0] + 1 && w[1] == v[1] + 1, "the file holds %d %d", w[0], w[1]);
    MPI_OK(MPI_File_close(&f));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
}

static void small(int rank, int size) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = 1 - rank, a[4] = {rank, rank + 1, rank + 2, rank + 3}, b[4] = {0};
    MPI_Status st;
    MPI_OK(MPI_Sendrecv_c(a, 4, MPI_INT, peer, 1, b, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
    CHECK(b[3] == peer + 3, "sendrecv got %d", b[3]);
    MPI_Count c = 0;
    MPI_OK(MPI_Get_elements_c(&st, MPI_INT, &c));
    CHECK(c == 4, "elements %lld", (long long)c);
    /* Persistent send and receive. */
    MPI_Request rq[2];
    MPI_OK(MPI_Send_init_c(a, 2, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Recv_init_c(b, 2, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Startall(2, rq));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(b[1] == peer + 1, "persistent got %d", b[1]);
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    /* A user op with MPI_Count lengths. */
    MPI_Op op;
    long long x[3] = {1, 2, 3}, y[3] = {0};
    MPI_OK(MPI_Op_create_c(add_c, 1, &op));
    MPI_OK(MPI_Reduce_c(x, y, 3, MPI_LONG_LONG, op, 0, MPI_COMM_WORLD));
    if (rank == 0) CHECK(y[2] == 3 + 30 && y[0] == 11, "user op: %lld %lld", y[0], y[2]);
    MPI_Op_free(&op);
    /* v collective through int arrays (large_count_v: beyond INT_MAX). */
    MPI_Count counts[2] = {1, 1};
    MPI_Aint displs[2] = {0, 1};
    int g[2] = {-1, -1};
    MPI_OK(MPI_Allgatherv_c(&rank, 1, MPI_INT, g, counts, displs, MPI_INT, MPI_COMM_WORLD));
    CHECK(g[0] == 0 && g[1] == 1, "allgatherv %d %d", g[0], g[1]);
    int rc = MPI_Send_c(a, -1, MPI_INT, peer, 3, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPI_ERR_COUNT, "negative count: %d", rc);
    /* Pack and unpack. */
    char packed[64];
    MPI_Count pos = 0, psize = 0;
    MPI_OK(MPI_Pack_c(a, 4, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    MPI_OK(MPI_Pack_size_c((MPI_Count)1 << 33, MPI_INT, MPI_COMM_WORLD, &psize));
    CHECK(pos == 16 && psize == ((MPI_Count)1 << 35), "pack position %lld size %lld", pos, psize);
    pos = 0;
    MPI_OK(MPI_Unpack_c(packed, sizeof packed, &pos, b, 4, MPI_INT, MPI_COMM_WORLD));
    CHECK(b[2] == rank + 2 && pos == 16, "unpack");
    /* A window and a put. */
    int *base = NULL;
    MPI_Win w;
    MPI_OK(MPI_Win_allocate_c(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w));
    MPI_OK(MPI_Win_fence(0, w));
    MPI_OK(MPI_Put_c(a, 2, MPI_INT, peer, 1, 2, MPI_INT, w));
    MPI_OK(MPI_Win_fence(0, w));
    CHECK(base[1] == peer && base[2] == peer + 1, "put: %d %d", base[1], base[2]);
    MPI_OK(MPI_Win_free(&w));
    /* A file. */
    (void)size;
    const char *path = "/tmp/ftmpi_large_count.bin";
    MPI_File f;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &f));
    MPI_OK(MPI_File_write_at_all_c(f, rank * 16, a, 4, MPI_INT, &st));
    MPI_OK(MPI_File_read_at_all_c(f, peer * 16, b, 4, MPI_INT, &st));
    MPI_OK(MPI_Get_count_c(&st, MPI_INT, &c));
    CHECK(c == 4 && b[0] == peer, "file read %lld %d", (long long)c, b[0]);
    MPI_OK(MPI_File_close(&f));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
}

static void killed(int rank) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) raise(SIGKILL);
    const MPI_Count n = BIG;
    unsigned char *buf = calloc((size_t)n, 1);
    CHECK(buf != NULL, "no memory");
    int rc = MPI_Send_c(buf, n, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPIX_ERR_PROC_FAILED, "MPI_Send_c to a dead rank: %d", rc);
    rc = MPI_Bcast_c(buf, OVER_INT, MPI_BYTE, 0, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPIX_ERR_PROC_FAILED, "MPI_Bcast_c with a dead rank: %d", rc);
    free(buf);
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    CHECK(size == 2, "needs 2 ranks");
    int version = 0, subversion = 0;
    MPI_OK(MPI_Get_version(&version, &subversion));
    CHECK(version == 4 && subversion == 1 && MPI_VERSION == 4 && MPI_SUBVERSION == 1, "MPI %d.%d", version, subversion);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "kill") == 0) {
        killed(rank);
        MPI_Finalize();
        printf("large_count: kill: ok\n");
        return 0;
    }
    small(rank, size);
    datarep(rank);
    if (strcmp(mode, "big") == 0) big(rank);
    MPI_Finalize();
    if (rank == 0) printf("large_count: ok%s\n", argc > 1 ? " (3 GiB)" : "");
    return 0;
}
