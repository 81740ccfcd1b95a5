/*
 * Dynamic processes (MPI 3.1 chapter 10) without failures.
 *
 *   spawn basic N     the job spawns N children of this program; both sides
 *                     check MPI_Comm_get_parent, the remote and local sizes,
 *                     MPI_APPNUM and MPI_UNIVERSE_SIZE, exchange point-to-point
 *                     messages both ways, run an inter-communicator bcast and
 *                     allreduce, merge (children high) and allreduce the
 *                     merged ranks, then disconnect with a persistent
 *                     request on the inter-communicator used once and left
 *                     inactive (disconnect waits for pending operations
 *                     only; it used to hang on that request).
 *   spawn multiple    spawn_multiple of two programs (this one, and the
 *                     spawn_fault program next to it if there is one; else
 *                     this one twice), 1 + 2 processes: this program's
 *                     children check MPI_APPNUM, their arguments, and that the
 *                     info keys wdir and env reached them.
 *   spawn connect     the job spawns two groups of children (2 and 1); group
 *                     A opens a port and publishes it, group B looks it up
 *                     and connects; they exchange over the new
 *                     inter-communicator and disconnect.
 *   spawn conacc      the job spawns a connector (1 process), then an
 *                     acceptor (2 processes), each from MPI_COMM_WORLD, so
 *                     the connecting root has the lower process id (its
 *                     transport waits for the acceptor's hello): the
 *                     acceptor opens a port and sends it to the job, which
 *                     relays it to the connector; they connect, exercise the
 *                     inter-communicator and disconnect. Then nobody
 *                     disconnects from the job: children and job free their
 *                     inter-communicators and call MPI_Finalize, which must
 *                     complete (MPICH's spaconacc).
 *   spawn join        ranks 0 and 1 of the job make a socket pair's ends
 *                     meet (rank 0 listens on loopback) and join; they
 *                     exchange over the inter-communicator.
 *   spawn errors      bad arguments get their classes: a missing program is
 *                     MPI_ERR_SPAWN with every errcode set, a bad root
 *                     MPI_ERR_ROOT, a bad port MPI_ERR_PORT.
 * Plain MPI-2, so it builds with any MPI.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testlib.h"

static void expect_class(int rc, int cls, const char *what) {
    CHECK(tl_class_of(rc) == cls, "%s: class %d (rc %d), expected %d", what, tl_class_of(rc), rc, cls);
}

/* Point-to-point both ways, bcast and allreduce over an inter-communicator,
   then a merge with the `high` side last and an allreduce of the merged
   ranks. */
static void exercise(MPI_Comm inter, int high) {
    int me, lsize, rsize;
    MPI_OK(MPI_Comm_rank(inter, &me));
    MPI_OK(MPI_Comm_size(inter, &lsize));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    /* each process sends its rank to remote rank (me % rsize); each receives
       from every remote rank r with r % lsize == me */
    int out = me + 1000 * high;
    MPI_Request req;
    MPI_OK(MPI_Isend(&out, 1, MPI_INT, me % rsize, 7, inter, &req));
    for (int r = 0; r < rsize; ++r) {
        if (r % lsize != me) continue;
        int in = -1;
        MPI_OK(MPI_Recv(&in, 1, MPI_INT, r, 7, inter, MPI_STATUS_IGNORE));
        CHECK(in == r + 1000 * !high, "from remote %d got %d", r, in);
    }
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* bcast from the low side's rank 0 */
    int token = high ? -1 : 4242;
    MPI_OK(MPI_Bcast(&token, 1, MPI_INT, high ? 0 : (me == 0 ? MPI_ROOT : MPI_PROC_NULL), inter));
    if (high) CHECK(token == 4242, "bcast over the inter-communicator gave %d", token);
    /* allreduce: each side gets the sum over the other */
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == rsize, "inter allreduce %d, expected %d", sum, rsize);
    MPI_Comm merged;
    MPI_OK(MPI_Intercomm_merge(inter, high, &merged));
    int mrank, msize;
    MPI_OK(MPI_Comm_rank(merged, &mrank));
    MPI_OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == lsize + rsize, "merged size %d", msize);
    CHECK(mrank == me + (high ? rsize : 0), "merged rank %d (local %d)", mrank, me);
    int total = 0;
    MPI_OK(MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK(total == msize * (msize - 1) / 2, "merged allreduce %d", total);
    MPI_OK(MPI_Barrier(merged));
    MPI_OK(MPI_Comm_free(&merged));
}

