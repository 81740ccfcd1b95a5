/*
 * Ping-pong latency and bandwidth between ranks 0 and 1, 8 B to 4 MiB.
 * Plain MPI-1 calls only, so it builds with any MPI's mpicc:
 *
 *   ftmpicc -O2 pingpong.c -o pp && ftmpirun -n 2 ./pp
 *   mpicc.openmpi -O2 pingpong.c -o pp-ompi && mpirun.openmpi -n 2 ./pp-ompi
 *
 * Output: one line per size: bytes, half round-trip latency (us, the median
 * of `reps` round trips), and bandwidth (MB/s) from that latency.
 */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int main(int argc, char **argv) {
    int rank, size;
    bench_init(&argc, &argv, "pingpong", 2, &rank, &size);
    const size_t max = (argc > 1) ? (size_t)atol(argv[1]) : (size_t)4 << 20;
    char *buf = malloc(max);
    memset(buf, 1, max);
    double *t = malloc(sizeof(double) * 10000);
    if (rank == 0) printf("# ftmpi-bench pingpong\n# %10s %12s %12s\n", "bytes", "lat_us", "MB/s");
    for (size_t n = 8; n <= max; n *= 2) {
        int reps = n <= 65536 ? 10000 : n <= (1 << 20) ? 1000 : 200;
        int warm = reps / 10;
        for (int i = 0; i < warm + reps; ++i) {
            double t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
            if (i >= warm) t[i - warm] = (MPI_Wtime() - t0) / 2;
        }
        if (rank == 0) {
            qsort(t, (size_t)reps, sizeof(double), bench_cmp);
            double lat = t[reps / 2];
            printf("  %10zu %12.3f %12.1f\n", n, lat * 1e6, (double)n / lat / 1e6);
            fflush(stdout);
        }
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
