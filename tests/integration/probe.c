/*
 * MPI_Probe / MPI_Iprobe / MPI_Mprobe / MPI_Improbe / MPI_Mrecv / MPI_Imrecv.
 *
 * Any nprocs >= 2. Every part runs for an eager size (100 B) and a rendezvous
 * size (1 MiB, above the 16 KiB eager limit):
 *   A. rank 1 -> rank 0: Probe and Iprobe on (1, tag) report source, tag and
 *      MPI_Get_count right; the Recv that follows gets the data.
 *   B. every rank > 0 -> rank 0 with tag 100+rank: Probe(ANY_SOURCE, ANY_TAG)
 *      then Recv with the probed source/tag, once per sender.
 *   C. after a barrier, Iprobe/Improbe on a tag nobody sends give flag 0.
 *   D. Mprobe + Mrecv: the matched message is removed (an Iprobe no longer
 *      sees it) and two messages with the same envelope sent afterwards go, in
 *      order, to ordinary Recvs; the Mrecv still gets the first message.
 *   E. the same with Improbe + Imrecv.
 *   F. MPI_PROC_NULL: Probe/Iprobe give source MPI_PROC_NULL, tag ANY_TAG,
 *      count 0; Mprobe/Improbe give MPI_MESSAGE_NO_PROC, and Mrecv/Imrecv on
 *      it give source MPI_PROC_NULL and count 0.
 */
#include "testlib.h"

#define UNUSED_TAG 999
#define TAG_A 10
#define TAG_D 20
#define TAG_E 30
#define TAG_GO 40

static int rank, size;

static uint64_t seed_of(int part, int src, int k, size_t len) {
    return ((uint64_t)part << 48) ^ ((uint64_t)src << 32) ^ ((uint64_t)k << 24) ^ (uint64_t)len;
}

static void check_status(const MPI_Status *st, int src, int tag, size_t len, const char *what) {
    int cnt = -1;
    CHECK(st->MPI_SOURCE == src, "%s: MPI_SOURCE %d, expected %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: MPI_TAG %d, expected %d", what, st->MPI_TAG, tag);
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
    CHECK(cnt == (int)len, "%s: MPI_Get_count(MPI_BYTE) %d, expected %zu", what, cnt, len);
    if (len % 4 == 0) {
        MPI_OK(MPI_Get_count(st, MPI_INT, &cnt));
        CHECK(cnt == (int)(len / 4), "%s: MPI_Get_count(MPI_INT) %d, expected %zu", what, cnt, len / 4);
    }
}

static void check_data(const unsigned char *buf, size_t len, uint64_t seed, const char *what) {
    size_t bad = tl_verify(buf, len, seed);
    CHECK(bad == (size_t)-1, "%s: wrong byte at offset %zu of %zu", what, bad, len);
}

static void expect_nothing(int src, int tag, const char *what) {
    int flag = -1;
    MPI_Status st;
    MPI_OK(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 0, "%s: Iprobe(%d, %d) found a message (source %d tag %d)", what, src, tag, st.MPI_SOURCE,
          st.MPI_TAG);
}

/* A: Probe and Iprobe on a named source and tag. */
static void part_a(size_t len, unsigned char *buf) {
    if (rank == 1) {
        tl_fill(buf, len, seed_of(1, 1, 0, len));
        MPI_OK(MPI_Send(buf, (int)len, MPI_BYTE, 0, TAG_A, MPI_COMM_WORLD));
    } else if (rank == 0) {
        MPI_Status st;
        int flag = 0;
        memset(&st, 0xff, sizeof st);
        MPI_OK(MPI_Probe(1, TAG_A, MPI_COMM_WORLD, &st));
        check_status(&st, 1, TAG_A, len, "Probe(1, TAG_A)");
        /* The probed message stays there: Iprobe (named and wildcard) sees it. */
        memset(&st, 0xff, sizeof st);
        MPI_OK(MPI_Iprobe(1, TAG_A, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 1, "Iprobe after Probe: flag %d", flag);
        check_status(&st, 1, TAG_A, len, "Iprobe(1, TAG_A)");
        flag = 0;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 1, "Iprobe(ANY, ANY) after Probe: flag %d", flag);
        check_status(&st, 1, TAG_A, len, "Iprobe(ANY, ANY)");
        memset(buf, 0, len);
        memset(&st, 0xff, sizeof st);
        MPI_OK(MPI_Recv(buf, (int)len, MPI_BYTE, 1, TAG_A, MPI_COMM_WORLD, &st));
        check_status(&st, 1, TAG_A, len, "Recv after Probe");
        check_data(buf, len, seed_of(1, 1, 0, len), "Recv after Probe");
    }
}