/* A persistent request on inter, used once (rank 0 of each side: the
   job's sends to the children's rank 0) and left inactive: MPI_Comm_disconnect
   waits for pending operations only, not for it. */
static MPI_Request idle_persistent(MPI_Comm inter, int use) {
    static int v;
    MPI_Request r;
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent == MPI_COMM_NULL) MPI_OK(MPI_Send_init(&v, 1, MPI_INT, 0, 11, inter, &r));
    else MPI_OK(MPI_Recv_init(&v, 1, MPI_INT, 0, 11, inter, &r));
    if (use) {
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    return r;
}

static int attr_int(MPI_Comm c, int key, int *flag) {
    int *v = NULL;
    MPI_OK(MPI_Comm_get_attr(c, key, &v, flag));
    return *flag ? *v : -1;
}

static void child(int argc, char **argv, MPI_Comm parent) {
    int rank, size, flag;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *mode = argc > 2 ? argv[2] : "";
    if (strcmp(mode, "basic") == 0) {
        exercise(parent, 1);
        MPI_Request idle = idle_persistent(parent, rank == 0);
        MPI_OK(MPI_Comm_disconnect(&parent));
        MPI_OK(MPI_Request_free(&idle));
        CHECK(parent == MPI_COMM_NULL, "disconnect left the handle");
        MPI_Comm again;
        MPI_OK(MPI_Comm_get_parent(&again));
        CHECK(again == MPI_COMM_NULL, "get_parent after disconnect");
    } else if (strcmp(mode, "multi") == 0) {
        /* child-multi <appnum> : appnum and argument agree, env and wdir came */
        const int app = atoi(argv[3]);
        CHECK(attr_int(MPI_COMM_WORLD, MPI_APPNUM, &flag) == app && flag, "MPI_APPNUM %d, expected %d",
              attr_int(MPI_COMM_WORLD, MPI_APPNUM, &flag), app);
        const char *e = getenv("SPAWN_TEST_VAR");
        CHECK(e != NULL && strcmp(e, app == 0 ? "zero" : "one") == 0, "env SPAWN_TEST_VAR=%s", e ? e : "(unset)");
        char cwd[4096];
        CHECK(getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, "/tmp") == 0, "wdir %s", cwd);
        int mine = 100 * app + rank;
        MPI_OK(MPI_Send(&mine, 1, MPI_INT, 0, 8, parent));
        MPI_OK(MPI_Comm_disconnect(&parent));
    } else if (strcmp(mode, "groupA") == 0 || strcmp(mode, "groupB") == 0) {
        const int a = mode[5] == 'A';
        char port[MPI_MAX_PORT_NAME] = {0};
        MPI_Comm other;
        if (a) {
            if (rank == 0) {
                MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
                MPI_OK(MPI_Publish_name("spawn-test-service", MPI_INFO_NULL, port));
            }
            /* the parents relay that the name is published */
            MPI_OK(MPI_Barrier(parent));
            MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other));
        } else {
            MPI_OK(MPI_Barrier(parent));
            if (rank == 0) MPI_OK(MPI_Lookup_name("spawn-test-service", MPI_INFO_NULL, port));
            MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other));
        }
        exercise(other, !a);
        MPI_OK(MPI_Comm_disconnect(&other));
        if (a && rank == 0) {
            MPI_OK(MPI_Unpublish_name("spawn-test-service", MPI_INFO_NULL, port));
            MPI_OK(MPI_Close_port(port));
        }
        MPI_OK(MPI_Comm_disconnect(&parent));
    } else if (strcmp(mode, "acc") == 0 || strcmp(mode, "conn") == 0) {
        const int acc = mode[0] == 'a';
        char port[MPI_MAX_PORT_NAME] = {0};
        MPI_Comm other;
        if (acc) {
            if (rank == 0) {
                MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
                MPI_OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 9, parent));
            }
            MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other));
            if (rank == 0) MPI_OK(MPI_Close_port(port));
        } else {
            if (rank == 0) MPI_OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 9, parent, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other));
        }
        exercise(other, acc);
        MPI_OK(MPI_Comm_disconnect(&other));
        MPI_OK(MPI_Barrier(parent));
        MPI_OK(MPI_Comm_free(&parent)); /* still connected: MPI_Finalize waits for nobody that left */
    } else {
        CHECK(0, "unknown child mode %s", mode);
    }
    MPI_OK(MPI_Finalize());
}

