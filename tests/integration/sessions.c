/*
 * Sessions (MPI 4.0 §11.3).
 *   only   no MPI_Init: two sessions at once; the process sets (names by the
 *          two-call pattern, mpi_size), groups from them, communicators from
 *          groups (world, self, the even and odd ranks, and an
 *          inter-communicator between those two) checked with traffic; the
 *          session's buffer for buffered sends; the session's error
 *          handler; MPI_Initialized stays 0.
 *   mixed  MPI_Init, then a session whose world communicator is congruent to
 *          MPI_COMM_WORLD; MPI_Finalize comes first, and the session's
 *          communicator still works until MPI_Session_finalize.
 *   kill   no MPI_Init: the last rank dies (SIGKILL); the survivors' allreduce
 *          on the session's communicator fails with MPI_ERR_PROC_FAILED,
 *          they revoke and shrink it, and make a new communicator from the
 *          shrunk one's group.
 */
#include <signal.h>

#include "testlib.h"

static int handler_calls;
static void on_session_error(MPI_Session *s, int *code, ...) {
    (void)s;
    if (*code == MPI_ERR_OTHER || tl_class_of(*code) == MPI_ERR_ARG) ++handler_calls;
}

/* A communicator over the named process set, with MPI_ERRORS_RETURN. */
static MPI_Comm comm_of(MPI_Session s, const char *pset, const char *tag) {
    MPI_Group g;
    MPI_Comm c;
    MPI_OK(MPI_Group_from_session_pset(s, pset, &g));
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Group_free(&g));
    return c;
}

static int sum_ranks(MPI_Comm c) {
    int r, s = -1;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Allreduce(&r, &s, 1, MPI_INT, MPI_SUM, c));
    return s;
}

static void psets(MPI_Session s, int size) {
    int n = 0, seen = 0;
    MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d process sets", n);
    for (int i = 0; i < n; ++i) {
        int len = 0;
        char name[MPI_MAX_PSET_NAME_LEN], value[16];
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "length %d", len);
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK((int)strlen(name) + 1 == len, "name '%s' of length %d", name, len);
        MPI_Info info;
        int flag = 0;
        MPI_OK(MPI_Session_get_pset_info(s, name, &info));
        MPI_OK(MPI_Info_get(info, "mpi_size", sizeof value - 1, value, &flag));
        MPI_OK(MPI_Info_free(&info));
        if (strcmp(name, "mpi://WORLD") == 0) {
            CHECK(flag && atoi(value) == size, "mpi://WORLD's size %s", value);
            ++seen;
        }
        if (strcmp(name, "mpi://SELF") == 0) {
            CHECK(flag && atoi(value) == 1, "mpi://SELF's size %s", value);
            ++seen;
        }
    }
    CHECK(seen == 2, "mpi://WORLD and mpi://SELF not both listed");
}

