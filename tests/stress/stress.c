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
 * usage: stress [-r ROUNDS] [-a COUNT] [-k RANK:ROUND:HOW]...   (HOW: kill, exit, stop)
 *   -a COUNT: each round is one MPI_Allreduce of COUNT ints and nothing else
 *             (issue 18's first defect: 3000 ints, a rank dying before the 3rd).
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int wrank;
static int bad;
static MPI_Comm comm;
static int gen, round_no;

/* A failure explains an error when its class is one of these. */
static int failure_class(int rc) {
    int c = 0;
    MPI_Error_class(rc, &c);
    return c == MPIX_ERR_PROC_FAILED || c == MPIX_ERR_REVOKED || c == MPIX_ERR_PROC_FAILED_PENDING;
}

/* 0 when rc is success, 1 when a failure explains it, and a bug otherwise. */
static int check_rc(int rc, const char *what) {
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

static void wrong(const char *what, long at, long got, long want) {
    printf("WRONG %d %s gen %d round %d at %ld: %ld, expected %ld\n", wrank, what, gen, round_no, at, got, want);
    bad = 1;
}

/* The value rank `r` contributes at index i in this round. */
static int val(int r, int i) { return (r + 1) * 1000 + round_no * 7 + (i % 13); }

static int ring(int bytes) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    const int count = bytes / (int)sizeof(int);
    int *out = malloc(sizeof(int) * count), *in = malloc(sizeof(int) * count);
    for (int i = 0; i < count; ++i) out[i] = val(r, i), in[i] = -1;
    const int to = (r + 1) % n, from = (r + n - 1) % n;
    MPI_Request q;
    int failed = check_rc(MPI_Irecv(in, count, MPI_INT, from, 40 + round_no % 8, comm, &q), "Irecv");
    if (!failed) failed |= check_rc(MPI_Send(out, count, MPI_INT, to, 40 + round_no % 8, comm), "Send");
    if (!failed) failed |= check_rc(MPI_Wait(&q, MPI_STATUS_IGNORE), "Wait");
    else {
        /* The receive may still be posted: cancel it so its buffer can go. */
        MPI_Cancel(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    if (!failed)
        for (int i = 0; i < count; ++i)
            if (in[i] != val(from, i)) { wrong("ring", i, in[i], val(from, i)); break; }
    free(out);
    free(in);
    return failed;
}

static int allreduce(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int *a = malloc(sizeof(int) * count), *b = malloc(sizeof(int) * count);
    for (int i = 0; i < count; ++i) a[i] = val(r, i), b[i] = -1;
    int failed = check_rc(MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, comm), "Allreduce");
    for (int i = 0; !failed && i < count; ++i) {
        long want = 0;
        for (int k = 0; k < n; ++k) want += val(k, i);
        if (b[i] != want) { wrong("allreduce", i, b[i], want); break; }
    }
    free(a);
    free(b);
    return failed;
}

static int bcast(int bytes) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    const int root = round_no % n, count = bytes / (int)sizeof(int);
    int *a = malloc(sizeof(int) * count);
    for (int i = 0; i < count; ++i) a[i] = r == root ? val(root, i) : -1;
    int failed = check_rc(MPI_Bcast(a, count, MPI_INT, root, comm), "Bcast");
    for (int i = 0; !failed && i < count; ++i)
        if (a[i] != val(root, i)) { wrong("bcast", i, a[i], val(root, i)); break; }
    free(a);
    return failed;
}

static int reduce_max(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    const int root = (round_no + 1) % n;
    int *a = malloc(sizeof(int) * count), *b = malloc(sizeof(int) * count);
    for (int i = 0; i < count; ++i) a[i] = val(r, i), b[i] = -1;
    int failed = check_rc(MPI_Reduce(a, b, count, MPI_INT, MPI_MAX, root, comm), "Reduce");
    for (int i = 0; !failed && r == root && i < count; ++i)
        if (b[i] != val(n - 1, i)) { wrong("reduce", i, b[i], val(n - 1, i)); break; }
    free(a);
    free(b);
    return failed;
}

static int allgather(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int *a = malloc(sizeof(int) * count), *b = malloc(sizeof(int) * count * n);
    for (int i = 0; i < count; ++i) a[i] = val(r, i);
    int failed = check_rc(MPI_Allgather(a, count, MPI_INT, b, count, MPI_INT, comm), "Allgather");
    for (int k = 0; !failed && k < n; ++k)
        for (int i = 0; i < count; ++i)
            if (b[k * count + i] != val(k, i)) { wrong("allgather", k * count + i, b[k * count + i], val(k, i)); k = n; break; }
    free(a);
    free(b);
    return failed;
}

static int alltoall(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int *a = malloc(sizeof(int) * count * n), *b = malloc(sizeof(int) * count * n);
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < count; ++i) a[k * count + i] = val(r, i + k);
    int failed = check_rc(MPI_Alltoall(a, count, MPI_INT, b, count, MPI_INT, comm), "Alltoall");
    for (int k = 0; !failed && k < n; ++k)
        for (int i = 0; i < count; ++i)
            if (b[k * count + i] != val(k, i + r)) { wrong("alltoall", k * count + i, b[k * count + i], val(k, i + r)); k = n; break; }
    free(a);
    free(b);
    return failed;
}

