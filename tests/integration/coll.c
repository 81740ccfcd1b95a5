/*
 * Every intra-communicator collective checked against a sequential reference
 * computed locally: MPI_INT, MPI_DOUBLE and MPI_LONG_LONG at counts 0, 1, 7,
 * 1000 and 100000 (so both the small and the large allreduce algorithms run),
 * every root (all roots up to 1000 elements; first and last root above),
 * MPI_IN_PLACE where the standard allows it, blocking and nonblocking.
 *
 * Each nonblocking collective overlaps a ring of user point-to-point traffic
 * on tc received with MPI_ANY_SOURCE / MPI_ANY_TAG: that receive
 * must get exactly the neighbour's message, never collective traffic.
 * Several nonblocking collectives are also kept in flight at once and waited
 * in another order. Also: a non-commutative user op (affine maps composed in
 * rank order) through reduce, allreduce, scan, exscan, reduce_scatter_block;
 * MINLOC/MAXLOC with ties on MPI_DOUBLE_INT; Reduce_local; argument errors
 * under MPI_ERRORS_RETURN; derived datatypes through bcast and allgather.
 * Any nprocs >= 1.
 */
#include "coll.h"

int rank, size;
MPI_Comm tc;

size_t esize(MPI_Datatype t) {
    return t == MPI_INT ? sizeof(int) : t == MPI_DOUBLE ? sizeof(double) : sizeof(long long);
}
static const char *tname(MPI_Datatype t) { return t == MPI_INT ? "int" : t == MPI_DOUBLE ? "double" : "long long"; }

static void put(MPI_Datatype t, void *b, size_t i, long long v) {
    if (t == MPI_INT) ((int *)b)[i] = (int)v;
    else if (t == MPI_DOUBLE) ((double *)b)[i] = (double)v;
    else ((long long *)b)[i] = v;
}
static long long get(MPI_Datatype t, const void *b, size_t i) {
    if (t == MPI_INT) return ((const int *)b)[i];
    if (t == MPI_DOUBLE) return (long long)((const double *)b)[i];
    return ((const long long *)b)[i];
}

/* The value rank r contributes at element i (small, may be negative). */
static long long val(int r, size_t i, int salt) { return (long long)((r * 7 + (long long)i * 3 + salt) % 11) - 3; }
static long long pval(int r, size_t i) { return 1 + (long long)((r + i) % 2); } /* for PROD */
/* Data unique-ish per (rank, index) for the data-movement collectives. */
static long long dval(int r, size_t i, int salt) { return (long long)(r * 131 + (long long)i * 7 + salt) % 100003; }

static long long apply(MPI_Op op, long long a, long long b) {
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_MAX) return a > b ? a : b;
    return a < b ? a : b; /* MPI_MIN */
}
static long long contrib(MPI_Op op, int r, size_t i, int salt) { return op == MPI_PROD ? pval(r, i) : val(r, i, salt); }
/* Reduction of ranks lo..hi (inclusive) at element i. */
static long long ref(MPI_Op op, int lo, int hi, size_t i, int salt) {
    long long acc = contrib(op, lo, i, salt);
    for (int r = lo + 1; r <= hi; ++r) acc = apply(op, acc, contrib(op, r, i, salt));
    return acc;
}
static void fill(MPI_Op op, MPI_Datatype t, void *b, size_t n, int salt) {
    for (size_t i = 0; i < n; ++i) put(t, b, i, contrib(op, rank, i, salt));
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    CHECK(p != NULL, "malloc(%zu)", n);
    return p;
}

/* Completes a nonblocking collective while user traffic on the same
 * communicator runs around a ring, received with wildcards. */
static int ring_seq = 0;
void finish(MPI_Request *coll, int nb) {
    if (!nb) return;
    int token_out = rank * 1000 + ring_seq, token_in = -1;
    const int tag = ring_seq++ % 100;
    MPI_Request r[3];
    MPI_Status st[3];
    MPI_OK(MPI_Irecv(&token_in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &r[0]));
    r[1] = *coll;
    MPI_OK(MPI_Isend(&token_out, 1, MPI_INT, (rank + 1) % size, tag, tc, &r[2]));
    MPI_OK(MPI_Waitall(3, r, st));
    const int left = (rank - 1 + size) % size;
    CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == tag && token_in == left * 1000 + ring_seq - 1,
          "user receive matched source %d tag %d token %d", st[0].MPI_SOURCE, st[0].MPI_TAG, token_in);
    CHECK(r[1] == MPI_REQUEST_NULL, "collective request not freed by Waitall");
    *coll = MPI_REQUEST_NULL;
}

