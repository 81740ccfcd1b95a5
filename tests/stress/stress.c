/* The random-kill campaign's program (tests/stress/campaign.py drives it).
 *
 * Every round runs point-to-point and collective operations at sizes on both
 * sides of the shm inject size (4 KiB) and the eager limit (16 KiB), checks
 * every result, then agrees on whether the round went well. A failure (an
 * error from any call) makes the rank revoke the communicator; the agreement
 * then says so everywhere and the survivors shrink and go on. Ranks die
 * where FTMPI_TEST_KILL_AT says (inside the library), or with -k at the start
 * of a round (in the program, as a user's code would).
 *
 * Output, for the driver:
 *   AGREE <world rank> <generation> <round> <flag> <error class>
 *   WRONG <world rank> <what>                  a result that was wrong
 *   BADCLASS <world rank> <what> <class>       an error class no failure explains
 *   DONE <world rank> <generation> <final size> <rounds>
 *   ERR <world rank> <generation> <round> <call> <error class>   (any error)
 * Exit code 0 when this rank saw nothing wrong.
 *
 *   BORN <id>                                   a respawned process started (id: ftmpirun's process id)
 *   ABANDONED <id>                              a respawned process whose respawn failed: it leaves
 *
 * usage: stress [-r ROUNDS] [-a COUNT] [-f FEATURES] [-d DIR] [-k RANK:ROUND:HOW]... [-K SITE:RANK:NTH:HOW]
 *               [-p ROUND:FILE]
 *   (HOW: kill, exit, stop)
 *   -p ROUND:FILE: after round ROUND's agreement, wait (at most 60 s) until
 *             FILE exists (the node-loss campaign cuts a node meanwhile).
 *   -a COUNT: each round is one MPI_Allreduce of COUNT ints and nothing else
 *             (a rank dying before the 3rd of 3000 ints was the first defect found).
 *   -f rma,io,threads: each round also
 *     rma:     on a window of the communicator (a new one per generation):
 *              a fence epoch with a put to the next rank and an accumulate
 *              to rank 0, then a shared lock of another rank with a get, a
 *              fetch-and-op and a flush, then a fence; every value checked;
 *     io:      on a file of the communicator in DIR (a new one per
 *              generation): a collective write of each rank's block, a
 *              sync, a read back of its own block, an append at the shared
 *              file pointer, a sync and the shared pointer's position checked;
 *     threads: (MPI_THREAD_MULTIPLE) two more threads of each rank run ring
 *              exchanges on their own communicators while the main thread
 *              runs the round, so that ranks die with several threads inside MPI.
 *     spawn:   after a shrink, the survivors spawn as many new processes as
 *              died (at most twice per job) and merge with them, so the job
 *              goes on at full size; they agree on whether the spawn worked
 *              and, where it did not, revoke the new inter-communicator (the
 *              children leave) and go on smaller. -K arms FTMPI_TEST_KILL_AT
 *              in the children of the first respawn.
 *   A failure anywhere fails the round; the window, file and thread
 *   communicators of the generation are freed and made again after the shrink.
 *
 * A respawned process runs this program with -c GEN ROUND RESPAWNS WORLD: it
 * merges with its parents and joins at the round after ROUND. Its id in the
 * output is the one ftmpirun gives it in its messages (the spawned job's base,
 * from PMIX_NAMESPACE "<job>.<base>", plus its rank).
 */
#include "stress.h"

#include <time.h>

int wrank;
int bad;
MPI_Comm comm;
int gen, round_no;
int use_rma, use_io, use_threads, use_spawn;
const char *io_dir = "/tmp";
int rounds = 8;
const char *features = "";
const char *child_kill; /* -K: the kills of the first respawn's children */
int world_size;         /* the job's size at the start: respawns go back to it */
int respawns;           /* respawns so far, the same in every member of comm */

/* A failure explains an error when its class is one of these. */
int failure_class(int rc) {
    int c = 0;
    MPI_Error_class(rc, &c);
    return c == MPIX_ERR_PROC_FAILED || c == MPIX_ERR_REVOKED || c == MPIX_ERR_PROC_FAILED_PENDING;
}

