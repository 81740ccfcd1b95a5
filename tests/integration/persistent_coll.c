/*
 * Persistent collectives (MPI 4.0 §6.13).
 *   all   each of the 22 init calls is made once; the requests are then
 *         started three times (MPI_Startall, each rank in its own order:
 *         starts need not be ordered across ranks) with new inputs each
 *         time, and every result is checked; an active request cannot be
 *         started again (MPI_ERR_REQUEST); an inactive one waits at once.
 *   kill  the last rank dies (SIGKILL) between two starts of a persistent
 *         allreduce and barrier: every survivor's Wait returns
 *         MPI_ERR_PROC_FAILED, later starts fail the same way without
 *         hanging, and after a revoke they fail with MPI_ERR_REVOKED.
 */
#include <signal.h>

#include "testlib.h"

enum {
    BARRIER,
    BCAST,
    REDUCE,
    ALLREDUCE,
    RS,
    RSB,
    SCAN,
    EXSCAN,
    GATHER,
    GATHERV,
    SCATTER,
    SCATTERV,
    ALLGATHER,
    ALLGATHERV,
    ALLTOALL,
    ALLTOALLV,
    ALLTOALLW,
    NB_ALLGATHER,
    NB_ALLGATHERV,
    NB_ALLTOALL,
    NB_ALLTOALLV,
    NB_ALLTOALLW,
    NOPS
};

#define MAXP 16
static int rank, size;
static int in[MAXP], val, out[NOPS][MAXP], one[MAXP], idx[MAXP], bytes[MAXP];
static MPI_Datatype ints[MAXP];
static MPI_Aint abytes[MAXP];

static void init_all(MPI_Comm cart, MPI_Request *r) {
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info)); /* an info object with a hint nobody knows: ignored */
    MPI_OK(MPI_Info_set(info, "no_such_hint", "1"));
    for (int i = 0; i < MAXP; ++i) one[i] = 1, idx[i] = i, bytes[i] = i * 4, abytes[i] = i * 4, ints[i] = MPI_INT;
    MPI_OK(MPI_Barrier_init(w, info, &r[BARRIER]));
    MPI_OK(MPI_Bcast_init(out[BCAST], 2, MPI_INT, 1 % size, w, info, &r[BCAST]));
    MPI_OK(MPI_Reduce_init(&val, out[REDUCE], 1, MPI_INT, MPI_SUM, 0, w, info, &r[REDUCE]));
    MPI_OK(MPI_Allreduce_init(&val, out[ALLREDUCE], 1, MPI_INT, MPI_MAX, w, MPI_INFO_NULL, &r[ALLREDUCE]));
    MPI_OK(MPI_Reduce_scatter_init(in, out[RS], one, MPI_INT, MPI_SUM, w, info, &r[RS]));
    MPI_OK(MPI_Reduce_scatter_block_init(in, out[RSB], 1, MPI_INT, MPI_SUM, w, info, &r[RSB]));
    MPI_OK(MPI_Scan_init(&val, out[SCAN], 1, MPI_INT, MPI_SUM, w, info, &r[SCAN]));
    MPI_OK(MPI_Exscan_init(&val, out[EXSCAN], 1, MPI_INT, MPI_SUM, w, info, &r[EXSCAN]));
    MPI_OK(MPI_Gather_init(&val, 1, MPI_INT, out[GATHER], 1, MPI_INT, 0, w, info, &r[GATHER]));
    MPI_OK(MPI_Gatherv_init(&val, 1, MPI_INT, out[GATHERV], one, idx, MPI_INT, size - 1, w, info, &r[GATHERV]));
    MPI_OK(MPI_Scatter_init(in, 1, MPI_INT, out[SCATTER], 1, MPI_INT, 0, w, info, &r[SCATTER]));
    MPI_OK(MPI_Scatterv_init(in, one, idx, MPI_INT, out[SCATTERV], 1, MPI_INT, 0, w, info, &r[SCATTERV]));
    MPI_OK(MPI_Allgather_init(&val, 1, MPI_INT, out[ALLGATHER], 1, MPI_INT, w, info, &r[ALLGATHER]));
    MPI_OK(MPI_Allgatherv_init(&val, 1, MPI_INT, out[ALLGATHERV], one, idx, MPI_INT, w, info, &r[ALLGATHERV]));
    MPI_OK(MPI_Alltoall_init(in, 1, MPI_INT, out[ALLTOALL], 1, MPI_INT, w, info, &r[ALLTOALL]));
    MPI_OK(MPI_Alltoallv_init(in, one, idx, MPI_INT, out[ALLTOALLV], one, idx, MPI_INT, w, info, &r[ALLTOALLV]));
    MPI_OK(MPI_Alltoallw_init(in, one, bytes, ints, out[ALLTOALLW], one, bytes, ints, w, info, &r[ALLTOALLW]));
    MPI_OK(MPI_Neighbor_allgather_init(&val, 1, MPI_INT, out[NB_ALLGATHER], 1, MPI_INT, cart, info, &r[NB_ALLGATHER]));
    MPI_OK(MPI_Neighbor_allgatherv_init(&val, 1, MPI_INT, out[NB_ALLGATHERV], one, idx, MPI_INT, cart, info,
                                        &r[NB_ALLGATHERV]));
    MPI_OK(MPI_Neighbor_alltoall_init(in, 1, MPI_INT, out[NB_ALLTOALL], 1, MPI_INT, cart, info, &r[NB_ALLTOALL]));
    MPI_OK(MPI_Neighbor_alltoallv_init(in, one, idx, MPI_INT, out[NB_ALLTOALLV], one, idx, MPI_INT, cart, info,
                                       &r[NB_ALLTOALLV]));
    MPI_OK(MPI_Neighbor_alltoallw_init(in, one, abytes, ints, out[NB_ALLTOALLW], one, abytes, ints, cart, info,
                                       &r[NB_ALLTOALLW]));
    MPI_OK(MPI_Info_free(&info));
}

