/*
 * The default error handler (MPI_ERRORS_ARE_FATAL) aborts the job.
 *
 * Any nprocs >= 2. Rank 1 calls MPI_Send with dest = 1000 without setting an
 * error handler: the job must abort with a non-zero exit status and a message
 * on stderr naming MPI_Send and "invalid rank 1000". If the call returns, the
 * program prints "unreachable" and finishes normally (exit 0), so the test
 * expecting a failure fails. The other ranks wait in a receive that only rank
 * 1 could satisfy after the bad call.
 */
#include "testlib.h"

int main(int argc, char **argv) {
    int rank, size, x = 42;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;

    tl_init(&argc, &argv, &rank, &size, 2);
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default error handler is not MPI_ERRORS_ARE_FATAL");
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    if (rank == 1) {
        int rc = MPI_Send(&x, 1, MPI_INT, 1000, 0, MPI_COMM_WORLD);
        printf("unreachable (rank 1: MPI_Send to rank 1000 returned %d)\n", rc);
        fflush(stdout);
        fprintf(stderr, "unreachable\n");
        fflush(stderr);
        /* Release the others so the job ends with exit 0: a visible failure. */
        for (int r = 0; r < size; ++r)
            if (r != 1) MPI_OK(MPI_Send(&x, 1, MPI_INT, r, 1, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
