/* coll: a non-commutative user op, MINLOC/MAXLOC, nonblocking collectives in
   flight at once, argument errors and derived datatypes (see coll.c). */
#include "coll.h"

/* Non-commutative: affine maps x -> a x + b (mod 1009), composed in rank
 * order (lower rank applied first). */
typedef struct {
    int a, b;
} Aff;
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    const Aff *lo = in;
    Aff *hi = inout;
    for (int k = 0; k < *len; ++k) {
        Aff r = {(hi[k].a * lo[k].a) % 1009, (hi[k].a * lo[k].b + hi[k].b) % 1009};
        hi[k] = r;
    }
}
static Aff aff(int r, int i) {
    Aff x = {2 + (r * 5 + i) % 7, (r * 3 + i) % 11};
    return x;
}
static Aff aff_ref(int lo, int hi, int i) {
    Aff acc = aff(lo, i);
    for (int r = lo + 1; r <= hi; ++r) {
        Aff x = aff(r, i);
        int len = 1;
        compose(&acc, &x, &len, NULL);
        acc = x;
    }
    return acc;
}

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int k = 0; k < *len; ++k) b[k] += a[k];
}

/* User ops on operands a reduce moves in pieces (over 8 KiB): the
 * non-commutative one in rank order (3000 pairs, 24 KiB), and a
 * commutative one (5000 ints, 20 KiB), to every root. */
static void t_user_reduce_pieces(MPI_Op compose_op, int nb) {
    enum { N = 3000, M = 5000 };
    Aff *s = xmalloc(N * sizeof(Aff)), *r = xmalloc(N * sizeof(Aff));
    int *si = xmalloc(M * sizeof(int)), *ri = xmalloc(M * sizeof(int));
    for (int i = 0; i < N; ++i) s[i] = aff(rank, i);
    for (int i = 0; i < M; ++i) si[i] = rank * 7 + i;
    MPI_Op add;
    MPI_OK(MPI_Op_create(add_ints, 1, &add));
    MPI_Request rq = MPI_REQUEST_NULL;
    for (int root = 0; root < size; ++root) {
        if (nb) MPI_OK(MPI_Ireduce(s, r, N, MPI_2INT, compose_op, root, tc, &rq));
        else MPI_OK(MPI_Reduce(s, r, N, MPI_2INT, compose_op, root, tc));
        finish(&rq, nb);
        if (nb) MPI_OK(MPI_Ireduce(si, ri, M, MPI_INT, add, root, tc, &rq));
        else MPI_OK(MPI_Reduce(si, ri, M, MPI_INT, add, root, tc));
        finish(&rq, nb);
        if (rank != root) continue;
        for (int i = 0; i < N; ++i) {
            Aff w = aff_ref(0, size - 1, i);
            CHECK(r[i].a == w.a && r[i].b == w.b, "noncommutative reduce of %d root %d element %d", N, root, i);
        }
        for (int i = 0; i < M; ++i)
            CHECK(ri[i] == 7 * size * (size - 1) / 2 + size * i, "user-op reduce of %d root %d element %d: %d", M, root,
                  i, ri[i]);
    }
    MPI_OK(MPI_Op_free(&add));
    free(s);
    free(r);
    free(si);
    free(ri);
}

