/*
 * MPI_Comm_idup under failures: uniform as MPI_Comm_dup (spec 000 §17.8.2).
 * Scenario "before": the last rank dies before calling idup: every survivor's
 * idup fails with MPI_ERR_PROC_FAILED and no communicator. Scenario
 * "during": the last rank calls idup and dies at once (its exchange may or
 * may not have gone out): the survivors all succeed or all fail alike
 * (checked with an agreement), and a success is usable among them after a
 * shrink. In both, an attribute of the parent is copied at each call and
 * deleted again for each idup that fails (its copy never had a communicator).
 */
#include "ftlib.h"

static int copies, deletes;

static int count_copy(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old, (void)key, (void)extra;
    ++copies;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm c, int key, void *value, void *extra) {
    (void)c, (void)key, (void)value, (void)extra;
    ++deletes;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 3);
    const int during = argc > 1 && strcmp(argv[1], "during") == 0;
    const int victim = size - 1;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm dups[3];
    MPI_Request reqs[3];
    int key;
    static int value;
    MPI_OK(MPI_Comm_create_keyval(count_copy, count_delete, &key, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &value));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim && !during) tl_die(SIGKILL);
    for (int i = 0; i < 3; ++i) MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &dups[i], &reqs[i]));
    CHECK(copies == 3, "copy callbacks at the calls: %d", copies);
    if (rank == victim) tl_die(SIGKILL);
    int ok[3];
    for (int i = 0; i < 3; ++i) {
        const int rc = MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        ok[i] = rc == MPI_SUCCESS;
        if (!during) CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED, "idup %d: class %d", i, tl_class(rc));
        if (!ok[i]) CHECK(dups[i] == MPI_COMM_NULL, "failed idup %d left a communicator", i);
        if (!ok[i] && during)
            CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED, "idup %d failed with class %d", i, tl_class(rc));
    }
    const int failed = !ok[0] + !ok[1] + !ok[2];
    CHECK(deletes == failed, "%d idups failed, %d attribute copies deleted", failed, deletes);
    /* Every survivor saw the same outcome: agree on it (AND and NOT-AND). */
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    for (int i = 0; i < 3; ++i) {
        int all = ok[i], none = !ok[i];
        MPIX_Comm_agree(MPI_COMM_WORLD, &all);
        MPIX_Comm_agree(MPI_COMM_WORLD, &none);
        CHECK(all || none, "idup %d: some survivors succeeded, others failed", i);
        if (ok[i]) {
            MPI_OK(MPI_Comm_set_errhandler(dups[i], MPI_ERRORS_RETURN));
            MPI_Comm shrunk;
            MPI_OK(MPIX_Comm_shrink(dups[i], &shrunk));
            int one = 1, sum = 0;
            MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, shrunk));
            CHECK(sum == size - 1, "allreduce on the shrunk idup gave %d", sum);
            MPI_OK(MPI_Comm_free(&shrunk));
            MPI_Comm_free(&dups[i]);
        }
    }
    CHECK(deletes == 3, "every copy deleted: %d", deletes);
    if (rank == 0) printf("idup_fault %s: OK (%d %d %d)\n", during ? "during" : "before", ok[0], ok[1], ok[2]);
    MPI_Finalize();
    return 0;
}