static int scan_sum(void) {
    int r, x, y = -1;
    MPI_Comm_rank(comm, &r);
    x = val(r, 0);
    int failed = check_rc(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, comm), "Scan");
    long want = 0;
    for (int k = 0; k <= r; ++k) want += val(k, 0);
    if (!failed && y != want) wrong("scan", 0, y, want);
    return failed;
}

static int gather_scatter(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    const int root = (round_no + 2) % n;
    int *a = malloc(sizeof(int) * count), *all = malloc(sizeof(int) * count * n);
    for (int i = 0; i < count; ++i) a[i] = val(r, i);
    int failed = check_rc(MPI_Gather(a, count, MPI_INT, all, count, MPI_INT, root, comm), "Gather");
    for (int k = 0; !failed && r == root && k < n; ++k)
        for (int i = 0; i < count; ++i)
            if (all[k * count + i] != val(k, i)) { wrong("gather", k * count + i, all[k * count + i], val(k, i)); k = n; break; }
    if (!failed) {
        for (int i = 0; i < count; ++i) a[i] = -1;
        failed = check_rc(MPI_Scatter(all, count, MPI_INT, a, count, MPI_INT, root, comm), "Scatter");
        for (int i = 0; !failed && i < count; ++i)
            if (a[i] != val(r, i)) { wrong("scatter", i, a[i], val(r, i)); break; }
    }
    free(a);
    free(all);
    return failed;
}

static int dup_barrier(void) {
    MPI_Comm d;
    if (check_rc(MPI_Comm_dup(comm, &d), "Comm_dup")) return 1;
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    int failed = check_rc(MPI_Barrier(d), "Barrier");
    MPI_Comm_free(&d);
    return failed;
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

int main(int argc, char **argv) {
    int rounds = 8, only_allreduce = 0;
    const char *kills[16];
    int nkills = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "-a") == 0 && i + 1 < argc) only_allreduce = atoi(argv[++i]);
        else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc && nkills < 16) kills[nkills++] = argv[++i];
        else {
            fprintf(stderr, "usage: stress [-r ROUNDS] [-a COUNT] [-k RANK:ROUND:HOW]...\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (check_rc(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "Comm_dup")) {
        /* A member died during the dup, which failed everywhere (uniform creation). */
        MPIX_Comm_revoke(MPI_COMM_WORLD);
        if (check_rc(MPIX_Comm_shrink(MPI_COMM_WORLD, &comm), "Comm_shrink")) return 1;
        ++gen;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (round_no = 0; round_no < rounds; ++round_no) {
        for (int k = 0; k < nkills; ++k) app_kill(kills[k]);
        int failed = 0;
        if (only_allreduce > 0) {
            failed = allreduce(only_allreduce);
            goto outcome;
        }
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
    outcome:
        /* The round's outcome, the same everywhere. */
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
            MPIX_Comm_revoke(comm);
            MPI_Comm next;
            const int src = MPIX_Comm_shrink(comm, &next);
            if (src != MPI_SUCCESS) {
                MPI_Error_class(src, &cls);
                printf("BADCLASS %d Comm_shrink %d\n", wrank, cls);
                bad = 1;
                break;
            }
            MPI_Comm_free(&comm);
            comm = next;
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            ++gen;
        }
    }
    int size = 0;
    MPI_Comm_size(comm, &size);
    printf("DONE %d %d %d %d\n", wrank, gen, size, round_no);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return bad;
}
