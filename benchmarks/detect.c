/*
 * Failure detection latency: the time from a rank's SIGKILL (or SIGSTOP) to
 * the MPI_ERR_PROC_FAILED error at a survivor that waits on it.
 *
 *   ftmpirun -n 8 ./detect kill        # launcher events + detector
 *   ftmpirun -n 8 ./detect stop        # the heartbeat detector alone sees a stop
 *   FTMPI_LAUNCHER_EVENTS=0 ftmpirun -n 8 ./detect kill   # detector alone
 *
 * Ranks n-1, n-2, ..., 1 fail one after another. Each victim reads the clock
 * (CLOCK_MONOTONIC: shared within a node, and across the emulated nodes of
 * tests/cluster; across real nodes the times mean something only as far as
 * their clocks agree), sends the time to rank 0, and signals itself; rank 0
 * then blocks in MPI_Recv from it and reports when the error arrives. A
 * victim whose time died with it (on a network, an eager send may not have
 * left before the signal) counts for nothing. Plain MPI calls only: it builds with any MPI that keeps
 * running after a failure.
 */
#define _DEFAULT_SOURCE
#include "bench.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


int main(int argc, char **argv) {
    int rank, size;
    bench_init(&argc, &argv, "detect", 2, &rank, &size);
    const int sig = (argc > 1 && !strcmp(argv[1], "stop")) ? SIGSTOP : SIGKILL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double lat[1024];
    int n = 0;
    for (int v = size - 1; v >= 1; --v) {
        if (rank == v) {
            int go;
            MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t0 = MPI_Wtime();
            MPI_Send(&t0, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
            raise(sig);
            pause();
        }
        if (rank == 0) {
            int go = 1, x;
            double t0;
            MPI_Send(&go, 1, MPI_INT, v, 1, MPI_COMM_WORLD);
            if (MPI_Recv(&t0, 1, MPI_DOUBLE, v, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                printf("rank %d: its time did not arrive before its death, not counted\n", v);
                continue;
            }
            int rc = MPI_Recv(&x, 1, MPI_INT, v, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            lat[n] = MPI_Wtime() - t0;
            printf("rank %d %s (sent at %.6f): error class %d after %.3f ms\n", v,
                   sig == SIGKILL ? "SIGKILL" : "SIGSTOP", t0, rc, lat[n] * 1e3);
            ++n;
        }
    }
    if (rank == 0 && n > 0) {
        qsort(lat, (size_t)n, sizeof(double), bench_cmp);
        printf("# ftmpi-bench detect %s: %d failures, median %.3f ms, min %.3f ms, max %.3f ms\n",
               sig == SIGKILL ? "SIGKILL" : "SIGSTOP", n, lat[n / 2] * 1e3, lat[0] * 1e3, lat[n - 1] * 1e3);
    }
    MPI_Finalize();
    return 0;
}