#define EXPECT_EQ(got, want, what, ...)                                                               \
    CHECK((got) == (want), "%s %s count %zu: element mismatch got %lld want %lld", what, tname(t), n, \
          (long long)(got), (long long)(want))

static void t_bcast(MPI_Datatype t, size_t n, int root, int nb) {
    void *b = xmalloc(n * esize(t));
    for (size_t i = 0; i < n; ++i) put(t, b, i, rank == root ? dval(root, i, 1) : -99);
    MPI_Request rq = MPI_REQUEST_NULL;
    if (nb) MPI_OK(MPI_Ibcast(b, (int)n, t, root, tc, &rq));
    else MPI_OK(MPI_Bcast(b, (int)n, t, root, tc));
    finish(&rq, nb);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(get(t, b, i), dval(root, i, 1), "bcast");
    free(b);
}

static void t_reduce(MPI_Datatype t, size_t n, MPI_Op op, int root, int inplace, int nb) {
    void *s = xmalloc(n * esize(t)), *r = xmalloc(n * esize(t));
    fill(op, t, s, n, 2);
    const void *sb = s;
    if (inplace && rank == root) {
        fill(op, t, r, n, 2);
        sb = MPI_IN_PLACE;
    }
    MPI_Request rq = MPI_REQUEST_NULL;
    if (nb) MPI_OK(MPI_Ireduce(sb, r, (int)n, t, op, root, tc, &rq));
    else MPI_OK(MPI_Reduce(sb, r, (int)n, t, op, root, tc));
    finish(&rq, nb);
    if (rank == root)
        for (size_t i = 0; i < n; ++i) EXPECT_EQ(get(t, r, i), ref(op, 0, size - 1, i, 2), "reduce");
    free(s);
    free(r);
}

static void t_allreduce(MPI_Datatype t, size_t n, MPI_Op op, int inplace, int nb) {
    void *s = xmalloc(n * esize(t)), *r = xmalloc(n * esize(t));
    fill(op, t, inplace ? r : s, n, 3);
    MPI_Request rq = MPI_REQUEST_NULL;
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (nb) MPI_OK(MPI_Iallreduce(sb, r, (int)n, t, op, tc, &rq));
    else MPI_OK(MPI_Allreduce(sb, r, (int)n, t, op, tc));
    finish(&rq, nb);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(get(t, r, i), ref(op, 0, size - 1, i, 3), "allreduce");
    free(s);
    free(r);
}

static void t_scan(MPI_Datatype t, size_t n, MPI_Op op, int excl, int inplace, int nb) {
    void *s = xmalloc(n * esize(t)), *r = xmalloc(n * esize(t));
    fill(op, t, inplace ? r : s, n, 4);
    const void *sb = inplace ? MPI_IN_PLACE : s;
    MPI_Request rq = MPI_REQUEST_NULL;
    if (excl) {
        if (nb) MPI_OK(MPI_Iexscan(sb, r, (int)n, t, op, tc, &rq));
        else MPI_OK(MPI_Exscan(sb, r, (int)n, t, op, tc));
    } else {
        if (nb) MPI_OK(MPI_Iscan(sb, r, (int)n, t, op, tc, &rq));
        else MPI_OK(MPI_Scan(sb, r, (int)n, t, op, tc));
    }
    finish(&rq, nb);
    if (!excl || rank > 0)
        for (size_t i = 0; i < n; ++i)
            EXPECT_EQ(get(t, r, i), ref(op, 0, excl ? rank - 1 : rank, i, 4), excl ? "exscan" : "scan");
    free(s);
    free(r);
}

/* Reduce_scatter_block (block = n / size, at least the n given when small)
 * and Reduce_scatter with uneven counts. */
