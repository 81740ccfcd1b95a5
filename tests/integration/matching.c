/*
 * Matching order: MPI's non-overtaking rule with named, MPI_ANY_SOURCE and
 * MPI_ANY_TAG receives interleaved, with messages that arrive before the
 * receive (unexpected) and after it (posted), and with eager and rendezvous
 * messages mixed in one stream.
 *
 * Rank 0 receives; every other rank sends N messages with tag i % 3 and
 * payload {sender, i}. Each phase is separated by a barrier.
 */
#include "testlib.h"

#define N 60
#define BIG (64 * 1024) /* above the eager limit: rendezvous */

typedef struct {
    int sender;
    int seq;
} Msg;

static void send_stream(int rank, int phase) {
    for (int i = 0; i < N; ++i) {
        Msg m = {rank, i};
        MPI_OK(MPI_Send(&m, 2, MPI_INT, 0, i % 3 + phase * 10, MPI_COMM_WORLD));
    }
}

/* Phase 2: everything posted before anything is sent: first N/2 named
       receives per sender (interleaved across senders), then wildcards for the
       rest. Non-overtaking: each sender's first N/2 messages must fill its named
       receives in posting order, the later ones the wildcards, in order per source. */
static void phase_posted(int rank, int size, int *next) {
    const int senders = size - 1;
    if (rank == 0) {
        const int named = senders * (N / 2), total = senders * N;
        MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)total);
        Msg *in = malloc(sizeof(Msg) * (size_t)total);
        MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t)total);
        for (int k = 0; k < total; ++k) {
            int src = k < named ? 1 + k % senders : MPI_ANY_SOURCE;
            MPI_OK(MPI_Irecv(&in[k], 2, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &req[k]));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Waitall(total, req, sts));
        int *last = malloc(sizeof(int) * (size_t)size);
        for (int s = 0; s < size; ++s) last[s] = -1;
        memset(next, 0, (size_t)size * 3 * sizeof(int));
        for (int k = 0; k < total; ++k) {
            CHECK(sts[k].MPI_SOURCE == in[k].sender, "posted recv %d: source %d payload %d", k, sts[k].MPI_SOURCE,
                  in[k].sender);
            if (k < named) {
                CHECK(in[k].sender == 1 + k % senders, "named recv %d matched sender %d", k, in[k].sender);
                CHECK(in[k].seq == k / senders, "named recv %d: seq %d, expected %d", k, in[k].seq, k / senders);
            } else {
                CHECK(in[k].seq >= N / 2, "wildcard recv %d took seq %d of %d", k, in[k].seq, in[k].sender);
            }
            CHECK(in[k].seq > last[in[k].sender], "posted recv %d: seq %d from %d after %d", k, in[k].seq, in[k].sender,
                  last[in[k].sender]);
            last[in[k].sender] = in[k].seq;
            next[in[k].sender]++;
        }
        for (int s = 1; s < size; ++s) CHECK(next[s] == N, "sender %d: %d of %d messages", s, next[s], N);
        free(last);
        free(req);
        free(in);
        free(sts);
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < N; ++i) {
            Msg mm = {rank, i};
            MPI_OK(MPI_Send(&mm, 2, MPI_INT, 0, i % 3, MPI_COMM_WORLD));
        }
    }
}

/* Phase 3: eager and rendezvous messages in one stream keep their order,
       both when unexpected and when posted. */
static void phase_mixed_sizes(int rank, int size) {
    MPI_Status st;
    int sizes[] = {4, BIG, 8, 8, BIG, BIG, 1, 0, BIG + 1, 16};
    int ns = (int)(sizeof sizes / sizeof sizes[0]);
    if (rank == 0) {
        unsigned char *buf = malloc(BIG + 64);
        for (int round = 0; round < 2; ++round) {
            if (round == 1) MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* round 1: senders start after this */
            for (int s = 1; s < size; ++s) {
                for (int i = 0; i < ns; ++i) {
                    MPI_OK(MPI_Recv(buf, BIG + 64, MPI_BYTE, s, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                    int got;
                    MPI_Get_count(&st, MPI_BYTE, &got);
                    CHECK(got == sizes[i], "round %d from %d message %d: %d bytes, expected %d", round, s, i, got,
                          sizes[i]);
                    CHECK(tl_verify(buf, (size_t)got, (uint64_t)(s * 100 + i)) == (size_t)-1,
                          "content of message %d from %d", i, s);
                }
            }
            if (round == 0) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        free(buf);
    } else {
        unsigned char *buf = malloc(BIG + 64);
        for (int round = 0; round < 2; ++round) {
            if (round == 1) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_Request r[16];
            unsigned char *bufs[16];
            for (int i = 0; i < ns; ++i) {
                bufs[i] = malloc((size_t)sizes[i] + 1);
                tl_fill(bufs[i], (size_t)sizes[i], (uint64_t)(rank * 100 + i));
                MPI_OK(MPI_Isend(bufs[i], sizes[i], MPI_BYTE, 0, i, MPI_COMM_WORLD, &r[i]));
            }
            MPI_OK(MPI_Waitall(ns, r, MPI_STATUSES_IGNORE));
            for (int i = 0; i < ns; ++i) free(bufs[i]);
            if (round == 0) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        free(buf);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks");
    const int senders = size - 1;
    int *next = calloc((size_t)size * 3, sizeof(int));
    MPI_Status st;
    Msg m;

    /* Phase 0: all unexpected, received with ANY_SOURCE + ANY_TAG. */
    if (rank != 0) send_stream(rank, 0);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        memset(next, 0, (size_t)size * 3 * sizeof(int));
        for (int k = 0; k < senders * N; ++k) {
            MPI_OK(MPI_Recv(&m, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == m.sender, "status source %d, payload sender %d", st.MPI_SOURCE, m.sender);
            CHECK(st.MPI_TAG == m.seq % 3, "tag %d for seq %d", st.MPI_TAG, m.seq);
            CHECK(m.seq == next[m.sender], "from %d got seq %d, expected %d", m.sender, m.seq, next[m.sender]);
            next[m.sender]++;
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Phase 1: selective by tag with ANY_SOURCE: all tag 2 first, then 1, then 0. */
    if (rank != 0) send_stream(rank, 1);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        memset(next, 0, (size_t)size * 3 * sizeof(int));
        for (int t = 2; t >= 0; --t) {
            int per = 0;
            for (int i = 0; i < N; ++i) per += i % 3 == t;
            for (int k = 0; k < senders * per; ++k) {
                MPI_OK(MPI_Recv(&m, 2, MPI_INT, MPI_ANY_SOURCE, 10 + t, MPI_COMM_WORLD, &st));
                int *nx = &next[m.sender * 3 + t];
                int expect = *nx * 3 + t;
                CHECK(m.seq == expect, "tag %d from %d: seq %d, expected %d", t, m.sender, m.seq, expect);
                (*nx)++;
            }
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Phase 2: everything posted before anything is sent. */
    phase_posted(rank, size, next);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Phase 3: eager and rendezvous messages in one stream keep their order. */
    phase_mixed_sizes(rank, size);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("matching: order held with %d senders\n", senders);
    free(next);
    MPI_Finalize();
    return 0;
}
