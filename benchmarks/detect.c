/*
 * Failure detection latency: the time from a rank's SIGKILL (or SIGSTOP) to
 * the MPI_ERR_PROC_FAILED error at a survivor that waits on it.
 *
 *   ftmpirun -n 8 ./detect kill        # launcher events + detector
 *   ftmpirun -n 8 ./detect stop        # the heartbeat detector alone sees a stop
 *   FTMPI_LAUNCHER_EVENTS=0 ftmpirun -n 8 ./detect kill   # detector alone
 *
 * Ranks n-1, n-2, ..., 1 fail one after another. Rank 0 reads its clock
 * and tells the victim to go; the victim signals itself as soon as the
 * message arrives, and rank 0, blocked in MPI_Recv from it, reports when
 * the error arrives. The time counts the message's way to the victim too
 * (a microsecond within a node, tens across nodes), and only rank 0's
 * clock: it holds across nodes. Plain MPI calls only: it builds with any MPI that keeps
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
            raise(sig);
            pause();
        }
        if (rank == 0) {
            int go = 1, x;
            const double t0 = MPI_Wtime();
            MPI_Send(&go, 1, MPI_INT, v, 1, MPI_COMM_WORLD);
            int rc = MPI_Recv(&x, 1, MPI_INT, v, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            lat[n] = MPI_Wtime() - t0;
            printf("rank %d %s (sent at %.6f): error class %d after %.3f ms\n", v,
                   sig == SIGKILL ? "SIGKILL" : "SIGSTOP", t0, rc, lat[n] * 1e3);
            ++n;
        }
    }
    if (rank == 0) {
        qsort(lat, (size_t)n, sizeof(double), bench_cmp);
        printf("# ftmpi-bench detect %s: %d failures, median %.3f ms, min %.3f ms, max %.3f ms\n",
               sig == SIGKILL ? "SIGKILL" : "SIGSTOP", n, lat[n / 2] * 1e3, lat[0] * 1e3, lat[n - 1] * 1e3);
    }
    MPI_Finalize();
    return 0;
}
