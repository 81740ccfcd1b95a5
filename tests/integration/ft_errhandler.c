/*
 * Error handlers under failures, as Open MPI's ULFM calls them (issue 10):
 * ULFM programs' handlers switch on the class they are given, so a handler
 * must get the failed request's own class (MPIX_ERR_PROC_FAILED,
 * MPIX_ERR_REVOKED), never MPI_ERR_IN_STATUS.
 *
 * The last rank, v, is SIGKILLed; every survivor then checks, for Sendrecv,
 * Waitall, Waitsome, Testall and Waitany, once with v's failure and once on
 * a revoked communicator:
 *   - the class the user handler receives (and that it runs exactly once);
 *   - the class the call returns: the failure's class for Sendrecv and
 *     Waitany, MPI_ERR_IN_STATUS for Waitall, Waitsome and Testall, whose
 *     statuses hold each request's class.
 */
#include "ftlib.h"

static int me, size, v, next, prev;
static int calls, seen_class;
static MPI_Comm seen_comm;

static void handler(MPI_Comm *comm, int *code, ...) {
    ++calls;
    seen_comm = *comm;
    MPI_Error_class(*code, &seen_class);
}

/* Checks what the handler saw since the last call to expect_handler. */
static void expect_handler(const char *what, MPI_Comm comm, int want_class) {
    CHECK(calls == 1, "%s: handler ran %d times", what, calls);
    CHECK(seen_comm == comm, "%s: handler got another communicator", what);
    CHECK(seen_class == want_class, "%s: handler got class %d, expected %d", what, seen_class, want_class);
    calls = 0;
    seen_class = -1;
}

/* The five calls, each with one request that fails with `fail_class`
   (a receive from `bad`, which never sends) and, for the multi-request
   calls, one that succeeds (a message from prev). Tags from `tag`. */
