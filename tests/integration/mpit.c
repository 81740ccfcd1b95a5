/*
 * The tools information interface (MPI_T), before MPI_Init, during the job
 * and after MPI_Finalize:
 *
 *   - error classes: calls before MPI_T_init_thread, bad indexes, names,
 *     handles and sessions, writes to read-only variables; nested init and
 *     finalize; a malformed FTMPI_* variable makes MPI_T_init_thread fail;
 *   - control variables: every FTMPI_* knob is there, once, with the value
 *     MPI_Init parses from the environment (this test sets FTMPI_EAGER_LIMIT
 *     to 0x1000 before MPI_T_init_thread, and checks it reads 4096 before
 *     MPI_Init already); only FTMPI_LOG can be written;
 *   - performance variables: exact message and byte counts of point-to-point
 *     traffic between ranks 0 and 1 (eager, rendezvous, synchronous,
 *     buffered, derived datatypes; MPI_PROC_NULL and collectives not
 *     counted), two sessions that count independently, start/stop, reset,
 *     readreset, write, MPI_T_PVAR_ALL_HANDLES; the buffered sends in flight;
 *     the MPI state;
 *   - categories: every variable is reachable from the root "ftmpi";
 *   - a failure: the last rank is SIGKILLed at the end, and the survivors'
 *     ftmpi_ft_failures_seen reads 1 once they know it, also after
 *     MPI_Finalize.
 */
#include "mpit.h"

int rank = -1, size = 0;

/* ---- control variables ---------------------------------------------------- */

enum kind { K_INT, K_ULONG, K_STRING };
struct knob {
    const char *name;
    enum kind kind;
    const char *def; /* default, as the environment would spell it */
    int seen;
};

/* Every FTMPI_* knob of runtime/config.hpp, with its default. */
static struct knob knobs[] = {
    {"FTMPI_PROVIDER", K_STRING, "", 0},
    {"FTMPI_SHM_FASTPATH", K_INT, "1", 0},
    {"FTMPI_SHM_RING", K_ULONG, "0", 0},
    {"FTMPI_NET_PROVIDER", K_STRING, "net", 0},
    {"FTMPI_NET_IFACE", K_STRING, "", 0},
    {"FTMPI_NET_PRECONNECT", K_INT, "1", 0},
    {"FTMPI_EAGER_LIMIT", K_ULONG, "8192", 0},
    {"FTMPI_COLL_EAGER_LIMIT", K_ULONG, "16384", 0},
    {"FTMPI_NET_EAGER_LIMIT", K_ULONG, "65536", 0},
    {"FTMPI_SHM_CMA", K_INT, "1", 0},
    {"FTMPI_RX_BUFFERS", K_ULONG, "64", 0},
    {"FTMPI_YIELD", K_INT, "-1", 0},
    {"FTMPI_OP_ISA", K_STRING, "", 0},
    {"FTMPI_DETECTOR", K_INT, "1", 0},
    {"FTMPI_FT_PERIOD_MS", K_INT, "100", 0},
    {"FTMPI_FT_TIMEOUT_MS", K_INT, "1000", 0},
    {"FTMPI_FT_LINKS", K_INT, "1", 0},
    {"FTMPI_FT_PROVIDER", K_STRING, "net", 0},
    {"FTMPI_LAUNCHER_EVENTS", K_INT, "1", 0},
    {"FTMPI_TEST_KILL_AT", K_STRING, "", 0},
    {"FTMPI_TEST_SPLIT_ABOVE", K_INT, "0", 0},
    {"FTMPI_FT", K_INT, "1", 0},
    {"FTMPI_ERRHANDLER", K_STRING, "mpi_errors_are_fatal", 0},
    {"FTMPI_RMA_SHM", K_INT, "1", 0},
    {"FTMPI_SLURM_KEEPER", K_INT, "1", 0},
    {"FTMPI_SERVICE_CPUS", K_STRING, "", 0},
    {"FTMPI_LOG", K_INT, "1", 0},
    {"FTMPI_LAUNCHER", K_STRING, "", 0},
    {"FTMPI_TIMELINE", K_STRING, "", 0},
    {"FTMPI_PARENT_PORT", K_STRING, "", 0},
    {"FTMPI_LAUNCH_FANOUT", K_INT, "32", 0},
    {"FTMPI_LAUNCH_PERIOD_MS", K_INT, "250", 0},
    {"FTMPI_LAUNCH_TIMEOUT_MS", K_INT, "5000", 0},
};
enum { NKNOBS = sizeof knobs / sizeof knobs[0] };

