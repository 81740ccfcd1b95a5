/*
 * status.MPI_ERROR (MPI-3.1 §3.2.5): calls of one status never write it;
 * Waitall/Waitsome/Testall/Testsome write it in every status they fill, and
 * only when they return MPI_ERR_IN_STATUS. Two ranks exchange small messages.
 */
#include "testlib.h"

#define SENTINEL 4242

static int rank, peer;

static void send_one(int tag, int v) { MPI_OK(MPI_Send(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD)); }

#define UNTOUCHED(st, what) CHECK((st).MPI_ERROR == SENTINEL, "%s wrote MPI_ERROR (%d)", what, (st).MPI_ERROR)

/* The calls of one status: MPI_ERROR never written. */
static void single_status_calls(void) {
    MPI_Status st;
    int v = 0, flag = 0, idx = -1;
    MPI_Request r;
    MPI_Message m;

    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
    UNTOUCHED(st, "MPI_Recv");
    CHECK(v == 1 && st.MPI_TAG == 1 && st.MPI_SOURCE == peer, "MPI_Recv status");

    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Probe(peer, 2, MPI_COMM_WORLD, &st));
    UNTOUCHED(st, "MPI_Probe");
    st.MPI_ERROR = SENTINEL;
    do MPI_OK(MPI_Iprobe(peer, 2, MPI_COMM_WORLD, &flag, &st));
    while (!flag);
    UNTOUCHED(st, "MPI_Iprobe");
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));

    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Mprobe(peer, 3, MPI_COMM_WORLD, &m, &st));
    UNTOUCHED(st, "MPI_Mprobe");
    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Mrecv(&v, 1, MPI_INT, &m, &st));
    UNTOUCHED(st, "MPI_Mrecv");
    CHECK(v == 3 && st.MPI_TAG == 3, "MPI_Mrecv status");

    st.MPI_ERROR = SENTINEL;
    do MPI_OK(MPI_Improbe(peer, 4, MPI_COMM_WORLD, &flag, &m, &st));
    while (!flag);
    UNTOUCHED(st, "MPI_Improbe");
    MPI_OK(MPI_Imrecv(&v, 1, MPI_INT, &m, &r));
    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Wait(&r, &st));
    UNTOUCHED(st, "MPI_Wait");

    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r));
    st.MPI_ERROR = SENTINEL;
    do MPI_OK(MPI_Request_get_status(r, &flag, &st));
    while (!flag);
    UNTOUCHED(st, "MPI_Request_get_status");
    st.MPI_ERROR = SENTINEL;
    do MPI_OK(MPI_Test(&r, &flag, &st));
    while (!flag);
    UNTOUCHED(st, "MPI_Test");

    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &r));
    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Waitany(1, &r, &idx, &st));
    UNTOUCHED(st, "MPI_Waitany");
    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &r));
    st.MPI_ERROR = SENTINEL;
    do MPI_OK(MPI_Testany(1, &r, &idx, &flag, &st));
    while (!flag);
    UNTOUCHED(st, "MPI_Testany");

    /* Null and inactive requests, MPI_PROC_NULL. */
    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Wait(&r, &st));
    UNTOUCHED(st, "MPI_Wait (null request)");
    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    UNTOUCHED(st, "MPI_Recv (MPI_PROC_NULL)");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_PROC_NULL source");

    /* Sendrecv and Sendrecv_replace. */
    int out = 100 + rank;
    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, peer, 20, &v, 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &st));
    UNTOUCHED(st, "MPI_Sendrecv");
    CHECK(v == 100 + peer, "MPI_Sendrecv data");
    v = 200 + rank;
    st.MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Sendrecv_replace(&v, 1, MPI_INT, peer, 21, peer, 21, MPI_COMM_WORLD, &st));
    UNTOUCHED(st, "MPI_Sendrecv_replace");
    CHECK(v == 200 + peer, "MPI_Sendrecv_replace data");
}

static void many_status_calls(void) {
    int flag = 0;
    /* The calls of many statuses, all successful: MPI_ERROR untouched. */
    int a = 0, b = 0;
    MPI_Request rs[2];
    MPI_Status sts[2];
    int indices[2], outcount = 0;
    MPI_OK(MPI_Irecv(&a, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &rs[0]));
    MPI_OK(MPI_Irecv(&b, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &rs[1]));
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Waitall(2, rs, sts));
    UNTOUCHED(sts[0], "MPI_Waitall (success)");
    UNTOUCHED(sts[1], "MPI_Waitall (success)");
    MPI_OK(MPI_Irecv(&a, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, &rs[0]));
    sts[0].MPI_ERROR = SENTINEL;
    MPI_OK(MPI_Waitsome(1, rs, &outcount, indices, sts));
    UNTOUCHED(sts[0], "MPI_Waitsome (success)");
    MPI_OK(MPI_Irecv(&a, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &rs[0]));
    sts[0].MPI_ERROR = SENTINEL;
    do MPI_OK(MPI_Testall(1, rs, &flag, sts));
    while (!flag);
    UNTOUCHED(sts[0], "MPI_Testall (success)");
    MPI_OK(MPI_Irecv(&a, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &rs[0]));
    sts[0].MPI_ERROR = SENTINEL;
    do MPI_OK(MPI_Testsome(1, rs, &outcount, indices, sts));
    while (outcount == 0);
    UNTOUCHED(sts[0], "MPI_Testsome (success)");
}

static void error_in_status(void) {
    MPI_Status st;
    MPI_Request rs[2];
    MPI_Status sts[2];
    int a = 0, b = 0;
    /* One truncated receive: MPI_ERR_IN_STATUS, every status written. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int two[2] = {1, 2};
    MPI_OK(MPI_Send(two, 2, MPI_INT, peer, 30, MPI_COMM_WORLD));
    send_one(31, 5);
    MPI_OK(MPI_Irecv(&a, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &rs[0]));
    MPI_OK(MPI_Irecv(&b, 1, MPI_INT, peer, 31, MPI_COMM_WORLD, &rs[1]));
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = SENTINEL;
    int rc = MPI_Waitall(2, rs, sts);
    CHECK(tl_class_of(rc) == MPI_ERR_IN_STATUS, "Waitall with a truncation returned class %d", tl_class_of(rc));
    CHECK(tl_class_of(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "truncated status holds %d", sts[0].MPI_ERROR);
    CHECK(sts[1].MPI_ERROR == MPI_SUCCESS, "good status holds %d", sts[1].MPI_ERROR);
    /* Single-status call with an error: the code is returned, MPI_ERROR untouched. */
    MPI_OK(MPI_Send(two, 2, MPI_INT, peer, 32, MPI_COMM_WORLD));
    st.MPI_ERROR = SENTINEL;
    rc = MPI_Recv(&a, 1, MPI_INT, peer, 32, MPI_COMM_WORLD, &st);
    CHECK(tl_class_of(rc) == MPI_ERR_TRUNCATE, "truncated MPI_Recv returned class %d", tl_class_of(rc));
    UNTOUCHED(st, "MPI_Recv (truncated)");
}

int main(int argc, char **argv) {
    int size;
    tl_init(&argc, &argv, &rank, &size, 2);
    if (rank >= 2) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Finalize();
        return 0;
    }
    peer = 1 - rank;
    MPI_Request r;

    /* Each rank sends to the other, one tag per call under test. */
    for (int tag = 1; tag <= 12; ++tag) {
        MPI_OK(MPI_Isend(&tag, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Request_free(&r));
    }

    single_status_calls();
    many_status_calls();
    error_in_status();

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("status_error: OK\n");
    MPI_Finalize();
    return 0;
}