/* B: Probe(ANY_SOURCE, ANY_TAG) then Recv with the probed envelope. */
static void part_b(size_t len, unsigned char *buf) {
    if (rank != 0) {
        tl_fill(buf, len, seed_of(2, rank, 0, len));
        MPI_OK(MPI_Send(buf, (int)len, MPI_BYTE, 0, 100 + rank, MPI_COMM_WORLD));
        return;
    }
    char *seen = calloc((size_t)size, 1);
    CHECK(seen != NULL, "calloc");
    for (int n = 1; n < size; ++n) {
        MPI_Status st;
        int cnt = -1;
        MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        const int src = st.MPI_SOURCE, tag = st.MPI_TAG;
        CHECK(src >= 1 && src < size, "Probe(ANY, ANY): source %d", src);
        CHECK(!seen[src], "Probe(ANY, ANY): source %d probed twice", src);
        seen[src] = 1;
        CHECK(tag == 100 + src, "Probe(ANY, ANY): tag %d from source %d", tag, src);
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == (int)len, "Probe(ANY, ANY): count %d, expected %zu", cnt, len);
        memset(buf, 0, len);
        MPI_OK(MPI_Recv(buf, cnt, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
        check_status(&st, src, tag, len, "Recv with probed envelope");
        check_data(buf, len, seed_of(2, src, 0, len), "Recv with probed envelope");
    }
    free(seen);
}

/* C: nothing matches an unused tag. */
static void part_c(void) {
    int flag = -1;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    expect_nothing(MPI_ANY_SOURCE, UNUSED_TAG, "unused tag");
    expect_nothing((rank + 1) % size, UNUSED_TAG, "unused tag, named source");
    MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, UNUSED_TAG, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE));
    CHECK(flag == 0, "Improbe on an unused tag: flag %d", flag);
    CHECK(msg == MPI_MESSAGE_NULL, "Improbe with flag 0 changed the message handle");
}

/*
 * D (mprobe = 1) and E (mprobe = 0): rank 1 sends message 0; rank 0 matches it
 * with Mprobe / Improbe, checks that it is gone from the queue, lets rank 1 send
 * messages 1 and 2 with the same envelope, receives them with Recv, then
 * receives message 0 with Mrecv / Imrecv.
 */
static void part_de(size_t len, unsigned char *bufs[3], int mprobe) {
    const int tag = mprobe ? TAG_D : TAG_E;
    const int part = mprobe ? 4 : 5;
    const char *name = mprobe ? "Mprobe" : "Improbe";
    if (rank == 1) {
        MPI_Request first;
        int go = 0;
        for (int k = 0; k < 3; ++k) tl_fill(bufs[k], len, seed_of(part, 1, k, len));
        MPI_OK(MPI_Isend(bufs[0], (int)len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &first));
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(go == 1, "go token %d", go);
        MPI_OK(MPI_Send(bufs[1], (int)len, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(bufs[2], (int)len, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&first, MPI_STATUS_IGNORE));
        CHECK(first == MPI_REQUEST_NULL, "Wait left the request non-null");
    } else if (rank == 0) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Request req = MPI_REQUEST_NULL;
        MPI_Status st;
        const int go = 1;
        memset(&st, 0xff, sizeof st);
        if (mprobe) {
            MPI_OK(MPI_Mprobe(1, tag, MPI_COMM_WORLD, &msg, &st));
        } else {
            int flag = 0;
            long spins = 0;
            while (!flag) {
                MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &msg, &st));
                ++spins;
            }
            (void)spins;
        }
        CHECK(msg != MPI_MESSAGE_NULL, "%s returned MPI_MESSAGE_NULL", name);
        CHECK(msg != MPI_MESSAGE_NO_PROC, "%s returned MPI_MESSAGE_NO_PROC", name);
        check_status(&st, 1, tag, len, name);
        /* Matched: no longer visible to probes. */
        expect_nothing(1, tag, "after Mprobe/Improbe");
        expect_nothing(MPI_ANY_SOURCE, MPI_ANY_TAG, "after Mprobe/Improbe (wildcards)");
        if (!mprobe) {
            for (int k = 0; k < 3; ++k) memset(bufs[k], 0, len);
            MPI_OK(MPI_Imrecv(bufs[0], (int)len, MPI_BYTE, &msg, &req));
            CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not set the message to MPI_MESSAGE_NULL");
            CHECK(req != MPI_REQUEST_NULL, "Imrecv returned MPI_REQUEST_NULL");
        }
        MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD));
        /* Messages 1 and 2 go to ordinary receives, in order. */
        for (int k = 1; k < 3; ++k) {
            if (mprobe) memset(bufs[k], 0, len);
            memset(&st, 0xff, sizeof st);
            MPI_OK(MPI_Recv(bufs[k], (int)len, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &st));
            check_status(&st, 1, tag, len, "Recv after a matched probe");
            check_data(bufs[k], len, seed_of(part, 1, k, len), "Recv after a matched probe");
        }
        memset(&st, 0xff, sizeof st);
        if (mprobe) {
            memset(bufs[0], 0, len);
            MPI_OK(MPI_Mrecv(bufs[0], (int)len, MPI_BYTE, &msg, &st));
            CHECK(msg == MPI_MESSAGE_NULL, "Mrecv did not set the message to MPI_MESSAGE_NULL");
        } else {
            MPI_OK(MPI_Wait(&req, &st));
            CHECK(req == MPI_REQUEST_NULL, "Wait left the Imrecv request non-null");
        }
        check_status(&st, 1, tag, len, mprobe ? "Mrecv" : "Imrecv");
        check_data(bufs[0], len, seed_of(part, 1, 0, len), mprobe ? "Mrecv" : "Imrecv");
        expect_nothing(1, tag, "after the Mrecv/Imrecv");
    }
}

