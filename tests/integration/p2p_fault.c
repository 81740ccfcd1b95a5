/*
 * Point-to-point semantics after a real failure (issue 4; spec 000 §17.6,
 * spec 001 §1.2, spec 002). The last rank, v, is killed with SIGKILL:
 *
 *   p2p_fault before   v dies before the operations start
 *   p2p_fault during   v dies while the survivors are blocked on it: in a
 *                      synchronous send, a named receive, a blocking
 *                      MPI_ANY_SOURCE receive, and pending nonblocking ones
 *
 * Then every survivor checks, with exact error classes: operations with v
 * fail with MPI_ERR_PROC_FAILED (nonblocking ones only at completion);
 * operations among survivors are unaffected; wildcard receives are disabled
 * until the failure is acknowledged (blocking: MPI_ERR_PROC_FAILED;
 * nonblocking: MPI_ERR_PROC_FAILED_PENDING and still pending, completing
 * later); messages v sent before it died are still delivered, in order;
 * Waitall/Waitsome/Testall report MPI_ERR_IN_STATUS per request; Sendrecv
 * returns MPI_ERR_PROC_FAILED and names the failed peer in its status; the failure queries (ULFM and the
 * 2011 calls) agree; every survivor reports the same failed set; and
 * MPI_Finalize completes.
 */
#include "ftlib.h"

enum { EARLY = 10, NEARLY = 5, OK_TAG = 9 };

static int me, size, v, nsurv, next, prev;

static int group_has_only_v(MPI_Group g) {
    int n = 0, r = 0, out = MPI_UNDEFINED;
    MPI_Group world;
    MPI_Group_size(g, &n);
    if (n != 1) return 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(g, 1, &r, world, &out);
    MPI_Group_free(&world);
    return out == v;
}

/* The pending wildcard receive `req` (tag) completes once prev sends to us;
   prev sends only when we say we are ready, so it cannot match earlier. */
