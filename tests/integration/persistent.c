/*
 * Persistent requests: MPI_Send_init / MPI_Ssend_init / MPI_Recv_init,
 * MPI_Start / MPI_Startall, inactive requests, MPI_Request_free.
 *
 * Any nprocs >= 2 (ring: each rank sends to rank+1 and receives from rank-1;
 * with 2 ranks both neighbours are the same rank). For an eager size (1000 B)
 * and a rendezvous size (64 KiB), with Send_init and with Ssend_init:
 *   - 200 iterations reusing the same two requests; the send buffer is refilled
 *     with a new pattern each iteration and the received data is verified,
 *     with the status (source, tag, count). Even iterations use Startall, odd
 *     ones Start on each request, completed with Wait in either order.
 *   - after completion the requests are inactive but not null: Wait and Test
 *     return at once with an empty status (source MPI_ANY_SOURCE, tag
 *     MPI_ANY_TAG, count 0), Request_get_status gives flag 1, Waitany over
 *     them gives MPI_UNDEFINED, Waitall leaves them allocated.
 *   - MPI_Request_free of the inactive requests sets them to MPI_REQUEST_NULL.
 */
#include "testlib.h"

#define ITERS 200

static int rank, size, left, right;

static uint64_t seed_of(int sync, size_t len, int src, int iter) {
    return ((uint64_t)sync << 60) ^ ((uint64_t)len << 32) ^ ((uint64_t)src << 20) ^ (uint64_t)iter;
}

static void check_empty(const MPI_Status *st, const char *what) {
    int cnt = -1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE, "%s: MPI_SOURCE %d, expected MPI_ANY_SOURCE", what, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: MPI_TAG %d, expected MPI_ANY_TAG", what, st->MPI_TAG);
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
    CHECK(cnt == 0, "%s: count %d, expected 0", what, cnt);
}

static void check_inactive(MPI_Request reqs[2]) {
    for (int k = 0; k < 2; ++k) {
        MPI_Status st;
        int flag = -1;
        memset(&st, 0x33, sizeof st);
        MPI_OK(MPI_Wait(&reqs[k], &st));
        CHECK(reqs[k] != MPI_REQUEST_NULL, "Wait on an inactive persistent request set it to null");
        check_empty(&st, "Wait on an inactive persistent request");
        memset(&st, 0x33, sizeof st);
        MPI_OK(MPI_Test(&reqs[k], &flag, &st));
        CHECK(flag == 1, "Test on an inactive persistent request: flag %d", flag);
        CHECK(reqs[k] != MPI_REQUEST_NULL, "Test on an inactive persistent request set it to null");
        check_empty(&st, "Test on an inactive persistent request");
        flag = -1;
        memset(&st, 0x33, sizeof st);
        MPI_OK(MPI_Request_get_status(reqs[k], &flag, &st));
        CHECK(flag == 1, "Request_get_status on an inactive persistent request: flag %d", flag);
        check_empty(&st, "Request_get_status on an inactive persistent request");
    }
    {
        int idx = -2, out = -2, indices[2];
        MPI_Status sts[2];
        MPI_OK(MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == MPI_UNDEFINED, "Waitany over inactive requests: index %d", idx);
        MPI_OK(MPI_Waitsome(2, reqs, &out, indices, sts));
        CHECK(out == MPI_UNDEFINED, "Waitsome over inactive requests: outcount %d", out);
        MPI_OK(MPI_Waitall(2, reqs, sts));
        for (int k = 0; k < 2; ++k) {
            CHECK(reqs[k] != MPI_REQUEST_NULL, "Waitall over inactive requests freed one");
            check_empty(&sts[k], "Waitall over inactive requests");
        }
    }
}

static void ring(int sync, size_t len, unsigned char *sbuf, unsigned char *rbuf) {
    const int tag = 10 + sync;
    MPI_Request reqs[2]; /* [0] receive, [1] send */
    MPI_OK(MPI_Recv_init(rbuf, (int)len, MPI_BYTE, left, tag, MPI_COMM_WORLD, &reqs[0]));
    if (sync) MPI_OK(MPI_Ssend_init(sbuf, (int)len, MPI_BYTE, right, tag, MPI_COMM_WORLD, &reqs[1]));
    else MPI_OK(MPI_Send_init(sbuf, (int)len, MPI_BYTE, right, tag, MPI_COMM_WORLD, &reqs[1]));
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL, "*_init returned MPI_REQUEST_NULL");

    /* A fresh persistent request is inactive. */
    check_inactive(reqs);

    for (int it = 0; it < ITERS; ++it) {
        MPI_Status sts[2];
        int cnt = -1;
        tl_fill(sbuf, len, seed_of(sync, len, rank, it));
        memset(rbuf, 0, len);
        if (it % 2 == 0) {
            MPI_OK(MPI_Startall(2, reqs));
            MPI_OK(MPI_Waitall(2, reqs, sts));
        } else {
            MPI_OK(MPI_Start(&reqs[0]));
            MPI_OK(MPI_Start(&reqs[1]));
            if (it % 4 == 1) {
                MPI_OK(MPI_Wait(&reqs[1], &sts[1]));
                MPI_OK(MPI_Wait(&reqs[0], &sts[0]));
            } else {
                MPI_OK(MPI_Wait(&reqs[0], &sts[0]));
                MPI_OK(MPI_Wait(&reqs[1], &sts[1]));
            }
        }
        CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
              "iteration %d: completion freed a persistent request", it);
        CHECK(sts[0].MPI_SOURCE == left, "iteration %d: source %d, expected %d", it, sts[0].MPI_SOURCE, left);
        CHECK(sts[0].MPI_TAG == tag, "iteration %d: tag %d, expected %d", it, sts[0].MPI_TAG, tag);
        MPI_OK(MPI_Get_count(&sts[0], MPI_BYTE, &cnt));
        CHECK(cnt == (int)len, "iteration %d: count %d, expected %zu", it, cnt, len);
        {
            size_t bad = tl_verify(rbuf, len, seed_of(sync, len, left, it));
            CHECK(bad == (size_t)-1, "%s len %zu iteration %d: wrong byte at %zu", sync ? "Ssend_init" : "Send_init",
                  len, it, bad);
        }
    }

    check_inactive(reqs);
    MPI_OK(MPI_Request_free(&reqs[0]));
    MPI_OK(MPI_Request_free(&reqs[1]));
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
}

/* A persistent receive started, completed by a message, freed; then one freed
 * without ever being started. */
static void free_cases(unsigned char *sbuf, unsigned char *rbuf) {
    MPI_Request r;
    MPI_OK(MPI_Recv_init(rbuf, 8, MPI_BYTE, left, 50, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free of a never-started request");
    MPI_OK(MPI_Send_init(sbuf, 8, MPI_BYTE, right, 50, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free of a never-started send request");
    /* Nothing was sent by the freed send. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        int flag = -1;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a freed, never-started persistent send delivered a message");
    }
}

int main(int argc, char **argv) {
    static const size_t sizes[2] = {1000, 64 * 1024};
    tl_init(&argc, &argv, &rank, &size, 2);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    unsigned char *sbuf = malloc(sizes[1]), *rbuf = malloc(sizes[1]);
    CHECK(sbuf && rbuf, "malloc");
    for (int sync = 0; sync < 2; ++sync)
        for (int s = 0; s < 2; ++s) {
            ring(sync, sizes[s], sbuf, rbuf);
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    free_cases(sbuf, rbuf);

    free(sbuf);
    free(rbuf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("persistent: OK (%d ranks)\n", size);
    return 0;
}
