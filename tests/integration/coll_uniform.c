/*
 * A non-rooted collective that a member failed to enter returns
 * MPI_ERR_PROC_FAILED at every survivor (issue 5), not only at the dead
 * rank's direct peers: a rank that saw the failure marks its remaining
 * messages of that collective, so the error flows to everyone downstream.
 *
 * Rank `victim` (argument; default the last) dies right after a barrier; then
 * every survivor runs each non-rooted collective, blocking and nonblocking,
 * small and large, and each must fail at every survivor. (Scan and exscan are
 * left out: below the dead rank their results do not depend on it.)
 */
#include "ftlib.h"

static int me, size;

#define ALL_FAIL(call, what)                               \
    do {                                                   \
        int rc_ = (call);                                  \
        CHECK(tl_class(rc_) == MPI_ERR_PROC_FAILED,        \
              "%s returned class %d at rank %d, expected " \
              "MPI_ERR_PROC_FAILED at every survivor",     \
              what, tl_class(rc_), me);                    \
    } while (0)

static int wait_one(MPI_Request *r) { return MPI_Wait(r, MPI_STATUS_IGNORE); }

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &me, &size, 3);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int victim = argc > 1 ? atoi(argv[1]) % size : size - 1;
    enum { BIG = 1 << 16 };
    int *x = calloc(BIG * (size_t)size, sizeof(int)), *y = calloc(BIG * (size_t)size, sizeof(int));
    int counts[64], displs[64];
    for (int i = 0; i < size; ++i) counts[i] = 4, displs[i] = 4 * i;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == victim) tl_die(SIGKILL);
    MPI_Request r;
    for (int pass = 0; pass < 2; ++pass) { /* blocking, then nonblocking */
        const int nb = pass == 1;
#define RUN(blocking, nonblocking, what)                 \
    do {                                                 \
        if (!nb) ALL_FAIL(blocking, what);               \
        else {                                           \
            MPI_OK(nonblocking);                         \
            ALL_FAIL(wait_one(&r), "nonblocking " what); \
        }                                                \
    } while (0)
        RUN(MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, &r), "barrier");
        RUN(MPI_Allreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
            MPI_Iallreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), "small allreduce");
        RUN(MPI_Allreduce(x, y, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
            MPI_Iallreduce(x, y, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), "large allreduce");
        RUN(MPI_Allgather(x, 4, MPI_INT, y, 4, MPI_INT, MPI_COMM_WORLD),
            MPI_Iallgather(x, 4, MPI_INT, y, 4, MPI_INT, MPI_COMM_WORLD, &r), "allgather");
        RUN(MPI_Allgatherv(x, 4, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD),
            MPI_Iallgatherv(x, 4, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD, &r), "allgatherv");
        RUN(MPI_Alltoall(x, 4, MPI_INT, y, 4, MPI_INT, MPI_COMM_WORLD),
            MPI_Ialltoall(x, 4, MPI_INT, y, 4, MPI_INT, MPI_COMM_WORLD, &r), "alltoall");
        RUN(MPI_Alltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD),
            MPI_Ialltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD, &r), "alltoallv");
        RUN(MPI_Reduce_scatter_block(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
            MPI_Ireduce_scatter_block(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), "reduce_scatter_block");
        RUN(MPI_Reduce_scatter(x, y, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
            MPI_Ireduce_scatter(x, y, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), "reduce_scatter");
    }
    int expect = victim;
    tl_check_agreement(MPI_COMM_WORLD, &expect, 1);
    if (me == (victim == 0 ? 1 : 0))
        printf("coll_uniform: every non-rooted collective failed at all %d survivors\n", size - 1);
    free(x);
    free(y);
    MPI_OK(MPI_Finalize());
    return 0;
}