static void t_reduce_scatter(MPI_Datatype t, size_t n, MPI_Op op, int block, int inplace, int nb) {
    int *counts = xmalloc((size_t)size * sizeof(int));
    size_t total = 0, off = 0;
    for (int i = 0; i < size; ++i) {
        counts[i] = block ? (int)n : (int)(n / (size_t)size) + (i % 3);
        if (i < rank) off += (size_t)counts[i];
        total += (size_t)counts[i];
    }
    void *s = xmalloc(total * esize(t)), *r = xmalloc(total * esize(t));
    fill(op, t, inplace ? r : s, total, 5);
    const void *sb = inplace ? MPI_IN_PLACE : s;
    MPI_Request rq = MPI_REQUEST_NULL;
    if (block) {
        if (nb) MPI_OK(MPI_Ireduce_scatter_block(sb, r, (int)n, t, op, tc, &rq));
        else MPI_OK(MPI_Reduce_scatter_block(sb, r, (int)n, t, op, tc));
    } else {
        if (nb) MPI_OK(MPI_Ireduce_scatter(sb, r, counts, t, op, tc, &rq));
        else MPI_OK(MPI_Reduce_scatter(sb, r, counts, t, op, tc));
    }
    finish(&rq, nb);
    for (size_t i = 0; i < (size_t)counts[rank]; ++i)
        EXPECT_EQ(get(t, r, i), ref(op, 0, size - 1, off + i, 5), block ? "reduce_scatter_block" : "reduce_scatter");
    free(counts);
    free(s);
    free(r);
}

/* Gather(v), Scatter(v) at `root`; v: rank i contributes n + i % 2 elements,
 * placed in reverse rank order with a gap of 1. */
static void t_gather_scatter(MPI_Datatype t, size_t n, int root, int v, int inplace, int nb) {
    const size_t es = esize(t);
    int *counts = xmalloc((size_t)size * sizeof(int)), *displs = xmalloc((size_t)size * sizeof(int));
    size_t span = 0;
    for (int i = size - 1; i >= 0; --i) {
        counts[i] = v ? (int)n + i % 2 : (int)n;
        displs[i] = v ? (int)span : i * (int)n;
        span += (size_t)counts[i] + (v ? 1 : 0);
    }
    if (!v) span = n * (size_t)size;
    const int mine = counts[rank];
    void *s = xmalloc((size_t)mine * es), *r = xmalloc(span * es);
    /* gather */
    for (int i = 0; i < mine; ++i) put(t, s, (size_t)i, dval(rank, (size_t)i, 6));
    for (size_t i = 0; i < span; ++i) put(t, r, i, -7);
    const void *sb = s;
    if (inplace && rank == root) {
        sb = MPI_IN_PLACE;
        for (int i = 0; i < mine; ++i) put(t, r, (size_t)displs[rank] + (size_t)i, dval(rank, (size_t)i, 6));
    }
    MPI_Request rq = MPI_REQUEST_NULL;
    if (v) {
        if (nb) MPI_OK(MPI_Igatherv(sb, mine, t, r, counts, displs, t, root, tc, &rq));
        else MPI_OK(MPI_Gatherv(sb, mine, t, r, counts, displs, t, root, tc));
    } else {
        if (nb) MPI_OK(MPI_Igather(sb, mine, t, r, mine, t, root, tc, &rq));
        else MPI_OK(MPI_Gather(sb, mine, t, r, mine, t, root, tc));
    }
    finish(&rq, nb);
    if (rank == root)
        for (int p = 0; p < size; ++p)
            for (int i = 0; i < counts[p]; ++i)
                EXPECT_EQ(get(t, r, (size_t)displs[p] + (size_t)i), dval(p, (size_t)i, 6), v ? "gatherv" : "gather");
    /* scatter: the root sends what it gathered back (salt 8) */
    if (rank == root)
        for (int p = 0; p < size; ++p)
            for (int i = 0; i < counts[p]; ++i) put(t, r, (size_t)displs[p] + (size_t)i, dval(p, (size_t)i, 8));
    for (int i = 0; i < mine; ++i) put(t, s, (size_t)i, -5);
    void *rb = (inplace && rank == root) ? MPI_IN_PLACE : s;
    if (v) {
        if (nb) MPI_OK(MPI_Iscatterv(r, counts, displs, t, rb, mine, t, root, tc, &rq));
        else MPI_OK(MPI_Scatterv(r, counts, displs, t, rb, mine, t, root, tc));
    } else {
        if (nb) MPI_OK(MPI_Iscatter(r, mine, t, rb, mine, t, root, tc, &rq));
        else MPI_OK(MPI_Scatter(r, mine, t, rb, mine, t, root, tc));
    }
    finish(&rq, nb);
    if (rb != MPI_IN_PLACE)
        for (int i = 0; i < mine; ++i)
            EXPECT_EQ(get(t, s, (size_t)i), dval(rank, (size_t)i, 8), v ? "scatterv" : "scatter");
    free(counts);
    free(displs);
    free(s);
    free(r);
}

