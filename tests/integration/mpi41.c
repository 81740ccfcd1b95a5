/*
 * MPI 4.0 and 4.1's local additions, checked against what they must return:
 *   local  MPI_Info_create_env (before and after MPI_Init),
 *          MPI_Info_get_string, MPI_Status_get/set_source/tag/error,
 *          MPI_Type_get_value_index, buffers per communicator, automatic
 *          buffers and their flushes,
 *          MPI_Remove_error_class/code/string, MPI_ERR_SESSION, and
 *          MPI_Request_get_status_any/all/some between ranks 0 and 1
 *          (they report completions and leave the requests alone);
 *   kill   the last rank dies (SIGKILL) while rank 0 has a receive from it
 *          posted: MPI_Request_get_status_any/all/some report
 *          MPI_ERR_PROC_FAILED, the request stays, and MPI_Wait then
 *          returns the same class and frees it.
 */
#include <signal.h>

#include "testlib.h"

static void check_env(MPI_Info info, const char *command, int size) {
    int buflen = 0, flag = 0;
    char small[4], value[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Info_get_string(info, "command", &buflen, NULL, &flag));
    CHECK(flag && buflen == (int)strlen(command) + 1, "command: flag %d, length %d for '%s'", flag, buflen, command);
    buflen = (int)sizeof small;
    MPI_OK(MPI_Info_get_string(info, "command", &buflen, small, &flag));
    CHECK(strncmp(small, command, 3) == 0 && small[3] == '\0', "truncated command '%s'", small);
    CHECK(buflen == (int)strlen(command) + 1, "length %d after a truncated read", buflen);
    buflen = (int)sizeof value;
    MPI_OK(MPI_Info_get_string(info, "maxprocs", &buflen, value, &flag));
    if (size > 0) CHECK(flag && atoi(value) == size, "maxprocs: flag %d, '%s', expected %d", flag, value, size);
    buflen = 7;
    MPI_OK(MPI_Info_get_string(info, "no such key", &buflen, value, &flag));
    CHECK(!flag && buflen == 7, "absent key: flag %d, buflen %d", flag, buflen);
    MPI_OK(MPI_Info_get_string(info, "wdir", &buflen, value, &flag));
    CHECK(flag, "no wdir key");
}

static void status_fields(void) {
    MPI_Status st;
    int v = 0;
    MPI_OK(MPI_Status_set_source(&st, 5));
    MPI_OK(MPI_Status_set_tag(&st, 77));
    MPI_OK(MPI_Status_set_error(&st, MPI_ERR_TRUNCATE));
    CHECK(st.MPI_SOURCE == 5 && st.MPI_TAG == 77 && st.MPI_ERROR == MPI_ERR_TRUNCATE, "fields %d %d %d", st.MPI_SOURCE,
          st.MPI_TAG, st.MPI_ERROR);
    MPI_OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 5, "MPI_Status_get_source: %d", v);
    MPI_OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 77, "MPI_Status_get_tag: %d", v);
    MPI_OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TRUNCATE, "MPI_Status_get_error: %d", v);
    CHECK(tl_class_of(MPI_Status_get_tag(NULL, &v)) == MPI_ERR_ARG, "NULL status accepted");
}

static void value_index(void) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
    CHECK(t == MPI_DOUBLE_INT, "MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT) is not MPI_DOUBLE_INT");
    MPI_OK(MPI_Type_get_value_index(MPI_INTEGER, MPI_INTEGER, &t));
    CHECK(t == MPI_2INTEGER, "MPI_Type_get_value_index(MPI_INTEGER, MPI_INTEGER) is not MPI_2INTEGER");
    MPI_OK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &t));
    CHECK(t == MPI_DATATYPE_NULL, "a pair type for MPI_CHAR");
}