#define EXPECT(op, i, want) \
    CHECK(out[op][i] == (want), "iteration %d: %s[%d] = %d, expected %d", it, #op, i, out[op][i], (int)(want))

static void check_all(int it) {
    const int s = size * (size - 1) / 2, left = (rank + size - 1) % size, right = (rank + 1) % size;
    if (rank != 1 % size) EXPECT(BCAST, 1, 7 * it + 3);
    if (rank == 0) EXPECT(REDUCE, 0, s + size * 10 * it);
    EXPECT(ALLREDUCE, 0, size - 1 + 10 * it);
    EXPECT(RS, 0, 100 * s + size * (rank + 1000 * it));
    EXPECT(RSB, 0, 100 * s + size * (rank + 1000 * it));
    EXPECT(SCAN, 0, rank * (rank + 1) / 2 + (rank + 1) * 10 * it);
    if (rank > 0) EXPECT(EXSCAN, 0, rank * (rank - 1) / 2 + rank * 10 * it);
    EXPECT(SCATTER, 0, rank + 1000 * it);
    EXPECT(SCATTERV, 0, rank + 1000 * it);
    for (int r = 0; r < size; ++r) {
        if (rank == 0) EXPECT(GATHER, r, r + 10 * it);
        if (rank == size - 1) EXPECT(GATHERV, r, r + 10 * it);
        EXPECT(ALLGATHER, r, r + 10 * it);
        EXPECT(ALLGATHERV, r, r + 10 * it);
        EXPECT(ALLTOALL, r, 100 * r + rank + 1000 * it);
        EXPECT(ALLTOALLV, r, 100 * r + rank + 1000 * it);
        EXPECT(ALLTOALLW, r, 100 * r + rank + 1000 * it);
    }
    /* A periodic ring: neighbours left (0) and right (1); left sends me its
       block 1, right its block 0. */
    EXPECT(NB_ALLGATHER, 0, left + 10 * it);
    EXPECT(NB_ALLGATHER, 1, right + 10 * it);
    EXPECT(NB_ALLGATHERV, 1, right + 10 * it);
    for (int op = NB_ALLTOALL; op <= NB_ALLTOALLW; ++op) {
        CHECK(out[op][0] == 100 * left + 1 + 1000 * it, "iteration %d: neighbor op %d block 0: %d", it, op, out[op][0]);
        CHECK(out[op][1] == 100 * right + 1000 * it, "iteration %d: neighbor op %d block 1: %d", it, op, out[op][1]);
    }
}

static void all(void) {
    CHECK(size <= MAXP, "at most %d ranks", MAXP);
    MPI_Comm cart;
    const int periodic = 1;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &cart));
    MPI_Request r[NOPS], order[NOPS];
    init_all(cart, r);
    for (int it = 0; it < 3; ++it) {
        for (int i = 0; i < MAXP; ++i) in[i] = 100 * rank + i + 1000 * it;
        val = rank + 10 * it;
        memset(out, 0xff, sizeof out);
        if (rank == 1 % size) out[BCAST][0] = it, out[BCAST][1] = 7 * it + 3;
        for (int i = 0; i < NOPS; ++i) order[i] = r[(i + rank * 5 + it) % NOPS]; /* each rank its own order */
        MPI_OK(MPI_Startall(NOPS, order));
        CHECK(tl_class_of(MPI_Start(&r[BARRIER])) == MPI_ERR_REQUEST, "an active request started again");
        MPI_OK(MPI_Waitall(NOPS, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NOPS; ++i) CHECK(r[i] != MPI_REQUEST_NULL, "request %d freed by its completion", i);
        check_all(it);
        int flag = 0;
        MPI_OK(MPI_Test(&r[ALLREDUCE], &flag, MPI_STATUS_IGNORE)); /* inactive: at once */
        CHECK(flag, "an inactive persistent request is not complete");
    }
    for (int i = 0; i < NOPS; ++i) MPI_OK(MPI_Request_free(&r[i]));
    MPI_OK(MPI_Comm_free(&cart));
}