static void t_allgather(MPI_Datatype t, size_t n, int v, int inplace, int nb) {
    const size_t es = esize(t);
    int *counts = xmalloc((size_t)size * sizeof(int)), *displs = xmalloc((size_t)size * sizeof(int));
    size_t span = 0;
    for (int i = 0; i < size; ++i) {
        counts[i] = v ? (int)n + (i % 3 == 1) : (int)n;
        displs[i] = (int)span;
        span += (size_t)counts[i] + (v ? 2 : 0);
    }
    const int mine = counts[rank];
    void *s = xmalloc((size_t)mine * es), *r = xmalloc(span * es);
    for (int i = 0; i < mine; ++i) put(t, s, (size_t)i, dval(rank, (size_t)i, 9));
    for (size_t i = 0; i < span; ++i) put(t, r, i, -7);
    const void *sb = s;
    if (inplace) {
        sb = MPI_IN_PLACE;
        for (int i = 0; i < mine; ++i) put(t, r, (size_t)displs[rank] + (size_t)i, dval(rank, (size_t)i, 9));
    }
    MPI_Request rq = MPI_REQUEST_NULL;
    if (v) {
        if (nb) MPI_OK(MPI_Iallgatherv(sb, mine, t, r, counts, displs, t, tc, &rq));
        else MPI_OK(MPI_Allgatherv(sb, mine, t, r, counts, displs, t, tc));
    } else {
        if (nb) MPI_OK(MPI_Iallgather(sb, mine, t, r, mine, t, tc, &rq));
        else MPI_OK(MPI_Allgather(sb, mine, t, r, mine, t, tc));
    }
    finish(&rq, nb);
    for (int p = 0; p < size; ++p)
        for (int i = 0; i < counts[p]; ++i)
            EXPECT_EQ(get(t, r, (size_t)displs[p] + (size_t)i), dval(p, (size_t)i, 9), v ? "allgatherv" : "allgather");
    free(counts);
    free(displs);
    free(s);
    free(r);
}

/* kind 0: alltoall, 1: alltoallv (count to peer p: n + (me+p)%2), 2: alltoallw. */
static void t_alltoall(MPI_Datatype t, size_t n, int kind, int inplace, int nb) {
    const size_t es = esize(t);
    int *sc = xmalloc((size_t)size * sizeof(int)), *sd = xmalloc((size_t)size * sizeof(int));
    int *rc = xmalloc((size_t)size * sizeof(int)), *rd = xmalloc((size_t)size * sizeof(int));
    int *sdb = xmalloc((size_t)size * sizeof(int)), *rdb = xmalloc((size_t)size * sizeof(int));
    MPI_Datatype *types = xmalloc((size_t)size * sizeof(MPI_Datatype));
    size_t sspan = 0, rspan = 0;
    for (int p = 0; p < size; ++p) {
        sc[p] = kind ? (int)n + (rank + p) % 2 : (int)n;
        rc[p] = sc[p]; /* symmetric: (me+p)%2 */
        sd[p] = (int)sspan;
        rd[p] = (int)rspan;
        sdb[p] = sd[p] * (int)es;
        rdb[p] = rd[p] * (int)es;
        types[p] = t;
        sspan += (size_t)sc[p] + (kind ? 1 : 0);
        rspan += (size_t)rc[p] + (kind ? 1 : 0);
    }
    void *s = xmalloc(sspan * es), *r = xmalloc(rspan * es);
    /* element i of the block from a to b: dval(a * 64 + b, i) */
    void *src = inplace ? r : s;
    int *srcd = inplace ? rd : sd;
    for (int p = 0; p < size; ++p)
        for (int i = 0; i < sc[p]; ++i) put(t, src, (size_t)srcd[p] + (size_t)i, dval(rank * 64 + p, (size_t)i, 10));
    if (!inplace)
        for (size_t i = 0; i < rspan; ++i) put(t, r, i, -7);
    const void *sb = inplace ? MPI_IN_PLACE : s;
    MPI_Request rq = MPI_REQUEST_NULL;
    if (kind == 0) {
        if (nb) MPI_OK(MPI_Ialltoall(sb, (int)n, t, r, (int)n, t, tc, &rq));
        else MPI_OK(MPI_Alltoall(sb, (int)n, t, r, (int)n, t, tc));
    } else if (kind == 1) {
        if (nb) MPI_OK(MPI_Ialltoallv(sb, sc, sd, t, r, rc, rd, t, tc, &rq));
        else MPI_OK(MPI_Alltoallv(sb, sc, sd, t, r, rc, rd, t, tc));
    } else {
        if (nb) MPI_OK(MPI_Ialltoallw(sb, sc, sdb, types, r, rc, rdb, types, tc, &rq));
        else MPI_OK(MPI_Alltoallw(sb, sc, sdb, types, r, rc, rdb, types, tc));
    }
    finish(&rq, nb);
    static const char *names[] = {"alltoall", "alltoallv", "alltoallw"};
    for (int p = 0; p < size; ++p)
        for (int i = 0; i < rc[p]; ++i)
            EXPECT_EQ(get(t, r, (size_t)rd[p] + (size_t)i), dval(p * 64 + rank, (size_t)i, 10), names[kind]);
    free(sc), free(sd), free(rc), free(rd), free(sdb), free(rdb), free(types), free(s), free(r);
}

