/*
 * MPI_THREAD_MULTIPLE point-to-point, NTHREADS threads per rank in MPI at
 * once, every received element checked exactly. One scenario per run:
 *   mprobe     every thread sends to the next rank with its own tag and
 *              receives from the previous one by matched probe: Mprobe +
 *              Mrecv, Improbe (polled) + Imrecv + Wait, Improbe + Mrecv and
 *              Mprobe + Imrecv in turn, eager and rendezvous sizes. A
 *              matched message belongs to the thread that probed it.
 *   self       every thread sends to its own rank and receives it (tag =
 *              thread): blocking send then receive (eager), Isend + Recv,
 *              Sendrecv, and a ring between the threads (Isend to the next
 *              thread's tag, Probe then Recv of the previous one's), at
 *              eager and rendezvous sizes; a blocking probe or receive must
 *              let the other threads in.
 *   multisend  every thread exchanges with every rank (itself included),
 *              alltoall-style with its own tag: blocking MPI_Sendrecv per
 *              peer offset, then Isend to all + blocking Recv from all, then
 *              rank 0's threads each send blocking messages of growing size
 *              to one peer apiece while those peers receive (MPICH's
 *              multisend2 pattern).
 *   poll       thread 0 ping-pongs with thread 0 of the partner rank (blocking
 *              calls) while the other threads poll MPI_Iprobe for the message
 *              that thread 0 sends each of them when it is done: a thread
 *              calling MPI in a loop must not keep the others out of the
 *              library for long (a round trip took 5-10 ms behind an unfair
 *              lock, so the test's timeout ends it).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>

#include "testlib.h"

#define NTHREADS 4

static int rank, size;
static const char *mode;

/* Element i of message `seq` from `src` with tag `t` (unsigned arithmetic:
   it wraps, where int's would overflow). */
static int value(int src, int t, int seq, int i) {
    return (int)((((unsigned)src * 131u + (unsigned)t) * 7919u + (unsigned)seq) * 1009u + (unsigned)i);
}

static void fill(int *buf, int n, int src, int t, int seq) {
    for (int i = 0; i < n; ++i) buf[i] = value(src, t, seq, i);
}

static void verify(const int *buf, int n, int src, int t, int seq, const char *what) {
    int wrong = 0, first = -1;
    for (int i = 0; i < n; ++i)
        if (buf[i] != value(src, t, seq, i)) {
            if (first < 0) first = i;
            ++wrong;
        }
    CHECK(wrong == 0, "%s: thread %d message %d from %d: %d of %d elements wrong (first at %d: %d)", what, t, seq, src,
          wrong, n, first, first >= 0 ? buf[first] : 0);
}

/* Message sizes in ints: eager ones and a rendezvous one every 8 rounds. */
static int count_of(int seq) { return seq % 8 == 7 ? 40000 + seq : 1 + (seq * 37) % 2000; }

/* What a status's MPI_ERROR holds before a call that returns one status: such
   a call leaves the field alone (MPI 3.1 section 3.2.5). */
#define KEEP 12345

static void check_status(const MPI_Status *st, int src, int t, int n, const char *what) {
    int got = -1;
    CHECK(st->MPI_ERROR == KEEP, "%s: thread %d: status MPI_ERROR %d was written", what, t, st->MPI_ERROR);
    MPI_OK(MPI_Get_count(st, MPI_INT, &got));
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == t && got == n,
          "%s: thread %d: status source %d tag %d count %d, "
          "wanted %d %d %d",
          what, t, st->MPI_SOURCE, st->MPI_TAG, got, src, t, n);
}

#define MPROBE_ROUNDS 200

static void run_mprobe(int t, int *out, int *in) {
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int seq = 0; seq < MPROBE_ROUNDS; ++seq) {
        const int n = count_of(seq);
        MPI_Request sreq;
        fill(out, n, rank, t, seq);
        MPI_OK(MPI_Isend(out, n, MPI_INT, next, t, MPI_COMM_WORLD, &sreq));
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st = {.MPI_ERROR = KEEP};
        const int src = seq % 3 == 0 ? MPI_ANY_SOURCE : prev; /* one sender per tag: any source is still exact */
        if (seq % 2 == 0) {
            MPI_OK(MPI_Mprobe(src, t, MPI_COMM_WORLD, &msg, &st));
        } else {
            int flag = 0;
            while (!flag) MPI_OK(MPI_Improbe(src, t, MPI_COMM_WORLD, &flag, &msg, &st));
        }
        check_status(&st, prev, t, n, "probe");
        CHECK(msg != MPI_MESSAGE_NULL, "thread %d: no message", t);
        memset(in, 0xff, (size_t)n * sizeof(int));
        if (seq % 4 < 2) {
            MPI_OK(MPI_Mrecv(in, n, MPI_INT, &msg, &st));
        } else {
            MPI_Request rreq;
            MPI_OK(MPI_Imrecv(in, n, MPI_INT, &msg, &rreq));
            MPI_OK(MPI_Wait(&rreq, &st));
        }
        CHECK(msg == MPI_MESSAGE_NULL, "thread %d: message not consumed", t);
        check_status(&st, prev, t, n, "mrecv");
        verify(in, n, prev, t, seq, "mrecv");
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    /* From MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, then an empty receive. */
    for (int seq = 0; seq < 4; ++seq) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st = {.MPI_ERROR = KEEP};
        int flag = 0, got = -1;
        if (seq % 2 == 0) MPI_OK(MPI_Mprobe(MPI_PROC_NULL, t, MPI_COMM_WORLD, &msg, &st));
        else MPI_OK(MPI_Improbe(MPI_PROC_NULL, t, MPI_COMM_WORLD, &flag, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NO_PROC && (seq % 2 == 0 || flag), "thread %d: proc-null probe", t);
        MPI_OK(MPI_Mrecv(in, 1, MPI_INT, &msg, &st));
        MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
        CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && got == 0 &&
                  st.MPI_ERROR == KEEP,
              "thread %d: proc-null mrecv: source %d tag %d count %d error %d", t, st.MPI_SOURCE, st.MPI_TAG, got,
              st.MPI_ERROR);
    }
}