/* 0 when rc is success, 1 when a failure explains it, and a bug otherwise. */
int check_rc(int rc, const char *what) {
    if (rc == MPI_SUCCESS) return 0;
    int c0 = 0;
    MPI_Error_class(rc, &c0);
    printf("ERR %d %d %d %s %d\n", wrank, gen, round_no, what, c0);
    if (!failure_class(rc)) {
        int c = 0;
        MPI_Error_class(rc, &c);
        printf("BADCLASS %d %s %d\n", wrank, what, c);
        bad = 1;
    }
    return 1;
}

void wrong(const char *what, long at, long got, long want) {
    printf("WRONG %d %s gen %d round %d at %ld: %ld, expected %ld\n", wrank, what, gen, round_no, at, got, want);
    bad = 1;
}


/* ---- one-sided, I/O and threads (-f) ---- */

static MPI_Win win = MPI_WIN_NULL;
static int *wbuf;      /* n + 2 ints: one slot per rank, the accumulate's, the fetch-and-op's */
static int rma_rounds; /* rounds of this generation's window */
static MPI_File fh = MPI_FILE_NULL;
static int io_rounds; /* rounds of this generation's file */
static MPI_Comm tcomm[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
static int setup_failed; /* making this generation's objects failed: the first round fails */

#define IO_COUNT 256                  /* ints per rank and round */
#define IO_BASE ((MPI_Offset)1 << 20) /* the blocks start here; the shared pointer's appends before */

static void setup_generation(void) {
    int n;
    MPI_Comm_size(comm, &n);
    setup_failed = 0;
    if (use_rma) {
        rma_rounds = 0;
        if (check_rc(MPI_Win_allocate((MPI_Aint)sizeof(int) * (n + 2), sizeof(int), MPI_INFO_NULL, comm, &wbuf, &win),
                     "Win_allocate")) {
            win = MPI_WIN_NULL;
            setup_failed = 1;
        } else {
            MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
            for (int i = 0; i < n + 2; ++i) wbuf[i] = 0;
        }
    }
    if (use_io && !setup_failed) {
        io_rounds = 0;
        char path[4096];
        snprintf(path, sizeof path, "%s/stress.%d", io_dir, gen);
        if (check_rc(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                   MPI_INFO_NULL, &fh),
                     "File_open")) {
            fh = MPI_FILE_NULL;
            setup_failed = 1;
        }
    }
    if (use_threads && !setup_failed)
        for (int k = 0; k < 2; ++k) {
            if (check_rc(MPI_Comm_dup(comm, &tcomm[k]), "Comm_dup")) {
                tcomm[k] = MPI_COMM_NULL;
                setup_failed = 1;
                break;
            }
            MPI_Comm_set_errhandler(tcomm[k], MPI_ERRORS_RETURN);
        }
}

/* Frees the generation's objects (every survivor does, after the agreement). */
static void teardown_generation(void) {
    if (win != MPI_WIN_NULL) check_rc(MPI_Win_free(&win), "Win_free");
    win = MPI_WIN_NULL;
    if (fh != MPI_FILE_NULL) check_rc(MPI_File_close(&fh), "File_close");
    fh = MPI_FILE_NULL;
    for (int k = 0; k < 2; ++k)
        if (tcomm[k] != MPI_COMM_NULL) MPI_Comm_free(&tcomm[k]);
}