int main(int argc, char **argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int wrank, wsize;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    /* Two halves with reversed rank order: roots, ranks and sizes all differ from MPI_COMM_WORLD. */
    MPI_Comm split;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &split));
    MPI_Comm comms[2] = {MPI_COMM_WORLD, split};
    for (int c = 0; c < 2; ++c) {
        tc = comms[c];
        MPI_OK(MPI_Comm_rank(tc, &rank));
        MPI_OK(MPI_Comm_size(tc, &size));
        t_errors();
        t_derived();
        const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_LONG_LONG};
        /* 5000: a reduce's operand moves in pieces (over 8 KiB, to 32 KiB) as ints. */
        const size_t counts[] = {0, 1, 7, 1000, 5000, 100000};
        const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
        for (int nb = 0; nb < 2; ++nb) {
            t_noncommutative(nb);
            t_minloc(nb);
            for (int ti = 0; ti < 3; ++ti) {
                const MPI_Datatype t = types[ti];
                for (int ci = 0; ci < 6; ++ci) {
                    const size_t n = counts[ci];
                    const int big = n > 1000;
                    for (int root = 0; root < size; ++root) {
                        if (big && root != 0 && root != size - 1) continue;
                        t_bcast(t, n, root, nb);
                        t_reduce(t, n, ops[root % 4], root, root % 2, nb);
                        if (big && ti != 0) continue;
                        t_gather_scatter(t, n, root, 0, root % 2, nb);
                        t_gather_scatter(t, n, root, 1, (root + 1) % 2, nb);
                    }
                    for (int oi = 0; oi < 4; ++oi) {
                        if (big && oi > 1) continue;
                        t_allreduce(t, n, ops[oi], oi % 2, nb);
                    }
                    t_scan(t, n, MPI_SUM, 0, 0, nb);
                    t_scan(t, n, MPI_MAX, 1, 1, nb);
                    if (!big) {
                        t_scan(t, n, MPI_SUM, 0, 1, nb);
                        t_scan(t, n, MPI_SUM, 1, 0, nb);
                    }
                    const size_t rsn = big ? n / (size_t)size : n;
                    t_reduce_scatter(t, rsn, MPI_SUM, 1, nb, nb);
                    t_reduce_scatter(t, rsn, MPI_MAX, 0, 1 - nb, nb);
                    if (big && ti != 0) continue;
                    const size_t an = big ? n / (size_t)size : n;
                    t_allgather(t, an, 0, nb, nb);
                    t_allgather(t, an, 1, 1 - nb, nb);
                    for (int kind = 0; kind < 3; ++kind) t_alltoall(t, an, kind, (kind + nb) % 2, nb);
                }
            }
            t_overlap();
            t_many();
        }
        MPI_OK(MPI_Barrier(tc));
    }
    MPI_OK(MPI_Comm_free(&split));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0)
        printf("coll: all collectives match the sequential reference on %d ranks and on a split communicator\n", wsize);
    MPI_OK(MPI_Finalize());
    return 0;
}
