/*
 * MPI_Comm_spawn under failures (SIGKILL). Every parent checks the exact
 * class it got, and the parents check that they all got the same outcome.
 *
 *   spawn_fault child_init    every child dies before MPI_Init: the spawn
 *                             fails with MPI_ERR_SPAWN at every parent (each
 *                             errcode too); a second spawn then works.
 *   spawn_fault child_during  child 1 of 3 dies while the connection is
 *                             made (kill point connect.joined): the spawn
 *                             succeeds at every parent or fails at every
 *                             parent; if it succeeded, child 1 is a failed
 *                             process of the inter-communicator.
 *   spawn_fault child_stopped the children's leader (of 2) is stopped
 *                             (SIGSTOP) there: the other child's detector
 *                             fails it and the spawn fails; the other child
 *                             leaves, often before its request that the
 *                             launcher kill the stopped one is served, and
 *                             then ftmpirun must (no detector watches a
 *                             namespace all stopped): the parents' spawn
 *                             hung in about half the runs before.
 *   spawn_fault child_later   child 1 of 2 dies after the spawn: a receive
 *                             from it is MPI_ERR_PROC_FAILED, an agreement
 *                             over the inter-communicator completes, a
 *                             parent's revoke reaches the live child
 *                             (MPI_ERR_REVOKED), both groups shrink it and
 *                             talk over the result, and disconnect.
 *   spawn_fault parent_during parent rank 1 dies as the spawn starts: the
 *                             other parents all succeed or all fail; on
 *                             success they talk with every child. Then a
 *                             spawn rooted at the dead rank is MPI_ERR_PROC_FAILED.
 *   spawn_fault abandoned     (no death) the parents revoke the new
 *                             inter-communicator and free it while the
 *                             children merge over it: the children's merge
 *                             ends with MPI_ERR_REVOKED (the freed
 *                             communicator still answers for the parents'
 *                             part); they tell the parents over a new
 *                             connection (a published port).
 *   spawn_fault abandoned_late as abandoned, but the children merge only
 *                             once the revoke reached them, and the
 *                             parents keep the inter-communicator 0.3 s,
 *                             then free it and 40 more communicators (each
 *                             after an agreement) and call MPI_Finalize:
 *                             the parents still answer for their part, and
 *                             their MPI_Finalize waits for the children's
 *                             (collective over connected processes).
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* Whether every live parent got the same outcome: MIN and MAX of `ok` over
   the survivors of world (shrunk first, since a parent may have died). */
static void check_uniform(int ok, const char *what) {
    MPI_Comm live;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &live));
    int lo = 0, hi = 0;
    MPI_OK(MPI_Allreduce(&ok, &lo, 1, MPI_INT, MPI_MIN, live));
    MPI_OK(MPI_Allreduce(&ok, &hi, 1, MPI_INT, MPI_MAX, live));
    CHECK(lo == hi, "%s: outcomes differ among the parents", what);
    MPI_OK(MPI_Comm_free(&live));
}

static int class_of(int rc) { return tl_class_of(rc); }

static void child(const char *mode, MPI_Comm parent) {
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    if (strcmp(mode, "later") == 0 && rank == 1) raise(SIGKILL);
    if (strcmp(mode, "abandoned") == 0) {
        /* the parents revoke the new inter-communicator and free it instead of merging */
        MPI_Comm merged = MPI_COMM_NULL;
        int rc = MPI_Intercomm_merge(parent, 1, &merged);
        CHECK(class_of(rc) == MPI_ERR_REVOKED, "merge abandoned by the parents: class %d", class_of(rc));
        CHECK(merged == MPI_COMM_NULL, "a merged communicator after a failed merge");
        MPI_OK(MPI_Comm_free(&parent));
        /* then say so to the parents, over a new connection */
        char port[MPI_MAX_PORT_NAME];
        MPI_OK(MPI_Lookup_name("spawn_fault_abandoned", MPI_INFO_NULL, port));
        MPI_Comm back;
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &back));
        int done = 1;
        if (rank == 0) MPI_OK(MPI_Send(&done, 1, MPI_INT, 0, 13, back));
        MPI_OK(MPI_Comm_disconnect(&back));
        MPI_OK(MPI_Finalize());
        return;
    }
    if (strcmp(mode, "abandoned_late") == 0) {
        int revoked = 0;
        while (!revoked) MPI_OK(MPIX_Comm_is_revoked(parent, &revoked));
        MPI_Comm merged = MPI_COMM_NULL;
        int rc = MPI_Intercomm_merge(parent, 1, &merged);
        CHECK(class_of(rc) == MPI_ERR_REVOKED, "late merge abandoned by the parents: class %d", class_of(rc));
        CHECK(merged == MPI_COMM_NULL, "a merged communicator after a failed merge");
        MPI_OK(MPI_Comm_free(&parent));
        MPI_OK(MPI_Finalize());
        return;
    }
    if (strcmp(mode, "later") == 0) {
        int flag = 1;
        int rc = MPIX_Comm_agree(parent, &flag);
        CHECK(rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_PROC_FAILED, "child agree: %d", rc);
        /* the parents revoke the inter-communicator: a receive here fails */
        int x;
        rc = MPI_Recv(&x, 1, MPI_INT, 0, 11, parent, MPI_STATUS_IGNORE);
        CHECK(class_of(rc) == MPI_ERR_REVOKED, "receive on the revoked inter-communicator: class %d", class_of(rc));
        MPI_Comm shrunk;
        MPI_OK(MPIX_Comm_shrink(parent, &shrunk));
        int rs, ls;
        MPI_OK(MPI_Comm_remote_size(shrunk, &rs));
        MPI_OK(MPI_Comm_size(shrunk, &ls));
        CHECK(ls == 1, "children after the shrink: %d", ls);
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 12, shrunk, MPI_STATUS_IGNORE));
        CHECK(x == rs, "over the shrunk inter-communicator: %d", x);
        MPI_OK(MPI_Comm_disconnect(&shrunk));
        MPI_OK(MPI_Comm_free(&parent));
        MPI_OK(MPI_Finalize());
        return;
    } else {
        /* the parents' rank 0 says goodbye to each live child */
        int bye = 0;
        MPI_OK(MPI_Recv(&bye, 1, MPI_INT, 0, 9, parent, MPI_STATUS_IGNORE));
        CHECK(bye == 42, "bye %d", bye);
    }
    MPI_Comm_disconnect(&parent);
    MPI_OK(MPI_Finalize());
}

