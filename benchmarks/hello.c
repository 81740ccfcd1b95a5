/*
 * Start-up: MPI_Init and MPI_Finalize, nothing else. Plain MPI, so the same
 * source builds with any MPI; benchmarks/compare.sh times whole launches of
 * it (launcher start to the last rank's exit).
 */
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
