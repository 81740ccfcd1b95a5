/*
 * Fault tolerance across nodes under Slurm (issue 11, parts 1, 3 and 4).
 *
 *   cluster_fault MODE VICTIM [LINGER]
 *
 * Job rank VICTIM dies (SIGKILL) once every survivor told it that it is
 * ready; the survivors then run one of:
 *   p2p     a named receive from the victim fails with MPI_ERR_PROC_FAILED;
 *           a ring among the survivors still works
 *   coll    allreduce on MPI_COMM_WORLD until it fails with
 *           MPI_ERR_PROC_FAILED (or MPI_ERR_REVOKED, once another survivor
 *           revoked); then revoke
 *   agree   agree fails with MPI_ERR_PROC_FAILED until the failure is
 *           acknowledged, then agrees on the AND of the survivors' flags
 *   shrink  allreduce until it fails, revoke, shrink: size - 1 members, in
 *           rank order, and an allreduce on the new communicator
 * Every survivor checks that the failed set is exactly {VICTIM}. Then the
 * survivors keep working together (allreduces on a shrunk communicator) until
 * LINGER seconds (default 3) have passed since the death: Slurm's pmix plugin
 * used to kill the whole step about 1.1 s after a rank died, and a job that
 * ended sooner would not show it. The lowest survivor then prints
 * "cluster_fault MODE: N survivors ok". Exit 0.
 *
 *   cluster_fault spawnhost     (under ftmpirun across the nodes ftn1, ftn2)
 *
 * Rank 0's MPI_Comm_spawn of 2 processes with the info key host=ftn2, then
 * host=ftn1: each child tells rank 0 the node it runs on (SLURMD_NODENAME),
 * which must be the one asked for; host=no-such-node fails with
 * MPI_ERR_SPAWN. Rank 0 prints "cluster_fault spawnhost: ok".
 *
 *   cluster_fault nodeloss
 *
 * Every rank prints "ready R HOST" after a first allreduce, then runs
 * nonblocking allreduces until one fails (the test cuts a node off). It
 * prints "detected R t=T" (T: CLOCK_MONOTONIC seconds, as Python's
 * time.monotonic), when it first knew of a failure, and "failed R t=T", when
 * its allreduce failed; then it revokes, shrinks, runs an allreduce on the
 * new communicator and prints "shrunk R size=S sum=X t=T". The survivors go on
 * together for 2 s more.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "ftlib.h"

static int me, size;
static MPI_Comm priv; /* a duplicate of MPI_COMM_WORLD that is never revoked, for the checks */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int is_failure(int rc) {
    int c = tl_class(rc);
    return c == MPIX_ERR_PROC_FAILED || c == MPIX_ERR_REVOKED;
}

/* Allreduce on comm until it fails with a failure class; returns that class. */
static int allreduce_until_failure(MPI_Comm comm) {
    for (;;) {
        int one = 1, sum = 0;
        int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
        if (rc == MPI_SUCCESS) continue;
        CHECK(is_failure(rc), "allreduce failed with class %d", tl_class(rc));
        return tl_class(rc);
    }
}

static void check_failed_is(int victim) {
    const int want[1] = {victim};
    CHECK(tl_wait_failed(priv, 1, 30.0) >= 1, "rank %d never learned of the failure", me);
    tl_check_agreement(priv, want, 1);
}

/* Allreduces on `comm` (survivors only) until `linger` seconds have passed
   since `since` at every member (they all stop at the same iteration). */
static void linger_together(MPI_Comm comm, double since, double linger) {
    for (int done = 0; !done;) {
        int mine = now() - since >= linger;
        MPI_OK(MPI_Allreduce(&mine, &done, 1, MPI_INT, MPI_MIN, comm));
    }
}

static void report(const char *mode, int lowest) {
    if (me == lowest) {
        printf("cluster_fault %s: %d survivors ok\n", mode, size - 1);
        fflush(stdout);
    }
}