/* spawn_fault child_init (see the header). */
static void mode_child_init(char **argv, int rank) {
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[4] = {0, 0, 0, 0};
    /* the children run a shell that kills itself: they never reach MPI_Init */
    char *args[] = {"-c", "kill -9 $$", NULL};
    int rc = MPI_Comm_spawn("/bin/sh", args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
    CHECK(class_of(rc) == MPI_ERR_SPAWN, "spawn of dying children: class %d", class_of(rc));
    CHECK(inter == MPI_COMM_NULL, "inter after a failed spawn");
    for (int i = 0; i < 2; ++i) CHECK(class_of(codes[i]) == MPI_ERR_SPAWN, "errcode %d: %d", i, codes[i]);
    check_uniform(0, "child_init");
    char *ok_args[] = {"child", "bye", NULL};
    MPI_OK(MPI_Comm_spawn(argv[0], ok_args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes));
    int bye = 42;
    if (rank == 0)
        for (int c = 0; c < 2; ++c) MPI_OK(MPI_Send(&bye, 1, MPI_INT, c, 9, inter));
    MPI_OK(MPI_Comm_disconnect(&inter));
}

/* spawn_fault child_during and child_stopped (see the header). */
static void mode_child_during(char **argv, int rank, const char *mode) {
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[4] = {0, 0, 0, 0};
    /* child_stopped: the children's leader is stopped (SIGSTOP) there instead */
    const int stopped = strcmp(mode, "child_stopped") == 0, dead = stopped ? 0 : 1, nchild = stopped ? 2 : 3;
    char *args[] = {"child", "bye", NULL};
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(
        info, "env", stopped ? "FTMPI_TEST_KILL_AT=connect.joined:0:1:stop" : "FTMPI_TEST_KILL_AT=connect.joined:1"));
    int rc = MPI_Comm_spawn(argv[0], args, nchild, info, 0, MPI_COMM_WORLD, &inter, codes);
    MPI_OK(MPI_Info_free(&info));
    CHECK(rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_SPAWN, "spawn with a child dying: class %d", class_of(rc));
    for (int i = 0; i < nchild; ++i)
        CHECK(class_of(codes[i]) == class_of(rc), "errcode %d: class %d, the call's %d", i, class_of(codes[i]),
              class_of(rc));
    check_uniform(rc == MPI_SUCCESS, mode);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        int bye = 42;
        if (rank == 0) {
            for (int c = 0; c < nchild; ++c)
                if (c != dead) MPI_OK(MPI_Send(&bye, 1, MPI_INT, c, 9, inter));
            int x;
            rc = MPI_Recv(&x, 1, MPI_INT, dead, 9, inter, MPI_STATUS_IGNORE);
            CHECK(class_of(rc) == MPI_ERR_PROC_FAILED, "receive from the dead child: class %d", class_of(rc));
        }
        MPI_Comm_disconnect(&inter);
    } else {
        CHECK(inter == MPI_COMM_NULL, "inter after a failed spawn");
    }
}

