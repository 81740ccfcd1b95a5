/*
 * Datatypes whose size passes 2 GiB, sent and received between two ranks:
 * sizes and offsets are 64-bit all the way (type size and extent, pack, the
 * transports, the rendezvous), and a vector of 2^29 blocks is not flattened
 * into 2^29 blocks (that took tens of GiB and never finished). Needs
 * nprocs == 2.
 *
 *   bigtype vector   vector(2^29 + 8, 1, 2, MPI_INT): size 2^31 + 32, extent
 *                    4 GiB + 60. Rank 0 sends it (packed through staging),
 *                    rank 1 receives contiguous(2^29 + 8, MPI_INT), sends
 *                    that back, and rank 0 receives it into the vector (the
 *                    ints between the blocks stay untouched). About 8 GiB.
 *   bigtype contig   contiguous(2^28 + 1, MPI_DOUBLE): 2^31 + 8 bytes sent
 *                    as they lie. About 4.5 GiB.
 * Both check MPI_Type_size (MPI_UNDEFINED), _size_x, _get_extent_x,
 * MPI_Get_count and MPI_Get_elements_x, and the data at sampled positions
 * (every 2^20 elements and the last ones); the buffers are otherwise left
 * untouched (calloc: zero pages, even under MALLOC_PERTURB_), so the runs stay
 * within memory.
 */
#include "testlib.h"

static int value_at(size_t i) { return (int)(i * 2654435761u) | 1; } /* never 0 */

/* Calls f(i) for the sampled element indices below n. */
#define FOR_SAMPLES(n, i, body)                                 \
    do {                                                        \
        for (size_t i = 0; i < (n); i += (size_t)1 << 20) body; \
        for (size_t i = (n)-64; i < (n); ++i) body;             \
    } while (0)

static void check_type(MPI_Datatype t, size_t size, size_t extent) {
    MPI_Count sz = 0, lb = -1, ext = 0;
    MPI_OK(MPI_Type_size_x(t, &sz));
    MPI_OK(MPI_Type_get_extent_x(t, &lb, &ext));
    CHECK(sz == (MPI_Count)size && lb == 0 && ext == (MPI_Count)extent, "size %lld extent %lld, expected %zu %zu",
          (long long)sz, (long long)ext, size, extent);
    int isz = 0;
    MPI_OK(MPI_Type_size(t, &isz));
    CHECK(isz == MPI_UNDEFINED, "MPI_Type_size of a %zu-byte type gave %d, expected MPI_UNDEFINED", size, isz);
}

static void check_status(const MPI_Status *st, MPI_Datatype t, size_t bytes, size_t elements) {
    MPI_Count n = -1;
    int cnt = -1;
    MPI_OK(MPI_Get_elements_x(st, MPI_BYTE, &n));
    CHECK(n == (MPI_Count)bytes, "%lld bytes arrived, expected %zu", (long long)n, bytes);
    MPI_OK(MPI_Get_count(st, t, &cnt));
    CHECK(cnt == 1, "Get_count %d", cnt);
    MPI_OK(MPI_Get_elements_x(st, t, &n));
    CHECK(n == (MPI_Count)elements, "Get_elements_x %lld, expected %zu", (long long)n, elements);
}

static void run_vector(int rank) {
    const size_t n = ((size_t)1 << 29) + 8; /* ints */
    MPI_Datatype vec, con;
    MPI_OK(MPI_Type_vector((int)n, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_contiguous((int)n, MPI_INT, &con));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_commit(&con));
    check_type(vec, 4 * n, 4 * (2 * n - 1));
    check_type(con, 4 * n, 4 * n);
    MPI_Status st;
    if (rank == 0) {
        int *a = calloc(2 * n - 1, 4);
        CHECK(a != NULL, "calloc");
        FOR_SAMPLES(n, i, a[2 * i] = value_at(i));
        MPI_OK(MPI_Send(a, 1, vec, 1, 1, MPI_COMM_WORLD));
        free(a);
        int *b = calloc(2 * n - 1, 4);
        CHECK(b != NULL, "calloc");
        MPI_OK(MPI_Recv(b, 1, vec, 1, 2, MPI_COMM_WORLD, &st));
        check_status(&st, vec, 4 * n, n);
        FOR_SAMPLES(n, i, {
            CHECK(b[2 * i] == value_at(i), "back in the vector: element %zu is %d", i, b[2 * i]);
            if (i + 1 < n) CHECK(b[2 * i + 1] == 0, "the gap after element %zu was written (%d)", i, b[2 * i + 1]);
        });
        free(b);
    } else if (rank == 1) {
        int *c = calloc(n, 4);
        CHECK(c != NULL, "calloc");
        MPI_OK(MPI_Recv(c, 1, con, 0, 1, MPI_COMM_WORLD, &st));
        check_status(&st, con, 4 * n, n);
        FOR_SAMPLES(n, i, CHECK(c[i] == value_at(i), "contiguous: element %zu is %d", i, c[i]));
        MPI_OK(MPI_Send(c, 1, con, 0, 2, MPI_COMM_WORLD));
        free(c);
    }
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&con));
}

static void run_contig(int rank) {
    const size_t n = ((size_t)1 << 28) + 1; /* doubles */
    MPI_Datatype t;
    MPI_OK(MPI_Type_contiguous((int)n, MPI_DOUBLE, &t));
    MPI_OK(MPI_Type_commit(&t));
    check_type(t, 8 * n, 8 * n);
    double *a = calloc(n, 8);
    CHECK(a != NULL, "calloc");
    if (rank == 0) {
        FOR_SAMPLES(n, i, a[i] = value_at(i));
        MPI_OK(MPI_Send(a, 1, t, 1, 7, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_Status st;
        MPI_OK(MPI_Recv(a, 1, t, 0, 7, MPI_COMM_WORLD, &st));
        check_status(&st, t, 8 * n, n);
        FOR_SAMPLES(n, i, CHECK(a[i] == value_at(i), "element %zu is %g", i, a[i]));
    }
    free(a);
    MPI_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    CHECK(argc == 2 && (strcmp(argv[1], "vector") == 0 || strcmp(argv[1], "contig") == 0),
          "usage: bigtype vector|contig");
    if (strcmp(argv[1], "vector") == 0) run_vector(rank);
    else run_contig(rank);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("bigtype %s: all checks passed\n", argv[1]);
    MPI_OK(MPI_Finalize());
    return 0;
}
