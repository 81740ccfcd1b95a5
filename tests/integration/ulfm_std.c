/*
 * The fault-tolerance calls under the MPI standard's names (MPI_Comm_revoke,
 * MPI_Comm_is_revoked, MPI_Comm_get_failed, MPI_Comm_ack_failed,
 * MPI_Comm_agree, MPI_Comm_iagree, MPI_Comm_shrink, MPI_Comm_ishrink) with
 * only mpi.h, built strictly like ulfm_mpich.c.
 *
 * The last rank dies (SIGKILL) after a first barrier. Every survivor:
 *   - sees MPI_ERR_PROC_FAILED from a receive from it on a private dup, finds
 *     it (and only it) in MPI_Comm_get_failed's group, and acknowledges it;
 *   - runs barriers on MPI_COMM_WORLD until one fails, revokes it, checks
 *     that MPI_Comm_is_revoked says so for it and not for the dup, and sees
 *     MPI_ERR_REVOKED from the next barrier;
 *   - shrinks MPI_COMM_WORLD with MPI_Comm_ishrink, then agrees twice on the
 *     result (MPI_Comm_iagree, MPI_Comm_agree: the bitwise AND of the flags).
 * The new rank 0 prints "ulfm_std: N survivors agreed" (checked by the
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
    CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED, "receive from the dead rank: class %d", tl_class_of(rc));
    MPI_Group failed, worldgrp;
    int nfailed = -1, in_world = -1, zero = 0, nacked = -1;
    MPI_OK(MPI_Comm_get_failed(priv, &failed));
    MPI_OK(MPI_Group_size(failed, &nfailed));
    CHECK(nfailed == 1, "MPI_Comm_get_failed: %d failed processes, expected 1", nfailed);
    MPI_OK(MPI_Comm_group(priv, &worldgrp));
    MPI_OK(MPI_Group_translate_ranks(failed, 1, &zero, worldgrp, &in_world));
    CHECK(in_world == victim, "MPI_Comm_get_failed names rank %d, expected %d", in_world, victim);
    MPI_OK(MPI_Comm_ack_failed(priv, nfailed, &nacked));
    CHECK(nacked == 1, "MPI_Comm_ack_failed: %d acknowledged, expected 1", nacked);
    MPI_OK(MPI_Group_free(&worldgrp));
    MPI_OK(MPI_Group_free(&failed));

    while ((rc = MPI_Barrier(world)) == MPI_SUCCESS) {}
    CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED || tl_class_of(rc) == MPI_ERR_REVOKED,
          "barrier with a dead member: class %d", tl_class_of(rc));
    MPI_OK(MPI_Comm_revoke(world));
    int revoked = 0;
    MPI_OK(MPI_Comm_is_revoked(world, &revoked));
    CHECK(revoked, "MPI_Comm_is_revoked: the revoked communicator is not revoked");
    MPI_OK(MPI_Comm_is_revoked(priv, &revoked));
    CHECK(!revoked, "MPI_Comm_is_revoked: the private dup is revoked");
    rc = MPI_Barrier(world);
    CHECK(tl_class_of(rc) == MPI_ERR_REVOKED, "barrier on the revoked communicator: class %d", tl_class_of(rc));

    MPI_Request req;
    MPI_OK(MPI_Comm_ishrink(world, &shrunk, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int srank, ssize;
    MPI_OK(MPI_Comm_rank(shrunk, &srank));
    MPI_OK(MPI_Comm_size(shrunk, &ssize));
    CHECK(ssize == size - 1, "shrunk to %d ranks, expected %d", ssize, size - 1);
    int flag = ~(1 << srank);
    MPI_OK(MPI_Comm_iagree(shrunk, &flag, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(flag == ~((1 << ssize) - 1), "MPI_Comm_iagree: %#x, expected %#x", (unsigned)flag,
          (unsigned)~((1 << ssize) - 1));
    flag = srank == 0 ? 3 : 1;
    MPI_OK(MPI_Comm_agree(shrunk, &flag));
    CHECK(flag == 1, "MPI_Comm_agree: %#x, expected 1", (unsigned)flag);

    MPI_OK(MPI_Barrier(shrunk));
    if (srank == 0) {
        printf("ulfm_std: %d survivors agreed\n", ssize);
        fflush(stdout);
    }
    MPI_OK(MPI_Comm_free(&shrunk));
    MPI_OK(MPI_Comm_free(&priv));
    MPI_OK(MPI_Finalize());
    return 0;
}