static void error_removal(void) {
    int cls, code, c = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_OK(MPI_Add_error_string(code, "a code of the test's class"));
    CHECK(tl_class_of(MPI_Remove_error_class(cls)) == MPI_ERR_ARG, "class removed while it has a code");
    CHECK(tl_class_of(MPI_Remove_error_code(code)) == MPI_ERR_ARG, "code removed while it has a string");
    CHECK(tl_class_of(MPI_Remove_error_class(MPI_ERR_ARG)) == MPI_ERR_ARG, "a predefined class removed");
    CHECK(tl_class_of(MPI_Remove_error_code(cls)) == MPI_ERR_ARG, "a class removed as a code");
    MPI_OK(MPI_Remove_error_string(code));
    CHECK(tl_class_of(MPI_Remove_error_string(code)) == MPI_ERR_ARG, "a string removed twice");
    MPI_OK(MPI_Remove_error_code(code));
    CHECK(MPI_Error_class(code, &c) != MPI_SUCCESS, "a removed code still has class %d", c);
    MPI_OK(MPI_Remove_error_class(cls));
    CHECK(MPI_Error_class(cls, &c) != MPI_SUCCESS, "a removed class still has class %d", c);
    MPI_OK(MPI_Error_string(MPI_ERR_SESSION, text, &len));
    CHECK(strstr(text, "MPI_ERR_SESSION") != NULL, "MPI_ERR_SESSION's string: '%s'", text);
    CHECK(MPI_ERR_SESSION <= MPI_ERR_LASTCODE, "MPI_ERR_SESSION %d beyond MPI_ERR_LASTCODE", MPI_ERR_SESSION);
}

/* MPI 4.1's buffers: a communicator's (used before the process's, which
   is not attached yet: a buffered send on MPI_COMM_WORLD fails), then the
   process's MPI_BUFFER_AUTOMATIC, flushed by MPI_Buffer_iflush. Rank 0
   sends, rank 1 receives and checks. */
static void buffers(int rank) {
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    static char space[4 * (64 + MPI_BSEND_OVERHEAD)];
    int v[16];
    if (rank == 0) {
        MPI_OK(MPI_Comm_attach_buffer(dup, space, (int)sizeof space));
        for (int i = 0; i < 16; ++i) v[i] = i;
        CHECK(tl_class_of(MPI_Bsend(v, 4, MPI_INT, 1, 1, MPI_COMM_WORLD)) == MPI_ERR_BUFFER,
              "a buffered send with no process buffer attached");
        for (int k = 0; k < 4; ++k) MPI_OK(MPI_Bsend(v, 16, MPI_INT, 1, 2, dup));
        MPI_OK(MPI_Comm_flush_buffer(dup));
        void *addr = NULL;
        MPI_Count n = 0;
        MPI_OK(MPI_Comm_detach_buffer_c(dup, &addr, &n));
        CHECK(addr == space && n == (MPI_Count)sizeof space, "MPI_Comm_detach_buffer_c: %p %lld", addr, (long long)n);
        MPI_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
        for (int k = 0; k < 50; ++k) MPI_OK(MPI_Bsend(v, 16, MPI_INT, 1, 3, MPI_COMM_WORLD));
        MPI_Request r;
        MPI_OK(MPI_Buffer_iflush(&r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int size = -1;
        MPI_OK(MPI_Buffer_detach(&addr, &size));
        CHECK(addr == MPI_BUFFER_AUTOMATIC, "MPI_Buffer_detach of the automatic buffer: %p", addr);
    } else if (rank == 1) {
        for (int k = 0; k < 54; ++k) {
            memset(v, 0xff, sizeof v);
            MPI_OK(MPI_Recv(v, 16, MPI_INT, 0, k < 4 ? 2 : 3, k < 4 ? dup : MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 16; ++i) CHECK(v[i] == i, "buffered message %d [%d]: %d", k, i, v[i]);
        }
    }
    MPI_OK(MPI_Comm_free(&dup));
}

/* Rank 0 posts three receives (tags 0..2) from rank 1, which sends tag 1
   when told to, then tags 0 and 2. */
static void get_status_arrays(int rank) {
    int go = 1, flag = -1, index = -2, out = -2, idx[3], data[3] = {-1, -1, -1};
    MPI_Request r[3];
    MPI_Status st[3];
    if (rank == 1) {
        const int order[3] = {1, 0, 2};
        for (int i = 0; i < 3; ++i) {
            if (i != 2) MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int v = 100 + order[i];
            MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, order[i], MPI_COMM_WORLD));
        }
        return;
    }
    if (rank != 0) return;
    for (int i = 0; i < 3; ++i) MPI_OK(MPI_Irecv(&data[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &r[i]));
    MPI_OK(MPI_Request_get_status_all(3, r, &flag, st));
    CHECK(flag == 0, "get_status_all: flag %d before any send", flag);
    MPI_OK(MPI_Request_get_status_any(3, r, &index, &flag, &st[0]));
    CHECK(flag == 0 && index == MPI_UNDEFINED, "get_status_any: flag %d index %d before any send", flag, index);
    MPI_OK(MPI_Request_get_status_some(3, r, &out, idx, st));
    CHECK(out == 0, "get_status_some: %d before any send", out);
    MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, 99, MPI_COMM_WORLD));
    do MPI_OK(MPI_Request_get_status_any(3, r, &index, &flag, &st[0]));
    while (!flag);
    CHECK(index == 1 && st[0].MPI_SOURCE == 1 && st[0].MPI_TAG == 1, "get_status_any: index %d source %d tag %d", index,
          st[0].MPI_SOURCE, st[0].MPI_TAG);
    CHECK(r[1] != MPI_REQUEST_NULL && data[1] == 101, "request freed (%d) or data %d", r[1] == MPI_REQUEST_NULL,
          data[1]);
    MPI_OK(MPI_Request_get_status_some(3, r, &out, idx, st));
    CHECK(out == 1 && idx[0] == 1 && st[0].MPI_TAG == 1, "get_status_some: %d, index %d", out, idx[0]);
    MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, 99, MPI_COMM_WORLD));
    do MPI_OK(MPI_Request_get_status_all(3, r, &flag, st));
    while (!flag);
    for (int i = 0; i < 3; ++i) {
        CHECK(r[i] != MPI_REQUEST_NULL, "get_status_all freed request %d", i);
        CHECK(st[i].MPI_TAG == i && data[i] == 100 + i, "request %d: tag %d data %d", i, st[i].MPI_TAG, data[i]);
    }
    MPI_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Request_get_status_any(3, r, &index, &flag, &st[0]));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "no active request: flag %d index %d", flag, index);
    MPI_OK(MPI_Request_get_status_some(3, r, &out, idx, st));
    CHECK(out == MPI_UNDEFINED, "no active request: outcount %d", out);
}