static void check_proc_null_status(const MPI_Status *st, const char *what) {
    int cnt = -1;
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: MPI_SOURCE %d, expected MPI_PROC_NULL", what, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: MPI_TAG %d, expected MPI_ANY_TAG", what, st->MPI_TAG);
    MPI_OK(MPI_Get_count(st, MPI_INT, &cnt));
    CHECK(cnt == 0, "%s: count %d, expected 0", what, cnt);
}

/* F: MPI_PROC_NULL. */
static void part_f(void) {
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    int flag = 0;
    int buf[4] = {7, 7, 7, 7};

    memset(&st, 0x5a, sizeof st);
    MPI_OK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    check_proc_null_status(&st, "Probe(PROC_NULL)");

    memset(&st, 0x5a, sizeof st);
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 1, "Iprobe(PROC_NULL): flag %d", flag);
    check_proc_null_status(&st, "Iprobe(PROC_NULL)");

    memset(&st, 0x5a, sizeof st);
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    check_proc_null_status(&st, "Mprobe(PROC_NULL)");
    memset(&st, 0x5a, sizeof st);
    MPI_OK(MPI_Mrecv(buf, 4, MPI_INT, &msg, &st));
    check_proc_null_status(&st, "Mrecv(MPI_MESSAGE_NO_PROC)");
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(NO_PROC) did not set the message to MPI_MESSAGE_NULL");
    CHECK(buf[0] == 7 && buf[3] == 7, "Mrecv(NO_PROC) wrote the buffer");

    flag = 0;
    msg = MPI_MESSAGE_NULL;
    memset(&st, 0x5a, sizeof st);
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag == 1, "Improbe(PROC_NULL): flag %d", flag);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    check_proc_null_status(&st, "Improbe(PROC_NULL)");
    MPI_OK(MPI_Imrecv(buf, 4, MPI_INT, &msg, &req));
    CHECK(msg == MPI_MESSAGE_NULL, "Imrecv(NO_PROC) did not set the message to MPI_MESSAGE_NULL");
    memset(&st, 0x5a, sizeof st);
    MPI_OK(MPI_Wait(&req, &st));
    check_proc_null_status(&st, "Imrecv(MPI_MESSAGE_NO_PROC)");
    CHECK(buf[0] == 7 && buf[3] == 7, "Imrecv(NO_PROC) wrote the buffer");
}

int main(int argc, char **argv) {
    static const size_t sizes[2] = {100, 1u << 20};
    unsigned char *bufs[3];

    tl_init(&argc, &argv, &rank, &size, 2);
    for (int k = 0; k < 3; ++k) {
        bufs[k] = malloc(sizes[1]);
        CHECK(bufs[k] != NULL, "malloc");
    }

    part_f();
    for (int s = 0; s < 2; ++s) {
        const size_t len = sizes[s];
        part_a(len, bufs[0]);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        part_b(len, bufs[0]);
        part_c();
        part_de(len, bufs, 1);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        part_de(len, bufs, 0);
        part_c();
    }
    part_f();

    for (int k = 0; k < 3; ++k) free(bufs[k]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("probe: OK (%d ranks)\n", size);
    return 0;
}
