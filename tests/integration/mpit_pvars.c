/* mpit: the performance variables (see mpit.c). */
#include "mpit.h"

/* ---- performance variables ----------------------------------------------- */

static const char *counter_names[NCOUNTERS] = {"ftmpi_p2p_messages_sent", "ftmpi_p2p_bytes_sent",
                                               "ftmpi_p2p_messages_received", "ftmpi_p2p_bytes_received"};

int pvar_index(const char *name, int var_class) {
    int i = -1;
    T_OK(MPI_T_pvar_get_index(name, var_class, &i));
    return i;
}

MPI_T_pvar_handle pvar_alloc(MPI_T_pvar_session s, const char *name, int var_class) {
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int count = 0;
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index(name, var_class), NULL, &h, &count));
    T_CHECK(count == 1, "%s: count %d", name, count);
    return h;
}

unsigned long long pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
    unsigned long long v = 0;
    T_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

int mpi_state(void) {
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle h = pvar_alloc(s, "ftmpi_mpi_state", MPI_T_PVAR_CLASS_STATE);
    int v = -1;
    T_OK(MPI_T_pvar_read(s, h, &v));
    T_OK(MPI_T_pvar_session_free(&s));
    T_CHECK(s == MPI_T_PVAR_SESSION_NULL, "session_free must null the session");
    return v;
}

/* Every pvar's description, and the state enumeration. */
void check_pvar_info(void) {
    int n = 0;
    T_OK(MPI_T_pvar_get_num(&n));
    T_CHECK(n >= NCOUNTERS + 3, "%d performance variables", n);
    for (int i = 0; i < n; ++i) {
        char name[128];
        int len = sizeof name, var_class = -1, bind = -1, ro = -1, cont = -1, atomic = -1, desc_len = 0;
        MPI_Datatype type;
        MPI_T_enum en;
        T_OK(MPI_T_pvar_get_info(i, name, &len, NULL, &var_class, &type, &en, NULL, &desc_len, &bind, &ro, &cont,
                                 &atomic));
        T_CHECK(strncmp(name, "ftmpi_", 6) == 0 && desc_len > 10, "pvar %d: %s", i, name);
        T_CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", name, bind);
        T_CHECK(pvar_index(name, var_class) == i, "%s: get_index", name);
        T_CHECK(type == (var_class == MPI_T_PVAR_CLASS_STATE ? MPI_INT : MPI_UNSIGNED_LONG_LONG), "%s: datatype", name);
        T_CHECK((en != MPI_T_ENUM_NULL) == (var_class == MPI_T_PVAR_CLASS_STATE), "%s: enumeration", name);
        for (int c = 0; c < NCOUNTERS; ++c)
            if (strcmp(name, counter_names[c]) == 0)
                T_CHECK(var_class == MPI_T_PVAR_CLASS_COUNTER && !ro && !cont && atomic, "%s: class %d ro %d cont %d",
                        name, var_class, ro, cont);
        if (strcmp(name, "ftmpi_ft_failures_seen") == 0)
            T_CHECK(var_class == MPI_T_PVAR_CLASS_COUNTER && ro && cont, "%s: class %d ro %d cont %d", name, var_class,
                    ro, cont);
        if (strcmp(name, "ftmpi_p2p_bsend_pending") == 0)
            T_CHECK(var_class == MPI_T_PVAR_CLASS_LEVEL && ro && cont, "%s: class %d", name, var_class);
        if (var_class == MPI_T_PVAR_CLASS_STATE) {
            int items = 0, value = -1;
            char item[64];
            int ilen = sizeof item;
            T_OK(MPI_T_enum_get_info(en, &items, NULL, NULL));
            T_CHECK(items == 3, "%s: %d states", name, items);
            T_OK(MPI_T_enum_get_item(en, 2, &value, item, &ilen));
            T_CHECK(value == 2 && strcmp(item, "finalized") == 0, "state 2 is %d %s", value, item);
        }
    }
    int i;
    T_RC(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_pvar_get_index("ftmpi_p2p_messages_sent", MPI_T_PVAR_CLASS_LEVEL, &i), MPI_T_ERR_INVALID_NAME);
    T_RC(MPI_T_pvar_get_index("no_such_pvar", MPI_T_PVAR_CLASS_COUNTER, &i), MPI_T_ERR_INVALID_NAME);
    T_RC(MPI_T_pvar_get_index("ftmpi_p2p_messages_sent", 12345, &i), MPI_T_ERR_INVALID);
}

