/* Smallest MPI program: proves the build-tree compiler wrapper compiles and
 * links against libftmpi and that ftmpirun runs it (exit 0, finalize seen). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank = -1, size = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("hello from %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