static int rma_round(void) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    if (r == 0) wbuf[n] = 0; /* no access targets it until the fence below */
    const int v = val(r, 0), one = 1, next = (r + 1) % n, from = (r + n - 1) % n;
    int failed = check_rc(MPI_Win_fence(0, win), "Win_fence");
    if (!failed) failed |= check_rc(MPI_Put(&v, 1, MPI_INT, next, r, 1, MPI_INT, win), "Put");
    if (!failed) failed |= check_rc(MPI_Accumulate(&one, 1, MPI_INT, 0, n, 1, MPI_INT, MPI_SUM, win), "Accumulate");
    if (!failed) failed |= check_rc(MPI_Win_fence(0, win), "Win_fence");
    if (!failed && wbuf[from] != val(from, 0)) wrong("put", from, wbuf[from], val(from, 0));
    if (!failed && r == 0 && wbuf[n] != n) wrong("accumulate", n, wbuf[n], n);
    const int t = (r + 2) % n, slot = (t + n - 1) % n;
    int got = -1, old = -1;
    if (!failed) failed |= check_rc(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win), "Win_lock");
    if (!failed) {
        int f = check_rc(MPI_Get(&got, 1, MPI_INT, t, slot, 1, MPI_INT, win), "Get");
        if (!f) f |= check_rc(MPI_Fetch_and_op(&one, &old, MPI_INT, t, n + 1, MPI_SUM, win), "Fetch_and_op");
        if (!f) f |= check_rc(MPI_Win_flush(t, win), "Win_flush");
        f |= check_rc(MPI_Win_unlock(t, win), "Win_unlock");
        failed |= f;
        /* Rank t-2 is the only origin of t's counter: one add per round of this window. */
        if (!failed && got != val(slot, 0)) wrong("get", slot, got, val(slot, 0));
        if (!failed && old != rma_rounds) wrong("fetch_and_op", n + 1, old, rma_rounds);
    }
    if (!failed) failed |= check_rc(MPI_Win_fence(0, win), "Win_fence"); /* every lock epoch over */
    ++rma_rounds;
    return failed;
}

static int io_round(void) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int out[IO_COUNT], in[IO_COUNT];
    for (int i = 0; i < IO_COUNT; ++i) out[i] = val(r, i), in[i] = -1;
    const MPI_Offset at = IO_BASE + ((MPI_Offset)io_rounds * n + r) * IO_COUNT * (MPI_Offset)sizeof(int);
    int failed =
        check_rc(MPI_File_write_at_all(fh, at, out, IO_COUNT, MPI_INT, MPI_STATUS_IGNORE), "File_write_at_all");
    if (!failed) failed |= check_rc(MPI_File_sync(fh), "File_sync");
    if (!failed) failed |= check_rc(MPI_File_read_at(fh, at, in, IO_COUNT, MPI_INT, MPI_STATUS_IGNORE), "File_read_at");
    for (int i = 0; !failed && i < IO_COUNT; ++i)
        if (in[i] != out[i]) {
            wrong("file read back", i, in[i], out[i]);
            break;
        }
    if (!failed) failed |= check_rc(MPI_File_write_shared(fh, out, 1, MPI_INT, MPI_STATUS_IGNORE), "File_write_shared");
    if (!failed) failed |= check_rc(MPI_File_sync(fh), "File_sync");
    MPI_Offset pos = -1;
    if (!failed) failed |= check_rc(MPI_File_get_position_shared(fh, &pos), "File_get_position_shared");
    const MPI_Offset want = (MPI_Offset)(io_rounds + 1) * n * (MPI_Offset)sizeof(int);
    if (!failed && pos != want) wrong("shared file pointer", 0, (long)pos, (long)want);
    ++io_rounds;
    return failed;
}

struct worker {
    pthread_t thread;
    int k, failed;
};

static void *worker_main(void *p) {
    struct worker *w = p;
    w->failed = ring_on(tcomm[w->k], w->k ? 20000 : 2000, 60 + w->k);
    if (!w->failed) w->failed = ring_on(tcomm[w->k], 8, 62 + w->k);
    /* Peers' threads may wait for this one's next exchange: the revoke ends their wait. */
    if (w->failed) MPIX_Comm_revoke(tcomm[w->k]);
    return NULL;
}

/* Dies as -k says, at the start of `round_no`. */
static void app_kill(const char *spec) {
    int rank, round;
    char how[16] = "kill";
    if (sscanf(spec, "%d:%d:%15s", &rank, &round, how) < 2 || rank != wrank || round != round_no) return;
    printf("DYING %d round %d %s\n", wrank, round_no, how);
    fflush(stdout);
    if (strcmp(how, "exit") == 0) exit(3);
    raise(strcmp(how, "stop") == 0 ? SIGSTOP : SIGKILL);
}