/* Sessions, handles and what may be done with them, on a quiet process. */
void check_pvar_errors(void) {
    MPI_T_pvar_session a, b, dead;
    int n = 0, count = 0;
    unsigned long long v = 7;
    T_OK(MPI_T_pvar_get_num(&n));
    T_OK(MPI_T_pvar_session_create(&a));
    T_OK(MPI_T_pvar_session_create(&b));
    T_OK(MPI_T_pvar_session_create(&dead));
    MPI_T_pvar_session dead_copy = dead;
    T_OK(MPI_T_pvar_session_free(&dead));
    MPI_T_pvar_handle h, fail = pvar_alloc(a, "ftmpi_ft_failures_seen", MPI_T_PVAR_CLASS_COUNTER);
    T_RC(MPI_T_pvar_handle_alloc(a, n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_pvar_handle_alloc(dead_copy, 0, NULL, &h, &count), MPI_T_ERR_INVALID_SESSION);
    T_RC(MPI_T_pvar_read(dead_copy, fail, &v), MPI_T_ERR_INVALID_SESSION);
    T_RC(MPI_T_pvar_session_free(&dead_copy), MPI_T_ERR_INVALID_SESSION);
    T_RC(MPI_T_pvar_read(b, fail, &v), MPI_T_ERR_INVALID_HANDLE); /* a's handle */
    T_RC(MPI_T_pvar_read(a, MPI_T_PVAR_HANDLE_NULL, &v), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_read(a, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_write(a, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_readreset(a, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    /* A continuous, read-only counter. */
    T_RC(MPI_T_pvar_start(a, fail), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_RC(MPI_T_pvar_stop(a, fail), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_RC(MPI_T_pvar_write(a, fail, &v), MPI_T_ERR_PVAR_NO_WRITE);
    T_RC(MPI_T_pvar_reset(a, fail), MPI_T_ERR_PVAR_NO_WRITE);
    T_RC(MPI_T_pvar_readreset(a, fail, &v), MPI_T_ERR_PVAR_NO_WRITE);
    T_CHECK(pvar_read(a, fail) == 0, "failures seen before any failure");
    /* ALL_HANDLES skips what cannot be started, stopped or reset. */
    MPI_T_pvar_handle sent = pvar_alloc(a, counter_names[SENT], MPI_T_PVAR_CLASS_COUNTER);
    T_OK(MPI_T_pvar_start(a, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_start(a, sent)); /* already started: no change */
    T_OK(MPI_T_pvar_reset(a, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_stop(a, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_start(b, MPI_T_PVAR_ALL_HANDLES)); /* an empty session */
    /* Freed handles. */
    MPI_T_pvar_handle copy = sent;
    T_OK(MPI_T_pvar_handle_free(a, &sent));
    T_CHECK(sent == MPI_T_PVAR_HANDLE_NULL, "handle_free must null the handle");
    T_RC(MPI_T_pvar_read(a, copy, &v), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_handle_free(a, &copy), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_handle_free(b, &fail), MPI_T_ERR_INVALID_HANDLE);
    T_OK(MPI_T_pvar_session_free(&a)); /* frees `fail` too */
    T_OK(MPI_T_pvar_session_free(&b));
}

static void counters_open(struct counters *c) {
    T_OK(MPI_T_pvar_session_create(&c->s));
    for (int i = 0; i < NCOUNTERS; ++i) {
        c->h[i] = pvar_alloc(c->s, counter_names[i], MPI_T_PVAR_CLASS_COUNTER);
        T_CHECK(pvar_read(c->s, c->h[i]) == 0, "%s: a new handle reads 0", counter_names[i]);
    }
}

static void counters_expect(const struct counters *c, const char *what, unsigned long long sent,
                            unsigned long long sent_bytes, unsigned long long received,
                            unsigned long long received_bytes) {
    const unsigned long long want[NCOUNTERS] = {sent, sent_bytes, received, received_bytes};
    for (int i = 0; i < NCOUNTERS; ++i) {
        const unsigned long long got = pvar_read(c->s, c->h[i]);
        T_CHECK(got == want[i], "%s: %s reads %llu, expected %llu", what, counter_names[i], got, want[i]);
    }
}

/* Phase A's traffic: rank 0 -> 1, 40 bytes and 100 (synchronous). */
static void phase_a_traffic(unsigned char *buf, unsigned char *out) {
    const int me = rank;
    if (me == 0) {
        MPI_OK(MPI_Send(out, 10, MPI_INT, 1, 1, MPI_COMM_WORLD));
        MPI_OK(MPI_Ssend(out, 100, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
    } else if (me == 1) {
        MPI_Status st;
        int got = 0;
        MPI_OK(MPI_Recv(buf, 100, MPI_INT, 0, 1, MPI_COMM_WORLD, &st)); /* 40 of room for 400 */
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &got));
        CHECK(got == 40, "received %d bytes", got);
        MPI_OK(MPI_Recv(buf, 100, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* Phase B's traffic: a collective and MPI_PROC_NULL (not counted), then rank
   0 -> 1 `big` bytes (nonblocking) and the vector, 1 -> 0 8 bytes. */
static void phase_b_traffic(unsigned char *buf, unsigned char *out, int *ints, MPI_Datatype vec, int big) {
    const int me = rank;
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size, "allreduce %d", sum);
    MPI_OK(MPI_Send(out, 3, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(buf, 3, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (me == 0) {
        MPI_Request r;
        MPI_OK(MPI_Isend(out, big, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(ints, 1, vec, 1, 4, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(buf, 8, MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (me == 1) {
        MPI_Request r;
        MPI_OK(MPI_Irecv(buf, big, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(tl_verify(buf, (size_t)big, 5) == (size_t)-1, "rendezvous data");
        MPI_OK(MPI_Recv(ints, 1, vec, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(out, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Reset in one session leaves the other alone; readreset; write. */
static void check_reset(struct counters *all, struct counters *later, unsigned char *buf, unsigned char *out,
                        unsigned long long a_bytes, unsigned long long b_bytes) {
    const int me = rank;
    T_OK(MPI_T_pvar_reset(later->s, MPI_T_PVAR_ALL_HANDLES));
    counters_expect(later, "after reset", 0, 0, 0, 0);
    const unsigned long long all_sent = pvar_read(all->s, all->h[SENT]);
    unsigned long long v = 0;
    T_OK(MPI_T_pvar_readreset(all->s, all->h[SENT], &v));
    T_CHECK(v == all_sent && pvar_read(all->s, all->h[SENT]) == 0, "readreset returned %llu, then %llu", v,
            pvar_read(all->s, all->h[SENT]));
    v = 1000;
    T_OK(MPI_T_pvar_write(later->s, later->h[RECEIVED], &v));
    T_OK(MPI_T_pvar_start(all->s, all->h[SENT])); /* the others stay stopped */
    if (me == 0) MPI_OK(MPI_Send(out, 1, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
    if (me == 1) MPI_OK(MPI_Recv(buf, 1, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (me == 0) {
        counters_expect(later, "rank 0, after reset", 1, 1, 1000, 0);
        T_CHECK(pvar_read(all->s, all->h[SENT]) == 1, "restarted after readreset");
        T_CHECK(pvar_read(all->s, all->h[SENT_BYTES]) == a_bytes + b_bytes, "stopped handle changed");
    } else if (me == 1) {
        counters_expect(later, "rank 1, after reset", 0, 0, 1001, 1);
        T_CHECK(pvar_read(all->s, all->h[SENT]) == 0, "rank 1 sent nothing since the readreset");
    }
}

/* Exact counts of traffic between ranks 0 and 1, in two sessions. */
void check_p2p_counts(struct counters *all) {
    const int eager = (int)cvar_int(cvar_index("FTMPI_EAGER_LIMIT"));
    const int big = eager + 1; /* rendezvous */
    unsigned char *buf = malloc((size_t)big + 64), *out = malloc((size_t)big + 64);
    int ints[12] = {0};
    MPI_Datatype vec; /* 3 blocks of 2 ints: 24 bytes */
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    tl_fill(out, (size_t)big, 5);
    const unsigned long long vec_bytes = 6 * sizeof(int);
    /* rank 0 -> 1: 40 + 100 (synchronous) | big (nonblocking) + 24 (vector) | 8 */
    const unsigned long long a_bytes = 40 + 100, b_bytes = (unsigned long long)big + vec_bytes, c_bytes = 8;
    const int me = rank;

    counters_open(all);
    T_OK(MPI_T_pvar_start(all->s, MPI_T_PVAR_ALL_HANDLES));
    struct counters later;
    counters_open(&later);

    /* Phase A: counted by `all` only. */
    phase_a_traffic(buf, out);
    T_OK(MPI_T_pvar_start(later.s, MPI_T_PVAR_ALL_HANDLES));

    /* Phase B: counted by both; collectives and MPI_PROC_NULL are not. */
    phase_b_traffic(buf, out, ints, vec, big);
    if (me == 0) {
        counters_expect(all, "rank 0, both phases", 4, a_bytes + b_bytes, 1, c_bytes);
        counters_expect(&later, "rank 0, phase B", 2, b_bytes, 1, c_bytes);
    } else if (me == 1) {
        counters_expect(all, "rank 1, both phases", 1, c_bytes, 4, a_bytes + b_bytes);
        counters_expect(&later, "rank 1, phase B", 1, c_bytes, 2, b_bytes);
    } else {
        counters_expect(all, "idle rank", 0, 0, 0, 0);
    }

    /* Phase C: `all` stopped, `later` still counting. */
    T_OK(MPI_T_pvar_stop(all->s, MPI_T_PVAR_ALL_HANDLES));
    if (me == 0) MPI_OK(MPI_Send(out, 16, MPI_BYTE, 1, 6, MPI_COMM_WORLD));
    if (me == 1) MPI_OK(MPI_Recv(buf, 16, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (me == 0) {
        counters_expect(all, "rank 0, stopped", 4, a_bytes + b_bytes, 1, c_bytes);
        counters_expect(&later, "rank 0, phase B + C", 3, b_bytes + 16, 1, c_bytes);
    } else if (me == 1) {
        counters_expect(all, "rank 1, stopped", 1, c_bytes, 4, a_bytes + b_bytes);
        counters_expect(&later, "rank 1, phase B + C", 1, c_bytes, 3, b_bytes + 16);
    }

    check_reset(all, &later, buf, out, a_bytes, b_bytes);
    T_OK(MPI_T_pvar_session_free(&later.s));

    MPI_OK(MPI_Type_free(&vec));
    free(buf);
    free(out);
}

/* A buffered rendezvous send is in flight until its receive is posted. */
void check_bsend(void) {
    const int big = (int)cvar_int(cvar_index("FTMPI_EAGER_LIMIT")) + 1;
    MPI_T_pvar_session s;
    T_OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle pending = pvar_alloc(s, "ftmpi_p2p_bsend_pending", MPI_T_PVAR_CLASS_LEVEL);
    MPI_T_pvar_handle sent = pvar_alloc(s, counter_names[SENT_BYTES], MPI_T_PVAR_CLASS_COUNTER);
    T_OK(MPI_T_pvar_start(s, sent));
    T_RC(MPI_T_pvar_reset(s, pending), MPI_T_ERR_PVAR_NO_WRITE);
    T_CHECK(pvar_read(s, pending) == 0, "nothing buffered yet");
    unsigned char *data = malloc((size_t)big);
    tl_fill(data, (size_t)big, 9);
    if (rank == 0) {
        const int room = big + MPI_BSEND_OVERHEAD;
        void *space = malloc((size_t)room), *back;
        int back_size;
        MPI_OK(MPI_Buffer_attach(space, room));
        MPI_OK(MPI_Bsend(data, big, MPI_BYTE, 1, 8, MPI_COMM_WORLD));
        T_CHECK(pvar_read(s, pending) == 1, "buffered send pending: %llu", pvar_read(s, pending));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* rank 1 receives only after this */
        MPI_OK(MPI_Buffer_detach(&back, &back_size));
        T_CHECK(pvar_read(s, pending) == 0, "buffered send still pending after detach");
        T_CHECK(pvar_read(s, sent) == (unsigned long long)big, "bsend bytes %llu", pvar_read(s, sent));
        free(space);
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            MPI_OK(MPI_Recv(data, big, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(tl_verify(data, (size_t)big, 9) == (size_t)-1, "bsend data");
        }
        T_CHECK(pvar_read(s, pending) == 0, "no buffered sends here");
    }
    free(data);
    T_OK(MPI_T_pvar_session_free(&s));
}

/* ---- categories ------------------------------------------------------------ */