/* spawn_fault child_later (see the header). */
static void mode_child_later(char **argv, int rank, int size) {
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[4] = {0, 0, 0, 0};
    char *args[] = {"child", "later", NULL};
    MPI_OK(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    if (rank == 0) {
        int x;
        int rc = MPI_Recv(&x, 1, MPI_INT, 1, 9, inter, MPI_STATUS_IGNORE);
        CHECK(class_of(rc) == MPI_ERR_PROC_FAILED, "receive from the dead child: class %d", class_of(rc));
    }
    int flag = 1;
    int rc = MPIX_Comm_agree(inter, &flag);
    CHECK(rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_PROC_FAILED, "agree over inter: %d", rc);
    /* revoke and shrink across the two groups */
    if (rank == 0) MPI_OK(MPIX_Comm_revoke(inter));
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(inter, &shrunk));
    int rs;
    MPI_OK(MPI_Comm_remote_size(shrunk, &rs));
    CHECK(rs == 1, "live children after the shrink: %d", rs);
    if (rank == 0) {
        int x = size;
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 12, shrunk));
    }
    MPI_OK(MPI_Comm_disconnect(&shrunk));
    MPI_OK(MPI_Comm_free(&inter));
}

/* spawn_fault parent_during (see the header). */
static void mode_parent_during(char **argv, int rank, int size) {
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[4] = {0, 0, 0, 0};
    CHECK(size >= 3, "needs 3 ranks");
    if (rank == 1) raise(SIGKILL);
    char *args[] = {"child", "bye", NULL};
    int rc = MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
    /* the root is alive: the spawn fails as a whole (MPI_ERR_SPAWN) or succeeds */
    CHECK(rc == MPI_SUCCESS || class_of(rc) == MPI_ERR_SPAWN, "spawn with a parent dying: class %d", class_of(rc));
    check_uniform(rc == MPI_SUCCESS, "parent_during");
    if (rc == MPI_SUCCESS) {
        int bye = 42;
        if (rank == 0)
            for (int c = 0; c < 2; ++c) MPI_OK(MPI_Send(&bye, 1, MPI_INT, c, 9, inter));
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        MPI_Comm_disconnect(&inter);
    }
    /* rank 1 is now a known failed process (the shrink above): as a root it is MPI_ERR_PROC_FAILED */
    rc = MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 1, MPI_COMM_WORLD, &inter, codes);
    CHECK(class_of(rc) == MPIX_ERR_PROC_FAILED, "spawn with a failed root: class %d", class_of(rc));
}

/* spawn_fault abandoned (see the header). */
static void mode_abandoned(char **argv, int rank) {
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[4] = {0, 0, 0, 0};
    /* A respawn given up (as when a parent failed while it was agreed):
       the children wait in MPI_Intercomm_merge; the revoke ends it. */
    char *args[] = {"child", "abandoned", NULL};
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        MPI_OK(MPI_Publish_name("spawn_fault_abandoned", MPI_INFO_NULL, port));
    }
    MPI_OK(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes));
    MPI_OK(MPIX_Comm_revoke(inter));
    MPI_OK(MPI_Comm_free(&inter));
    /* The children's merge needs this group's part: a freed revoked
       communicator still gives it (zeros), while this group waits here. */
    MPI_Comm back;
    MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &back));
    int done = 0;
    if (rank == 0) MPI_OK(MPI_Recv(&done, 1, MPI_INT, 0, 13, back, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_disconnect(&back));
    if (rank == 0) {
        CHECK(done == 1, "the children said %d", done);
        MPI_OK(MPI_Unpublish_name("spawn_fault_abandoned", MPI_INFO_NULL, port));
        MPI_OK(MPI_Close_port(port));
    }
}

/* spawn_fault abandoned_late (see the header). */
static void mode_abandoned_late(char **argv) {
    MPI_Comm inter = MPI_COMM_NULL;
    char *args[] = {"child", "abandoned_late", NULL};
    MPI_OK(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
    MPI_OK(MPIX_Comm_revoke(inter));
    /* Driving progress a while first, so that the children's merge usually
       reaches this group before it frees the inter-communicator (either
       order must work). */
    for (double until = MPI_Wtime() + 0.3; MPI_Wtime() < until;) {
        int flag;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    }
    MPI_OK(MPI_Comm_free(&inter));
    for (int i = 0; i < 40; ++i) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int flag = 1;
        MPI_OK(MPIX_Comm_agree(c, &flag));
        CHECK(flag == 1, "agreement %d: flag %d", i, flag);
        MPI_OK(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (argc > 2 && strcmp(argv[1], "child") == 0) {
        child(argv[2], parent);
        return 0;
    }
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const char *mode = argc > 1 ? argv[1] : "";

    if (strcmp(mode, "child_init") == 0) {
        mode_child_init(argv, rank);
    } else if (strcmp(mode, "child_during") == 0 || strcmp(mode, "child_stopped") == 0) {
        mode_child_during(argv, rank, mode);
    } else if (strcmp(mode, "child_later") == 0) {
        mode_child_later(argv, rank, size);
    } else if (strcmp(mode, "parent_during") == 0) {
        mode_parent_during(argv, rank, size);
    } else if (strcmp(mode, "abandoned") == 0) {
        mode_abandoned(argv, rank);
    } else if (strcmp(mode, "abandoned_late") == 0) {
        mode_abandoned_late(argv);
    } else {
        CHECK(0, "unknown mode %s", mode);
    }
    if (rank == 0) printf("spawn_fault %s: OK\n", mode);
    MPI_Finalize();
    return 0;
}
