/*
 * A rank forks after MPI_Init (as osu_latency_mp does, or system()): the
 * child's MPI calls fail with MPI_ERR_OTHER, and its exit through exit() (with
 * the inherited exit handlers and library destructors) must leave the
 * rank's connections alone: the job goes on communicating afterwards, with
 * no rank declared failed.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0, "fork failed");
    if (child == 0) {
        int r = -1, cls = -1;
        const int rc = MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Error_class(rc, &cls);
        exit(cls == MPI_ERR_OTHER ? 0 : 3); /* exit(), not _exit(): the case that matters */
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child's MPI call did not fail with MPI_ERR_OTHER (status %#x)", status);
    /* The child is gone: every rank keeps talking to every other, for longer
       than the failure detector's timeout would allow a dead link. */
    const double start = MPI_Wtime();
    long rounds = 0;
    int go = 1;
    while (go) {
        int token = rank, sum = 0;
        MPI_OK(MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == size * (size - 1) / 2, "allreduce after the fork: %d", sum);
        int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
        MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 1, &got, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == prev, "ring after the fork: got %d", got);
        ++rounds;
        go = MPI_Wtime() - start < 1.5; /* FTMPI_FT_TIMEOUT_MS is 1000 by default */
        MPI_OK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
    int nf = -1;
    MPI_Group failed;
    MPI_OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed));
    MPI_OK(MPI_Group_size(failed, &nf));
    CHECK(nf == 0, "%d rank(s) declared failed after the fork", nf);
    MPI_OK(MPI_Group_free(&failed));
    if (rank == 0) printf("fork: %ld rounds after the child exited, no failure\n", rounds);
    MPI_Finalize();
    return 0;
}
