/*
 * Collectives, MPI_Comm_split and MPI_Comm_create on inter-communicators
 * (MPI-3.1 §5.2.2, §6.4.2), between groups of unequal sizes: group A is the
 * first (size-1)/2 world ranks, group B the rest (4 ranks: 1+3, 5: 2+3,
 * 8: 3+5).
 *
 *   intercomm_coll             every collective, blocking and nonblocking,
 *                              results checked exactly; roots on both sides
 *                              (MPI_ROOT / MPI_PROC_NULL); the calls that are
 *                              erroneous on an inter-communicator; split,
 *                              split_type and create.
 *   intercomm_coll kill V      world rank V dies (SIGKILL) once the
 *                              inter-communicator exists; every non-rooted
 *                              collective then fails at every survivor of
 *                              both groups with MPI_ERR_PROC_FAILED, the
 *                              rooted ones return (and fail where they
 *                              depend on V); split and create fail at every
 *                              survivor; after a revoke, collectives fail
 *                              with MPIX_ERR_REVOKED; survivors agree.
 *   intercomm_coll mid V N     world rank V dies at its Nth collective round
 *                              (FTMPI_TEST_KILL_AT=coll.round:V:N), inside
 *                              the inter-communicator collectives; every
 *                              call returns MPI_SUCCESS or
 *                              MPI_ERR_PROC_FAILED, every survivor sees an
 *                              error, and survivors agree on the failure.
 */
#include "intercomm_coll.h"

int world, wsize, side, lrank, lsize, rsize, a_size;
MPI_Comm inter;
MPI_Datatype pair_t;
MPI_Op compose_op;

/* ---- failures ---- */

static int is_failed(int rc) { return tl_class(rc) == MPI_ERR_PROC_FAILED; }

static int wait_rc(int rc, MPI_Request *r) {
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Wait(r, MPI_STATUS_IGNORE);
}

/* World rank V died before any of these. Returns the mask of calls that failed here. */
static unsigned after_death(int victim) {
    enum { N = 8 };
    int x[N * 64], y[N * 64], counts[64], displs[64];
    for (int i = 0; i < N * 64; ++i) x[i] = world, y[i] = -1;
    for (int i = 0; i < 64; ++i) counts[i] = 1, displs[i] = i;
    MPI_Request r;
    unsigned mask = 0;
    int bit = 0;
    /* Non-rooted: MPI_ERR_PROC_FAILED at every survivor of both groups. */
#define ALL_FAIL(call, what)                                                            \
    do {                                                                                \
        int rc_ = (call);                                                               \
        CHECK(is_failed(rc_),                                                           \
              "%s returned class %d at world rank %d, expected MPI_ERR_PROC_FAILED at " \
              "every survivor",                                                         \
              what, tl_class(rc_), world);                                              \
        mask |= 1u << bit++;                                                            \
    } while (0)
    for (int nb = 0; nb < 2; ++nb) {
#define BOTH(blocking, nonblocking, what) ALL_FAIL(nb ? wait_rc(nonblocking, &r) : (blocking), what)
        BOTH(MPI_Barrier(inter), MPI_Ibarrier(inter, &r), "barrier");
        BOTH(MPI_Allreduce(x, y, N, MPI_INT, MPI_SUM, inter), MPI_Iallreduce(x, y, N, MPI_INT, MPI_SUM, inter, &r),
             "allreduce");
        BOTH(MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, inter),
             MPI_Iallgather(x, 1, MPI_INT, y, 1, MPI_INT, inter, &r), "allgather");
        BOTH(MPI_Allgatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, inter),
             MPI_Iallgatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, inter, &r), "allgatherv");
        BOTH(MPI_Alltoall(x, 1, MPI_INT, y, 1, MPI_INT, inter), MPI_Ialltoall(x, 1, MPI_INT, y, 1, MPI_INT, inter, &r),
             "alltoall");
        BOTH(MPI_Alltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, inter),
             MPI_Ialltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, inter, &r), "alltoallv");
        {
            int bd[64];
            MPI_Datatype ts[64];
            for (int i = 0; i < 64; ++i) bd[i] = i * (int)sizeof(int), ts[i] = MPI_INT;
            BOTH(MPI_Alltoallw(x, counts, bd, ts, y, counts, bd, ts, inter),
                 MPI_Ialltoallw(x, counts, bd, ts, y, counts, bd, ts, inter, &r), "alltoallw");
        }
        /* Reduce_scatter_block: recvcount (remote size) makes both groups' vectors equal. */
        BOTH(MPI_Reduce_scatter_block(x, y, rsize, MPI_INT, MPI_SUM, inter),
             MPI_Ireduce_scatter_block(x, y, rsize, MPI_INT, MPI_SUM, inter, &r), "reduce_scatter_block");
        {
            int rc[64];
            for (int i = 0; i < lsize; ++i) rc[i] = rsize;
            BOTH(MPI_Reduce_scatter(x, y, rc, MPI_INT, MPI_SUM, inter),
                 MPI_Ireduce_scatter(x, y, rc, MPI_INT, MPI_SUM, inter, &r), "reduce_scatter");
        }
