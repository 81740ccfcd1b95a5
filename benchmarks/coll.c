/*
 * Collective latency: MPI_Barrier, then MPI_Bcast (root 0) and MPI_Allreduce
 * (MPI_SUM on bytes / 8 doubles) from 8 B to 1 MiB, sizes doubling. Plain MPI-1 calls only, so it builds with any
 * MPI's mpicc:
 *
 *   ftmpicc -O2 coll.c -o coll && ftmpirun -n 4 ./coll
 *   mpicc.openmpi -O2 coll.c -o coll-ompi && mpirun.openmpi --allow-run-as-root -n 4 ./coll-ompi
 *   mpicc.mpich -O2 coll.c -o coll-mpich && mpirun.mpich -n 4 ./coll-mpich
 *
 * Each figure is the median over `reps` timed calls (after warm-up) of the
 * maximum over ranks of one call's time, in microseconds. Optional argument:
 * the largest size in bytes (default 1 MiB).
 */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { BARRIER, BCAST, ALLREDUCE };

/* Median over reps of the slowest rank's time for one call. */
static double measure(int what, double *buf, double *out, int count, int reps) {
    double *t = malloc((size_t)reps * sizeof *t);
    for (int k = -reps / 10 - 2; k < reps; ++k) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (what == BARRIER) MPI_Barrier(MPI_COMM_WORLD);
        else if (what == BCAST) MPI_Bcast(buf, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        else MPI_Allreduce(buf, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double dt = MPI_Wtime() - t0, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (k >= 0) t[k] = mx;
    }
    qsort(t, (size_t)reps, sizeof *t, bench_cmp);
    double med = t[reps / 2];
    free(t);
    return med * 1e6;
}

int main(int argc, char **argv) {
    int rank, size;
    bench_init(&argc, &argv, "coll", 1, &rank, &size);
    const size_t max = (argc > 1) ? (size_t)atol(argv[1]) : (size_t)1 << 20;
    double *buf = malloc(max), *out = malloc(max);
    memset(buf, 0, max);
    double b = measure(BARRIER, buf, out, 0, 1000);
    if (rank == 0) {
        printf("# %d ranks\n", size);
        printf("barrier_us %.2f\n", b);
        printf("%10s %12s %14s\n", "bytes", "bcast_us", "allreduce_us");
    }
    for (size_t bytes = 8; bytes <= max; bytes *= 2) {
        const int count = (int)(bytes / sizeof(double));
        const int reps = bytes <= 65536 ? 500 : 50;
        double tb = measure(BCAST, buf, out, count, reps);
        double ta = measure(ALLREDUCE, buf, out, count, reps);
        if (rank == 0) printf("%10zu %12.2f %14.2f\n", bytes, tb, ta);
    }
    free(buf);
    free(out);
    MPI_Finalize();
    return 0;
}
