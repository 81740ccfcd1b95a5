/*
 * Steadiness of repeated recovery: N cycles (default 1000) of
 *   allreduce of B bytes (default 8) on the communicator,
 *   MPIX_Comm_agree (no revoke may interrupt a rank still in the allreduce),
 *   one rank revokes it (a different one each cycle),
 *   MPIX_Comm_shrink, MPI_Comm_free of the old one.
 * after WARMUP uncounted cycles (connections, first-touch allocations).
 * Prints the cycle rate (from the median cycle) of the first and of the
 * last 100 cycles and their ratio: state that grows with every revoke, free or shrink (context ids,
 * kept agreements, stale messages) shows as a falling rate.
 *
 *   ftmpicc -O2 benchmarks/recovery_cycle.c -o rc && ftmpirun -n 8 ./rc 1000 8
 * Builds with any MPI that has the ULFM MPIX_ calls (mpi-ext.h).
 */
#include <mpi-ext.h>
#include <string.h>

#include "bench.h"

enum { WINDOW = 100, WARMUP = 200 };

int main(int argc, char **argv) {
    int rank, size;
    bench_init(&argc, &argv, "recovery_cycle", 2, &rank, &size);
    const int cycles = argc > 1 ? atoi(argv[1]) : 1000;
    const size_t bytes = argc > 2 ? (size_t)atol(argv[2]) : 8;
    if (cycles < 2 * WINDOW) {
        if (rank == 0) fprintf(stderr, "recovery_cycle: needs at least %d cycles\n", 2 * WINDOW);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int n = bytes / sizeof(double) ? (int)(bytes / sizeof(double)) : 1;
    double *in = calloc((size_t)n, sizeof(double)), *out = calloc((size_t)n, sizeof(double));
    double *stamp = malloc(sizeof(double) * (size_t)(cycles + 1));
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int k = -WARMUP; k < cycles; ++k) {
        if (k == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            stamp[0] = MPI_Wtime();
        }
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, c);
        int flag = 1;
        MPIX_Comm_agree(c, &flag);
        if (rank == (k + WARMUP) % size) MPIX_Comm_revoke(c);
        MPI_Comm next;
        if (MPIX_Comm_shrink(c, &next) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Comm_free(&c);
        c = next;
        if (k >= 0) stamp[k + 1] = MPI_Wtime();
    }
    MPI_Comm_free(&c);
    if (rank == 0) {
        /* Rates from the median cycle of each window: 8 ranks on 2 cores
           see scheduling spikes that a window's total would carry. */
        double first[WINDOW], last[WINDOW];
        for (int i = 0; i < WINDOW; ++i) {
            first[i] = stamp[i + 1] - stamp[i];
            last[i] = stamp[cycles - WINDOW + i + 1] - stamp[cycles - WINDOW + i];
        }
        qsort(first, WINDOW, sizeof(double), bench_cmp);
        qsort(last, WINDOW, sizeof(double), bench_cmp);
        const double r1 = 1 / first[WINDOW / 2], r2 = 1 / last[WINDOW / 2];
        printf("recovery_cycle: %d ranks, %d cycles of allreduce(%zu B) + agree + revoke + shrink\n", size, cycles,
               bytes);
        printf("first %d cycles: %.0f cycles/s; last %d: %.0f cycles/s (median cycle); last/first %.2f; total %.2f s\n",
               WINDOW, r1, WINDOW, r2, r2 / r1, stamp[cycles] - stamp[0]);
    }
    free(in);
    free(out);
    free(stamp);
    MPI_Finalize();
    return 0;
}