static void check_calls(MPI_Comm comm, int bad, int fail_class, int tag, int self_next, int self_prev) {
    int x = me, y = -1, idx = -1, outcount = 0, flag = 0, rc;
    MPI_Request reqs[2];
    MPI_Status sts[2], st;

    /* Sendrecv: the failure's class, once, to the handler and as the result. */
    rc = MPI_Sendrecv(&x, 1, MPI_INT, bad, tag, &y, 1, MPI_INT, bad, tag, comm, &st);
    CHECK(tl_class(rc) == fail_class, "Sendrecv returned class %d, expected %d", tl_class(rc), fail_class);
    expect_handler("Sendrecv", comm, fail_class);

    /* Waitall: handler gets the failed request's class; call returns IN_STATUS. */
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, bad, tag + 1, comm, &reqs[0]));
    if (self_next >= 0) {
        MPI_OK(MPI_Irecv(&y, 1, MPI_INT, self_prev, tag + 1, comm, &reqs[1]));
        MPI_OK(MPI_Send(&x, 1, MPI_INT, self_next, tag + 1, comm));
    } else {
        reqs[1] = MPI_REQUEST_NULL;
    }
    rc = MPI_Waitall(2, reqs, sts);
    CHECK(tl_class(rc) == MPI_ERR_IN_STATUS, "Waitall returned class %d", tl_class(rc));
    CHECK(tl_class(sts[0].MPI_ERROR) == fail_class, "Waitall status 0 class %d", tl_class(sts[0].MPI_ERROR));
    if (self_next >= 0)
        CHECK(sts[1].MPI_ERROR == MPI_SUCCESS && y == self_prev, "Waitall status 1: %d", sts[1].MPI_ERROR);
    expect_handler("Waitall", comm, fail_class);

    /* Waitsome: until both are done; the handler runs when the failed one is reported. */
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, bad, tag + 2, comm, &reqs[0]));
    if (self_next >= 0) {
        MPI_OK(MPI_Irecv(&y, 1, MPI_INT, self_prev, tag + 2, comm, &reqs[1]));
        MPI_OK(MPI_Send(&x, 1, MPI_INT, self_next, tag + 2, comm));
    }
    int failed = 0, ok = 0;
    for (int left = self_next >= 0 ? 2 : 1; left > 0; left -= outcount) {
        int ids[2];
        rc = MPI_Waitsome(2, reqs, &outcount, ids, sts);
        int had_failure = 0;
        for (int i = 0; i < outcount; ++i) {
            if (ids[i] == 0) {
                CHECK(tl_class(sts[i].MPI_ERROR) == fail_class, "Waitsome status class %d", tl_class(sts[i].MPI_ERROR));
                had_failure = 1;
                ++failed;
            } else {
                ++ok;
            }
        }
        if (had_failure) {
            CHECK(tl_class(rc) == MPI_ERR_IN_STATUS, "Waitsome returned class %d", tl_class(rc));
            expect_handler("Waitsome", comm, fail_class);
        } else {
            CHECK(rc == MPI_SUCCESS && calls == 0, "Waitsome without failure: rc %d, %d handler calls", rc, calls);
        }
    }
    CHECK(failed == 1 && ok == (self_next >= 0), "Waitsome: %d failed, %d ok", failed, ok);

    /* Testall: the same as Waitall once everything is complete. */
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, bad, tag + 3, comm, &reqs[0]));
    reqs[1] = MPI_REQUEST_NULL;
    rc = MPI_SUCCESS;
    while (!flag) rc = MPI_Testall(2, reqs, &flag, sts);
    CHECK(tl_class(rc) == MPI_ERR_IN_STATUS, "Testall returned class %d", tl_class(rc));
    CHECK(tl_class(sts[0].MPI_ERROR) == fail_class, "Testall status class %d", tl_class(sts[0].MPI_ERROR));
    expect_handler("Testall", comm, fail_class);

    /* Waitany: the failed request's class, as the result and to the handler. */
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, bad, tag + 4, comm, &reqs[0]));
    rc = MPI_Waitany(1, reqs, &idx, &st);
    CHECK(idx == 0, "Waitany index %d", idx);
    CHECK(tl_class(rc) == fail_class, "Waitany returned class %d, expected %d", tl_class(rc), fail_class);
    expect_handler("Waitany", comm, fail_class);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &me, &size, 3);
    v = size - 1;
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == v) tl_die(SIGKILL);
    const int nsurv = size - 1;
    next = (me + 1) % nsurv;
    prev = (me - 1 + nsurv) % nsurv;
    CHECK(tl_wait_failed(MPI_COMM_WORLD, 1, 30) == 1, "the failure of rank %d was not seen", v);

    /* v's failure: MPIX_ERR_PROC_FAILED. */
    check_calls(MPI_COMM_WORLD, v, MPIX_ERR_PROC_FAILED, 100, next, prev);

    /* A revoked communicator of the survivors: MPIX_ERR_REVOKED. */
    MPI_Comm surv, r;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &surv));
    MPI_OK(MPI_Comm_dup(surv, &r));
    MPI_OK(MPI_Comm_set_errhandler(r, eh));
    MPI_Request pending;
    int z = 0;
    MPI_OK(MPI_Irecv(&z, 1, MPI_INT, (me + 1) % nsurv, 7, r, &pending)); /* never sent */
    MPI_OK(MPI_Barrier(surv));
    if (me == 0) MPI_OK(MPIX_Comm_revoke(r));
    /* The pending receive ends with the revoke: handler and return say so. */
    int rc = MPI_Wait(&pending, MPI_STATUS_IGNORE);
    CHECK(tl_class(rc) == MPIX_ERR_REVOKED, "Wait on the revoked communicator: class %d", tl_class(rc));
    expect_handler("Wait", r, MPIX_ERR_REVOKED);
    check_calls(r, (me + 1) % nsurv, MPIX_ERR_REVOKED, 200, -1, -1);

    MPI_OK(MPI_Comm_free(&r));
    MPI_OK(MPI_Comm_free(&surv));
    MPI_OK(MPI_Errhandler_free(&eh));
    if (me == 0) printf("ft_errhandler: handler classes and return codes as Open MPI's ULFM on %d survivors\n", nsurv);
    MPI_OK(MPI_Finalize());
    return 0;
}