/* ---- respawn (-f spawn) ---- */

#define MAX_RESPAWNS 2

/* After a shrink: brings comm back to world_size with new processes of this
 * program. Everyone in comm takes part; comm is the merged communicator
 * after a respawn that worked, unchanged otherwise. */
static void respawn(const char *program) {
    int n;
    MPI_Comm_size(comm, &n);
    /* Not after the last round: parents that gave a respawn up must still be
     * there to answer for their part of the children's merge (MPI_Finalize is
     * collective over connected processes). */
    if (n >= world_size || respawns >= MAX_RESPAWNS || round_no + 1 >= rounds) return;
    ++respawns;
    char g[16], r[16], k[16], w[16];
    snprintf(g, sizeof g, "%d", gen);
    snprintf(r, sizeof r, "%d", round_no);
    snprintf(k, sizeof k, "%d", respawns);
    snprintf(w, sizeof w, "%d", world_size);
    char rs[16];
    snprintf(rs, sizeof rs, "%d", rounds);
    char *args[16] = {"-r", rs, "-d", (char *)io_dir, "-c", g, r, k, w};
    int na = 9;
    if (*features) args[na++] = "-f", args[na++] = (char *)features;
    if (child_kill && respawns == 1) args[na++] = "-K", args[na++] = (char *)child_kill;
    args[na] = NULL;
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = MPI_Comm_spawn(program, args, world_size - n, MPI_INFO_NULL, 0, comm, &inter, MPI_ERRCODES_IGNORE);
    int c = 0;
    MPI_Error_class(rc, &c);
    if (rc != MPI_SUCCESS) printf("ERR %d %d %d Comm_spawn %d\n", wrank, gen, round_no, c);
    /* A member or a child that died makes the spawn fail (MPI_ERR_SPAWN) or
     * its inter-communicator hold a failed process. */
    if (rc != MPI_SUCCESS && c != MPI_ERR_SPAWN && !failure_class(rc)) {
        printf("BADCLASS %d Comm_spawn %d\n", wrank, c);
        bad = 1;
    }
    int flag = rc == MPI_SUCCESS;
    const int arc = MPIX_Comm_agree(comm, &flag);
    MPI_Error_class(arc, &c);
    if (arc != MPI_SUCCESS && !failure_class(arc)) {
        printf("BADCLASS %d Comm_agree %d\n", wrank, c);
        bad = 1;
    }
    printf("SPAWNAGREE %d %d %d %d %d\n", wrank, gen, respawns, flag, c);
    if (arc != MPI_SUCCESS || !flag) {
        /* The children wait in the merge: the revoke ends it, and they leave. */
        if (inter != MPI_COMM_NULL) {
            MPIX_Comm_revoke(inter);
            MPI_Comm_free(&inter);
        }
        return;
    }
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Comm merged;
    rc = MPI_Intercomm_merge(inter, 0, &merged);
    MPI_Comm_free(&inter);
    /* The merge succeeds everywhere or nowhere (its outcome is agreed). */
    if (check_rc(rc, "Intercomm_merge")) return;
    MPI_Comm_free(&comm);
    comm = merged;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
}

/* A respawned process: its id, then the merge with its parents. 0 when it
 * is a member of comm, 1 when it leaves (the respawn failed). */
static int join_parents(void) {
    const char *ns = getenv("PMIX_NAMESPACE"), *pr = getenv("PMIX_RANK");
    const char *dot = ns ? strrchr(ns, '.') : NULL;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wrank = (dot ? atoi(dot + 1) : 100000) + (pr ? atoi(pr) : rank);
    printf("BORN %d\n", wrank);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    const int rc = MPI_Intercomm_merge(parent, 1, &comm);
    if (rc != MPI_SUCCESS) {
        int c = 0;
        MPI_Error_class(rc, &c);
        if (!failure_class(rc)) {
            printf("BADCLASS %d Intercomm_merge %d\n", wrank, c);
            bad = 1;
        }
        printf("ABANDONED %d\n", wrank);
        MPI_Comm_free(&parent);
        return 1;
    }
    MPI_Comm_free(&parent);
    return 0;
}

