/*
 * The error of a request whose communicator (or file) was freed while the
 * request was pending goes to that object's error handler, not to
 * MPI_COMM_WORLD's: the object lives until its pending operations complete
 * (MPI 3.1 §6.4.3). MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL throughout, so
 * a report that reached it ends the job.
 *
 *   errh_freed comm     (2 ranks or more) rank 0 posts receives from rank
 *                       1 on three duplicates of MPI_COMM_WORLD: one with
 *                       MPI_ERRORS_RETURN (completed by MPI_Wait), one with a
 *                       user handler that counts its calls (MPI_Waitall), one
 *                       with MPI_ERRORS_RETURN (MPI_Waitany); it frees the
 *                       three, then rank 1 is SIGKILLed. Each wait must
 *                       report MPIX_ERR_PROC_FAILED through its freed
 *                       communicator's handler: the user handler runs once,
 *                       with that class.
 *   errh_freed file     (any size; rank 0 only) MPI_File_iwrite to
 *                       /dev/full (its request fails with MPI_ERR_NO_SPACE
 *                       or MPI_ERR_IO), MPI_File_close, then MPI_Wait: the
 *                       file's handler (MPI_ERRORS_RETURN, the default for
 *                       files) applies.
 */
#include "ftlib.h"

static int me, np;
static int handler_calls, handler_class;
static MPI_Comm handler_comm;

static void count_errors(MPI_Comm *comm, int *code, ...) {
    ++handler_calls;
    handler_class = tl_class(*code);
    handler_comm = *comm;
}

static void comm_case(void) {
    CHECK(np >= 2, "needs 2 ranks");
    MPI_Comm c[3];
    MPI_Errhandler counting;
    MPI_OK(MPI_Comm_create_errhandler(count_errors, &counting));
    for (int i = 0; i < 3; ++i) {
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]));
        MPI_OK(MPI_Comm_set_errhandler(c[i], i == 1 ? counting : MPI_ERRORS_RETURN));
    }
    MPI_OK(MPI_Errhandler_free(&counting));
    int x[3] = {0, 0, 0};
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (me == 0)
        for (int i = 0; i < 3; ++i) MPI_OK(MPI_Irecv(&x[i], 1, MPI_INT, 1, 4, c[i], &req[i]));
    const MPI_Comm held = c[1];
    for (int i = 0; i < 3; ++i) MPI_OK(MPI_Comm_free(&c[i]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the receives are posted and the handles freed */
    if (me == 1) tl_die(SIGKILL);
    if (me != 0) {
        MPI_OK(MPI_Finalize());
        return;
    }
    MPI_Status st;
    CHECK_CLASS(MPI_Wait(&req[0], &st), MPIX_ERR_PROC_FAILED);
    int rc = MPI_Waitall(1, &req[1], &st);
    CHECK(tl_class(rc) == MPI_ERR_IN_STATUS, "MPI_Waitall: class %d, expected MPI_ERR_IN_STATUS", tl_class(rc));
    CHECK(handler_calls == 1 && handler_class == MPIX_ERR_PROC_FAILED && handler_comm == held,
          "the freed communicator's user handler ran %d time(s), class %d, comm %s", handler_calls, handler_class,
          handler_comm == held ? "right" : "wrong");
    int idx = -1;
    CHECK_CLASS(MPI_Waitany(1, &req[2], &idx, &st), MPIX_ERR_PROC_FAILED);
    CHECK(idx == 0, "MPI_Waitany index %d", idx);
    printf("errh_freed comm: the freed communicators' handlers got the failures\n");
    MPI_OK(MPI_Finalize());
}

static void file_case(void) {
    if (me == 0) {
        MPI_File f;
        MPI_OK(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &f));
        static char data[1 << 16];
        MPI_Request req;
        int rc = MPI_File_iwrite(f, data, (int)sizeof data, MPI_BYTE, &req);
        CHECK(rc == MPI_SUCCESS, "MPI_File_iwrite returned class %d", tl_class(rc));
        MPI_OK(MPI_File_close(&f));
        MPI_Status st;
        rc = MPI_Wait(&req, &st);
        CHECK(tl_class(rc) == MPI_ERR_NO_SPACE || tl_class(rc) == MPI_ERR_IO,
              "MPI_Wait on the closed file's write: class %d, expected MPI_ERR_NO_SPACE", tl_class(rc));
        printf("errh_freed file: the closed file's handler got the error\n");
    }
    MPI_OK(MPI_Finalize());
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &me, &np, 1);
    const char *mode = argc > 1 ? argv[1] : "comm";
    if (!strcmp(mode, "comm")) comm_case();
    else if (!strcmp(mode, "file")) file_case();
    else CHECK(0, "usage: errh_freed comm|file");
    return 0;
}