void t_noncommutative(int nb) {
    MPI_Op op;
    MPI_OK(MPI_Op_create(compose, 0, &op));
    int commute = 1;
    MPI_OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0, "MPI_Op_commutative says %d", commute);
    enum { N = 5 };
    Aff s[N * 16], r[N * 16];
    for (int i = 0; i < N * size && i < N * 16; ++i) s[i] = aff(rank, i);
    MPI_Request rq = MPI_REQUEST_NULL;
    for (int root = 0; root < size; ++root) {
        if (nb) MPI_OK(MPI_Ireduce(s, r, N, MPI_2INT, op, root, tc, &rq));
        else MPI_OK(MPI_Reduce(s, r, N, MPI_2INT, op, root, tc));
        finish(&rq, nb);
        if (rank == root)
            for (int i = 0; i < N; ++i) {
                Aff w = aff_ref(0, size - 1, i);
                CHECK(r[i].a == w.a && r[i].b == w.b, "noncommutative reduce root %d element %d", root, i);
            }
    }
    if (nb) MPI_OK(MPI_Iallreduce(s, r, N, MPI_2INT, op, tc, &rq));
    else MPI_OK(MPI_Allreduce(s, r, N, MPI_2INT, op, tc));
    finish(&rq, nb);
    for (int i = 0; i < N; ++i) {
        Aff w = aff_ref(0, size - 1, i);
        CHECK(r[i].a == w.a && r[i].b == w.b, "noncommutative allreduce element %d", i);
    }
    for (int excl = 0; excl < 2; ++excl) {
        if (excl) {
            if (nb) MPI_OK(MPI_Iexscan(s, r, N, MPI_2INT, op, tc, &rq));
            else MPI_OK(MPI_Exscan(s, r, N, MPI_2INT, op, tc));
        } else {
            if (nb) MPI_OK(MPI_Iscan(s, r, N, MPI_2INT, op, tc, &rq));
            else MPI_OK(MPI_Scan(s, r, N, MPI_2INT, op, tc));
        }
        finish(&rq, nb);
        if (excl && rank == 0) continue;
        for (int i = 0; i < N; ++i) {
            Aff w = aff_ref(0, excl ? rank - 1 : rank, i);
            CHECK(r[i].a == w.a && r[i].b == w.b, "noncommutative %s element %d", excl ? "exscan" : "scan", i);
        }
    }
    if (size <= 16) {
        if (nb) MPI_OK(MPI_Ireduce_scatter_block(s, r, N, MPI_2INT, op, tc, &rq));
        else MPI_OK(MPI_Reduce_scatter_block(s, r, N, MPI_2INT, op, tc));
        finish(&rq, nb);
        for (int i = 0; i < N; ++i) {
            Aff w = aff_ref(0, size - 1, rank * N + i);
            CHECK(r[i].a == w.a && r[i].b == w.b, "noncommutative reduce_scatter_block element %d", i);
        }
    }
    t_user_reduce_pieces(op, nb);
    MPI_OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
}

void t_minloc(int nb) {
    typedef struct {
        double v;
        int i;
    } DI;
    enum { N = 4 };
    DI s[N], mn[N], mx[N];
    /* element 0: all tie (lowest rank wins both); 1: value = rank; 2: value = -rank; 3: ties on two values */
    for (int k = 0; k < N; ++k) s[k].i = rank;
    s[0].v = 1.5;
    s[1].v = rank;
    s[2].v = -rank;
    s[3].v = rank % 2;
    MPI_Request r1 = MPI_REQUEST_NULL, r2 = MPI_REQUEST_NULL;
    if (nb) {
        MPI_OK(MPI_Iallreduce(s, mn, N, MPI_DOUBLE_INT, MPI_MINLOC, tc, &r1));
        MPI_OK(MPI_Iallreduce(s, mx, N, MPI_DOUBLE_INT, MPI_MAXLOC, tc, &r2));
        MPI_OK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&r1, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Allreduce(s, mn, N, MPI_DOUBLE_INT, MPI_MINLOC, tc));
        MPI_OK(MPI_Allreduce(s, mx, N, MPI_DOUBLE_INT, MPI_MAXLOC, tc));
    }
    const int last = size - 1;
    CHECK(mn[0].v == 1.5 && mn[0].i == 0 && mx[0].v == 1.5 && mx[0].i == 0, "tie element 0");
    CHECK(mn[1].v == 0 && mn[1].i == 0 && mx[1].v == last && mx[1].i == last, "element 1");
    CHECK(mn[2].v == -last && mn[2].i == last && mx[2].v == 0 && mx[2].i == 0, "element 2");
    CHECK(mn[3].v == 0 && mn[3].i == 0 && mx[3].v == (size > 1) && mx[3].i == (size > 1), "element 3");
}

/* Several nonblocking collectives in flight at once, waited in another order. */
void t_overlap(void) {
    const int n = 1000;
    int *a = xmalloc(n * sizeof(int)), *b = xmalloc(n * sizeof(int)), *g = xmalloc((size_t)size * n * sizeof(int));
    int *c = xmalloc(n * sizeof(int));
    for (int i = 0; i < n; ++i) {
        a[i] = rank + i;
        b[i] = rank == size - 1 ? 3 * i : -1;
        c[i] = rank * i;
    }
    MPI_Request r[4];
    MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, tc, &r[0]));
    MPI_OK(MPI_Ibcast(b, n, MPI_INT, size - 1, tc, &r[1]));
    MPI_OK(MPI_Iallgather(c, n, MPI_INT, g, n, MPI_INT, tc, &r[2]));
    MPI_OK(MPI_Ibarrier(tc, &r[3]));
    int flag = 0;
    while (!flag) MPI_OK(MPI_Test(&r[3], &flag, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r[2], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; ++i) {
        CHECK(a[i] == size * (size - 1) / 2 + size * i, "overlap allreduce %d", i);
        CHECK(b[i] == 3 * i, "overlap bcast %d", i);
        for (int p = 0; p < size; ++p) CHECK(g[p * n + i] == p * i, "overlap allgather %d %d", p, i);
    }
    free(a), free(b), free(c), free(g);
}