/* spawn basic (see the header). */
static void parent_basic(int argc, char **argv, int rank, int size) {
    const int n = argc > 2 ? atoi(argv[2]) : 2;
    char *args[] = {"child", "basic", NULL};
    int codes[16];
    MPI_Comm inter;
    MPI_OK(MPI_Comm_spawn(argv[0], args, n, MPI_INFO_NULL, size - 1, MPI_COMM_WORLD, &inter, codes));
    for (int i = 0; i < n; ++i) CHECK(codes[i] == MPI_SUCCESS, "errcode[%d] = %d", i, codes[i]);
    int rsize, lsize, isinter;
    MPI_OK(MPI_Comm_test_inter(inter, &isinter));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    MPI_OK(MPI_Comm_size(inter, &lsize));
    CHECK(isinter && rsize == n && lsize == size, "inter %d, sizes %d/%d", isinter, lsize, rsize);
    exercise(inter, 0);
    MPI_Request idle = idle_persistent(inter, rank == 0);
    MPI_OK(MPI_Comm_disconnect(&inter));
    MPI_OK(MPI_Request_free(&idle));
    /* a second spawn after the first is gone */
    MPI_OK(MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
    exercise(inter, 0);
    idle = idle_persistent(inter, rank == 0);
    MPI_OK(MPI_Comm_disconnect(&inter));
    MPI_OK(MPI_Request_free(&idle));
}

/* spawn multiple (see the header). */
static void parent_multiple(char **argv, int rank) {
    /* two programs: this one, and spawn_fault's child (built next to it) */
    char other[4096];
    snprintf(other, sizeof other, "%s_fault", argv[0]);
    if (access(other, X_OK) != 0) snprintf(other, sizeof other, "%s", argv[0]);
    const int two = strcmp(other, argv[0]) != 0;
    char *cmds[2] = {argv[0], other};
    char *a0[] = {"child", "multi", "0", NULL}, *a1[] = {"child", "multi", "1", NULL}, *a1b[] = {"child", "bye", NULL};
    char **argvs[2] = {a0, two ? a1b : a1};
    int counts[2] = {1, 2};
    MPI_Info infos[2];
    for (int i = 0; i < 2; ++i) {
        MPI_OK(MPI_Info_create(&infos[i]));
        MPI_OK(MPI_Info_set(infos[i], "wdir", "/tmp"));
        MPI_OK(MPI_Info_set(infos[i], "env", i == 0 ? "SPAWN_TEST_VAR=zero" : "OTHER=1\nSPAWN_TEST_VAR=one"));
    }
    int codes[3];
    MPI_Comm inter;
    MPI_OK(MPI_Comm_spawn_multiple(2, cmds, argvs, counts, infos, 0, MPI_COMM_WORLD, &inter, codes));
    for (int i = 0; i < 3; ++i) CHECK(codes[i] == MPI_SUCCESS, "errcode[%d] = %d", i, codes[i]);
    /* world ranks 0 (app 0), 1 and 2 (app 1): each tells rank 0 its
       100 * appnum + rank, or (the other program) waits for a goodbye */
    if (rank == 0) {
        for (int c = 0; c < 3; ++c) {
            if (two && c > 0) {
                int bye = 42;
                MPI_OK(MPI_Send(&bye, 1, MPI_INT, c, 9, inter));
                continue;
            }
            int v = -1;
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, c, 8, inter, MPI_STATUS_IGNORE));
            CHECK(v == 100 * (c > 0) + c, "child %d says %d", c, v);
        }
    }
    MPI_OK(MPI_Comm_disconnect(&inter));
    for (int i = 0; i < 2; ++i) MPI_OK(MPI_Info_free(&infos[i]));
}

/* spawn connect (see the header). */
static void parent_connect(char **argv) {
    char *aa[] = {"child", "groupA", NULL}, *ab[] = {"child", "groupB", NULL};
    MPI_Comm ga, gb;
    MPI_OK(MPI_Comm_spawn(argv[0], aa, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ga, MPI_ERRCODES_IGNORE));
    MPI_OK(MPI_Comm_spawn(argv[0], ab, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &gb, MPI_ERRCODES_IGNORE));
    /* A publishes before its barrier with us returns; B looks up after its own */
    MPI_OK(MPI_Barrier(ga));
    MPI_OK(MPI_Barrier(gb));
    MPI_OK(MPI_Comm_disconnect(&ga));
    MPI_OK(MPI_Comm_disconnect(&gb));
}