static void dead_peer(int rank, int size) {
    const int victim = size - 1;
    int x = 0, flag = -1, index = -1, out = -1, idx[1];
    MPI_Status st[1];
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 0) MPI_OK(MPI_Irecv(&x, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim) {
        fflush(stdout);
        raise(SIGKILL);
    }
    if (rank != 0) {
        int rc = MPI_Recv(&x, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED, "receive from the dead rank: class %d", tl_class_of(rc));
        return;
    }
    int rc;
    while ((rc = MPI_Request_get_status_any(1, &r, &index, &flag, &st[0])) == MPI_SUCCESS && !flag) {}
    CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED && index == 0, "get_status_any: class %d index %d", tl_class_of(rc),
          index);
    CHECK(r != MPI_REQUEST_NULL, "get_status_any freed the failed request");
    rc = MPI_Request_get_status_all(1, &r, &flag, st);
    CHECK(tl_class_of(rc) == MPI_ERR_IN_STATUS && flag && tl_class_of(st[0].MPI_ERROR) == MPI_ERR_PROC_FAILED,
          "get_status_all: class %d flag %d status class %d", tl_class_of(rc), flag, tl_class_of(st[0].MPI_ERROR));
    rc = MPI_Request_get_status_some(1, &r, &out, idx, st);
    CHECK(tl_class_of(rc) == MPI_ERR_IN_STATUS && out == 1 && tl_class_of(st[0].MPI_ERROR) == MPI_ERR_PROC_FAILED,
          "get_status_some: class %d outcount %d", tl_class_of(rc), out);
    rc = MPI_Request_get_status(r, &flag, &st[0]);
    CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED && flag, "get_status: class %d flag %d", tl_class_of(rc), flag);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED && r == MPI_REQUEST_NULL, "MPI_Wait: class %d", tl_class_of(rc));
}

int main(int argc, char **argv) {
    const int kill = argc > 1 && strcmp(argv[1], "kill") == 0;
    MPI_Info before, after;
    /* Before MPI_Init: no job size yet. */
    MPI_OK(MPI_Info_create_env(argc, argv, &before));
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    check_env(before, argv[0], 0);
    MPI_OK(MPI_Info_create_env(0, NULL, &after));
    check_env(after, argv[0], size);
    MPI_OK(MPI_Info_free(&before));
    MPI_OK(MPI_Info_free(&after));
    if (kill) {
        dead_peer(rank, size);
    } else {
        status_fields();
        value_index();
        error_removal();
        get_status_arrays(rank);
        buffers(rank);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rank == 0) printf("mpi41 %s: ok\n", kill ? "kill" : "local");
    MPI_OK(MPI_Finalize());
    return 0;
}
