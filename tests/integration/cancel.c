/*
 * MPI_Cancel and MPI_Test_cancelled on receives.
 *
 * Any nprocs >= 2. Ranks are paired (0,1), (2,3), ...; with an odd size the
 * last rank only runs the local parts.
 *   1. (every rank) An Irecv that can never match (unused tag; named source and
 *      MPI_ANY_SOURCE) -> Cancel -> Wait -> Test_cancelled true, request null.
 *      The same completed with Test, and with Waitall over several cancelled
 *      receives.
 *   2. (pairs, eager and rendezvous sizes) An Irecv already matched and
 *      completed (seen with Request_get_status) -> Cancel -> Wait ->
 *      Test_cancelled false, status right, data intact.
 *   3. (pairs) Cancel, then re-post: the receiver posts Irecv A and B on the
 *      same envelope and cancels A; only then does the sender send three
 *      messages: B gets the first, and new Irecvs get the second and third, in
 *      order. A is cancelled and its buffer untouched.
 */
#include "testlib.h"

#define UNUSED_TAG 4242
#define TAG_DONE 11
#define TAG_ORDER 12
#define TAG_GO 13

static int rank, size, partner; /* partner -1: no pair */

static void expect_cancelled(MPI_Request *req, int use_test, const char *what) {
    MPI_Status st;
    int flag = -1;
    if (use_test) {
        int done = 0;
        while (!done) MPI_OK(MPI_Test(req, &done, &st));
    } else {
        MPI_OK(MPI_Wait(req, &st));
    }
    CHECK(*req == MPI_REQUEST_NULL, "%s: request not freed after completion", what);
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "%s: Test_cancelled gives %d, expected true", what, flag);
}

static void never_matching(void) {
    int buf[4] = {1, 2, 3, 4};
    MPI_Request req;

    MPI_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_ANY_SOURCE, UNUSED_TAG, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Cancel(&req));
    CHECK(req != MPI_REQUEST_NULL, "Cancel set the request to null");
    expect_cancelled(&req, 0, "ANY_SOURCE receive cancelled, Wait");

    MPI_OK(MPI_Irecv(buf, 4, MPI_INT, (rank + 1) % size, UNUSED_TAG, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Cancel(&req));
    expect_cancelled(&req, 1, "named-source receive cancelled, Test");

    MPI_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Cancel(&req));
    expect_cancelled(&req, 0, "ANY_SOURCE/ANY_TAG receive cancelled");
    CHECK(buf[0] == 1 && buf[3] == 4, "a cancelled receive wrote its buffer");

    {
        MPI_Request reqs[3];
        MPI_Status sts[3];
        int bufs[3];
        for (int k = 0; k < 3; ++k)
            MPI_OK(MPI_Irecv(&bufs[k], 1, MPI_INT, MPI_ANY_SOURCE, UNUSED_TAG + k, MPI_COMM_WORLD, &reqs[k]));
        for (int k = 2; k >= 0; --k) MPI_OK(MPI_Cancel(&reqs[k]));
        MPI_OK(MPI_Waitall(3, reqs, sts));
        for (int k = 0; k < 3; ++k) {
            int flag = -1;
            CHECK(reqs[k] == MPI_REQUEST_NULL, "Waitall did not free cancelled request %d", k);
            MPI_OK(MPI_Test_cancelled(&sts[k], &flag));
            CHECK(flag == 1, "Waitall: request %d not reported cancelled", k);
        }
    }
}

static void already_matched(size_t len, unsigned char *buf) {
    const uint64_t seed = 1000 + len;
    const int tag = 20;
    if (partner < 0) return;
    if (rank % 2 == 1) {
        tl_fill(buf, len, seed + (uint64_t)rank);
        MPI_OK(MPI_Send(buf, (int)len, MPI_BYTE, partner, tag, MPI_COMM_WORLD));
        return;
    }
    MPI_Request req;
    MPI_Status st;
    int flag = 0, cnt = -1;
    memset(buf, 0, len);
    MPI_OK(MPI_Irecv(buf, (int)len, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req));
    while (!flag) MPI_OK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Cancel(&req));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "Wait did not free the request");
    flag = -1;
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0, "len %zu: cancelling a completed receive: Test_cancelled gives %d", len, flag);
    CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == tag, "len %zu: status source %d tag %d", len, st.MPI_SOURCE,
          st.MPI_TAG);
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(cnt == (int)len, "len %zu: count %d", len, cnt);
    {
        size_t bad = tl_verify(buf, len, seed + (uint64_t)partner);
        CHECK(bad == (size_t)-1, "len %zu: data of a completed-then-cancelled receive wrong at %zu", len, bad);
    }
}