/* Many nonblocking collectives at once, of different shapes (one round;
 * a copy and one round; log2(size) rounds of recursive doubling),
 * completed in reverse order, three times:
 * more schedules live than the library keeps for reuse, and each later wave
 * runs on storage that schedules of another shape left. */
void t_many(void) {
    enum { k = 40, m = 5 };
    int *in = xmalloc((size_t)k * size * m * sizeof(int)), *out = xmalloc((size_t)k * size * m * sizeof(int));
    MPI_Request r[k];
    for (int wave = 0; wave < 3; ++wave) {
        for (int i = 0; i < k * size * m; ++i) in[i] = rank * 100000 + wave * 1000 + i, out[i] = -1;
        for (int j = 0; j < k; ++j) {
            int *src = in + (size_t)j * size * m, *dst = out + (size_t)j * size * m;
            switch ((j + wave) % 3) {
            case 0: MPI_OK(MPI_Ialltoall(src, m, MPI_INT, dst, m, MPI_INT, tc, &r[j])); break;
            case 1: MPI_OK(MPI_Iallgather(src, m, MPI_INT, dst, m, MPI_INT, tc, &r[j])); break;
            default: MPI_OK(MPI_Iallreduce(src, dst, m, MPI_INT, MPI_SUM, tc, &r[j])); break;
            }
        }
        for (int j = k - 1; j >= 0; --j) MPI_OK(MPI_Wait(&r[j], MPI_STATUS_IGNORE));
        for (int j = 0; j < k; ++j) {
            const int *dst = out + (size_t)j * size * m, base = wave * 1000 + j * size * m;
            const int kind = (j + wave) % 3;
            for (int p = 0; p < size; ++p)
                for (int e = 0; e < m; ++e) {
                    const int got = dst[p * m + e];
                    if (kind == 0) /* block `rank` of p's input */
                        CHECK(got == p * 100000 + base + rank * m + e, "many: alltoall %d from %d [%d]", j, p, e);
                    else if (kind == 1) /* p's first block */
                        CHECK(got == p * 100000 + base + e, "many: allgather %d from %d [%d]", j, p, e);
                    else if (p == 0) /* the sum of every rank's first block */
                        CHECK(got == 100000 * size * (size - 1) / 2 + size * (base + e), "many: allreduce %d [%d]", j,
                              e);
                }
        }
    }
    free(in), free(out);
}

