/* Shared by the benchmark programs (plain C + mpi.h, any MPI's mpicc). */
#ifndef FTMPI_BENCH_H
#define FTMPI_BENCH_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* qsort comparator for doubles (medians). */
static inline int bench_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* MPI_Init, rank and size; aborts naming `prog` unless there are >= min_size ranks. */
static inline void bench_init(int *argc, char ***argv, const char *prog, int min_size, int *rank, int *size) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    if (*size < min_size) {
        if (*rank == 0) fprintf(stderr, "%s needs at least %d ranks\n", prog, min_size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

#endif
