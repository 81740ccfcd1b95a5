/*
 * The failure detector under load: no live rank may be suspected because it
 * is busy, oversubscribed, or inside a long MPI call.
 *
 *   ft_load SECONDS [stop] [hogs=N] [ctl=PROVIDER]
 *
 * Under MPI_THREAD_MULTIPLE, with the detector's defaults (100 ms period,
 * 1 s timeout) unless the environment sets them, every rank loops for
 * SECONDS (rank 0 decides when the others stop):
 *   - computes for 10-250 ms without calling MPI;
 *   - one-sided: a fence epoch of 1 MiB puts, gets and accumulates to its
 *     neighbours, then a passive-target epoch (lock, get, accumulate,
 *     unlock) on another rank;
 *   - collectives: a 1 MiB allreduce, an alltoall, a barrier, and an
 *     allreduce whose user operation computes for 50-200 ms inside the call
 *     (holding the library lock all that time);
 * while a second thread ping-pongs with the same thread of its partner rank
 * (rank ^ 1) on its own communicator, polling with MPI_Test and MPI_Iprobe,
 * and N more threads (hogs=N, default 1) compute without calling MPI.
 * ctl=PROVIDER runs the detector over that libfabric provider (as in a job
 * across nodes) instead of the Unix socket of a one-node job: it must still
 * read /proc for the peers on this node.
 * At the end no rank may know of any failure (a false suspicion also kills
 * the suspected rank, which fails the job). Rank 0 prints the worst heartbeat
 * gap seen by any rank's detector (MPI_T variable
 * ftmpi_ft_heartbeat_gap_max_ms) and the failures seen (must be 0):
 *   ft_load: 4 ranks, 30 s, worst heartbeat gap 112 ms (rank 2), failures 0
 *
 * With `stop`, after the load the last rank stops itself (SIGSTOP) while the
 * others go on computing and polling for a message from it: its observer
 * must find it within the detector's timeout plus one period (plus 0.3 s for
 * this test's own polling on a loaded machine), every other survivor within
 * one second more, and all must agree on it.
 */
#define _DEFAULT_SOURCE /* nanosleep */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "ftlib.h"

#define WIN_INTS (256 * 1024) /* 1 MiB windows and buffers */

static int rank, size;
static atomic_int stop_second;
static double period_s = 0.1, timeout_s = 1.0;

static double now(void) { return MPI_Wtime(); }

/* Busy arithmetic for about `seconds`, no MPI. */
static double compute(double seconds) {
    const double until = now() + seconds;
    volatile double x = 1.0;
    while (now() < until)
        for (int i = 0; i < 2000; ++i) x = sqrt(x + i) * 1.0000001;
    return x;
}

/* xorshift, one per thread */
static uint32_t next_rand(uint32_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* A reduction operation that computes for a while inside the MPI call. */
static double op_seconds;
static void slow_sum(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    compute(op_seconds);
    for (int i = 0; i < *len; ++i) ((int *)inout)[i] += ((int *)in)[i];
}

/* The second thread: ping-pong with its twin on the partner rank until both
   have seen the main thread's stop flag. */
static void *second(void *arg) {
    MPI_Comm comm = *(MPI_Comm *)arg;
    const int partner = rank ^ 1;
    if (partner >= size) return NULL;
    int round = 0;
    for (;;) {
        int mine[2] = {atomic_load(&stop_second), round}, theirs[2] = {-1, -1};
        MPI_Request rq[2];
        MPI_OK(MPI_Irecv(theirs, 2, MPI_INT, partner, 7, comm, &rq[0]));
        MPI_OK(MPI_Isend(mine, 2, MPI_INT, partner, 7, comm, &rq[1]));
        int done = 0;
        while (!done) {
            int flag = 0;
            MPI_OK(MPI_Iprobe(partner, 8, comm, &flag, MPI_STATUS_IGNORE)); /* never sent: just polls */
            MPI_OK(MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE));
        }
        CHECK(theirs[1] == round, "second thread: round %d from the partner, expected %d", theirs[1], round);
        ++round;
        if (mine[0] || theirs[0]) break;
    }
    return NULL;
}