#undef BOTH
    }
    /* Rooted: every call returns (success or MPI_ERR_PROC_FAILED), and a
       process that needs the dead rank's data (or is the root that the dead
       rank feeds) fails. */
    const int v_side = victim < a_size ? 0 : 1, v_lrank = v_side == 0 ? victim : victim - a_size;
    for (int rside = 0; rside < 2; ++rside) {
        const int gsize = rside == 0 ? a_size : wsize - a_size;
        for (int rr = 0; rr < gsize; ++rr) {
            const int root = root_arg(rside, rr);
            const int dead_root = rside == v_side && rr == v_lrank;
            int rc;
            /* Bcast/scatter from the dead root: every process of the other group fails. */
            rc = MPI_Bcast(x, N, MPI_INT, root, inter);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "bcast: class %d", tl_class(rc));
            if (dead_root && side != rside) CHECK(is_failed(rc), "bcast from the dead root succeeded at %d", world);
            rc = wait_rc(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, root, inter, &r), &r);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "iscatter: class %d", tl_class(rc));
            if (dead_root && side != rside) CHECK(is_failed(rc), "scatter from the dead root succeeded at %d", world);
            /* Gather/reduce to a root of the other group than the dead rank's: the root fails. */
            rc = MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, root, inter);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "gather: class %d", tl_class(rc));
            if (root == MPI_ROOT && rside != v_side) CHECK(is_failed(rc), "gather: the root missed the dead rank");
            rc = wait_rc(MPI_Ireduce(x, y, N, MPI_INT, MPI_SUM, root, inter, &r), &r);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "ireduce: class %d", tl_class(rc));
            if (root == MPI_ROOT && rside != v_side) CHECK(is_failed(rc), "reduce: the root missed the dead rank");
            rc = MPI_Gatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, root, inter);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "gatherv: class %d", tl_class(rc));
            rc = MPI_Scatterv(x, counts, displs, MPI_INT, y, 1, MPI_INT, root, inter);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "scatterv: class %d", tl_class(rc));
        }
    }
    /* Communicator creation is uniform: it fails at every survivor. */
    MPI_Comm c = MPI_COMM_NULL;
    ALL_FAIL(MPI_Comm_split(inter, 0, 0, &c), "split");
    CHECK(c == MPI_COMM_NULL, "a failed split made a communicator");
    MPI_Group g;
    MPI_OK(MPI_Comm_group(inter, &g));
    ALL_FAIL(MPI_Comm_create(inter, g, &c), "create");
    CHECK(c == MPI_COMM_NULL, "a failed create made a communicator");
    MPI_Group_free(&g);
#undef ALL_FAIL
    return mask;
}

/* The survivors of the world: shrink, then check that all saw the same
   failures and the same failed calls. */
static MPI_Comm survivors(int victim, unsigned mask) {
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    int n;
    MPI_OK(MPI_Comm_size(shrunk, &n));
    CHECK(n == wsize - 1, "shrunk world has %d ranks, expected %d", n, wsize - 1);
    tl_check_agreement(MPI_COMM_WORLD, &victim, 1);
    unsigned lo = mask, hi = mask;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UNSIGNED, MPI_BAND, shrunk));
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UNSIGNED, MPI_BOR, shrunk));
    CHECK(lo == hi, "survivors disagree on which calls failed: %#x vs %#x", lo, hi);
    int flag = 1;
    MPI_OK(MPIX_Comm_agree(shrunk, &flag));
    CHECK(flag == 1, "agree on the shrunk world gave %d", flag);
    return shrunk;
}

/* A survivor revokes the inter-communicator: every survivor's next
   collective on it fails with MPIX_ERR_REVOKED (or MPI_ERR_PROC_FAILED, should
   the failure stop it before the revoke reaches it), then it reads revoked. */
static void after_revoke(MPI_Comm shrunk) {
    int sr;
    MPI_OK(MPI_Comm_rank(shrunk, &sr));
    if (sr == 0) MPI_OK(MPIX_Comm_revoke(inter));
    MPI_OK(MPI_Barrier(shrunk));
    int x = 0, y = 0, flag = 0;
    const double until = MPI_Wtime() + 30;
    while (!flag && MPI_Wtime() < until) MPI_OK(MPIX_Comm_is_revoked(inter, &flag));
    CHECK(flag, "the revoke never reached world rank %d", world);
    CHECK_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, inter), MPIX_ERR_REVOKED);
    MPI_Request r;
    CHECK_CLASS(wait_rc(MPI_Ialltoall(&x, 1, MPI_INT, &y, 1, MPI_INT, inter, &r), &r), MPIX_ERR_REVOKED);
    CHECK_CLASS(MPI_Barrier(inter), MPIX_ERR_REVOKED);
}

