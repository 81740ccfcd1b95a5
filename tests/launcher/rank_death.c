/* An MPI rank that dies in a chosen way, for the launcher tests of output
 * forwarding and death reporting.
 *
 *   rank_death MODE R
 *
 * Rank R (the job rank; before MPI_Init, PMIX_RANK from the environment, 0
 * when unset as in a singleton) dies as MODE says, every other rank calls
 * MPI_Finalize and exits 0:
 *   lastwords   after MPI_Init, prints "rank R: last words\n" with printf and
 *               no fflush, then SIGKILLs itself (the line survives only if
 *               stdout is line-buffered, i.e. a terminal)
 *   segv        after MPI_Init, stores through a null pointer
 *   segv_early  the same before MPI_Init
 *   abort       after MPI_Init, calls abort()
 *   exitrace    (R unused) every even rank but 0 registers an exit handler
 *               that SIGKILLs the next (odd) rank and prints "rank R:
 *               handler ran", then calls exit(3) while MPI is up; the odd
 *               ranks from 3 wait to be killed; ranks 0 and 1 finalize. The deaths reach
 *               the exiting ranks while they exit: none may crash.
 * Before dying it prints "rank R: dying" (flushed) so a test can tell the
 * rank got that far. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void segfault(void) {
    volatile int *volatile p = NULL;
    *p = 1;
}

static void announce(int rank) {
    printf("rank %d: dying\n", rank);
    fflush(stdout);
}

static pid_t partner;
static int my_rank;

static void kill_partner(void) {
    kill(partner, SIGKILL);
    printf("rank %d: handler ran\n", my_rank);
    fflush(stdout);
}

static int exit_race(int rank) {
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pid_t *pids = malloc(sizeof(pid_t) * (size_t)size);
    const pid_t me = getpid();
    MPI_Allgather(&me, sizeof me, MPI_BYTE, pids, sizeof me, MPI_BYTE, MPI_COMM_WORLD);
    my_rank = rank;
    const int even = rank % 2 == 0 && rank > 0 && rank + 1 < size;
    if (even) {
        partner = pids[rank + 1];
        atexit(kill_partner);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (even) exit(3);
    if (rank % 2 == 1 && rank >= 3) {
        for (;;) pause();  // until the partner's handler kills it
    }
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s lastwords|segv|segv_early|abort RANK\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    const int victim = atoi(argv[2]);
    const char *env_rank = getenv("PMIX_RANK");
    int rank = env_rank ? atoi(env_rank) : 0;
    if (!strcmp(mode, "segv_early") && rank == victim) {
        announce(rank);
        segfault();
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!strcmp(mode, "exitrace")) return exit_race(rank);
    if (rank == victim) {
        if (!strcmp(mode, "lastwords")) {
            printf("rank %d: last words\n", rank);
            kill(getpid(), SIGKILL);
        } else if (!strcmp(mode, "segv")) {
            announce(rank);
            segfault();
        } else if (!strcmp(mode, "abort")) {
            announce(rank);
            abort();
        } else {
            fprintf(stderr, "unknown mode %s\n", mode);
            return 2;
        }
        return 3;  // not reached
    }
    MPI_Finalize();
    return 0;
}