#define SELF_ROUNDS 300
#define CROSS_TAG 50

static void run_self(int t, int *out, int *in) {
    for (int seq = 0; seq < SELF_ROUNDS; ++seq) {
        MPI_Status st = {.MPI_ERROR = KEEP};
        const int kind = seq % 4;
        /* Blocking send to self needs an eager message; the others may be large. */
        const int n = kind == 0 ? 1 + seq % 64 : count_of(seq);
        fill(out, n, rank, t, seq);
        memset(in, 0xff, (size_t)n * sizeof(int));
        if (kind == 0) {
            MPI_OK(MPI_Send(out, n, MPI_INT, rank, t, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(in, n, MPI_INT, rank, t, MPI_COMM_WORLD, &st));
        } else if (kind == 1) {
            MPI_Request sreq;
            MPI_OK(MPI_Isend(out, n, MPI_INT, rank, t, MPI_COMM_WORLD, &sreq));
            MPI_OK(MPI_Recv(in, n, MPI_INT, rank, t, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        } else if (kind == 2) {
            MPI_OK(MPI_Sendrecv(out, n, MPI_INT, rank, t, in, n, MPI_INT, rank, t, MPI_COMM_WORLD, &st));
        } else {
            /* To the next thread, from the previous one: the probe may well
               come first, and must let the other threads in while it waits. */
            const int to = CROSS_TAG + (t + 1) % NTHREADS, mine = CROSS_TAG + t;
            MPI_Request sreq;
            fill(out, n, rank, to, seq);
            MPI_OK(MPI_Isend(out, n, MPI_INT, rank, to, MPI_COMM_WORLD, &sreq));
            MPI_OK(MPI_Probe(rank, mine, MPI_COMM_WORLD, &st));
            st.MPI_ERROR = KEEP; /* not checked after MPI_Probe: MPICH 4.0 writes it there */
            check_status(&st, rank, mine, n, "self probe");
            MPI_OK(MPI_Recv(in, n, MPI_INT, rank, mine, MPI_COMM_WORLD, &st));
            check_status(&st, rank, mine, n, "self probe+recv");
            verify(in, n, rank, mine, seq, "self probe+recv");
            MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
            continue;
        }
        check_status(&st, rank, t, n, "self");
        verify(in, n, rank, t, seq, "self");
    }
}

#define MULTI_ROUNDS 40
#define MULTI_MAX 65536 /* ints: rank 0's threads go up to 256 KiB */

static pthread_barrier_t barrier;

static void run_multisend(int t, int *out, int *in) {
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)size);
    int **bufs = malloc(sizeof(int *) * (size_t)size);
    for (int p = 0; p < size; ++p) bufs[p] = malloc(sizeof(int) * 4096);
    for (int seq = 0; seq < MULTI_ROUNDS; ++seq) {
        const int n = count_of(seq) > 4096 ? 4096 : count_of(seq);
        /* Blocking Sendrecv with every peer offset (self at offset 0). */
        for (int k = 0; k < size; ++k) {
            const int dst = (rank + k) % size, src = (rank + size - k) % size;
            MPI_Status st = {.MPI_ERROR = KEEP};
            fill(out, n, rank, t, seq);
            MPI_OK(MPI_Sendrecv(out, n, MPI_INT, dst, t, in, n, MPI_INT, src, t, MPI_COMM_WORLD, &st));
            check_status(&st, src, t, n, "sendrecv");
            verify(in, n, src, t, seq, "sendrecv");
        }
        /* Isend to every rank, then blocking receives from each. */
        fill(out, n, rank, t, seq);
        for (int p = 0; p < size; ++p) MPI_OK(MPI_Isend(out, n, MPI_INT, p, t, MPI_COMM_WORLD, &reqs[p]));
        for (int k = 0; k < size; ++k) {
            const int src = (rank + size - k) % size;
            MPI_Status st = {.MPI_ERROR = KEEP};
            MPI_OK(MPI_Recv(bufs[src], n, MPI_INT, src, t, MPI_COMM_WORLD, &st));
            check_status(&st, src, t, n, "isend/recv");
            verify(bufs[src], n, src, t, seq, "isend/recv");
        }
        MPI_OK(MPI_Waitall(size, reqs, MPI_STATUSES_IGNORE));
    }
    /* Rank 0's threads send to one peer apiece (threads t+1, t+1+NTHREADS, ...);
       each peer's thread 0 receives everything rank 0 sends it. */
    if (rank == 0) {
        for (int cnt = 1, seq = 0; cnt <= MULTI_MAX; cnt *= 4, ++seq)
            for (int p = t + 1; p < size; p += NTHREADS)
                for (int j = 0; j < 4; ++j) {
                    fill(out, cnt, 0, p, seq * 4 + j);
                    MPI_OK(MPI_Send(out, cnt, MPI_INT, p, 1000 + cnt, MPI_COMM_WORLD));
                }
    } else if (t == 0) {
        for (int cnt = 1, seq = 0; cnt <= MULTI_MAX; cnt *= 4, ++seq)
            for (int j = 0; j < 4; ++j) {
                MPI_Status st = {.MPI_ERROR = KEEP};
                MPI_OK(MPI_Recv(in, cnt, MPI_INT, 0, 1000 + cnt, MPI_COMM_WORLD, &st));
                check_status(&st, 0, 1000 + cnt, cnt, "multisend");
                verify(in, cnt, 0, rank, seq * 4 + j, "multisend");
            }
    }
    for (int p = 0; p < size; ++p) free(bufs[p]);
    free(bufs);
    free(reqs);
}

#define POLL_ROUNDS 5000

static void run_poll(int t, int *out, int *in) {
    const int partner = rank ^ 1;
    if (t == 0) {
        for (int seq = 0; seq < POLL_ROUNDS && partner < size; ++seq) {
            MPI_Status st = {.MPI_ERROR = KEEP};
            fill(out, 1, rank, t, seq);
            if (rank % 2 == 0) {
                MPI_OK(MPI_Send(out, 1, MPI_INT, partner, t, MPI_COMM_WORLD));
                MPI_OK(MPI_Recv(in, 1, MPI_INT, partner, t, MPI_COMM_WORLD, &st));
            } else {
                MPI_OK(MPI_Recv(in, 1, MPI_INT, partner, t, MPI_COMM_WORLD, &st));
                MPI_OK(MPI_Send(out, 1, MPI_INT, partner, t, MPI_COMM_WORLD));
            }
            check_status(&st, partner, t, 1, "poll ping-pong");
            verify(in, 1, partner, t, seq, "poll ping-pong");
        }
        for (int other = 1; other < NTHREADS; ++other) {
            fill(out, 1, rank, other, -1);
            MPI_OK(MPI_Send(out, 1, MPI_INT, rank, 100 + other, MPI_COMM_WORLD));
        }
        return;
    }
    int flag = 0;
    MPI_Status st = {.MPI_ERROR = KEEP};
    long polls = 0;
    while (!flag) {
        MPI_OK(MPI_Iprobe(rank, 100 + t, MPI_COMM_WORLD, &flag, &st));
        st.MPI_ERROR = KEEP; /* not checked after MPI_Iprobe: MPICH 4.0 writes it there */
        ++polls;
    }
    MPI_OK(MPI_Recv(in, 1, MPI_INT, rank, 100 + t, MPI_COMM_WORLD, &st));
    check_status(&st, rank, 100 + t, 1, "poll stop");
    verify(in, 1, rank, t, -1, "poll stop");
    CHECK(polls > 0, "thread %d never polled", t);
}

static void *worker(void *arg) {
    const int t = (int)(long)arg;
    int *out = malloc(sizeof(int) * MULTI_MAX), *in = malloc(sizeof(int) * MULTI_MAX);
    CHECK(out && in, "malloc");
    pthread_barrier_wait(&barrier); /* every thread in MPI at once */
    if (strcmp(mode, "mprobe") == 0) run_mprobe(t, out, in);
    else if (strcmp(mode, "self") == 0) run_self(t, out, in);
    else if (strcmp(mode, "poll") == 0) run_poll(t, out, in);
    else run_multisend(t, out, in);
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv) {
    tl_init_multiple(&argc, &argv, &rank, &size);
    CHECK(argc == 2 && (strcmp(argv[1], "mprobe") == 0 || strcmp(argv[1], "self") == 0 ||
                        strcmp(argv[1], "multisend") == 0 || strcmp(argv[1], "poll") == 0),
          "usage: mt_p2p mprobe|self|multisend|poll");
    mode = argv[1];
    CHECK(pthread_barrier_init(&barrier, NULL, NTHREADS) == 0, "pthread_barrier_init");
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; ++t) CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; ++t) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&barrier);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("mt_p2p %s: %d threads per rank on %d ranks passed\n", mode, NTHREADS, size);
    MPI_Finalize();
    return 0;
}