void t_errors(void) {
    MPI_OK(MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)); /* errors on MPI_COMM_NULL land here */
    int x = 1, y = 0, cls = 0;
    struct {
        int rc, want;
        const char *what;
    } cases[] = {
        {MPI_Bcast(&x, 1, MPI_INT, size, tc), MPI_ERR_ROOT, "bcast root = size"},
        {MPI_Bcast(&x, -1, MPI_INT, 0, tc), MPI_ERR_COUNT, "bcast count -1"},
        {MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0, tc), MPI_ERR_TYPE, "bcast null type"},
        {MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM, "bcast null comm"},
        {MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, tc), MPI_ERR_OP, "allreduce null op"},
        {MPI_Allreduce(&x, &y, 1, MPI_BYTE, MPI_SUM, tc), MPI_ERR_OP, "allreduce SUM on BYTE"},
        {MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_BAND, tc), MPI_ERR_OP, "allreduce BAND on DOUBLE"},
        {MPI_Allreduce(&x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, tc), MPI_ERR_BUFFER, "recvbuf IN_PLACE"},
        {MPI_Allreduce(&x, NULL, 1, MPI_INT, MPI_SUM, tc), MPI_ERR_BUFFER, "recvbuf NULL"},
        {MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, -1, tc), MPI_ERR_ROOT, "reduce root -1"},
        {MPI_Allgather(&x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, tc), MPI_ERR_BUFFER, "allgather recvbuf IN_PLACE"},
        {MPI_Ibarrier(tc, NULL), MPI_ERR_ARG, "ibarrier NULL request"},
        {MPI_Reduce_local(&x, &y, 1, MPI_INT, MPI_MINLOC), MPI_ERR_OP, "reduce_local MINLOC on INT"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        CHECK(cases[k].rc != MPI_SUCCESS, "%s: succeeded", cases[k].what);
        MPI_OK(MPI_Error_class(cases[k].rc, &cls));
        CHECK(cls == cases[k].want, "%s: class %d, want %d", cases[k].what, cls, cases[k].want);
    }
    /* Reduce_local on every op x one type of each class. */
    int ia = 6, ib = 3;
    MPI_OK(MPI_Reduce_local(&ia, &ib, 1, MPI_INT, MPI_BXOR));
    CHECK(ib == 5, "reduce_local BXOR %d", ib);
    MPI_OK(MPI_Comm_set_errhandler(tc, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Derived datatypes move through the collectives (the point-to-point path
 * packs them; the root's own block goes through a self transfer); reductions
 * on homogeneous derived types; predefined ops on a mixed struct type are
 * refused with MPI_ERR_UNSUPPORTED_OPERATION. */
void t_derived(void) {
    MPI_Datatype vec, vr, pair;
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_create_resized(vec, 0, 8 * (MPI_Aint)sizeof(int), &vr));
    MPI_OK(MPI_Type_commit(&vr));
    for (int root = 0; root < size; ++root) {
        int b[8];
        for (int i = 0; i < 8; ++i) b[i] = rank == root ? i : -1;
        MPI_OK(MPI_Bcast(b, 1, vec, root, tc));
        for (int i = 0; i < 8; ++i)
            CHECK(b[i] == (i % 2 == 0 || rank == root ? i : -1), "bcast vector root %d element %d: %d", root, i, b[i]);
    }
    int s[4], *g = xmalloc(sizeof(int) * 8 * (size_t)size);
    for (int i = 0; i < 4; ++i) s[i] = rank * 10 + i;
    for (int i = 0; i < 8 * size; ++i) g[i] = -1;
    MPI_OK(MPI_Allgather(s, 4, MPI_INT, g, 1, vr, tc));
    for (int p = 0; p < size; ++p)
        for (int i = 0; i < 8; ++i)
            CHECK(g[p * 8 + i] == (i % 2 ? -1 : p * 10 + i / 2), "allgather into vector p %d i %d: %d", p, i,
                  g[p * 8 + i]);
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MPI_OK(MPI_Type_commit(&pair));
    /* Homogeneous derived types reduce like their basic type: a pair of ints
     * (contiguous) and the vector (every other int of 8). */
    int in[8], out[8];
    for (int i = 0; i < 8; ++i) in[i] = rank + i, out[i] = -3;
    MPI_OK(MPI_Allreduce(in, out, 2, pair, MPI_SUM, tc));
    for (int i = 0; i < 4; ++i)
        CHECK(out[i] == size * (size - 1) / 2 + size * i, "allreduce on pair %d: %d", i, out[i]);
    for (int i = 0; i < 8; ++i) out[i] = -3;
    MPI_OK(MPI_Allreduce(in, out, 1, vec, MPI_MAX, tc));
    for (int i = 0; i < 8; ++i) CHECK(out[i] == (i % 2 ? -3 : size - 1 + i), "allreduce on vector %d: %d", i, out[i]);
    /* A struct of int and double: predefined ops refuse it. */
    MPI_Datatype mixed, types2[2] = {MPI_INT, MPI_DOUBLE};
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, 8};
    MPI_OK(MPI_Type_create_struct(2, lens, disps, types2, &mixed));
    MPI_OK(MPI_Type_commit(&mixed));
    MPI_OK(MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN));
    double m_in[2] = {0, 0}, m_out[2];
    int cls = 0;
    const int rc = MPI_Allreduce(m_in, m_out, 1, mixed, MPI_SUM, tc);
    CHECK(rc != MPI_SUCCESS, "allreduce SUM on a struct type succeeded");
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "allreduce SUM on a struct type: class %d", cls);
    MPI_OK(MPI_Comm_set_errhandler(tc, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Type_free(&mixed));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&vr));
    MPI_OK(MPI_Type_free(&pair));
    free(g);
}