/* Interpreter-like work on more threads of the rank, never in MPI. */
static void *hog_thread(void *arg) {
    (void)arg;
    while (!atomic_load(&stop_second)) compute(0.05);
    return NULL;
}

static long long gap_max_ms(void) {
    int idx = -1, n = 0;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    MPI_OK(MPI_T_pvar_get_index("ftmpi_ft_heartbeat_gap_max_ms", MPI_T_PVAR_CLASS_HIGHWATERMARK, &idx));
    MPI_OK(MPI_T_pvar_session_create(&session));
    MPI_OK(MPI_T_pvar_handle_alloc(session, idx, NULL, &handle, &n));
    unsigned long long v = 0;
    MPI_OK(MPI_T_pvar_read(session, handle, &v));
    MPI_OK(MPI_T_pvar_handle_free(session, &handle));
    MPI_OK(MPI_T_pvar_session_free(&session));
    return (long long)v;
}

static void load_round(MPI_Win win, int *base, int *buf, uint32_t *seed, MPI_Op slow) {
    compute(0.01 + (next_rand(seed) % 240) / 1000.0);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    /* Fence epoch: large puts, gets and accumulates. */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_OK(MPI_Put(buf, WIN_INTS / 2, MPI_INT, next, 0, WIN_INTS / 2, MPI_INT, win));
    MPI_OK(MPI_Get(buf + WIN_INTS / 2, WIN_INTS / 4, MPI_INT, prev, WIN_INTS / 2, WIN_INTS / 4, MPI_INT, win));
    MPI_OK(MPI_Accumulate(buf, WIN_INTS / 4, MPI_INT, prev, 3 * WIN_INTS / 4, WIN_INTS / 4, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    /* Passive target on the rank two ahead. */
    const int target = (rank + 2) % size;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    MPI_OK(MPI_Get(buf, WIN_INTS / 4, MPI_INT, target, 0, WIN_INTS / 4, MPI_INT, win));
    MPI_OK(MPI_Accumulate(buf + WIN_INTS / 4, WIN_INTS / 8, MPI_INT, target, WIN_INTS / 2, WIN_INTS / 8, MPI_INT,
                          MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(target, win));
    (void)base;
    /* Collectives, one with a slow user operation. */
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, buf, WIN_INTS, MPI_INT, MPI_BOR, MPI_COMM_WORLD));
    MPI_OK(MPI_Alltoall(buf, WIN_INTS / size / 4, MPI_INT, buf + WIN_INTS / 2, WIN_INTS / size / 4, MPI_INT,
                        MPI_COMM_WORLD));
    int one = 1, sum = 0;
    op_seconds = 0.05 + (next_rand(seed) % 150) / 1000.0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, slow, MPI_COMM_WORLD));
    CHECK(sum == size, "slow allreduce: %d", sum);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    int provided = -1;
    for (int i = 2; i < argc; ++i) /* before MPI_Init, which reads it */
        if (!strncmp(argv[i], "ctl=", 4)) setenv("FTMPI_FT_PROVIDER", argv[i] + 4, 1);
    tl_init_multiple(&argc, &argv, &rank, &size);
    MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    int stop = 0, hogs = 1, bad = argc < 2 || atof(argv[1]) <= 0;
    for (int i = 2; i < argc; ++i) {
        if (!strcmp(argv[i], "stop")) stop = 1;
        else if (!strncmp(argv[i], "hogs=", 5)) hogs = atoi(argv[i] + 5);
        else if (strncmp(argv[i], "ctl=", 4) != 0) bad = 1;
    }
    CHECK(!bad && hogs >= 0 && hogs <= 16, "usage: ft_load SECONDS [stop] [hogs=N] [ctl=PROVIDER]");
    CHECK(size >= 3, "needs at least 3 ranks");
    const double seconds = atof(argv[1]);
    if (getenv("FTMPI_FT_PERIOD_MS")) period_s = atof(getenv("FTMPI_FT_PERIOD_MS")) / 1000.0;
    if (getenv("FTMPI_FT_TIMEOUT_MS")) timeout_s = atof(getenv("FTMPI_FT_TIMEOUT_MS")) / 1000.0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int *base = NULL, *buf = malloc(sizeof(int) * WIN_INTS);
    CHECK(buf != NULL, "malloc");
    for (int i = 0; i < WIN_INTS; ++i) buf[i] = rank + i;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(sizeof(int) * WIN_INTS, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Op slow;
    MPI_OK(MPI_Op_create(slow_sum, 1, &slow));
    MPI_Comm pair;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &pair));
    pthread_t th, hog[16];
    CHECK(pthread_create(&th, NULL, second, &pair) == 0, "pthread_create");
    for (int i = 0; i < hogs; ++i) CHECK(pthread_create(&hog[i], NULL, hog_thread, NULL) == 0, "pthread_create");

    uint32_t seed = 0x9e3779b9u ^ (uint32_t)(rank * 7919 + 1);
    const double t0 = now();
    int rounds = 0;
    for (int go = 1; go; ++rounds) {
        load_round(win, base, buf, &seed, slow);
        go = now() - t0 < seconds;
        MPI_OK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
    atomic_store(&stop_second, 1);
    pthread_join(th, NULL);
    for (int i = 0; i < hogs; ++i) pthread_join(hog[i], NULL);

    int ranks[256];
    const int failures = tl_failed(MPI_COMM_WORLD, ranks, 256);
    CHECK(failures == 0, "%d failure(s) known after the load (first: rank %d)", failures, failures ? ranks[0] : -1);
    long long gap = gap_max_ms(), gaps[256];
    MPI_OK(MPI_Gather(&gap, 1, MPI_LONG_LONG, gaps, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        int worst = 0;
        for (int r = 1; r < size; ++r)
            if (gaps[r] > gaps[worst]) worst = r;
        printf("ft_load: %d ranks, %.0f s, %d rounds, worst heartbeat gap %lld ms (rank %d), failures %d\n", size,
               seconds, rounds, gaps[worst], worst, failures);
        fflush(stdout);
    }
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&pair));
    MPI_OK(MPI_Op_free(&slow));

    if (stop) {
        const int victim = size - 1, observer = 0; /* the ring: rank 0 watches the last rank */
        const double t_stop = tl_stop_announced(victim);
        /* Go on computing, and poll every 20 ms for what will never come. */
        int x = 0, flag = 0;
        MPI_Request rq;
        MPI_OK(MPI_Irecv(&x, 1, MPI_INT, victim, 2, MPI_COMM_WORLD, &rq));
        int rc = MPI_SUCCESS;
        while (!flag && now() - t_stop < 30) {
            compute(0.02);
            rc = MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) break;
        }
        const double elapsed = now() - t_stop;
        CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED, "the receive from stopped rank %d: class %d after %.3f s", victim,
              tl_class(rc), elapsed);
        const double limit = timeout_s + period_s + 0.3 + (rank == observer ? 0 : 1.0);
        CHECK(elapsed < limit, "stopped rank %d found after %.3f s (limit %.3f s)", victim, elapsed, limit);
        CHECK(elapsed > timeout_s - period_s - 0.02, "stopped rank %d found after %.3f s, before the timeout", victim,
              elapsed);
        tl_check_agreement(MPI_COMM_WORLD, &victim, 1);
        double worst = 0;
        MPI_Comm survivors;
        MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors));
        MPI_OK(MPI_Reduce(&elapsed, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, survivors));
        MPI_OK(MPI_Comm_free(&survivors));
        if (rank == 0)
            printf("ft_load stop: rank %d stopped, found by its observer after %.3f s, by all after %.3f s\n", victim,
                   elapsed, worst);
    }
    MPI_Finalize();
    return 0;
}