static void complete_pending(MPI_Request *req, int tag) {
    int ready = 1, token = 0, flag = 1;
    MPI_Status st;
    CHECK_CLASS(MPI_Wait(req, &st), MPI_ERR_PROC_FAILED_PENDING);
    CHECK(*req != MPI_REQUEST_NULL, "a pending request must stay active");
    CHECK_CLASS(MPI_Test(req, &flag, &st), MPI_ERR_PROC_FAILED_PENDING);
    CHECK(flag == 0 && *req != MPI_REQUEST_NULL, "Test must leave the pending request active");

    /* Queries before and after acknowledging. */
    MPI_Group g;
    MPI_OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &g));
    CHECK(group_has_only_v(g), "MPIX_Comm_get_failed must report exactly rank %d", v);
    MPI_Group_free(&g);
    MPI_OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
    CHECK(g == MPI_GROUP_EMPTY, "nothing is acknowledged yet");
    int nacked = -1;
    MPI_OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 0, &nacked));
    CHECK(nacked == 0, "acknowledged %d after acking 0", nacked);
    MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MPI_OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
    CHECK(group_has_only_v(g), "acked group must be exactly rank %d", v);
    MPI_Group_free(&g);
    MPI_OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, size, &nacked));
    CHECK(nacked == 1, "acknowledged %d, expected 1", nacked);

    /* Now the wildcard receive proceeds with a survivor's message. */
    MPI_OK(MPI_Send(&ready, 1, MPI_INT, prev, tag + 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(&ready, 1, MPI_INT, next, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    token = 1000 + me;
    MPI_OK(MPI_Send(&token, 1, MPI_INT, next, tag, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(req, &st));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == tag, "pending receive matched %d/%d", st.MPI_SOURCE, st.MPI_TAG);
}

/* The 2011 calls on the same record. */
static void check_2011_calls(void) {
    int nf = -1, nnew = -1, ranks[4] = {-1, -1, -1, -1};
    MPI_OK(MPI_Comm_validate_local(MPI_COMM_WORLD, &nf, &nnew));
    CHECK(nf == 1 && nnew == 1, "validate_local: %d failed, %d new", nf, nnew);
    MPI_OK(MPI_Comm_get_failed_local(MPI_COMM_WORLD, MPI_FAILED_ALL, ranks));
    CHECK(ranks[0] == v, "get_failed_local(ALL) = %d", ranks[0]);
    MPI_OK(MPI_Comm_get_failed_local(MPI_COMM_WORLD, MPI_FAILED_NEW, ranks + 1));
    CHECK(ranks[1] == v, "get_failed_local(NEW) = %d", ranks[1]);
    MPI_OK(MPI_Comm_validate_local(MPI_COMM_WORLD, &nf, &nnew));
    CHECK(nf == 1 && nnew == 0, "second validate_local: %d failed, %d new", nf, nnew);
    CHECK_CLASS(MPI_Comm_get_failed_local(MPI_COMM_WORLD, 77, ranks), MPI_ERR_ARG);
    MPI_Group g;
    MPI_OK(MPI_Comm_group_failed(MPI_COMM_WORLD, &g));
    CHECK(group_has_only_v(g), "MPI_Comm_group_failed must report exactly rank %d", v);
    MPI_Group_free(&g);
    MPI_OK(MPI_Comm_reenable_any_source(MPI_COMM_WORLD, &g));
    CHECK(group_has_only_v(g), "reenable_any_source must return exactly rank %d", v);
    MPI_Group_free(&g);
    CHECK_CLASS(MPI_Comm_remote_group_failed(MPI_COMM_WORLD, &g), MPI_ERR_COMM);
}

/* Multi-request completion: an error per request (x: the value sent). */
static void check_multi_completion(int x) {
    int y = 0, flag = 0;
    MPI_Request reqs[2];
    MPI_Status sts[2];
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, v, 40, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, prev, 41, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Send(&x, 1, MPI_INT, next, 41, MPI_COMM_WORLD));
    CHECK_CLASS(MPI_Waitall(2, reqs, sts), MPI_ERR_IN_STATUS);
    CHECK(tl_class(sts[0].MPI_ERROR) == MPI_ERR_PROC_FAILED, "Waitall status 0: %d", sts[0].MPI_ERROR);
    CHECK(sts[1].MPI_ERROR == MPI_SUCCESS && y == 3000 + prev, "Waitall status 1: %d (%d)", sts[1].MPI_ERROR, y);

    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, v, 42, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, prev, 43, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Send(&x, 1, MPI_INT, next, 43, MPI_COMM_WORLD));
    int done = 0, failed = 0, ok = 0;
    while (done < 2) {
        int outcount = 0, idx[2];
        int rc = MPI_Waitsome(2, reqs, &outcount, idx, sts);
        CHECK(rc == MPI_SUCCESS || tl_class(rc) == MPI_ERR_IN_STATUS, "Waitsome returned %d", rc);
        for (int i = 0; i < outcount; ++i) {
            if (idx[i] == 0) failed += tl_class(sts[i].MPI_ERROR) == MPI_ERR_PROC_FAILED;
            else ok += sts[i].MPI_ERROR == MPI_SUCCESS || rc == MPI_SUCCESS;
        }
        done += outcount;
    }
    CHECK(failed == 1 && ok == 1, "Waitsome: %d failed, %d ok", failed, ok);

    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, v, 44, MPI_COMM_WORLD, &reqs[0]));
    flag = 0;
    int rc = MPI_SUCCESS;
    while (!flag) rc = MPI_Testall(1, reqs, &flag, sts);
    CHECK(tl_class(rc) == MPI_ERR_IN_STATUS && tl_class(sts[0].MPI_ERROR) == MPI_ERR_PROC_FAILED, "Testall: %d / %d",
          rc, sts[0].MPI_ERROR);
}

