/*
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0).
 *   ring  every rank exchanges with both neighbours at once: contiguous
 *         ints, a strided (vector) type on both sides, _replace with both
 *         kinds of type, a zero count, MPI_PROC_NULL, a request freed
 *         before it completes; data, source, tag and count checked;
 *   kill  the last rank dies (SIGKILL); its neighbours' exchanges with it,
 *         named and MPI_ANY_SOURCE, complete with MPI_ERR_PROC_FAILED and a
 *         status naming it, and never hang; the others' exchanges succeed.
 */
#include <signal.h>

#include "testlib.h"

#define N 64

static void check_status(const MPI_Status *st, int source, int tag, MPI_Datatype t, int count) {
    int n = -1;
    MPI_OK(MPI_Get_count(st, t, &n));
    CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && n == count, "status: source %d tag %d count %d",
          st->MPI_SOURCE, st->MPI_TAG, n);
}

static void ring(int rank, int size) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[N], in[2 * N], rep[2 * N];
    MPI_Request r[2];
    MPI_Status st[2];
    for (int i = 0; i < N; ++i) out[i] = rank * 1000 + i;

    /* Contiguous, both directions at once. */
    int in2[N];
    MPI_OK(MPI_Isendrecv(out, N, MPI_INT, right, 1, in, N, MPI_INT, left, 1, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Isendrecv(out, N, MPI_INT, left, 2, in2, N, MPI_INT, right, 2, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Waitall(2, r, st));
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "requests not freed");
    check_status(&st[0], left, 1, MPI_INT, N);
    check_status(&st[1], right, 2, MPI_INT, N);
    for (int i = 0; i < N; ++i)
        CHECK(in[i] == left * 1000 + i && in2[i] == right * 1000 + i, "contiguous: element %d: %d %d", i, in[i],
              in2[i]);

    /* A vector type (every other int) sent, received into a vector type. */
    MPI_Datatype every2;
    MPI_OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2));
    MPI_OK(MPI_Type_commit(&every2));
    for (int i = 0; i < 2 * N; ++i) in[i] = -1;
    MPI_OK(MPI_Isendrecv(out, 1, every2, right, 3, in, 1, every2, left, 3, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Wait(&r[0], &st[0]));
    check_status(&st[0], left, 3, MPI_INT, N / 2);
    for (int i = 0; i < N; ++i) CHECK(in[i] == (i % 2 == 0 ? left * 1000 + i : -1), "vector: element %d: %d", i, in[i]);

    /* _replace, contiguous then strided. */
    for (int i = 0; i < N; ++i) rep[i] = rank * 10 + i;
    MPI_OK(MPI_Isendrecv_replace(rep, N, MPI_INT, right, 4, left, 4, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Wait(&r[0], &st[0]));
    check_status(&st[0], left, 4, MPI_INT, N);
    for (int i = 0; i < N; ++i) CHECK(rep[i] == left * 10 + i, "replace: element %d: %d", i, rep[i]);
    for (int i = 0; i < N; ++i) rep[i] = i % 2 == 0 ? rank * 10 + i : -7;
    MPI_OK(MPI_Isendrecv_replace(rep, 1, every2, left, 5, right, 5, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Wait(&r[0], &st[0]));
    for (int i = 0; i < N; ++i)
        CHECK(rep[i] == (i % 2 == 0 ? right * 10 + i : -7), "strided replace: element %d: %d", i, rep[i]);
    MPI_OK(MPI_Type_free(&every2));

    /* Zero count, MPI_PROC_NULL on both sides, and a request freed early. */
    MPI_OK(MPI_Isendrecv(out, 0, MPI_INT, right, 6, in, 0, MPI_INT, left, 6, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Wait(&r[0], &st[0]));
    check_status(&st[0], left, 6, MPI_INT, 0);
    MPI_OK(MPI_Isendrecv(out, N, MPI_INT, MPI_PROC_NULL, 7, in, N, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Wait(&r[0], &st[0]));
    check_status(&st[0], MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    in[0] = -1;
    MPI_OK(MPI_Isendrecv(out, 1, MPI_INT, right, 8, in, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Request_free(&r[0]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* both neighbours' pairs were started */
    int flag = 0;                        /* nothing is sent with tag 999: the probe only drives progress */
    do MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    while (*(volatile int *)&in[0] == -1);
    CHECK(in[0] == left * 1000, "freed request: %d", in[0]);
}

static void dead_neighbour(int rank, int size) {
    const int victim = size - 1, right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = rank, in = -1;
    MPI_Status st;
    MPI_Request r;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim) {
        fflush(stdout);
        raise(SIGKILL);
    }
    if (left == victim || right == victim) {
        /* Named: the message to the victim may go, the one from it never comes. */
        MPI_OK(MPI_Isendrecv(&out, 1, MPI_INT, victim, 1, &in, 1, MPI_INT, victim, 1, MPI_COMM_WORLD, &r));
        int rc = MPI_Wait(&r, &st);
        CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED, "named exchange with the dead rank: class %d", tl_class_of(rc));
        CHECK(st.MPI_SOURCE == victim, "status names %d, not the dead rank %d", st.MPI_SOURCE, victim);
        CHECK(r == MPI_REQUEST_NULL, "failed request not freed");
        /* A wildcard receive that nothing matches: the failure ends it. */
        MPI_OK(MPI_Isendrecv_replace(&out, 1, MPI_INT, victim, 2, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &r));
        rc = MPI_Wait(&r, &st);
        CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED, "wildcard exchange: class %d", tl_class_of(rc));
    }
    /* The survivors still exchange among themselves (ranks 0..victim-1 in a ring). */
    const int n = size - 1, sright = (rank + 1) % n, sleft = (rank + n - 1) % n;
    MPI_OK(MPI_Isendrecv(&out, 1, MPI_INT, sright, 3, &in, 1, MPI_INT, sleft, 3, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(in == sleft, "survivors' exchange: %d from %d", in, sleft);
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int kill = argc > 1 && strcmp(argv[1], "kill") == 0;
    if (kill) {
        CHECK(size >= 3, "the kill variant needs 3 ranks");
        dead_neighbour(rank, size);
    } else {
        ring(rank, size);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rank == 0) printf("isendrecv %s: ok\n", kill ? "kill" : "ring");
    MPI_OK(MPI_Finalize());
    return 0;
}
