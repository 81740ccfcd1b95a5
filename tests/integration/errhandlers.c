/*
 * User error handlers and user error classes: the handler is called with the
 * communicator and the code of the failing call; MPI_Comm_call_errhandler;
 * MPI_Add_error_class/code/string with MPI_Error_class/string and
 * MPI_LASTUSEDCODE; a handler freed while a communicator uses it stays valid,
 * and a dup inherits it.
 */
#include "testlib.h"

static int calls;
static MPI_Comm seen_comm;
static int seen_code;

static void handler(MPI_Comm *comm, int *code, ...) {
    calls++;
    seen_comm = *comm;
    seen_code = *code;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(dup, eh));
    MPI_OK(MPI_Errhandler_free(&eh)); /* still in use by dup */
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not reset the handle");

    /* A bad argument calls the handler with the communicator and the class. */
    int x = 0, cls = -1;
    int rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, dup);
    CHECK(calls == 1, "handler called %d times", calls);
    CHECK(seen_comm == dup, "handler got another communicator");
    MPI_OK(MPI_Error_class(seen_code, &cls));
    CHECK(cls == MPI_ERR_RANK, "handler got class %d, expected MPI_ERR_RANK", cls);
    CHECK(rc == seen_code, "call returned %d, handler saw %d", rc, seen_code);

    /* A dup of dup inherits the user handler. */
    MPI_Comm dup2;
    MPI_OK(MPI_Comm_dup(dup, &dup2));
    MPI_Send(&x, -1, MPI_INT, 0, 0, dup2);
    CHECK(calls == 2 && seen_comm == dup2, "inherited handler not called on the dup (calls %d)", calls);
    MPI_OK(MPI_Error_class(seen_code, &cls));
    CHECK(cls == MPI_ERR_COUNT, "class %d, expected MPI_ERR_COUNT", cls);

    /* User classes, codes and strings. */
    int myclass, mycode, last = 0, flag = 0, *lastp = NULL;
    MPI_OK(MPI_Add_error_class(&myclass));
    MPI_OK(MPI_Add_error_code(myclass, &mycode));
    MPI_OK(MPI_Add_error_string(mycode, "the flux capacitor is empty"));
    MPI_OK(MPI_Add_error_string(myclass, "application errors"));
    CHECK(myclass > MPI_ERR_LASTCODE && mycode > myclass, "class %d code %d", myclass, mycode);
    MPI_OK(MPI_Error_class(mycode, &cls));
    CHECK(cls == myclass, "class of my code is %d, expected %d", cls, myclass);
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_OK(MPI_Error_string(mycode, text, &len));
    CHECK(strcmp(text, "the flux capacitor is empty") == 0 && len == (int)strlen(text), "string '%s'", text);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    last = *lastp;
    CHECK(flag && last == mycode, "MPI_LASTUSEDCODE is %d, expected %d", last, mycode);

    /* Comm_call_errhandler passes the user code through. */
    MPI_OK(MPI_Comm_call_errhandler(dup, mycode));
    CHECK(calls == 3 && seen_code == mycode && seen_comm == dup, "call_errhandler: calls %d code %d", calls, seen_code);

    /* Under MPI_ERRORS_RETURN the handler is not called. */
    MPI_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, dup);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK && calls == 3, "ERRORS_RETURN: class %d, calls %d", cls, calls);
    MPI_Errhandler got;
    MPI_OK(MPI_Comm_get_errhandler(dup2, &got));
    CHECK(got != MPI_ERRORS_RETURN && got != MPI_ERRORS_ARE_FATAL, "dup2 lost its user handler");
    MPI_OK(MPI_Errhandler_free(&got));

    MPI_OK(MPI_Comm_free(&dup2));
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("errhandlers: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