static void survivor_checks(int early_messages, int acked) {
    int x = 0, flag = 0;
    MPI_Status st;
    MPI_Request req;

    /* Operations with v. */
    CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, v, 20, MPI_COMM_WORLD, &st), MPI_ERR_PROC_FAILED);
    if (early_messages) { /* sent before v died: delivered in order, then the error */
        for (int i = 0; i < NEARLY; ++i) {
            MPI_OK(MPI_Recv(&x, 1, MPI_INT, v, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(x == i && st.MPI_TAG == EARLY + i, "early message %d: got %d tag %d", i, x, st.MPI_TAG);
        }
        CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, v, MPI_ANY_TAG, MPI_COMM_WORLD, &st), MPI_ERR_PROC_FAILED);
    }
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, v, 21, MPI_COMM_WORLD), MPI_ERR_PROC_FAILED);
    CHECK_CLASS(MPI_Ssend(&x, 1, MPI_INT, v, 21, MPI_COMM_WORLD), MPI_ERR_PROC_FAILED);
    MPI_OK(MPI_Isend(&x, 1, MPI_INT, v, 22, MPI_COMM_WORLD, &req)); /* no error at start */
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_PROC_FAILED);
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, v, 23, MPI_COMM_WORLD, &req));
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_PROC_FAILED);
    CHECK_CLASS(MPI_Probe(v, 24, MPI_COMM_WORLD, &st), MPI_ERR_PROC_FAILED);

    /* Wildcards while the failure is not acknowledged. */
    if (!acked) {
        CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &st), MPI_ERR_PROC_FAILED);
        CHECK_CLASS(MPI_Iprobe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &flag, &st), MPI_ERR_PROC_FAILED);
        MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, &req));
        complete_pending(&req, 31);
        CHECK(x == 1000 + prev, "wildcard receive got %d", x);
    }

    /* Acknowledged: blocking wildcard receives work again. */
    x = 2000 + me;
    MPI_OK(MPI_Send(&x, 1, MPI_INT, next, 33, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 33, MPI_COMM_WORLD, &st));
    CHECK(x == 2000 + prev && st.MPI_SOURCE == prev, "got %d from %d", x, st.MPI_SOURCE);

    check_2011_calls();

    /* Multi-request completion: an error per request. */
    int y = 0;
    x = 3000 + me;
    check_multi_completion(x);

    /* Sendrecv names the failed peer, whichever half involves it. Its error
       is its return code: a call of one status leaves MPI_ERROR alone (MPI
       3.1 section 3.2.5, as MPICH and Open MPI). */
    st.MPI_SOURCE = -7;
    st.MPI_ERROR = -8;
    MPI_OK(MPI_Isend(&x, 1, MPI_INT, next, 50, MPI_COMM_WORLD, &req));
    CHECK_CLASS(MPI_Sendrecv(&x, 1, MPI_INT, v, 51, &y, 1, MPI_INT, prev, 50, MPI_COMM_WORLD, &st),
                MPI_ERR_PROC_FAILED);
    CHECK(st.MPI_SOURCE == v && st.MPI_ERROR == -8, "Sendrecv status %d/%d", st.MPI_SOURCE, st.MPI_ERROR);
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, prev, 52, MPI_COMM_WORLD, &req));
    CHECK_CLASS(MPI_Sendrecv(&x, 1, MPI_INT, next, 52, &y, 1, MPI_INT, v, 53, MPI_COMM_WORLD, &st),
                MPI_ERR_PROC_FAILED);
    CHECK(st.MPI_SOURCE == v && st.MPI_ERROR == -8, "Sendrecv status %d/%d", st.MPI_SOURCE, st.MPI_ERROR);
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* Operations among survivors are unaffected. */
    for (int round = 0; round < 20; ++round) {
        x = round * 100 + me;
        MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, next, 60, &y, 1, MPI_INT, prev, 60, MPI_COMM_WORLD, &st));
        CHECK(y == round * 100 + prev, "ring round %d got %d", round, y);
    }
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &me, &size, 2);
    CHECK(argc == 2 && (!strcmp(argv[1], "before") || !strcmp(argv[1], "during")), "usage: p2p_fault before|during");
    const int during = !strcmp(argv[1], "during");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    v = size - 1;
    nsurv = size - 1;
    next = (me + 1) % nsurv;
    prev = (me - 1 + nsurv) % nsurv;

    if (me == v) {
        int x;
        if (!during) {
            for (int i = 0; i < NEARLY; ++i) MPI_OK(MPI_Send(&i, 1, MPI_INT, 0, EARLY + i, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, OK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            for (int s = 0; s < nsurv; ++s) MPI_OK(MPI_Recv(&x, 1, MPI_INT, s, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        tl_die(SIGKILL);
    }

    if (!during) {
        if (me == 0) { /* every early message is here before v may die */
            MPI_Status st;
            int x = 1;
            MPI_OK(MPI_Probe(v, EARLY + NEARLY - 1, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Send(&x, 1, MPI_INT, v, OK_TAG, MPI_COMM_WORLD));
        }
        survivor_checks(me == 0, 0);
    } else {
        int go = 1, x = 0, big[4096];
        MPI_Request named, any, gor;
        MPI_OK(MPI_Irecv(&x, 1, MPI_INT, v, 2, MPI_COMM_WORLD, &named));
        MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &any));
        MPI_OK(MPI_Isend(&go, 1, MPI_INT, v, 1, MPI_COMM_WORLD, &gor));
        MPI_Status st;
        switch (me % 3) { /* blocked in one operation when v dies */
        case 0: CHECK_CLASS(MPI_Ssend(big, 4096, MPI_INT, v, 4, MPI_COMM_WORLD), MPI_ERR_PROC_FAILED); break;
        case 1:
            CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &st), MPI_ERR_PROC_FAILED);
            break;
        case 2: CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, v, 7, MPI_COMM_WORLD, &st), MPI_ERR_PROC_FAILED); break;
        }
        MPI_OK(MPI_Wait(&gor, MPI_STATUS_IGNORE));
        CHECK_CLASS(MPI_Wait(&named, MPI_STATUS_IGNORE), MPI_ERR_PROC_FAILED);
        complete_pending(&any, 3); /* acknowledges the failure */
        survivor_checks(0, 1);
    }
    int expect = v;
    tl_check_agreement(MPI_COMM_WORLD, &expect, 1);
    if (me == 0) printf("p2p_fault %s: %d survivors agree that rank %d failed\n", argv[1], nsurv, v);
    MPI_OK(MPI_Finalize());
    return 0;
}
