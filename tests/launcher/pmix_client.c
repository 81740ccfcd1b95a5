/* Raw PMIx test client for the launcher tests (links libpmix only, never the
 * MPI library). It runs the steps given as arguments, in order:
 *
 *   init            PMIx_Init (prints "rank R: init size N")
 *   modex           put "ftmpi.test" = "value-of-R", commit, fence with
 *                   PMIX_COLLECT_DATA, then get and check every peer's value
 *                   and the job-level keys; prints "rank R: modex ok N"
 *   fence           PMIx_Fence over the namespace, no data; prints its status
 *   fenceexcept:X   PMIx_Fence over every rank but X (explicit proc list)
 *   handler         register a PMIX_EVENT_PROC_TERMINATED handler
 *   mark            take the reference time for "waitdeath" latencies
 *   waitdeath:X     wait (poll with a 10 s deadline) until the handler learned
 *                   that rank X terminated; prints the source, exit code and
 *                   the latency since "mark" (exit 20 on deadline)
 *   jobkill:X       PMIx_Job_control(PMIX_JOB_CTRL_KILL) on rank X
 *   finalize        PMIx_Finalize
 *   exit:N          exit(N)          abort:N   PMIx_Abort(N, ...)
 *   kill:SIG        kill(getpid(), SIG)        hang  pause() forever
 *   ignore:SIG      ignore signal SIG
 *   print:TEXT / eprint:TEXT   a line on stdout / stderr
 *   partial:TEXT    TEXT on stdout without a newline
 *   lines:N         N lines "rank R line i" on stdout, as fast as possible
 *   stdin           echo stdin lines as "stdin: LINE", then "stdin: EOF"
 *   env:VAR         print "env VAR=value" or "env VAR unset"
 *   affinity        print "rank R: ncpus N" (sched_getaffinity)
 * A step prefixed "@R:" runs only on rank R (before init, PMIX_RANK from the
 * environment decides). Any unexpected PMIx status exits with code 10+. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pmix.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 4096

static pmix_proc_t me;
static int inited = 0;
static uint32_t size = 0;
static int evpipe[2] = {-1, -1};
static struct timespec t_mark;
static int marked = 0;
/* Written by the event handler (PMIx thread) before it writes evpipe; read
 * by the main thread after reading evpipe (the pipe orders them). */
static volatile int learned[MAX_RANKS];
static volatile int learned_code[MAX_RANKS];
static volatile int learned_source[MAX_RANKS];
static struct timespec learned_at[MAX_RANKS];

static int my_rank(void) {
    if (inited) return (int)me.rank;
    const char *r = getenv("PMIX_RANK");
    return r ? atoi(r) : -1;
}

static void die(int code, const char *what, pmix_status_t rc) {
    fprintf(stderr, "rank %d: %s failed: %s\n", my_rank(), what, PMIx_Error_string(rc));
    exit(code);
}

static double usec_between(const struct timespec *a, const struct timespec *b) {
    return (double)(b->tv_sec - a->tv_sec) * 1e6 + (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                     pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id;
    (void)results;
    (void)nresults;
    int affected = -1, code = -1;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            affected = (int)info[i].value.data.proc->rank;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
            code = info[i].value.data.integer;
    }
    if (status == PMIX_EVENT_PROC_TERMINATED && affected >= 0 && affected < MAX_RANKS) {
        clock_gettime(CLOCK_MONOTONIC, &learned_at[affected]);
        learned_code[affected] = code;
        learned_source[affected] = source ? (int)source->rank : -1;
        learned[affected] = 1;
        char b = 1;
        if (write(evpipe[1], &b, 1) < 0) { /* the waiter also re-checks learned[] */
        }
    }
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void step_init(void) {
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) die(10, "PMIx_Init", rc);
    inited = 1;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) die(11, "PMIx_Get(PMIX_JOB_SIZE)", rc);
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    printf("rank %d: init size %u\n", my_rank(), size);
}

static void expect_string(const pmix_proc_t *p, const char *key, const char *want) {
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) die(12, key, rc);
    if (v->type != PMIX_STRING || strcmp(v->data.string, want) != 0) {
        fprintf(stderr, "rank %d: %s of rank %d is '%s', expected '%s'\n", my_rank(), key, (int)p->rank,
                v->type == PMIX_STRING ? v->data.string : "(not a string)", want);
        exit(13);
    }
    PMIX_VALUE_RELEASE(v);
}

static void step_modex(void) {
    char val[64];
    snprintf(val, sizeof val, "value-of-%d", my_rank());
    pmix_value_t pv;
    PMIX_VALUE_LOAD(&pv, val, PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "ftmpi.test", &pv);
    PMIX_VALUE_DESTRUCT(&pv);
    if (rc != PMIX_SUCCESS) die(14, "PMIx_Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) die(15, "PMIx_Commit", rc);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS) die(16, "PMIx_Fence(collect)", rc);

    /* Job-level info the launcher registered. */
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    char peers[8192] = "";
    for (uint32_t r = 0; r < size; ++r) {
        size_t len = strlen(peers);
        snprintf(peers + len, sizeof peers - len, "%s%u", r ? "," : "", r);
    }
    expect_string(&wild, PMIX_LOCAL_PEERS, peers);
    pmix_value_t *v = NULL;
    if ((rc = PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &v)) != PMIX_SUCCESS) die(17, "PMIX_LOCAL_RANK", rc);
    if (v->data.uint16 != me.rank) {
        fprintf(stderr, "bad local rank %u\n", v->data.uint16);
        exit(18);
    }
    PMIX_VALUE_RELEASE(v);

    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        snprintf(val, sizeof val, "value-of-%u", r);
        expect_string(&p, "ftmpi.test", val);
    }
    printf("rank %d: modex ok %u\n", my_rank(), size);
}

