/*
 * The in-band failure detector alone (the launcher's events are turned off
 * with FTMPI_LAUNCHER_EVENTS=0, as under a launcher that sends none):
 *
 *   detector stop      rank 1 stops itself with SIGSTOP. Every survivor's
 *                      receive from it fails with MPI_ERR_PROC_FAILED within
 *                      timeout + period + propagation; all report the same
 *                      failed set; and the stopped process is killed.
 *   detector stop unanswered   the same under a launcher that never
 *                      answers kill requests (ftmpirun with
 *                      FTMPI_TEST_UNANSWERED_KILLS): the observer's detector
 *                      must not wait for the answer before it spreads the
 *                      news (it did: every survivor waited for ever); the
 *                      stopped process stays until the others have ended.
 *   detector chain     ranks 3, 4 and 5 die together (SIGKILL): each is the
 *                      observer of the one before, so rank 6 finds them one
 *                      after another; every survivor converges on {3,4,5}.
 *   detector chain events   the same with the launcher's events on too.
 *   detector links     rank 2 dies (SIGKILL) with the heartbeat timeout at
 *                      10 minutes: only the liveness link (the observer's TCP
 *                      link, which the kernel closes when its process dies)
 *                      can tell, and every survivor's receive from it fails
 *                      with MPI_ERR_PROC_FAILED long before the harness's
 *                      deadline; all report the same failed set.
 *   detector busy      rank 1 computes for 5 s without calling MPI: it is not
 *                      suspected (the heartbeat runs on its own thread), and
 *                      nobody knows of any failure afterwards.
 *
 * Heartbeat period 50 ms and timeout 500 ms (set here, before MPI_Init),
 * except for `links`.
 */
#define _DEFAULT_SOURCE /* setenv, kill, nanosleep */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "ftlib.h"

enum { PERIOD_MS = 50, TIMEOUT_MS = 500 };

int main(int argc, char **argv) {
    const int stop = argc >= 2 && !strcmp(argv[1], "stop");
    const int links = argc >= 2 && !strcmp(argv[1], "links");
    const int busy = argc >= 2 && !strcmp(argv[1], "busy");
    const int events = argc >= 3 && !strcmp(argv[2], "events");
    const int unanswered = stop && argc >= 3 && !strcmp(argv[2], "unanswered");
    setenv("FTMPI_LAUNCHER_EVENTS", events ? "1" : "0", 1);
    setenv("FTMPI_FT_PERIOD_MS", "50", 1);
    setenv("FTMPI_FT_TIMEOUT_MS", links ? "600000" : "500", 1);
    int me, size;
    tl_init(&argc, &argv, &me, &size, stop || links || busy ? 3 : 8);
    CHECK(argc >= 2 && (stop || links || busy || !strcmp(argv[1], "chain")),
          "usage: detector stop [unanswered]|chain [events]|links|busy");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (links) {
        const int victim = 2;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == victim) tl_die(SIGKILL);
        int x;
        CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, victim, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_PROC_FAILED);
        tl_check_agreement(MPI_COMM_WORLD, &victim, 1);
        if (me == 0) printf("detector links: the SIGKILL of rank %d was seen without launcher or heartbeat\n", victim);
        MPI_OK(MPI_Finalize());
        return 0;
    }
    if (busy) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 1) {
            const double until = MPI_Wtime() + 5.0;
            volatile unsigned long spins = 0;
            while (MPI_Wtime() < until) ++spins; /* MPI_Wtime reads the clock; no progress */
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        int ranks[256];
        const int n = tl_failed(MPI_COMM_WORLD, ranks, 256);
        CHECK(n == 0, "%d failure(s) known after rank 1 computed for 5 s (first: rank %d)", n, n ? ranks[0] : -1);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 0) printf("detector busy: a rank that computed for 5 s without MPI was not suspected\n");
        MPI_OK(MPI_Finalize());
        return 0;
    }
    int pids[256];
    int pid = (int)getpid();
    MPI_OK(MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD));

    if (stop) {
        const int victim = 1;
        const double t0 = tl_stop_announced(victim);
        int x;
        CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, victim, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_PROC_FAILED);
        const double elapsed = MPI_Wtime() - t0;
        /* timeout + period, plus one second for propagation on a loaded machine */
        CHECK(elapsed < (TIMEOUT_MS + PERIOD_MS) / 1000.0 + 1.0, "detected after %.3f s", elapsed);
        /* its last heartbeat left at most one period before t0 */
        CHECK(elapsed > (TIMEOUT_MS - PERIOD_MS) / 1000.0 - 0.02, "detected after %.3f s, before the timeout", elapsed);
        int expect = victim;
        tl_check_agreement(MPI_COMM_WORLD, &expect, 1);
        if (me == 0 && unanswered) {
            printf("detector stop unanswered: SIGSTOP detected after %.3f s by every survivor\n", elapsed);
        } else if (me == 0) {
            /* The launcher was asked to kill it: the process must disappear. */
            double until = MPI_Wtime() + 20;
            while (kill(pids[victim], 0) == 0 && MPI_Wtime() < until) {
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            CHECK(kill(pids[victim], 0) != 0 && errno == ESRCH, "stopped rank %d (pid %d) is still there", victim,
                  pids[victim]);
            printf("detector stop: SIGSTOP detected after %.3f s by every survivor; the process was killed\n", elapsed);
        }
    } else {
        const int victims[3] = {3, 4, 5};
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me >= 3 && me <= 5) tl_die(SIGKILL);
        const double t0 = MPI_Wtime();
        int n = tl_wait_failed(MPI_COMM_WORLD, 3, 30);
        CHECK(n == 3, "only %d of 3 failures known after 30 s", n);
        const double elapsed = MPI_Wtime() - t0;
        tl_check_agreement(MPI_COMM_WORLD, victims, 3);
        if (me == 0)
            printf("detector chain%s: every survivor knows {3,4,5} (rank 0 after %.3f s)\n", events ? " events" : "",
                   elapsed);
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
