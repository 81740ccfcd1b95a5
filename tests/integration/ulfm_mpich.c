/*
 * An MPICH-style ULFM program: it includes only mpi.h (MPICH declares the
 * MPIX_ fault-tolerance API there) and is built with
 * -Werror=implicit-function-declaration, -pedantic and -Werror, so every
 * MPIX_ name it uses must come from mpi.h.
 *
 * The last rank dies (SIGKILL) after a first barrier. Every survivor:
 *   - sees MPIX_ERR_PROC_FAILED from a receive from it (on a private dup that
 *     nobody revokes);
 *   - runs barriers on MPI_COMM_WORLD until one fails (MPIX_ERR_PROC_FAILED or,
 *     once another survivor revoked it, MPIX_ERR_REVOKED), revokes it, and
 *     then sees MPIX_ERR_REVOKED from the next barrier;
 *   - shrinks MPI_COMM_WORLD, agrees on the shrunk communicator (bitwise AND
 *     of the flags), and acknowledges the failure on the dup.
 * The new rank 0 prints "ulfm_mpich: N survivors agreed" (checked by the
 * harness).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

#include "testlib.h"

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 3);
    MPI_Comm world = MPI_COMM_WORLD, priv, shrunk;
    MPI_OK(MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_dup(world, &priv));
    const int victim = size - 1;
    MPI_OK(MPI_Barrier(world));
    if (rank == victim) {
        fflush(stdout);
        raise(SIGKILL);
    }

    int x = 0;
    int rc = MPI_Recv(&x, 1, MPI_INT, victim, 0, priv, MPI_STATUS_IGNORE);
    CHECK(tl_class_of(rc) == MPIX_ERR_PROC_FAILED, "receive from the dead rank: class %d", tl_class_of(rc));

    while ((rc = MPI_Barrier(world)) == MPI_SUCCESS) {}
    CHECK(tl_class_of(rc) == MPIX_ERR_PROC_FAILED || tl_class_of(rc) == MPIX_ERR_REVOKED,
          "barrier with a dead member: class %d", tl_class_of(rc));
    MPI_OK(MPIX_Comm_revoke(world));
    rc = MPI_Barrier(world);
    CHECK(tl_class_of(rc) == MPIX_ERR_REVOKED, "barrier on the revoked communicator: class %d", tl_class_of(rc));

    MPI_OK(MPIX_Comm_shrink(world, &shrunk));
    int srank, ssize;
    MPI_OK(MPI_Comm_rank(shrunk, &srank));
    MPI_OK(MPI_Comm_size(shrunk, &ssize));
    CHECK(ssize == size - 1, "shrunk to %d ranks, expected %d", ssize, size - 1);
    int flag = ~(1 << srank);
    MPI_OK(MPIX_Comm_agree(shrunk, &flag));
    CHECK(flag == ~((1 << ssize) - 1), "agreed flag %#x, expected %#x", (unsigned)flag, (unsigned)~((1 << ssize) - 1));

    MPI_Group acked;
    int nacked = -1;
    MPI_OK(MPIX_Comm_failure_ack(priv));
    MPI_OK(MPIX_Comm_failure_get_acked(priv, &acked));
    MPI_OK(MPI_Group_size(acked, &nacked));
    CHECK(nacked == 1, "%d acknowledged failures, expected 1", nacked);
    MPI_OK(MPI_Group_free(&acked));

    MPI_OK(MPI_Barrier(shrunk));
    if (srank == 0) {
        printf("ulfm_mpich: %d survivors agreed\n", ssize);
        fflush(stdout);
    }
    MPI_OK(MPI_Comm_free(&shrunk));
    MPI_OK(MPI_Comm_free(&priv));
    MPI_OK(MPI_Finalize());
    return 0;
}