static void kill_between_starts(void) {
    const int victim = size - 1;
    int x, sum = -1;
    MPI_Request r[2];
    MPI_OK(MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    MPI_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    x = rank;
    MPI_OK(MPI_Startall(2, r));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(sum == size * (size - 1) / 2, "allreduce before the failure: %d", sum);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim) {
        fflush(stdout);
        raise(SIGKILL);
    }
    for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < 2; ++i) {
            MPI_OK(MPI_Start(&r[i]));
            const int rc = MPI_Wait(&r[i], MPI_STATUS_IGNORE);
            CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED, "start %d of request %d: class %d", k, i, tl_class_of(rc));
        }
    }
    /* Every survivor has seen its starts fail before anyone revokes (a
       revoke that came first would turn a later start's error into
       MPI_ERR_REVOKED). */
    int all = 1;
    MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    const int arc = MPIX_Comm_agree(MPI_COMM_WORLD, &all);
    CHECK(arc == MPI_SUCCESS || tl_class_of(arc) == MPI_ERR_PROC_FAILED, "agreement: class %d", tl_class_of(arc));
    MPI_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    for (int i = 0; i < 2; ++i) {
        MPI_OK(MPI_Start(&r[i]));
        const int rc = MPI_Wait(&r[i], MPI_STATUS_IGNORE);
        CHECK(tl_class_of(rc) == MPI_ERR_REVOKED, "start after the revoke of request %d: class %d", i, tl_class_of(rc));
        MPI_OK(MPI_Request_free(&r[i]));
    }
}

int main(int argc, char **argv) {
    const int kill = argc > 1 && strcmp(argv[1], "kill") == 0;
    tl_init(&argc, &argv, &rank, &size, kill ? 3 : 1);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    if (kill) kill_between_starts();
    else all();
    if (!kill) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("persistent_coll %s: ok\n", kill ? "kill" : "all");
    MPI_OK(MPI_Finalize());
    return 0;
}