/* -p: the node-loss campaign cuts a node after a round's agreement and
 * then creates the file; the job must not finish meanwhile. Waits for an
 * event outside the job (at most 60 s), not for another MPI process. */
static void await_file(const char *path) {
    const struct timespec tick = {0, 2000000};
    for (int i = 0; i < 30000 && access(path, F_OK) != 0; ++i) nanosleep(&tick, NULL);
}

/* The command line's options besides the program's state (see the usage above). */
struct options {
    int only_allreduce, child, child_gen, child_round, child_respawns, child_world;
    int pause_round; /* -p: after this round's agreement, wait for pause_file */
    const char *pause_file;
    const char *kills[16];
    int nkills;
};

/* Parses the command line into *o and the program's state: 0, or 2 after the
 * usage message. */
static int parse_args(int argc, char **argv, struct options *o) {
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "-a") == 0 && i + 1 < argc) o->only_allreduce = atoi(argv[++i]);
        else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc && o->nkills < 16) o->kills[o->nkills++] = argv[++i];
        else if (strcmp(argv[i], "-K") == 0 && i + 1 < argc) child_kill = argv[++i];
        else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) io_dir = argv[++i];
        else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc && strchr(argv[i + 1], ':') != NULL) {
            o->pause_round = atoi(argv[++i]);
            o->pause_file = strchr(argv[i], ':') + 1;
        } else if (strcmp(argv[i], "-c") == 0 && i + 4 < argc) {
            o->child = 1;
            o->child_gen = atoi(argv[++i]);
            o->child_round = atoi(argv[++i]);
            o->child_respawns = atoi(argv[++i]);
            o->child_world = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc) {
            features = argv[++i];
            use_rma = strstr(features, "rma") != NULL;
            use_io = strstr(features, "io") != NULL;
            use_threads = strstr(features, "threads") != NULL;
            use_spawn = strstr(features, "spawn") != NULL;
        } else {
            fprintf(stderr,
                    "usage: stress [-r ROUNDS] [-a COUNT] [-f rma,io,threads,spawn] [-d DIR] "
                    "[-k RANK:ROUND:HOW]... [-K SITE:RANK:NTH:HOW] [-p ROUND:FILE]\n");
            return 2;
        }
    }
    return 0;
}

/* The round's checked operations, each while none has failed (`failed`: the
 * generation's objects could not be made). 1 when one failed. */
static int round_ops(int failed) {
    /* Sizes on both sides of 4 KiB (shm inject) and 16 KiB (eager limit). */
    const int ring_bytes[] = {8, 3000, 12000, 100000};
    for (int s = 0; !failed && s < 4; ++s) failed |= ring(ring_bytes[s]);
    const int reduce_counts[] = {2, 1000, 3000, 6000};
    for (int s = 0; !failed && s < 4; ++s) failed |= allreduce(reduce_counts[s]);
    const int bcast_bytes[] = {8, 12000, 100000};
    for (int s = 0; !failed && s < 3; ++s) failed |= bcast(bcast_bytes[s]);
    if (!failed) failed |= reduce_max(3000);
    if (!failed) failed |= allgather(round_no % 2 ? 1 : 1500);
    if (!failed) failed |= alltoall(round_no % 2 ? 2 : 2000);
    if (!failed) failed |= scan_sum();
    if (!failed) failed |= gather_scatter(round_no % 2 ? 3 : 5000);
    if (!failed) failed |= check_rc(MPI_Barrier(comm), "Barrier");
    if (!failed && round_no % 2 == 0) failed |= dup_barrier();
    if (!failed && use_rma) failed |= rma_round();
    if (!failed && use_io) failed |= io_round();
    return failed;
}

/* The round's outcome, the same everywhere; where it failed, the survivors
 * shrink comm (and respawn, -f spawn) and make the generation's objects
 * again. 1 when the shrink failed: this rank stops. */
