/*
 * Token ring: every rank passes a token to its right neighbour with
 * MPI_Sendrecv, the token goes round the ring `size` times, and each rank
 * checks what it received. Standard MPI only: builds with any mpicc.
 *
 *   ftmpicc ring.c -o ring && ftmpirun -n 4 ./ring
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int token = rank, errors = 0;
    for (int lap = 1; lap <= size; ++lap) {
        int incoming = -1;
        MPI_Status status;
        MPI_Sendrecv(&token, 1, MPI_INT, right, lap, &incoming, 1, MPI_INT, left, lap, MPI_COMM_WORLD, &status);
        /* After `lap` steps a rank holds the token that started `lap` ranks to its left. */
        const int expected = ((rank - lap) % size + size) % size;
        if (incoming != expected || status.MPI_SOURCE != left || status.MPI_TAG != lap) {
            fprintf(stderr, "rank %d: lap %d got %d from %d, expected %d from %d\n", rank, lap, incoming,
                    status.MPI_SOURCE, expected, left);
            errors++;
        }
        token = incoming;
    }
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(name, &len);
    printf("rank %d of %d received token %d on %s\n", rank, size, token, name);
    MPI_Finalize();
    return errors == 0 ? 0 : 1;
}
