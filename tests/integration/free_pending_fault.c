/*
 * A communicator freed with nonblocking collectives pending on it (their
 * requests freed too); the communicator goes once they are over, from inside
 * the failure or revoke handling that ends them.
 *  kill:   then one of its members dies: the pending operations fail at the
 *          survivors (their sends to the dead process are given up, their
 *          receives from it fail). The survivors carry on: a barrier on
 *          MPI_COMM_WORLD fails with MPI_ERR_PROC_FAILED, and after a shrink
 *          an allreduce works. The last rank is the victim: it takes part in
 *          none of the pending collectives and dies when rank 0 tells it to.
 *  revoke: rank 0, which takes part in none of them either and keeps the
 *          communicator, revokes it; the others' operations fail with
 *          MPI_ERR_REVOKED as the revoke reaches them.
 */
#include "ftlib.h"

enum { BYTES = 1 << 20, PENDING = 3 };

static void revoke_case(int rank) {
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    if (rank != 0) {
        MPI_Request reqs[2];
        static int in = 1, out; /* still in use once this block is left */
        MPI_OK(MPI_Ibarrier(c, &reqs[0]));
        MPI_OK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, c, &reqs[1]));
        for (int i = 0; i < 2; ++i) MPI_OK(MPI_Request_free(&reqs[i]));
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the others' operations are pending when rank 0 revokes */
    if (rank == 0) {
        MPI_OK(MPIX_Comm_revoke(c));
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("free_pending_fault revoke: OK\n");
    MPI_Finalize();
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 3);
    if (argc > 1 && strcmp(argv[1], "revoke") == 0) {
        revoke_case(rank);
        return 0;
    }
    const int victim = size - 1;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim) {
        int go = 0;
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        tl_die(SIGKILL);
    }
    /* Large enough to wait for the victim's receives (rendezvous). */
    char *out = malloc((size_t)BYTES * size), *in = malloc((size_t)BYTES * size);
    CHECK(out && in, "out of memory");
    memset(out, rank, (size_t)BYTES * size);
    MPI_Request reqs[PENDING];
    MPI_OK(MPI_Ialltoall(out, BYTES, MPI_BYTE, in, BYTES, MPI_BYTE, c, &reqs[0]));
    MPI_OK(MPI_Ibarrier(c, &reqs[1]));
    MPI_OK(MPI_Ibcast(out, BYTES, MPI_BYTE, 0, c, &reqs[2]));
    for (int i = 0; i < PENDING; ++i) MPI_OK(MPI_Request_free(&reqs[i]));
    MPI_OK(MPI_Comm_free(&c));
    if (rank == 0) MPI_OK(MPI_Send(&rank, 1, MPI_INT, victim, 1, MPI_COMM_WORLD));
    CHECK_CLASS(MPI_Barrier(MPI_COMM_WORLD), MPI_ERR_PROC_FAILED);
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK(sum == size - 1, "allreduce among the survivors gave %d", sum);
    MPI_OK(MPI_Comm_free(&shrunk));
    if (rank == 0) printf("free_pending_fault kill: OK\n");
    /* Not before: the failed collectives' rounds among the survivors may
       still be moving data (a failed collective runs all its rounds), and
       their requests were freed, so nothing here says when they are over.
       MPI_Finalize completes them. */
    MPI_Finalize();
    free(out);
    free(in);
    return 0;
}
