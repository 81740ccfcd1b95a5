/*
 * Creation calls when the root of their exchange dies after giving its
 * result to one member only (FTMPI_TEST_KILL_AT team.result at rank 0, the
 * lowest, which leads the exchange of free context slots): rank 1 has the
 * result, ranks 2 and 3 fail the exchange. The call must still succeed at
 * every survivor or fail at every survivor with MPI_ERR_PROC_FAILED, and
 * never hang (a file opened at some members only left the others waiting in
 * its agreement for ever). 4 ranks.
 *
 *   create_fault open   MPI_File_open
 *   create_fault win    MPI_Win_allocate
 *   create_fault split  MPI_Comm_split
 *   create_fault dup    MPI_Comm_dup
 *
 * The survivors then shrink MPI_COMM_WORLD: 3 members, or the victim did not
 * die inside the call (the kill point was missed) and the test fails.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "open";
    setenv("FTMPI_TEST_KILL_AT", "team.result:0:1", 1);
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 4);
    CHECK(size == 4, "create_fault runs with 4 ranks");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char dir[64] = "", path[96];
    if (rank == 1) {
        snprintf(dir, sizeof dir, "/tmp/ftmpi-create_fault-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    }
    MPI_OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 1, MPI_COMM_WORLD));
    snprintf(path, sizeof path, "%s/data", dir);

    MPI_File fh = MPI_FILE_NULL;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Comm made = MPI_COMM_NULL;
    int *mem = NULL, rc = MPI_ERR_OTHER;
    if (strcmp(mode, "open") == 0)
        rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh);
    else if (strcmp(mode, "win") == 0)
        rc = MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    else if (strcmp(mode, "split") == 0) rc = MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &made);
    else if (strcmp(mode, "dup") == 0) rc = MPI_Comm_dup(MPI_COMM_WORLD, &made);
    else CHECK(0, "unknown mode %s", mode);

    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    int n = 0;
    MPI_OK(MPI_Comm_size(shrunk, &n));
    CHECK(n == 3, "%d survivors: the victim did not die inside the call", n);
    int ok = rc == MPI_SUCCESS, lo = -1, hi = -1;
    MPI_OK(MPI_Allreduce(&ok, &lo, 1, MPI_INT, MPI_MIN, shrunk));
    MPI_OK(MPI_Allreduce(&ok, &hi, 1, MPI_INT, MPI_MAX, shrunk));
    CHECK(lo == hi, "the call succeeded at some survivors only (class %d here)", tl_class_of(rc));
    CHECK(ok || tl_class_of(rc) == MPIX_ERR_PROC_FAILED, "the call failed with class %d", tl_class_of(rc));
    CHECK(ok || (fh == MPI_FILE_NULL && win == MPI_WIN_NULL && made == MPI_COMM_NULL), "a handle after a failure");
    /* What was made goes, whatever its freeing reports. */
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
    if (made != MPI_COMM_NULL) MPI_Comm_free(&made);
    MPI_OK(MPI_Barrier(shrunk));
    if (rank == 1) {
        unlink(path);
        CHECK(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
        printf("create_fault %s: 3 survivors ok (%s everywhere)\n", mode, ok ? "made" : "refused");
    }
    MPI_Comm_free(&shrunk);
    MPI_Finalize();
    return 0;
}