/* What MPI_Init reads for a knob: the environment when set and not empty. */
static const char *expected_text(const struct knob *k) {
    const char *v = getenv(k->name);
    return v && *v ? v : k->def;
}

int cvar_index(const char *name) {
    int i = -1;
    T_OK(MPI_T_cvar_get_index(name, &i));
    return i;
}

/* Reads control variable `index` as an integer (MPI_INT or MPI_UNSIGNED_LONG). */
long long cvar_int(int index) {
    MPI_T_cvar_handle h;
    int count = 0;
    MPI_Datatype type;
    T_OK(MPI_T_cvar_get_info(index, NULL, NULL, NULL, &type, NULL, NULL, NULL, NULL, NULL));
    T_OK(MPI_T_cvar_handle_alloc(index, NULL, &h, &count));
    T_CHECK(count == 1, "count %d", count);
    long long v;
    if (type == MPI_INT) {
        int i;
        T_OK(MPI_T_cvar_read(h, &i));
        v = i;
    } else {
        unsigned long u;
        T_CHECK(type == MPI_UNSIGNED_LONG, "cvar %d: unexpected datatype", index);
        T_OK(MPI_T_cvar_read(h, &u));
        v = (long long)u;
    }
    T_OK(MPI_T_cvar_handle_free(&h));
    T_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle_free must null the handle");
    return v;
}

/* Every control variable is a knob, every knob is one variable, and each
   reads what MPI_Init parses from the environment. */
static void check_cvars(const char *when) {
    int n = -1;
    T_OK(MPI_T_cvar_get_num(&n));
    T_CHECK(n == NKNOBS, "%s: %d control variables, %d knobs", when, n, NKNOBS);
    for (int k = 0; k < NKNOBS; ++k) knobs[k].seen = 0;
    for (int i = 0; i < n; ++i) {
        char name[128], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity = -1, bind = -1, scope = -1;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_T_enum en = MPI_T_ENUM_NULL;
        T_OK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &en, desc, &desc_len, &bind, &scope));
        T_CHECK(name_len == (int)strlen(name) + 1, "%s: name_len %d for %s", when, name_len, name);
        T_CHECK(desc_len == (int)strlen(desc) + 1 && desc_len > 10, "%s: %s: description '%s'", when, name, desc);
        T_CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", name, bind);
        T_CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL, "%s: verbosity %d",
                name, verbosity);
        struct knob *k = NULL;
        for (int j = 0; j < NKNOBS; ++j)
            if (strcmp(knobs[j].name, name) == 0) k = &knobs[j];
        T_CHECK(k != NULL, "%s: control variable %s is no known knob", when, name);
        T_CHECK(!k->seen, "%s: %s twice", when, name);
        k->seen = 1;
        T_CHECK(cvar_index(name) == i, "%s: get_index(%s)", when, name);
        const int is_log = strcmp(name, "FTMPI_LOG") == 0;
        T_CHECK(scope == (is_log ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_READONLY), "%s: scope %d", name, scope);
        T_CHECK((en != MPI_T_ENUM_NULL) == is_log, "%s: enumeration", name);

        MPI_T_cvar_handle h;
        int count = 0;
        T_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        const char *want = expected_text(k);
        if (k->kind == K_STRING) {
            T_CHECK(type == MPI_CHAR, "%s: not MPI_CHAR", name);
            T_CHECK(count > (int)strlen(want), "%s: count %d for '%s'", name, count, want);
            char *buf = malloc((size_t)count);
            memset(buf, 'x', (size_t)count);
            T_OK(MPI_T_cvar_read(h, buf));
            T_CHECK(strcmp(buf, want) == 0, "%s: %s reads '%s', expected '%s'", when, name, buf, want);
            T_RC(MPI_T_cvar_write(h, buf), MPI_T_ERR_CVAR_SET_NEVER);
            free(buf);
        } else {
            T_CHECK(type == (k->kind == K_INT ? MPI_INT : MPI_UNSIGNED_LONG), "%s: datatype", name);
            T_CHECK(count == 1, "%s: count %d", name, count);
            long long got;
            if (k->kind == K_INT) {
                int v;
                T_OK(MPI_T_cvar_read(h, &v));
                got = v;
                if (!is_log) T_RC(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
            } else {
                unsigned long v;
                T_OK(MPI_T_cvar_read(h, &v));
                got = (long long)v;
                T_RC(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
            }
            const long long w = strtoll(want, NULL, 0);
            T_CHECK(got == w, "%s: %s reads %lld, expected %lld ('%s')", when, name, got, w, want);
        }
        T_OK(MPI_T_cvar_handle_free(&h));
    }
    for (int k = 0; k < NKNOBS; ++k) T_CHECK(knobs[k].seen, "%s: knob %s has no control variable", when, knobs[k].name);
    T_CHECK(cvar_int(cvar_index("FTMPI_EAGER_LIMIT")) == 4096, "%s: FTMPI_EAGER_LIMIT=0x1000 must read 4096", when);
}