static int round_outcome(int failed, const char *program) {
    if (failed) MPIX_Comm_revoke(comm);
    int flag = failed ? 0 : 1;
    const int rc = MPIX_Comm_agree(comm, &flag);
    int cls = 0;
    MPI_Error_class(rc, &cls);
    if (rc != MPI_SUCCESS && !failure_class(rc)) {
        printf("BADCLASS %d Comm_agree %d\n", wrank, cls);
        bad = 1;
    }
    printf("AGREE %d %d %d %d %d\n", wrank, gen, round_no, flag, cls);
    if (rc != MPI_SUCCESS || !flag) {
        teardown_generation();
        MPIX_Comm_revoke(comm);
        MPI_Comm next;
        const int src = MPIX_Comm_shrink(comm, &next);
        if (src != MPI_SUCCESS) {
            MPI_Error_class(src, &cls);
            printf("BADCLASS %d Comm_shrink %d\n", wrank, cls);
            bad = 1;
            return 1;
        }
        MPI_Comm_free(&comm);
        comm = next;
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        ++gen;
        if (use_spawn) respawn(program);
        setup_generation();
    }
    return 0;
}

int main(int argc, char **argv) {
    struct options o = {0};
    if (parse_args(argc, argv, &o)) return 2;
    /* The parents' FTMPI_TEST_KILL_AT names their ranks, not a child's: -K replaces it. */
    if (o.child) {
        if (child_kill) setenv("FTMPI_TEST_KILL_AT", child_kill, 1);
        else unsetenv("FTMPI_TEST_KILL_AT");
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (use_threads) {
        int provided = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided != MPI_THREAD_MULTIPLE) {
            printf("WRONG -1 MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
            return 1;
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int first_round = 0;
    if (o.child) {
        if (join_parents()) {
            MPI_Finalize();
            return bad;
        }
        gen = o.child_gen;
        first_round = o.child_round + 1;
        respawns = o.child_respawns;
        world_size = o.child_world;
    } else if (check_rc(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "Comm_dup")) {
        /* A member died during the dup, which failed everywhere (uniform creation). */
        MPIX_Comm_revoke(MPI_COMM_WORLD);
        if (check_rc(MPIX_Comm_shrink(MPI_COMM_WORLD, &comm), "Comm_shrink")) return 1;
        ++gen;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    setup_generation();
    for (round_no = first_round; round_no < rounds; ++round_no) {
        for (int k = 0; k < o.nkills; ++k) app_kill(o.kills[k]);
        int failed = setup_failed;
        setup_failed = 0;
        struct worker workers[2];
        int started = 0;
        if (use_threads && !failed)
            for (; started < 2; ++started) {
                workers[started].k = started;
                workers[started].failed = 0;
                if (pthread_create(&workers[started].thread, NULL, worker_main, &workers[started]) != 0) break;
            }
        if (o.only_allreduce > 0) failed = allreduce(o.only_allreduce);
        else failed = round_ops(failed);
        /* Other ranks may wait for this one on any object of the generation
         * (a fence, a collective write, their threads' exchanges): revoke
         * them all, as comm below, so that none waits for ever. */
        if (failed) {
            for (int k = 0; k < 2; ++k)
                if (tcomm[k] != MPI_COMM_NULL) MPIX_Comm_revoke(tcomm[k]);
            if (win != MPI_WIN_NULL) MPIX_Win_revoke(win);
            if (fh != MPI_FILE_NULL) MPIX_File_revoke(fh);
        }
        for (int k = 0; k < started; ++k) {
            pthread_join(workers[k].thread, NULL);
            failed |= workers[k].failed;
        }
        /* The round's outcome, the same everywhere. */
        if (round_outcome(failed, argv[0])) break;
        if (o.pause_file != NULL && round_no == o.pause_round) await_file(o.pause_file);
    }
    teardown_generation();
    int size = 0;
    MPI_Comm_size(comm, &size);
    printf("DONE %d %d %d %d\n", wrank, gen, size, round_no);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return bad;
}
