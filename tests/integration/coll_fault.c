/*
 * Collectives never hang on a failed member. The last rank exits without
 * MPI_Finalize (a failure) right after a barrier; every survivor then runs
 * blocking and nonblocking collectives under MPI_ERRORS_RETURN. Each call must
 * return (MPI_SUCCESS or MPI_ERR_PROC_FAILED; no other class), and the dead
 * rank's neighbours in every algorithm must see MPI_ERR_PROC_FAILED: checked
 * for the bcast/reduce root's and the ring's direct peers. Needs >= 3 ranks.
 */
#include "testlib.h"

static int rank, size;

static void expect(int rc, const char *what, int must_fail) {
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_PROC_FAILED, "%s: error class %d", what, cls);
    if (must_fail) CHECK(cls == MPI_ERR_PROC_FAILED, "%s: no MPI_ERR_PROC_FAILED on a peer of the dead rank", what);
}

int main(int argc, char **argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 3, "needs at least 3 ranks, got %d", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int dead = size - 1;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == dead) exit(0); /* without MPI_Finalize: a failure */

    int x[64] = {0}, y[64 * 16] = {0};
    /* Bcast rooted at the dead rank: its children in the binomial tree
     * (relative ranks 1, 2, 4, ...) receive from it and must fail. */
    const int vr = (rank - dead + size) % size;
    const int child_of_dead = (vr & (vr - 1)) == 0;
    expect(MPI_Bcast(x, 64, MPI_INT, dead, MPI_COMM_WORLD), "bcast from the dead root", child_of_dead);
    /* Reduce to the dead rank: nobody may hang. */
    expect(MPI_Reduce(x, y, 64, MPI_INT, MPI_SUM, dead, MPI_COMM_WORLD), "reduce to the dead root", 0);
    /* Allreduce: small (recursive doubling) and large (ring). Ring: rank 0
     * receives from the dead rank first. */
    expect(MPI_Allreduce(x, y, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "allreduce small", 0);
    int *big = calloc((size_t)1 << 16, sizeof(int)), *bigo = calloc((size_t)1 << 16, sizeof(int));
    expect(MPI_Allreduce(big, bigo, 1 << 16, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "allreduce large", rank == 0);
    expect(MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), "allgather", rank == 0);
    expect(MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_WORLD), "gather to 0", rank == 0);
    expect(MPI_Alltoall(y, 1, MPI_INT, y + 16 * 16, 1, MPI_INT, MPI_COMM_WORLD), "alltoall", 1);
    expect(MPI_Scan(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "scan", 0);
    MPI_Request r;
    MPI_OK(MPI_Iallreduce(x, y, 64, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r));
    expect(MPI_Wait(&r, MPI_STATUS_IGNORE), "iallreduce", 0);
    MPI_OK(MPI_Ibcast(x, 64, MPI_INT, dead, MPI_COMM_WORLD, &r));
    expect(MPI_Wait(&r, MPI_STATUS_IGNORE), "ibcast from the dead root", child_of_dead);
    MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
    expect(MPI_Wait(&r, MPI_STATUS_IGNORE), "ibarrier", 0);
    free(big);
    free(bigo);
    if (rank == 0) printf("coll_fault: every collective returned on %d survivors\n", size - 1);
    MPI_Finalize();
    return 0;
}