/* The MPI_T string convention, bad indexes and names, and bad handles. */
static void check_cvar_errors(void) {
    int n = 0, i = 0, count = 0;
    T_OK(MPI_T_cvar_get_num(&n));
    const int eager = cvar_index("FTMPI_EAGER_LIMIT");
    char small[4] = "???";
    int len = (int)sizeof small;
    T_OK(MPI_T_cvar_get_info(eager, small, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    T_CHECK(strcmp(small, "FTM") == 0 && len == (int)strlen("FTMPI_EAGER_LIMIT") + 1, "truncated '%s', len %d", small,
            len);
    len = 0;
    T_OK(MPI_T_cvar_get_info(eager, small, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    T_CHECK(len == (int)strlen("FTMPI_EAGER_LIMIT") + 1 && strcmp(small, "FTM") == 0, "len %d, buffer touched", len);
    len = 100;
    T_OK(MPI_T_cvar_get_info(eager, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    T_CHECK(len == (int)strlen("FTMPI_EAGER_LIMIT") + 1, "NULL name: len %d", len);

    T_RC(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_get_index("FTMPI_NO_SUCH_KNOB", &i), MPI_T_ERR_INVALID_NAME);
    T_RC(MPI_T_cvar_get_index("ftmpi_eager_limit", &i), MPI_T_ERR_INVALID_NAME);
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL, copy;
    T_RC(MPI_T_cvar_handle_alloc(n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &i), MPI_T_ERR_INVALID_HANDLE);
    T_OK(MPI_T_cvar_handle_alloc(eager, NULL, &h, &count));
    copy = h;
    T_OK(MPI_T_cvar_handle_free(&h));
    unsigned long v = 0;
    T_RC(MPI_T_cvar_read(copy, &v), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_cvar_write(copy, &v), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_cvar_handle_free(&copy), MPI_T_ERR_INVALID_HANDLE);

    /* FTMPI_LOG: writable, an enumeration of the log levels. */
    const int log = cvar_index("FTMPI_LOG");
    MPI_T_enum en;
    T_OK(MPI_T_cvar_get_info(log, NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL, NULL));
    int items = 0;
    char name[64];
    len = sizeof name;
    T_OK(MPI_T_enum_get_info(en, &items, name, &len));
    T_CHECK(items == 4 && strcmp(name, "ftmpi_log_level") == 0, "log enumeration %s with %d items", name, items);
    const char *levels[] = {"error", "warning", "info", "debug"};
    for (int it = 0; it < items; ++it) {
        int value = -1;
        len = sizeof name;
        T_OK(MPI_T_enum_get_item(en, it, &value, name, &len));
        T_CHECK(value == it && strcmp(name, levels[it]) == 0, "log level %d: %d %s", it, value, name);
    }
    T_RC(MPI_T_enum_get_item(en, items, &i, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
    T_RC(MPI_T_enum_get_item(en, -1, &i, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
    T_RC(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &items, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);

    const long long before = cvar_int(log);
    T_OK(MPI_T_cvar_handle_alloc(log, NULL, &h, &count));
    int level = 3;
    T_OK(MPI_T_cvar_write(h, &level));
    T_CHECK(cvar_int(log) == 3, "FTMPI_LOG reads %lld after writing 3", cvar_int(log));
    level = (int)before;
    T_OK(MPI_T_cvar_write(h, &level));
    T_CHECK(cvar_int(log) == before, "FTMPI_LOG not restored");
    T_OK(MPI_T_cvar_handle_free(&h));
}


static void check_categories(void) {
    int ncat = 0, ncvar = 0, npvar = 0, stamp = -1, stamp2 = -2;
    T_OK(MPI_T_category_get_num(&ncat));
    T_OK(MPI_T_cvar_get_num(&ncvar));
    T_OK(MPI_T_pvar_get_num(&npvar));
    T_OK(MPI_T_category_changed(&stamp));
    int *cvar_in = calloc((size_t)ncvar, sizeof(int)), *pvar_in = calloc((size_t)npvar, sizeof(int));
    int *reached = calloc((size_t)ncat, sizeof(int)), *stack = malloc((size_t)ncat * sizeof(int) + 1);
    int root = -1, top = 0;
    T_OK(MPI_T_category_get_index("ftmpi", &root));
    reached[root] = 1;
    stack[top++] = root;
    while (top > 0) { /* walk down from the root */
        const int c = stack[--top];
        int nc = 0, np = 0, ns = 0, idx[64];
        char name[64];
        int len = sizeof name, desc_len = 0;
        T_OK(MPI_T_category_get_info(c, name, &len, NULL, &desc_len, &nc, &np, &ns));
        T_CHECK(desc_len > 10 && nc <= 64 && np <= 64 && ns <= 64, "category %s", name);
        int again = -1;
        T_OK(MPI_T_category_get_index(name, &again));
        T_CHECK(again == c, "category %s: index %d, get_index %d", name, c, again);
        T_OK(MPI_T_category_get_cvars(c, nc, idx));
        for (int i = 0; i < nc; ++i) {
            T_CHECK(idx[i] >= 0 && idx[i] < ncvar, "%s: cvar %d", name, idx[i]);
            ++cvar_in[idx[i]];
        }
        T_OK(MPI_T_category_get_pvars(c, np, idx));
        for (int i = 0; i < np; ++i) {
            T_CHECK(idx[i] >= 0 && idx[i] < npvar, "%s: pvar %d", name, idx[i]);
            ++pvar_in[idx[i]];
        }
        T_OK(MPI_T_category_get_categories(c, ns, idx));
        for (int i = 0; i < ns; ++i) {
            T_CHECK(idx[i] >= 0 && idx[i] < ncat && !reached[idx[i]], "%s: subcategory %d", name, idx[i]);
            reached[idx[i]] = 1;
            stack[top++] = idx[i];
        }
    }
    for (int c = 0; c < ncat; ++c) T_CHECK(reached[c], "category %d not under ftmpi", c);
    for (int i = 0; i < ncvar; ++i) T_CHECK(cvar_in[i] == 1, "cvar %d is in %d categories", i, cvar_in[i]);
    for (int i = 0; i < npvar; ++i) T_CHECK(pvar_in[i] == 1, "pvar %d is in %d categories", i, pvar_in[i]);

    /* Where two variables live; a short list gets the first indices only. */
    int transport = -1, nc = 0, first = -1;
    T_OK(MPI_T_category_get_index("ftmpi_transport", &transport));
    T_OK(MPI_T_category_get_info(transport, NULL, NULL, NULL, NULL, &nc, NULL, NULL));
    int *idx = malloc((size_t)nc * sizeof(int)), found = 0;
    T_OK(MPI_T_category_get_cvars(transport, nc, idx));
    for (int i = 0; i < nc; ++i) found |= idx[i] == cvar_index("FTMPI_EAGER_LIMIT");
    T_CHECK(found, "FTMPI_EAGER_LIMIT is not in ftmpi_transport");
    T_OK(MPI_T_category_get_cvars(transport, 1, &first));
    T_CHECK(first == idx[0], "a one-element list");
    free(idx);
    int ft = -1, fpv = -1;
    T_OK(MPI_T_category_get_index("ftmpi_ft", &ft));
    T_OK(MPI_T_category_get_pvars(ft, 1, &fpv));
    T_CHECK(fpv == pvar_index("ftmpi_ft_failures_seen", MPI_T_PVAR_CLASS_COUNTER), "ftmpi_ft's pvar %d", fpv);

    T_RC(MPI_T_category_get_index("no_such_category", &root), MPI_T_ERR_INVALID_NAME);
    T_RC(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_category_get_cvars(-1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_category_get_pvars(ft, -1, &fpv), MPI_T_ERR_INVALID);
    T_OK(MPI_T_category_changed(&stamp2));
    T_CHECK(stamp == stamp2, "categories changed: %d then %d", stamp, stamp2);
    free(cvar_in);
    free(pvar_in);
    free(reached);
    free(stack);
}

/* ---- the test --------------------------------------------------------------- */

int main(int argc, char **argv) {
    int provided = -1, n = 0;
    /* Nothing works before MPI_T_init_thread. */
    T_RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    MPI_T_pvar_session s0;
    T_RC(MPI_T_pvar_session_create(&s0), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL), MPI_T_ERR_INVALID);

    /* A malformed knob: MPI_T cannot start, as MPI_Init could not. */
    char *rx = getenv("FTMPI_RX_BUFFERS");
    char *rx_saved = rx ? strdup(rx) : NULL;
    T_CHECK(setenv("FTMPI_RX_BUFFERS", "plenty", 1) == 0, "setenv: %s", strerror(errno));
    T_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_T_ERR_CANNOT_INIT);
    T_RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    if (rx_saved) setenv("FTMPI_RX_BUFFERS", rx_saved, 1);
    else unsetenv("FTMPI_RX_BUFFERS");
    free(rx_saved);

    /* MPI_Init and MPI_T read the knobs with the same parser (hex too). */
    T_CHECK(setenv("FTMPI_EAGER_LIMIT", "0x1000", 1) == 0, "setenv: %s", strerror(errno));
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    int nested = -1;
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &nested));
    T_CHECK(nested == MPI_THREAD_SERIALIZED, "ftmpi provides MPI_THREAD_SERIALIZED at most, said %d", nested);
    T_OK(MPI_T_finalize()); /* the first init still holds */

    check_cvars("before MPI_Init");
    check_cvar_errors();
    check_pvar_info();
    check_pvar_errors();
    check_categories();
    T_CHECK(mpi_state() == 0, "MPI state %d before MPI_Init", mpi_state());

    tl_init(&argc, &argv, &rank, &size, 2);
    T_CHECK(mpi_state() == 1, "MPI state %d after MPI_Init", mpi_state());
    check_cvars("after MPI_Init");
    struct counters all;
    check_p2p_counts(&all);
    check_bsend();

    /* A failure: the last rank dies; the survivors count it. */
    const int victim = size - 1;
    MPI_T_pvar_session fs;
    T_OK(MPI_T_pvar_session_create(&fs));
    MPI_T_pvar_handle failures = pvar_alloc(fs, "ftmpi_ft_failures_seen", MPI_T_PVAR_CLASS_COUNTER);
    T_CHECK(pvar_read(fs, failures) == 0, "failures seen before the kill");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* The victim dies once every survivor is done with it (a barrier could
       fail at a survivor whose last message the victim never took). */
    int token = 0;
    if (rank == victim) {
        for (int i = 0; i < size - 1; ++i)
            MPI_OK(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        tl_die(SIGKILL);
    }
    const int rc = tl_class(MPI_Send(&token, 1, MPI_INT, victim, 9, MPI_COMM_WORLD));
    T_CHECK(rc == MPI_SUCCESS || rc == MPI_ERR_PROC_FAILED, "token to the victim: class %d", rc);
    T_CHECK(tl_wait_failed(MPI_COMM_WORLD, 1, 30.0) == 1, "the victim's failure was not seen");
    T_CHECK(pvar_read(fs, failures) == 1, "failures seen: %llu", pvar_read(fs, failures));
    const unsigned long long sent_before = pvar_read(all.s, all.h[SENT]);
    MPI_OK(MPI_Finalize());

    /* After MPI_Finalize: the same variables, the final values. */
    T_CHECK(mpi_state() == 2, "MPI state %d after MPI_Finalize", mpi_state());
    check_cvars("after MPI_Finalize");
    T_CHECK(pvar_read(fs, failures) == 1, "failures seen after MPI_Finalize: %llu", pvar_read(fs, failures));
    T_CHECK(pvar_read(all.s, all.h[SENT]) == sent_before, "the counters moved after MPI_Finalize");
    check_categories();
    T_OK(MPI_T_pvar_session_free(&all.s));
    T_OK(MPI_T_finalize());
    T_RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_pvar_read(fs, failures, &n), MPI_T_ERR_NOT_INITIALIZED);
    /* Again, after everything. */
    T_OK(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided));
    T_CHECK(provided == MPI_THREAD_FUNNELED, "provided %d", provided);
    T_RC(MPI_T_pvar_read(fs, failures, &n), MPI_T_ERR_INVALID_SESSION); /* MPI_T_finalize freed it */
    T_OK(MPI_T_cvar_get_num(&n));
    T_CHECK(n == NKNOBS, "%d control variables", n);
    T_OK(MPI_T_finalize());
    if (rank == 0) printf("mpit: %d ranks, all MPI_T checks passed\n", size);
    return 0;
}