/* spawn conacc (see the header). */
static void parent_conacc(char **argv, int rank) {
    char *ac[] = {"child", "conn", NULL}, *aa[] = {"child", "acc", NULL};
    MPI_Comm conn, acc;
    MPI_OK(MPI_Comm_spawn(argv[0], ac, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &conn, MPI_ERRCODES_IGNORE));
    MPI_OK(MPI_Comm_spawn(argv[0], aa, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &acc, MPI_ERRCODES_IGNORE));
    if (rank == 0) {
        char port[MPI_MAX_PORT_NAME];
        MPI_OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 9, acc, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 9, conn));
    }
    MPI_OK(MPI_Barrier(acc));
    MPI_OK(MPI_Barrier(conn));
    MPI_OK(MPI_Comm_free(&acc));
    MPI_OK(MPI_Comm_free(&conn));
}

/* spawn join (see the header). */
static void parent_join(int rank, int size) {
    CHECK(size >= 2, "join needs 2 ranks");
    MPI_Comm inter = MPI_COMM_NULL;
    if (rank <= 1) {
        int fd = -1;
        int port = 0;
        if (rank == 0) {
            int ls = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a;
            memset(&a, 0, sizeof a);
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0, "listen");
            socklen_t len = sizeof a;
            getsockname(ls, (struct sockaddr *)&a, &len);
            port = ntohs(a.sin_port);
            MPI_OK(MPI_Send(&port, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
            fd = accept(ls, NULL, NULL);
            close(ls);
        } else {
            MPI_OK(MPI_Recv(&port, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            fd = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a;
            memset(&a, 0, sizeof a);
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons((unsigned short)port);
            CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect");
        }
        CHECK(fd >= 0, "socket");
        MPI_OK(MPI_Comm_join(fd, &inter));
        close(fd);
        int rs;
        MPI_OK(MPI_Comm_remote_size(inter, &rs));
        CHECK(rs == 1, "join remote size %d", rs);
        int mine = rank, theirs = -1;
        MPI_OK(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 5, &theirs, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE));
        CHECK(theirs == 1 - rank, "joined peer says %d", theirs);
        MPI_OK(MPI_Comm_disconnect(&inter));
    }
}

/* spawn errors (see the header). */
static void parent_errors(char **argv, int size) {
    int codes[3] = {-1, -1, -1};
    MPI_Comm inter = MPI_COMM_WORLD;
    char *args[] = {"x", NULL};
    int rc = MPI_Comm_spawn("/nonexistent/program", args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
    expect_class(rc, MPI_ERR_SPAWN, "spawn of a missing program");
    CHECK(inter == MPI_COMM_NULL, "a failed spawn left an inter-communicator");
    for (int i = 0; i < 3; ++i) expect_class(codes[i], MPI_ERR_SPAWN, "errcode");
    rc = MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, size, MPI_COMM_WORLD, &inter, codes);
    expect_class(rc, MPI_ERR_ROOT, "spawn with root = size");
    rc = MPI_Comm_connect("not-a-port", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    expect_class(rc, MPI_ERR_PORT, "connect to a bad port");
    MPI_Info host;
    MPI_OK(MPI_Info_create(&host));
    MPI_OK(MPI_Info_set(host, "host", "no-such-node.invalid"));
    rc = MPI_Comm_spawn(argv[0], args, 1, host, 0, MPI_COMM_WORLD, &inter, codes);
    expect_class(rc, MPI_ERR_SPAWN, "spawn on another host");
    MPI_OK(MPI_Info_free(&host));
}

int main(int argc, char **argv) {
    int rank, size, flag;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        CHECK(parent != MPI_COMM_NULL, "a spawned process has no parent");
        child(argc, argv, parent);
        return 0;
    }
    CHECK(parent == MPI_COMM_NULL, "the job's ranks have a parent");
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const char *mode = argc > 1 ? argv[1] : "basic";
    const int universe = attr_int(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &flag);
    CHECK(flag && universe >= size, "MPI_UNIVERSE_SIZE %d", universe);

    if (strcmp(mode, "basic") == 0) {
        parent_basic(argc, argv, rank, size);
    } else if (strcmp(mode, "multiple") == 0) {
        parent_multiple(argv, rank);
    } else if (strcmp(mode, "connect") == 0) {
        parent_connect(argv);
    } else if (strcmp(mode, "conacc") == 0) {
        parent_conacc(argv, rank);
    } else if (strcmp(mode, "join") == 0) {
        parent_join(rank, size);
    } else if (strcmp(mode, "errors") == 0) {
        parent_errors(argv, size);
    } else {
        CHECK(0, "unknown mode %s", mode);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("spawn %s: OK\n", mode);
    MPI_OK(MPI_Finalize());
    return 0;
}
