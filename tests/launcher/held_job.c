/* An MPI job whose ranks each fork a child that never ends, for the tests of
 * what a job leaves behind (tests/launcher/job_cleanup.py).
 *
 *   held_job hold|daemon
 *
 * After MPI_Init every rank forks a child that pauses forever (it stays in
 * the rank's process group, as system("cmd &") would), then prints
 *   "ready rank R pid P child C"
 * (flushed), and then:
 *   hold    loops forever in MPI_Barrier and short sleeps, so the job runs
 *           until ftmpirun is killed;
 *   daemon  calls MPI_Finalize and exits 0, leaving its child running. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "hold") && strcmp(argv[1], "daemon"))) {
        fprintf(stderr, "usage: %s hold|daemon\n", argv[0]);
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fflush(stdout);
    const pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 3;
    }
    if (child == 0) {
        for (;;) pause();
    }
    printf("ready rank %d pid %d child %d\n", rank, (int)getpid(), (int)child);
    fflush(stdout);
    if (!strcmp(argv[1], "daemon")) {
        MPI_Finalize();
        return 0;
    }
    const struct timespec nap = {0, 50 * 1000 * 1000};
    for (;;) {
        MPI_Barrier(MPI_COMM_WORLD);
        nanosleep(&nap, NULL);
    }
}