static void p2p(int victim) {
    int x = 0;
    MPI_Status st;
    CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, victim, 7, MPI_COMM_WORLD, &st), MPIX_ERR_PROC_FAILED);
    check_failed_is(victim);
    /* A ring over the survivors. */
    int next = (me + 1) % size, prev = (me + size - 1) % size;
    if (next == victim) next = (next + 1) % size;
    if (prev == victim) prev = (prev + size - 1) % size;
    int token = me, got = -1;
    MPI_OK(MPI_Sendrecv(&token, 1, MPI_INT, next, 8, &got, 1, MPI_INT, prev, 8, MPI_COMM_WORLD, &st));
    CHECK(got == prev, "ring: got %d from %d", got, prev);
}

static void coll(int victim) {
    allreduce_until_failure(MPI_COMM_WORLD);
    MPI_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    check_failed_is(victim);
    int one = 1, sum = 0;
    CHECK_CLASS(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPIX_ERR_REVOKED);
}

static void agree(int victim) {
    /* Every survivor clears its own bit: the AND has exactly the victim's bit set. */
    const int all = (1 << size) - 1;
    int flag = all & ~(1 << me);
    int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    while (rc != MPI_SUCCESS) {
        CHECK(tl_class(rc) == MPIX_ERR_PROC_FAILED, "agree: class %d", tl_class(rc));
        MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
        flag = all & ~(1 << me);
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    }
    CHECK(flag == (1 << victim), "agreed on %#x, expected %#x", flag, 1 << victim);
    check_failed_is(victim);
}

static void shrink(int victim) {
    allreduce_until_failure(MPI_COMM_WORLD);
    MPI_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    int sme, ssize, sum = 0;
    MPI_OK(MPI_Comm_rank(s, &sme));
    MPI_OK(MPI_Comm_size(s, &ssize));
    CHECK(ssize == size - 1, "shrunk to %d, expected %d", ssize, size - 1);
    CHECK(sme == (me < victim ? me : me - 1), "rank %d became %d in the shrunk communicator", me, sme);
    MPI_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK(sum == size * (size - 1) / 2 - victim, "sum of survivors' ranks %d", sum);
    check_failed_is(victim);
    MPI_OK(MPI_Comm_free(&s));
}

static void nodeloss(void) {
    char host[MPI_MAX_PROCESSOR_NAME];
    const char *node = getenv("SLURMD_NODENAME");
    int len = 0, one = 1, sum = 0;
    MPI_OK(MPI_Get_processor_name(host, &len));
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    printf("ready %d %s\n", me, node ? node : host);
    fflush(stdout);
    /* Nonblocking allreduces, so that the moment this rank learns of a
       failure (detected) is seen apart from the moment its allreduce fails
       (failed): the collective may wait for the failure of the very peer it
       depends on. */
    double known = 0, failed = 0;
    while (failed == 0) {
        MPI_Request req;
        MPI_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        for (int flag = 0; !flag;) {
            int rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            int ranks[256];
            if (known == 0 && tl_failed(MPI_COMM_WORLD, ranks, 256) > 0) known = now();
            if (rc != MPI_SUCCESS) {
                CHECK(is_failure(rc), "allreduce failed with class %d", tl_class(rc));
                failed = now();
                break;
            }
        }
    }
    if (known == 0) known = failed;
    printf("detected %d t=%.6f\n", me, known);
    printf("failed %d t=%.6f\n", me, failed);
    fflush(stdout);
    MPIX_Comm_revoke(MPI_COMM_WORLD);
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    int ssize = 0;
    MPI_OK(MPI_Comm_size(s, &ssize));
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s));
    printf("shrunk %d size=%d sum=%d t=%.6f\n", me, ssize, sum, now());
    fflush(stdout);
    linger_together(s, failed, 2.0); /* as in the other modes: a late step kill would show */
    MPI_OK(MPI_Comm_free(&s));
}

/* A child of spawnhost: tells the parents' rank 0 where it runs. */
static void spawned_child(void) {
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent != MPI_COMM_NULL, "a child without a parent");
    char node[64] = {0};
    const char *n = getenv("SLURMD_NODENAME");
    snprintf(node, sizeof node, "%s", n ? n : "?");
    MPI_OK(MPI_Send(node, (int)sizeof node, MPI_CHAR, 0, 7, parent));
    MPI_OK(MPI_Comm_disconnect(&parent));
}