/* Dies at a collective round (FTMPI_TEST_KILL_AT) inside this loop. */
static int mid_loop(void) {
    int x[64], y[64], counts[64], displs[64], errors = 0;
    for (int i = 0; i < 64; ++i) x[i] = world, counts[i] = 1, displs[i] = i;
    MPI_Request r;
#define OK_OR_FAILED(call)                                                                              \
    do {                                                                                                \
        int rc_ = (call);                                                                               \
        CHECK(rc_ == MPI_SUCCESS || is_failed(rc_), "%s: class %d at %d", #call, tl_class(rc_), world); \
        errors += rc_ != MPI_SUCCESS;                                                                   \
    } while (0)
    for (int iter = 0; iter < 20; ++iter) {
        const int rside = iter % 2, gsize = rside == 0 ? a_size : wsize - a_size;
        const int root = root_arg(rside, iter % gsize);
        OK_OR_FAILED(MPI_Barrier(inter));
        OK_OR_FAILED(MPI_Bcast(x, 4, MPI_INT, root, inter));
        OK_OR_FAILED(MPI_Reduce(x, y, 4, MPI_INT, MPI_SUM, root, inter));
        OK_OR_FAILED(MPI_Allreduce(x, y, 4, MPI_INT, MPI_SUM, inter));
        OK_OR_FAILED(MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, root, inter));
        OK_OR_FAILED(MPI_Scatter(x, 1, MPI_INT, y, 1, MPI_INT, root, inter));
        OK_OR_FAILED(MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, inter));
        OK_OR_FAILED(MPI_Allgatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, inter));
        OK_OR_FAILED(MPI_Alltoall(x, 1, MPI_INT, y, 1, MPI_INT, inter));
        OK_OR_FAILED(wait_rc(MPI_Ialltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, inter, &r), &r));
        OK_OR_FAILED(wait_rc(MPI_Iallreduce(x, y, 4, MPI_INT, MPI_MAX, inter, &r), &r));
        OK_OR_FAILED(wait_rc(MPI_Ireduce_scatter_block(x, y, rsize, MPI_INT, MPI_SUM, inter, &r), &r));
        OK_OR_FAILED(wait_rc(MPI_Igatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, root, inter, &r), &r));
    }
#undef OK_OR_FAILED
    return errors;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "coll";
    const int victim = argc > 2 ? atoi(argv[2]) : -1;
    if (!strcmp(mode, "mid")) {
        char spec[64];
        snprintf(spec, sizeof spec, "coll.round:%d:%d", victim, argc > 3 ? atoi(argv[3]) : 1);
        setenv("FTMPI_TEST_KILL_AT", spec, 1);
    }
    tl_init(&argc, &argv, &world, &wsize, 4);
    CHECK(wsize <= 64, "at most 64 ranks");
    a_size = (wsize - 1) / 2;
    side = world < a_size ? 0 : 1;
    MPI_Comm local;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, side, world, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, side == 0 ? a_size : 0, 77, &inter));
    MPI_OK(MPI_Comm_free(&local));
    MPI_OK(MPI_Comm_rank(inter, &lrank));
    MPI_OK(MPI_Comm_size(inter, &lsize));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    MPI_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &pair_t));
    MPI_OK(MPI_Type_commit(&pair_t));
    MPI_OK(MPI_Op_create(compose, 0, &compose_op));
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));

    if (!strcmp(mode, "coll")) {
        correctness();
        MPI_OK(MPI_Comm_free(&inter));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (world == 0)
            printf("intercomm_coll: every collective, split and create checked on %d+%d ranks\n", a_size,
                   wsize - a_size);
    } else {
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        CHECK(victim >= 0 && victim < wsize, "victim %d", victim);
        unsigned mask = 0;
        if (!strcmp(mode, "kill")) {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            if (world == victim) tl_die(SIGKILL);
            mask = after_death(victim);
        } else {
            const int errors = mid_loop();
            CHECK(world != victim, "the victim outlived the loop: its kill round is too late");
            CHECK(errors > 0, "world rank %d saw no error although rank %d died", world, victim);
        }
        MPI_Comm shrunk = survivors(victim, mask);
        after_revoke(shrunk);
        MPI_OK(MPI_Comm_free(&inter));
        if (world == (victim == 0 ? 1 : 0))
            printf("intercomm_coll %s: rank %d died; every survivor of both groups failed, they agree\n", mode, victim);
        MPI_OK(MPI_Comm_free(&shrunk));
    }
    MPI_Op_free(&compose_op);
    MPI_Type_free(&pair_t);
    MPI_Finalize();
    return 0;
}
