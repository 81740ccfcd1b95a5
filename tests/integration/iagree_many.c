/*
 * Many nonblocking agreements in flight at once: every rank starts 40
 * MPIX_Comm_iagree on MPI_COMM_WORLD before it waits for any, then the same
 * on a dup, then one blocking agree. Agreement i clears bit (i mod size) at
 * rank i mod size, so each outcome is known.
 *
 * Before issue 16 only the 8 newest agreements of a communicator were kept,
 * so a program with more than 8 in flight hung in MPI_Waitall.
 * Rank 0 prints "iagree_many: 80 agreements ok".
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>

#include "testlib.h"

enum { K = 40 };

static void run(MPI_Comm comm, int rank, int size) {
    int flag[K];
    MPI_Request req[K];
    for (int i = 0; i < K; ++i) {
        flag[i] = 0x7fffffff & ~(rank == i % size ? 1 << (i % size) : 0);
        MPI_OK(MPIX_Comm_iagree(comm, &flag[i], &req[i]));
    }
    MPI_OK(MPI_Waitall(K, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < K; ++i) CHECK(flag[i] == (0x7fffffff & ~(1 << (i % size))), "agreement %d: %#x", i, flag[i]);
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    run(MPI_COMM_WORLD, rank, size);
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    run(dup, rank, size);
    int one = 1;
    MPI_OK(MPIX_Comm_agree(dup, &one)); /* a blocking one after them */
    CHECK(one == 1, "agree after the nonblocking ones: %d", one);
    MPI_Comm_free(&dup);
    if (rank == 0) printf("iagree_many: %d agreements ok\n", 2 * K);
    MPI_Finalize();
    return 0;
}
