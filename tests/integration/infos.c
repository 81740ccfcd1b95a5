/*
 * Hints and MPI_INFO_ENV. MPI_Comm_set_info, MPI_Comm_dup_with_info,
 * MPI_Win_set_info and MPI_Win_create ignore keys the implementation does
 * not know (get_info returns only the hints in use); MPI_INFO_ENV holds the
 * launch's command, argv, maxprocs and thread_level, and is read-only.
 * Run with the arguments "alpha beta".
 */
#include <unistd.h>

#include "testlib.h"

static int has_key(MPI_Info info, const char *key, char *value) {
    int flag = 0;
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    if (flag && value != NULL) strcpy(value, v);
    return flag;
}

int main(int argc, char **argv) {
    int rank, size, provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char v[MPI_MAX_INFO_VAL + 1];

    /* MPI_INFO_ENV. */
    CHECK(MPI_INFO_ENV != MPI_INFO_NULL, "MPI_INFO_ENV is MPI_INFO_NULL");
    CHECK(has_key(MPI_INFO_ENV, "command", v), "MPI_INFO_ENV has no command");
    CHECK(strstr(v, "itest_infos") != NULL, "command is '%s'", v);
    CHECK(has_key(MPI_INFO_ENV, "argv", v) && strcmp(v, "alpha beta") == 0, "argv is '%s'", v);
    CHECK(has_key(MPI_INFO_ENV, "maxprocs", v) && atoi(v) == size, "maxprocs is '%s'", v);
    CHECK(has_key(MPI_INFO_ENV, "thread_level", v) && strcmp(v, "MPI_THREAD_FUNNELED") == 0, "thread_level '%s'", v);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL && has_key(MPI_INFO_ENV, "wdir", v) && strcmp(v, cwd) == 0, "wdir '%s'", v);
    CHECK(has_key(MPI_INFO_ENV, "host", NULL) && has_key(MPI_INFO_ENV, "arch", NULL), "host or arch missing");
    MPI_Info dup;
    MPI_OK(MPI_Info_dup(MPI_INFO_ENV, &dup)); /* a copy is the user's */
    MPI_OK(MPI_Info_set(dup, "command", "other"));
    MPI_OK(MPI_Info_free(&dup));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Info_set(MPI_INFO_ENV, "command", "changed");
    CHECK(tl_class_of(rc) == MPI_ERR_INFO, "MPI_Info_set on MPI_INFO_ENV returned class %d", tl_class_of(rc));
    rc = MPI_Info_delete(MPI_INFO_ENV, "command");
    CHECK(tl_class_of(rc) == MPI_ERR_INFO, "MPI_Info_delete on MPI_INFO_ENV returned class %d", tl_class_of(rc));
    MPI_Info env = MPI_INFO_ENV;
    rc = MPI_Info_free(&env);
    CHECK(tl_class_of(rc) == MPI_ERR_INFO && env == MPI_INFO_ENV, "MPI_Info_free on MPI_INFO_ENV returned class %d",
          tl_class_of(rc));
    CHECK(has_key(MPI_INFO_ENV, "command", v) && strstr(v, "itest_infos") != NULL, "MPI_INFO_ENV changed");

    /* Communicator hints: unknown keys ignored, known ones kept. */
    MPI_Info hints, used;
    int nkeys = -1;
    MPI_OK(MPI_Info_create(&hints));
    MPI_OK(MPI_Info_set(hints, "ftmpi_no_such_hint", "1"));
    MPI_OK(MPI_Info_set(hints, "mpi_assert_no_any_tag", "true"));
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_set_info(c, hints));
    MPI_OK(MPI_Comm_get_info(c, &used));
    CHECK(!has_key(used, "ftmpi_no_such_hint", NULL), "MPI_Comm_get_info returned an unknown key");
    CHECK(has_key(used, "mpi_assert_no_any_tag", v) && strcmp(v, "true") == 0, "mpi_assert_no_any_tag lost");
    MPI_OK(MPI_Info_free(&used));
    MPI_Comm c2;
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &c2));
    MPI_OK(MPI_Comm_get_info(c2, &used));
    CHECK(!has_key(used, "ftmpi_no_such_hint", NULL), "MPI_Comm_dup_with_info kept an unknown key");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Comm_free(&c2));
    MPI_OK(MPI_Comm_free(&c));

    /* Window hints, at creation and set later. */
    MPI_OK(MPI_Info_set(hints, "no_locks", "true"));
    int buf[2];
    MPI_Win w;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), hints, MPI_COMM_WORLD, &w));
    MPI_OK(MPI_Win_get_info(w, &used));
    CHECK(!has_key(used, "ftmpi_no_such_hint", NULL), "MPI_Win_create kept an unknown key");
    CHECK(!has_key(used, "mpi_assert_no_any_tag", NULL), "a window took a communicator hint");
    CHECK(has_key(used, "no_locks", v) && strcmp(v, "true") == 0, "no_locks lost");
    MPI_OK(MPI_Info_free(&used));
    MPI_Info more;
    MPI_OK(MPI_Info_create(&more));
    MPI_OK(MPI_Info_set(more, "ftmpi_other_unknown", "x"));
    MPI_OK(MPI_Win_set_info(w, more));
    MPI_OK(MPI_Win_get_info(w, &used));
    MPI_OK(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys == 1 && !has_key(used, "ftmpi_other_unknown", NULL), "MPI_Win_set_info kept an unknown key");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_free(&more));
    MPI_OK(MPI_Win_free(&w));
    MPI_OK(MPI_Info_free(&hints));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("infos: OK\n");
    MPI_Finalize();
    return 0;
}