/* Children started where the host key says, and a host of no node refused. */
static void spawnhost(const char *self) {
    char *args[] = {"child", NULL};
    for (int k = 0; k < 3; ++k) {
        const char *host = k == 0 ? "ftn2" : k == 1 ? "ftn1" : "no-such-node";
        MPI_Info info;
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "host", host));
        MPI_Comm inter = MPI_COMM_NULL;
        int codes[2];
        const int rc = MPI_Comm_spawn(self, args, 2, info, 0, MPI_COMM_WORLD, &inter, codes);
        MPI_OK(MPI_Info_free(&info));
        if (k == 2) {
            CHECK(tl_class(rc) == MPI_ERR_SPAWN && inter == MPI_COMM_NULL, "host %s: class %d", host, tl_class(rc));
            continue;
        }
        MPI_OK(rc);
        for (int c = 0; c < 2 && me == 0; ++c) {
            char node[64];
            MPI_OK(MPI_Recv(node, (int)sizeof node, MPI_CHAR, c, 7, inter, MPI_STATUS_IGNORE));
            CHECK(!strcmp(node, host), "a child asked on %s runs on %s", host, node);
        }
        MPI_OK(MPI_Comm_disconnect(&inter));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("cluster_fault spawnhost: ok\n");
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "child")) {
        MPI_Init(&argc, &argv);
        spawned_child();
        MPI_Finalize();
        return 0;
    }
    tl_init(&argc, &argv, &me, &size, 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (!strcmp(mode, "nodeloss")) {
        nodeloss();
    } else if (!strcmp(mode, "spawnhost")) {
        spawnhost(argv[0]);
    } else if (!strcmp(mode, "spawn")) {
        /* Slurm's PMIx server cannot start processes for a running job (and
           ftmpi has left it): MPI_ERR_SPAWN at every rank, every errcode too */
        int codes[2] = {0, 0}, cls = -1;
        MPI_Comm inter = MPI_COMM_WORLD;
        const int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN && inter == MPI_COMM_NULL, "spawn under srun: class %d", cls);
        for (int i = 0; i < 2; ++i) {
            MPI_Error_class(codes[i], &cls);
            CHECK(cls == MPI_ERR_SPAWN, "errcode %d: class %d", i, cls);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 0) printf("cluster_fault spawn: MPI_ERR_SPAWN at %d ranks\n", size);
    } else {
        const int victim = argc > 2 ? atoi(argv[2]) : size - 1;
        CHECK(victim >= 0 && victim < size, "victim %d of %d", victim, size);
        CHECK(size <= 16, "at most 16 ranks");
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &priv));
        MPI_Comm_set_errhandler(priv, MPI_ERRORS_RETURN);
        /* The victim dies once every survivor is past this point: each tells
           it so (an eager send), so no survivor's setup can see the failure. */
        int go = 1;
        if (me == victim) {
            for (int i = 0; i < size - 1; ++i)
                MPI_OK(MPI_Recv(&go, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            tl_die(SIGKILL);
        }
        MPI_OK(MPI_Send(&go, 1, MPI_INT, victim, 5, MPI_COMM_WORLD));
        const double linger = argc > 3 ? atof(argv[3]) : 3.0;
        const double start = now();
        const int lowest = victim == 0 ? 1 : 0;
        if (!strcmp(mode, "p2p")) p2p(victim);
        else if (!strcmp(mode, "coll")) coll(victim);
        else if (!strcmp(mode, "agree")) agree(victim);
        else if (!strcmp(mode, "shrink")) shrink(victim);
        else CHECK(0, "unknown mode '%s'", mode);
        MPI_Comm surv;
        MPI_OK(MPIX_Comm_shrink(priv, &surv));
        linger_together(surv, start, linger);
        MPI_OK(MPI_Comm_free(&surv));
        report(mode, lowest);
        MPI_OK(MPI_Comm_free(&priv));
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