static void step_handler(void) {
    if (pipe(evpipe) != 0) {
        perror("pipe");
        exit(19);
    }
    pmix_status_t code = PMIX_EVENT_PROC_TERMINATED;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) die(19, "PMIx_Register_event_handler", rc);
}

static void step_waitdeath(int victim) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!learned[victim]) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        int left_ms = 10000 - (int)(usec_between(&start, &now) / 1000);
        if (left_ms <= 0) {
            fprintf(stderr, "rank %d: never learned that rank %d terminated\n", my_rank(), victim);
            exit(20);
        }
        struct pollfd p = {evpipe[0], POLLIN, 0};
        if (poll(&p, 1, left_ms) > 0) {
            char b;
            if (read(evpipe[0], &b, 1) < 0 && errno != EINTR) {
                perror("read");
                exit(20);
            }
        }
    }
    printf("rank %d: learned rank %d terminated (source %d, exit code %d)", my_rank(), victim, learned_source[victim],
           learned_code[victim]);
    if (marked) printf(" after %.0f us", usec_between(&t_mark, &learned_at[victim]));
    printf("\n");
}

static void step_jobkill(int target) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t)target);
    pmix_info_t dir;
    bool yes = true;
    PMIX_INFO_LOAD(&dir, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Job_control(&p, 1, &dir, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&dir);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) die(21, "PMIx_Job_control", rc);
    printf("rank %d: job control kill of rank %d accepted\n", my_rank(), target);
}

static void run_step(const char *s) {
    if (!strcmp(s, "init")) step_init();
    else if (!strcmp(s, "modex")) step_modex();
    else if (!strcmp(s, "fence")) {
        pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
        printf("rank %d: fence returned %s\n", my_rank(), PMIx_Error_string(rc));
    } else if (!strncmp(s, "fenceexcept:", 12)) {
        pmix_proc_t procs[MAX_RANKS];
        size_t n = 0;
        for (uint32_t r = 0; r < size && r < MAX_RANKS; ++r)
            if ((int)r != atoi(s + 12)) {
                PMIX_LOAD_PROCID(&procs[n], me.nspace, r); /* a macro: its argument is evaluated more than once */
                ++n;
            }
        pmix_status_t rc = PMIx_Fence(procs, n, NULL, 0);
        printf("rank %d: fence without rank %d returned %s\n", my_rank(), atoi(s + 12), PMIx_Error_string(rc));
    } else if (!strcmp(s, "handler")) step_handler();
    else if (!strcmp(s, "mark")) {
        clock_gettime(CLOCK_MONOTONIC, &t_mark);
        marked = 1;
    } else if (!strncmp(s, "waitdeath:", 10)) step_waitdeath(atoi(s + 10));
    else if (!strncmp(s, "jobkill:", 8)) step_jobkill(atoi(s + 8));
    else if (!strcmp(s, "finalize")) {
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        if (rc != PMIX_SUCCESS) die(22, "PMIx_Finalize", rc);
        printf("rank %d: finalized\n", my_rank());
    } else if (!strncmp(s, "exit:", 5)) exit(atoi(s + 5));
    else if (!strncmp(s, "abort:", 6)) {
        pmix_status_t rc = PMIx_Abort(atoi(s + 6), "pmix_client abort step", NULL, 0);
        die(23, "PMIx_Abort returned", rc);
    } else if (!strncmp(s, "kill:", 5)) {
        fflush(NULL);
        kill(getpid(), atoi(s + 5));
    } else if (!strncmp(s, "ignore:", 7)) {
        signal(atoi(s + 7), SIG_IGN);
    } else if (!strcmp(s, "hang")) {
        for (;;) pause();
    } else if (!strncmp(s, "print:", 6)) printf("%s\n", s + 6);
    else if (!strncmp(s, "eprint:", 7)) fprintf(stderr, "%s\n", s + 7);
    else if (!strncmp(s, "partial:", 8)) {
        printf("%s", s + 8);
        fflush(stdout);
    } else if (!strncmp(s, "lines:", 6)) {
        int n = atoi(s + 6);
        for (int i = 0; i < n; ++i) printf("rank %d line %d\n", my_rank(), i);
    } else if (!strcmp(s, "stdin")) {
        char line[4096];
        while (fgets(line, sizeof line, stdin)) printf("stdin: %s", line);
        printf("stdin: EOF\n");
    } else if (!strncmp(s, "env:", 4)) {
        const char *v = getenv(s + 4);
        if (v) printf("env %s=%s\n", s + 4, v);
        else printf("env %s unset\n", s + 4);
    } else if (!strcmp(s, "affinity")) {
        cpu_set_t set;
        CPU_ZERO(&set);
        sched_getaffinity(0, sizeof set, &set);
        printf("rank %d: ncpus %d\n", my_rank(), CPU_COUNT(&set));
    } else {
        fprintf(stderr, "pmix_client: unknown step '%s'\n", s);
        exit(2);
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; ++i) {
        const char *s = argv[i];
        if (s[0] == '@') {
            char *colon = strchr(s, ':');
            if (!colon) {
                fprintf(stderr, "bad step '%s'\n", s);
                return 2;
            }
            if (atoi(s + 1) != my_rank()) continue;
            s = colon + 1;
        }
        run_step(s);
    }
    return 0;
}