static void cancel_then_repost(size_t len, unsigned char *bufs[4]) {
    const uint64_t seed = 5000 + len;
    if (partner < 0) return;
    if (rank % 2 == 1) {
        int go = 0;
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, partner, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(go == 1, "go %d", go);
        for (int k = 0; k < 3; ++k) {
            tl_fill(bufs[k], len, seed + (uint64_t)k);
            MPI_OK(MPI_Send(bufs[k], (int)len, MPI_BYTE, partner, TAG_ORDER, MPI_COMM_WORLD));
        }
        return;
    }
    MPI_Request a, b, c[2];
    MPI_Status st;
    int flag = -1, cnt = -1;
    const int go = 1;
    for (int k = 0; k < 4; ++k) memset(bufs[k], 0xee, len);
    MPI_OK(MPI_Irecv(bufs[3], (int)len, MPI_BYTE, partner, TAG_ORDER, MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Irecv(bufs[0], (int)len, MPI_BYTE, MPI_ANY_SOURCE, TAG_ORDER, MPI_COMM_WORLD, &b));
    MPI_OK(MPI_Cancel(&a));
    MPI_OK(MPI_Wait(&a, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "cancel before any send: Test_cancelled %d", flag);
    MPI_OK(MPI_Send(&go, 1, MPI_INT, partner, TAG_GO, MPI_COMM_WORLD));
    MPI_OK(MPI_Irecv(bufs[1], (int)len, MPI_BYTE, partner, TAG_ORDER, MPI_COMM_WORLD, &c[0]));
    MPI_OK(MPI_Irecv(bufs[2], (int)len, MPI_BYTE, partner, MPI_ANY_TAG, MPI_COMM_WORLD, &c[1]));
    MPI_OK(MPI_Wait(&b, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0, "receive B reported cancelled");
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == TAG_ORDER && cnt == (int)len,
          "receive B: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    for (int k = 0; k < 2; ++k) {
        MPI_OK(MPI_Wait(&c[k], &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0, "re-posted receive %d reported cancelled", k);
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == TAG_ORDER && cnt == (int)len,
              "re-posted receive %d: source %d tag %d count %d", k, st.MPI_SOURCE, st.MPI_TAG, cnt);
    }
    for (int k = 0; k < 3; ++k) {
        size_t bad = tl_verify(bufs[k], len, seed + (uint64_t)k);
        CHECK(bad == (size_t)-1, "len %zu: message %d (in order) wrong at offset %zu", len, k, bad);
    }
    for (size_t i = 0; i < len; ++i)
        CHECK(bufs[3][i] == 0xee, "len %zu: the cancelled receive's buffer was written at %zu", len, i);
}

int main(int argc, char **argv) {
    static const size_t sizes[2] = {333, 200000};
    unsigned char *bufs[4];
    tl_init(&argc, &argv, &rank, &size, 2);
    partner = (rank % 2 == 0) ? (rank + 1 < size ? rank + 1 : -1) : rank - 1;
    for (int k = 0; k < 4; ++k) {
        bufs[k] = malloc(sizes[1]);
        CHECK(bufs[k] != NULL, "malloc");
    }

    never_matching();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int s = 0; s < 2; ++s) {
        already_matched(sizes[s], bufs[0]);
        cancel_then_repost(sizes[s], bufs);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    never_matching();
    /* Nothing stray is left: no cancelled receive consumed or left a message. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        int flag = -1;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a message is left unreceived at the end");
    }

    for (int k = 0; k < 4; ++k) free(bufs[k]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("cancel: OK (%d ranks)\n", size);
    return 0;
}
