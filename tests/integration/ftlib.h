/*
 * Helpers for the fault-tolerance tests: ULFM calls from mpi-ext.h, real
 * failures (SIGKILL, SIGSTOP) and checks of error classes.
 */
#ifndef FTMPI_FTLIB_H
#define FTMPI_FTLIB_H

#include <mpi-ext.h>
#include <signal.h>
#include <sched.h>
#include <unistd.h>

#include "testlib.h"

/* The error class of return code rc. */
static inline int tl_class(int rc) {
    int c = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
}

#define CHECK_CLASS(call, want)                                                              \
    do {                                                                                     \
        int tl_c_ = tl_class(call);                                                          \
        CHECK(tl_c_ == (want), "%s: class %d, expected %s (%d)", #call, tl_c_, #want, want); \
    } while (0)

/* This process fails now, as a crash would: no cleanup, no MPI_Finalize. */
static inline void tl_die(int sig) {
    fflush(stdout);
    fflush(stderr);
    raise(sig);
    if (sig == SIGSTOP) return; /* resumed (never, in these tests) */
    _exit(111);
}

/* Rank `victim` of MPI_COMM_WORLD stops itself (SIGSTOP) after telling every
   other rank when (MPI_Wtime: CLOCK_MONOTONIC, one clock for the whole
   node); it never returns. Every other rank returns that time. */
static inline double tl_stop_announced(int victim) {
    int me, size;
    double t_stop = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (me == victim) {
        t_stop = MPI_Wtime();
        for (int r = 0; r < size; ++r)
            if (r != victim) MPI_OK(MPI_Send(&t_stop, 1, MPI_DOUBLE, r, 1, MPI_COMM_WORLD));
        tl_die(SIGSTOP);
        CHECK(0, "a stopped process must never run again");
    }
    MPI_OK(MPI_Recv(&t_stop, 1, MPI_DOUBLE, victim, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return t_stop;
}

/* Ranks of comm known failed here (MPIX_Comm_get_failed), in detection order. */
static inline int tl_failed(MPI_Comm comm, int *ranks, int max) {
    MPI_Group failed, all;
    int n = 0;
    MPI_OK(MPIX_Comm_get_failed(comm, &failed));
    MPI_OK(MPI_Group_size(failed, &n));
    CHECK(n <= max, "%d failed ranks, room for %d", n, max);
    MPI_OK(MPI_Comm_group(comm, &all));
    int idx[256];
    for (int i = 0; i < n; ++i) idx[i] = i;
    if (n > 0) MPI_OK(MPI_Group_translate_ranks(failed, n, idx, all, ranks));
    MPI_Group_free(&all);
    if (failed != MPI_GROUP_EMPTY) MPI_Group_free(&failed);
    return n;
}

/* Waits (driving MPI progress through the query) until comm has at least
   `want` known failures, for at most `seconds`; returns how many it has. */
static inline int tl_wait_failed(MPI_Comm comm, int want, double seconds) {
    int ranks[256];
    double until = MPI_Wtime() + seconds;
    int n = 0;
    while ((n = tl_failed(comm, ranks, 256)) < want && MPI_Wtime() < until) sched_yield();
    return n;
}

static int tl_int_cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Every survivor sends its sorted failed set to the lowest survivor, which
   checks that all are equal to its own and to expect[0..nexpect) (sorted). */
static inline void tl_check_agreement(MPI_Comm comm, const int *expect, int nexpect) {
    int me, size, mine[256];
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    int n = tl_failed(comm, mine, 256);
    qsort(mine, (size_t)n, sizeof(int), tl_int_cmp);
    CHECK(n == nexpect, "rank %d knows %d failures, expected %d", me, n, nexpect);
    for (int i = 0; i < n; ++i) CHECK(mine[i] == expect[i], "failed[%d] = %d, expected %d", i, mine[i], expect[i]);
    int lowest = 0;
    while (lowest < size) {
        int dead = 0;
        for (int i = 0; i < n; ++i) dead |= mine[i] == lowest;
        if (!dead) break;
        ++lowest;
    }
    if (me != lowest) {
        int msg[257];
        msg[0] = n;
        memcpy(msg + 1, mine, sizeof(int) * (size_t)n);
        MPI_OK(MPI_Send(msg, n + 1, MPI_INT, lowest, 4242, comm));
        return;
    }
    for (int r = 0; r < size; ++r) {
        int dead = 0;
        for (int i = 0; i < n; ++i) dead |= mine[i] == r;
        if (dead || r == me) continue;
        int msg[257];
        MPI_OK(MPI_Recv(msg, 257, MPI_INT, r, 4242, comm, MPI_STATUS_IGNORE));
        CHECK(msg[0] == n, "rank %d reports %d failures, rank %d reports %d", r, msg[0], me, n);
        for (int i = 0; i < n; ++i) CHECK(msg[1 + i] == mine[i], "rank %d disagrees at %d", r, i);
    }
}

#endif
