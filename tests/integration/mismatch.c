/*
 * Arguments that differ between members (an erroneous program) are never
 * reported as a process failure (issue 18): a collective whose counts differ
 * fails with MPI_ERR_TRUNCATE where a message was too long and MPI_ERR_OTHER
 * at the members it reached from there, never with MPI_ERR_PROC_FAILED or
 * MPI_ERR_REVOKED; MPIX_Comm_get_failed stays empty, and the communicator
 * works afterwards. Run at 2 or more ranks.
 */
#include "ftlib.h"

static int me, size;

/* After one erroneous collective: every member's class, known everywhere,
   and the checks that apply to them. */
static void check_outcome(const char *what, int rc) {
    int cls = tl_class(rc), *all = malloc(sizeof(int) * size), errors = 0;
    MPI_OK(MPI_Allgather(&cls, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) {
        CHECK(all[r] != MPIX_ERR_PROC_FAILED && all[r] != MPIX_ERR_REVOKED && all[r] != MPIX_ERR_PROC_FAILED_PENDING,
              "%s: rank %d reports a failure class (%d) though no process failed", what, r, all[r]);
        CHECK(all[r] == MPI_SUCCESS || all[r] == MPI_ERR_TRUNCATE || all[r] == MPI_ERR_OTHER, "%s: rank %d: class %d",
              what, r, all[r]);
        errors += all[r] != MPI_SUCCESS;
    }
    CHECK(errors > 0, "%s: no member reported the mismatch", what);
    int failed[256];
    CHECK(tl_failed(MPI_COMM_WORLD, failed, 256) == 0, "%s: MPIX_Comm_get_failed is not empty", what);
    if (me == 0) {
        printf("mismatch %s:", what);
        for (int r = 0; r < size; ++r) printf(" %d", all[r]);
        printf("\n");
    }
    free(all);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &me, &size, 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *a = calloc(8192, sizeof(int)), *b = calloc(8192, sizeof(int) * (size_t)size);
    /* Rank 1 gives more elements than the others: small (recursive doubling),
       above the shm inject size, above the eager limit. */
    const int counts[][2] = {{10, 12}, {1000, 1100}, {6000, 6100}};
    for (int k = 0; k < 3; ++k) {
        char what[64];
        snprintf(what, sizeof what, "allreduce %d/%d", counts[k][0], counts[k][1]);
        const int n = me == 1 ? counts[k][1] : counts[k][0];
        check_outcome(what, MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "bcast %d/%d", counts[k][0], counts[k][1]);
        const int nb = me == 0 ? counts[k][1] : counts[k][0]; /* the root sends more */
        check_outcome(what, MPI_Bcast(a, nb, MPI_INT, 0, MPI_COMM_WORLD));
    }
    /* The communicator still works. */
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size, "allreduce after the errors: %d", sum);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(a);
    free(b);
    if (me == 0) printf("mismatch: no failure reported, communicator usable\n");
    MPI_Finalize();
    return 0;
}