static void only(void) {
    MPI_Session s, s2;
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE"));
    MPI_OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    int flag = -1;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized is %d with sessions only", flag);
    MPI_Comm world = comm_of(s, "mpi://WORLD", "org.ftmpi.test.world");
    int rank, size;
    MPI_OK(MPI_Comm_rank(world, &rank));
    MPI_OK(MPI_Comm_size(world, &size));
    psets(s, size);
    CHECK(sum_ranks(world) == size * (size - 1) / 2, "allreduce on the session's world");
    /* The session's buffer serves its communicators' buffered sends. */
    MPI_OK(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
    int token = rank, got = -1;
    MPI_OK(MPI_Bsend(&token, 1, MPI_INT, (rank + 1) % size, 4, world));
    MPI_OK(MPI_Recv(&got, 1, MPI_INT, (rank + size - 1) % size, 4, world, MPI_STATUS_IGNORE));
    CHECK(got == (rank + size - 1) % size, "buffered ring: %d", got);
    MPI_OK(MPI_Session_flush_buffer(s));
    MPI_Comm self = comm_of(s2, "mpi://SELF", "org.ftmpi.test.self");
    CHECK(sum_ranks(self) == 0, "allreduce on self");
    /* Even and odd ranks, each a communicator, then one between them. */
    MPI_Group wg, half, other;
    MPI_OK(MPI_Comm_group(world, &wg));
    int mine[64], theirs[64], nm = 0, nt = 0;
    for (int r = 0; r < size; ++r) {
        if (r % 2 == rank % 2) mine[nm++] = r;
        else theirs[nt++] = r;
    }
    MPI_OK(MPI_Group_incl(wg, nm, mine, &half));
    MPI_OK(MPI_Group_incl(wg, nt, theirs, &other));
    MPI_Comm hc;
    MPI_OK(MPI_Comm_create_from_group(half, rank % 2 ? "odd" : "even", MPI_INFO_NULL, MPI_ERRORS_RETURN, &hc));
    CHECK(sum_ranks(hc) == nm * (nm - 1) / 2, "allreduce on a half");
    if (nt > 0) {
        MPI_Comm inter;
        MPI_OK(MPI_Intercomm_create_from_groups(half, 0, other, 0, "org.ftmpi.test.inter", MPI_INFO_NULL,
                                                MPI_ERRORS_RETURN, &inter));
        int remote = -1, one = 1, total = -1;
        MPI_OK(MPI_Comm_remote_size(inter, &remote));
        MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, inter));
        CHECK(remote == nt && total == nt, "inter-communicator: remote size %d, allreduce %d", remote, total);
        MPI_OK(MPI_Comm_free(&inter));
    }
    MPI_OK(MPI_Comm_free(&hc));
    MPI_OK(MPI_Group_free(&half));
    MPI_OK(MPI_Group_free(&other));
    MPI_OK(MPI_Group_free(&wg));
    /* The session's error handler. */
    MPI_Errhandler eh;
    MPI_Group none;
    MPI_OK(MPI_Session_create_errhandler(on_session_error, &eh));
    MPI_OK(MPI_Session_set_errhandler(s2, eh));
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Session_call_errhandler(s2, MPI_ERR_OTHER));
    CHECK(tl_class_of(MPI_Group_from_session_pset(s2, "mpi://NOWHERE", &none)) == MPI_ERR_ARG, "unknown set");
    CHECK(handler_calls == 2, "the session's handler ran %d times, expected 2", handler_calls);
    MPI_OK(MPI_Comm_free(&self));
    MPI_OK(MPI_Comm_free(&world));
    MPI_OK(MPI_Session_finalize(&s2));
    MPI_OK(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL, "the session handle is not MPI_SESSION_NULL");
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized is %d with sessions only", flag);
    if (rank == 0) printf("sessions only: ok\n");
}

static void mixed(int argc, char **argv) {
    int rank, size, result = -1, flag = 0;
    tl_init(&argc, &argv, &rank, &size, 1);
    MPI_Session s;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Comm world = comm_of(s, "mpi://WORLD", "org.ftmpi.test.mixed");
    MPI_OK(MPI_Comm_compare(world, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT, "compare with MPI_COMM_WORLD: %d", result);
    MPI_OK(MPI_Finalize());
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag == 1, "MPI_Finalized after MPI_Finalize: %d", flag);
    CHECK(sum_ranks(world) == size * (size - 1) / 2, "the session's communicator after MPI_Finalize");
    MPI_OK(MPI_Comm_free(&world));
    MPI_OK(MPI_Session_finalize(&s));
    if (rank == 0) printf("sessions mixed: ok\n");
}

static void dead(void) {
    MPI_Session s;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Comm world = comm_of(s, "mpi://WORLD", "org.ftmpi.test.kill");
    int rank, size;
    MPI_OK(MPI_Comm_rank(world, &rank));
    MPI_OK(MPI_Comm_size(world, &size));
    CHECK(size >= 3, "needs 3 ranks");
    MPI_OK(MPI_Barrier(world));
    if (rank == size - 1) {
        fflush(stdout);
        raise(SIGKILL);
    }
    int one = 1, sum = 0, rc;
    while ((rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, world)) == MPI_SUCCESS) {}
    CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED || tl_class_of(rc) == MPI_ERR_REVOKED, "allreduce: class %d",
          tl_class_of(rc));
    MPI_OK(MPIX_Comm_revoke(world));
    MPI_Comm shrunk, again;
    MPI_Group g;
    MPI_OK(MPIX_Comm_shrink(world, &shrunk));
    MPI_OK(MPI_Comm_group(shrunk, &g));
    MPI_OK(MPI_Comm_create_from_group(g, "org.ftmpi.test.after", MPI_INFO_NULL, MPI_ERRORS_RETURN, &again));
    CHECK(sum_ranks(again) == (size - 1) * (size - 2) / 2, "allreduce over the survivors");
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Comm_free(&again));
    MPI_OK(MPI_Comm_free(&shrunk));
    MPI_OK(MPI_Comm_free(&world));
    MPI_OK(MPI_Session_finalize(&s));
    if (rank == 0) printf("sessions kill: ok\n");
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "only";
    if (strcmp(mode, "mixed") == 0) mixed(argc, argv);
    else if (strcmp(mode, "kill") == 0) dead();
    else only();
    return 0;
}
