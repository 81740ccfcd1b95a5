/*
 * Collectives, MPI_Comm_split and MPI_Comm_create on inter-communicators
 * (MPI-3.1 §5.2.2, §6.4.2), between groups of unequal sizes: group A is the
 * first (size-1)/2 world ranks, group B the rest (4 ranks: 1+3, 5: 2+3,
 * 8: 3+5).
 *
 *   intercomm_coll             every collective, blocking and nonblocking,
 *                              results checked exactly; roots on both sides
 *                              (MPI_ROOT / MPI_PROC_NULL); the calls that are
 *                              erroneous on an inter-communicator; split,
 *                              split_type and create.
 *   intercomm_coll kill V      world rank V dies (SIGKILL) once the
 *                              inter-communicator exists; every non-rooted
 *                              collective then fails at every survivor of
 *                              both groups with MPI_ERR_PROC_FAILED, the
 *                              rooted ones return (and fail where they
 *                              depend on V); split and create fail at every
 *                              survivor; after a revoke, collectives fail
 *                              with MPIX_ERR_REVOKED; survivors agree.
 *   intercomm_coll mid V N     world rank V dies at its Nth collective round
 *                              (FTMPI_TEST_KILL_AT=coll.round:V:N), inside
 *                              the inter-communicator collectives; every
 *                              call returns MPI_SUCCESS or
 *                              MPI_ERR_PROC_FAILED, every survivor sees an
 *                              error, and survivors agree on the failure.
 */
#define _DEFAULT_SOURCE
#include <stdlib.h>

#include "ftlib.h"

static int world, wsize, side, lrank, lsize, rsize, a_size;
static MPI_Comm inter;
static MPI_Datatype pair_t; /* two unsigned: an affine map x -> m*x + c */
static MPI_Op compose_op;   /* "first map, then second": associative, not commutative */

static int remote_world(int j) { return side == 0 ? a_size + j : j; }
static int local_world(int j) { return side == 0 ? j : a_size + j; }
static int val(int w, int i) { return w * 1000 + i; }

/* (a then b) = (a.m * b.m, b.m * a.c + b.c); inout = in op inout. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    unsigned *a = in, *b = inout;
    for (int k = 0; k < *len; ++k) {
        unsigned m = a[2 * k] * b[2 * k], c = b[2 * k] * a[2 * k + 1] + b[2 * k + 1];
        b[2 * k] = m;
        b[2 * k + 1] = c;
    }
}
static void pair_of(int w, int i, unsigned *p) {
    p[0] = 2u * (unsigned)w + 3u + (unsigned)i;
    p[1] = (unsigned)w + 7u * (unsigned)i;
}

/* out[0..count) (pairs) is the composition of the remote group's pairs, in its rank order. */
static void check_composed(const unsigned *out, int count, const char *what) {
    for (int i = 0; i < count; ++i) {
        unsigned acc[2], v[2];
        pair_of(remote_world(0), i, acc);
        for (int j = 1; j < rsize; ++j) {
            int one = 1;
            pair_of(remote_world(j), i, v);
            compose(acc, v, &one, NULL);
            acc[0] = v[0], acc[1] = v[1];
        }
        CHECK(out[2 * i] == acc[0] && out[2 * i + 1] == acc[1], "%s: element %d = (%u, %u), expected (%u, %u)", what,
              i, out[2 * i], out[2 * i + 1], acc[0], acc[1]);
    }
}

/* Runs `blocking`, or `nonblocking` (which sets req_) and waits; MPI_SUCCESS expected. */
#define COLL(nb, blocking, nonblocking)                              \
    do {                                                             \
        if (!(nb)) {                                                 \
            MPI_OK(blocking);                                        \
        } else {                                                     \
            MPI_Request req_ = MPI_REQUEST_NULL;                     \
            MPI_OK(nonblocking);                                     \
            MPI_OK(MPI_Wait(&req_, MPI_STATUS_IGNORE));              \
        }                                                            \
    } while (0)

static int *ints(int n, int fill) {
    int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; ++i) p[i] = fill;
    return p;
}

/* The root argument of a rooted collective whose root is local rank `rroot`
   of group `rside`. */
static int root_arg(int rside, int rroot) {
    if (side != rside) return rroot;
    return lrank == rroot ? MPI_ROOT : MPI_PROC_NULL;
}

static void test_bcast(int nb, int rside, int rroot, int count) {
    int *buf = ints(count, -1);
    const int root = root_arg(rside, rroot);
    if (root == MPI_ROOT)
        for (int i = 0; i < count; ++i) buf[i] = val(world, i);
    COLL(nb, MPI_Bcast(buf, count, MPI_INT, root, inter), MPI_Ibcast(buf, count, MPI_INT, root, inter, &req_));
    const int from = side == rside ? -1 : remote_world(rroot);
    for (int i = 0; i < count; ++i) {
        const int want = root == MPI_ROOT ? val(world, i) : root == MPI_PROC_NULL ? -1 : val(from, i);
        CHECK(buf[i] == want, "bcast (root %d of side %d, nb %d): buf[%d] = %d, expected %d", rroot, rside, nb, i,
              buf[i], want);
    }
    free(buf);
}

static void test_reduce(int nb, int rside, int rroot, int count, int ordered) {
    const int root = root_arg(rside, rroot);
    if (!ordered) {
        int *in = ints(count, 0), *out = ints(count, -1);
        for (int i = 0; i < count; ++i) in[i] = val(world, i);
        COLL(nb, MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, root, inter),
             MPI_Ireduce(in, out, count, MPI_INT, MPI_SUM, root, inter, &req_));
        for (int i = 0; i < count; ++i) {
            int want = -1;
            if (root == MPI_ROOT)
                for (int j = 0, s = 0; j < rsize; ++j) want = (s += val(remote_world(j), i));
            CHECK(out[i] == want, "reduce sum (root %d of side %d, nb %d): out[%d] = %d, expected %d", rroot, rside,
                  nb, i, out[i], want);
        }
        free(in);
        free(out);
        return;
    }
    unsigned *in = calloc(2 * (size_t)count, sizeof(unsigned)), *out = calloc(2 * (size_t)count, sizeof(unsigned));
    for (int i = 0; i < count; ++i) pair_of(world, i, in + 2 * i);
    COLL(nb, MPI_Reduce(in, out, count, pair_t, compose_op, root, inter),
         MPI_Ireduce(in, out, count, pair_t, compose_op, root, inter, &req_));
    if (root == MPI_ROOT) check_composed(out, count, "ordered reduce");
    free(in);
    free(out);
}

/* Each group gets the reduction of the other group's contributions, in its rank order. */
static void test_allreduce(int nb, int count, int ordered) {
    if (!ordered) {
        int *in = ints(count, 0), *out = ints(count, -1);
        for (int i = 0; i < count; ++i) in[i] = val(world, i);
        COLL(nb, MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, inter),
             MPI_Iallreduce(in, out, count, MPI_INT, MPI_SUM, inter, &req_));
        for (int i = 0; i < count; ++i) {
            int want = 0;
            for (int j = 0; j < rsize; ++j) want += val(remote_world(j), i);
            CHECK(out[i] == want, "allreduce (nb %d, count %d): out[%d] = %d, expected %d", nb, count, i, out[i],
                  want);
        }
        free(in);
        free(out);
        return;
    }
    unsigned *in = calloc(2 * (size_t)count, sizeof(unsigned)), *out = calloc(2 * (size_t)count, sizeof(unsigned));
    for (int i = 0; i < count; ++i) pair_of(world, i, in + 2 * i);
    COLL(nb, MPI_Allreduce(in, out, count, pair_t, compose_op, inter),
         MPI_Iallreduce(in, out, count, pair_t, compose_op, inter, &req_));
    check_composed(out, count, "ordered allreduce");
    free(in);
    free(out);
}

/* Gather(v): the root gets block j from remote rank j. v: remote rank j sends
   j % 3 elements (some none), placed with a gap of one element between blocks. */
static void test_gather(int nb, int rside, int rroot, int v) {
    const int root = root_arg(rside, rroot), k = 3;
    int counts[64], displs[64], total = 0;
    for (int j = 0; j < rsize; ++j) {
        counts[j] = v ? j % 3 : k;
        displs[j] = v ? total + 1 : j * k;
        total = displs[j] + counts[j];
    }
    const int mine = v ? lrank % 3 : k;
    int *in = ints(mine, 0), *out = root == MPI_ROOT ? ints(total + 1, -1) : NULL;
    for (int i = 0; i < mine; ++i) in[i] = val(world, i);
    /* Arguments not significant at a process are garbage there. */
    if (root == MPI_ROOT) {
        if (v)
            COLL(nb, MPI_Gatherv(NULL, -1, MPI_DATATYPE_NULL, out, counts, displs, MPI_INT, root, inter),
                 MPI_Igatherv(NULL, -1, MPI_DATATYPE_NULL, out, counts, displs, MPI_INT, root, inter, &req_));
        else
            COLL(nb, MPI_Gather(NULL, -1, MPI_DATATYPE_NULL, out, k, MPI_INT, root, inter),
                 MPI_Igather(NULL, -1, MPI_DATATYPE_NULL, out, k, MPI_INT, root, inter, &req_));
        int next = 0;
        for (int j = 0; j < rsize; ++j) {
            for (; next < displs[j]; ++next) CHECK(out[next] == -1, "gather(v %d): gap at %d written", v, next);
            for (int i = 0; i < counts[j]; ++i, ++next)
                CHECK(out[next] == val(remote_world(j), i), "gather(v %d, nb %d, root side %d): block %d [%d] = %d",
                      v, nb, rside, j, i, out[next]);
        }
        CHECK(out[total] == -1, "gather(v %d): written past the end", v);
    } else if (root == MPI_PROC_NULL) {
        if (v)
            COLL(nb, MPI_Gatherv(NULL, -1, MPI_DATATYPE_NULL, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, inter),
                 MPI_Igatherv(NULL, -1, MPI_DATATYPE_NULL, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, inter, &req_));
        else
            COLL(nb, MPI_Gather(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, root, inter),
                 MPI_Igather(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, root, inter, &req_));
    } else {
        if (v)
            COLL(nb, MPI_Gatherv(in, mine, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, inter),
                 MPI_Igatherv(in, mine, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, inter, &req_));
        else
            COLL(nb, MPI_Gather(in, mine, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, inter),
                 MPI_Igather(in, mine, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, inter, &req_));
    }
    free(in);
    free(out);
}

/* Scatter(v): remote rank j gets block j of the root's buffer. */
static void test_scatter(int nb, int rside, int rroot, int v) {
    const int root = root_arg(rside, rroot), k = 3;
    int counts[64], displs[64], total = 0;
    for (int j = 0; j < rsize; ++j) {
        counts[j] = v ? (j + 1) % 3 : k;
        displs[j] = v ? total + 1 : j * k;
        total = displs[j] + counts[j];
    }
    const int rw = side == rside ? world : remote_world(rroot);
    if (root == MPI_ROOT) {
        int *in = ints(total, -7);
        for (int j = 0; j < rsize; ++j)
            for (int i = 0; i < counts[j]; ++i) in[displs[j] + i] = val(rw, j * 10 + i);
        if (v)
            COLL(nb, MPI_Scatterv(in, counts, displs, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, inter),
                 MPI_Iscatterv(in, counts, displs, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, inter, &req_));
        else
            COLL(nb, MPI_Scatter(in, k, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, inter),
                 MPI_Iscatter(in, k, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, inter, &req_));
        free(in);
    } else if (root == MPI_PROC_NULL) {
        if (v)
            COLL(nb, MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, root, inter),
                 MPI_Iscatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, root, inter, &req_));
        else
            COLL(nb, MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, root, inter),
                 MPI_Iscatter(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, root, inter, &req_));
    } else {
        const int mine = v ? (lrank + 1) % 3 : k;
        int *out = ints(mine + 1, -1);
        if (v)
            COLL(nb, MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, out, mine, MPI_INT, root, inter),
                 MPI_Iscatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, out, mine, MPI_INT, root, inter, &req_));
        else
            COLL(nb, MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, out, mine, MPI_INT, root, inter),
                 MPI_Iscatter(NULL, -1, MPI_DATATYPE_NULL, out, mine, MPI_INT, root, inter, &req_));
        for (int i = 0; i < mine; ++i)
            CHECK(out[i] == val(rw, lrank * 10 + i), "scatter(v %d, nb %d): out[%d] = %d, expected %d", v, nb, i,
                  out[i], val(rw, lrank * 10 + i));
        CHECK(out[mine] == -1, "scatter(v %d): written past the end", v);
        free(out);
    }
}

/* Allgather: group A sends 2 elements, group B 4 (each receives the other's
   count). Allgatherv: remote rank j sends j % 3, with gaps between blocks. */
static void test_allgather(int nb, int v) {
    int counts[64], displs[64], total = 0;
    const int other = side == 0 ? 4 : 2;
    for (int j = 0; j < rsize; ++j) {
        counts[j] = v ? j % 3 : other;
        displs[j] = v ? total + 1 : j * other;
        total = displs[j] + counts[j];
    }
    const int mine = v ? lrank % 3 : (side == 0 ? 2 : 4);
    int *in = ints(mine, 0), *out = ints(total + 1, -1);
    for (int i = 0; i < mine; ++i) in[i] = val(world, i);
    if (v)
        COLL(nb, MPI_Allgatherv(in, mine, MPI_INT, out, counts, displs, MPI_INT, inter),
             MPI_Iallgatherv(in, mine, MPI_INT, out, counts, displs, MPI_INT, inter, &req_));
    else
        COLL(nb, MPI_Allgather(in, mine, MPI_INT, out, other, MPI_INT, inter),
             MPI_Iallgather(in, mine, MPI_INT, out, other, MPI_INT, inter, &req_));
    int next = 0;
    for (int j = 0; j < rsize; ++j) {
        for (; next < displs[j]; ++next) CHECK(out[next] == -1, "allgather(v %d): gap at %d written", v, next);
        for (int i = 0; i < counts[j]; ++i, ++next)
            CHECK(out[next] == val(remote_world(j), i), "allgather(v %d, nb %d): block %d [%d] = %d, expected %d", v,
                  nb, j, i, out[next], val(remote_world(j), i));
    }
    CHECK(out[total] == -1, "allgather(v %d): written past the end", v);
    free(in);
    free(out);
}

/* The value sender (world rank w) sends to remote rank j, element i. */
static int a2a(int w, int j, int i) { return w * 1000 + j * 10 + i; }
/* Alltoallv/w: elements from local rank s of side ss to local rank j of the other side. */
static int a2a_count(int ss, int s, int j) { return (s + 2 * j + ss) % 3; }

/* kind 0: alltoall (A sends 2 per peer, B 3); 1: alltoallv; 2: alltoallw
   (where s + j is odd, the sender sends 2c MPI_INTs and the receiver takes c
   pairs of MPI_INT). */
static void test_alltoall(int nb, int kind) {
    int sc[64], sd[64], rc[64], rd[64], stot = 0, rtot = 0;
    MPI_Datatype st[64], rt[64];
    MPI_Datatype int2;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &int2));
    MPI_OK(MPI_Type_commit(&int2));
    for (int j = 0; j < rsize; ++j) {
        const int cs = kind == 0 ? (side == 0 ? 2 : 3) : a2a_count(side, lrank, j);
        const int cr = kind == 0 ? (side == 0 ? 3 : 2) : a2a_count(1 - side, j, lrank);
        const int pairs = kind == 2 && (lrank + j) % 2 == 1;
        st[j] = MPI_INT;
        rt[j] = pairs ? int2 : MPI_INT;
        sc[j] = pairs ? 2 * cs : cs;
        rc[j] = cr;
        sd[j] = stot + (kind == 0 ? 0 : 1);
        stot = sd[j] + sc[j];
        rd[j] = rtot + (kind == 0 ? 0 : 1);
        rtot = rd[j] + (pairs ? 2 * cr : cr);
    }
    int *in = ints(stot, 0), *out = ints(rtot + 1, -1);
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i < sc[j]; ++i) in[sd[j] + i] = a2a(world, j, i);
    if (kind == 0) {
        COLL(nb, MPI_Alltoall(in, sc[0], MPI_INT, out, rc[0], MPI_INT, inter),
             MPI_Ialltoall(in, sc[0], MPI_INT, out, rc[0], MPI_INT, inter, &req_));
    } else if (kind == 1) {
        COLL(nb, MPI_Alltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, inter),
             MPI_Ialltoallv(in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, inter, &req_));
    } else {
        int sdb[64], rdb[64];
        for (int j = 0; j < rsize; ++j) sdb[j] = sd[j] * (int)sizeof(int), rdb[j] = rd[j] * (int)sizeof(int);
        COLL(nb, MPI_Alltoallw(in, sc, sdb, st, out, rc, rdb, rt, inter),
             MPI_Ialltoallw(in, sc, sdb, st, out, rc, rdb, rt, inter, &req_));
    }
    int next = 0;
    for (int j = 0; j < rsize; ++j) {
        const int n = rt[j] == int2 ? 2 * rc[j] : rc[j];
        for (; next < rd[j]; ++next) CHECK(out[next] == -1, "alltoall kind %d: gap at %d written", kind, next);
        for (int i = 0; i < n; ++i, ++next)
            CHECK(out[next] == a2a(remote_world(j), lrank, i), "alltoall kind %d (nb %d): from %d [%d] = %d, expected %d",
                  kind, nb, j, i, out[next], a2a(remote_world(j), lrank, i));
    }
    CHECK(out[rtot] == -1, "alltoall kind %d: written past the end", kind);
    MPI_OK(MPI_Type_free(&int2));
    free(in);
    free(out);
}

/* Reduce_scatter: each group's recvcounts (its own size) add up to T; local
   rank i gets its block of the sum of the OTHER group's vectors.
   Reduce_scatter_block: recvcount 2*(remote size), vectors of (local size) blocks. */
static void test_reduce_scatter(int nb, int block) {
    enum { T = 12 };
    int counts[64], displs[64], total = 0;
    for (int i = 0; i < lsize; ++i) {
        counts[i] = block ? 2 * rsize : (i < lsize - 1 ? i % 3 : T - total);
        displs[i] = total;
        total += counts[i];
    }
    int *in = ints(total, 0), *out = ints(counts[lrank] + 1, -1);
    for (int i = 0; i < total; ++i) in[i] = val(world, i);
    if (block)
        COLL(nb, MPI_Reduce_scatter_block(in, out, counts[0], MPI_INT, MPI_SUM, inter),
             MPI_Ireduce_scatter_block(in, out, counts[0], MPI_INT, MPI_SUM, inter, &req_));
    else
        COLL(nb, MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, inter),
             MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, inter, &req_));
    for (int e = 0; e < counts[lrank]; ++e) {
        int want = 0;
        for (int j = 0; j < rsize; ++j) want += val(remote_world(j), displs[lrank] + e);
        CHECK(out[e] == want, "reduce_scatter(block %d, nb %d): out[%d] = %d, expected %d", block, nb, e, out[e], want);
    }
    CHECK(out[counts[lrank]] == -1, "reduce_scatter(block %d): written past the end", block);
    free(in);
    free(out);
}

/* Several nonblocking collectives in flight at once on the same communicator. */
static void test_concurrent(void) {
    MPI_Request r[5];
    int b[4] = {-1, -1, -1, -1}, x = world, sum = -1;
    int *g = ints(rsize, -1), *t_in = ints(rsize, 0), *t_out = ints(rsize, -1);
    for (int j = 0; j < rsize; ++j) t_in[j] = a2a(world, j, 0);
    const int root = root_arg(1, 0);
    if (root == MPI_ROOT) b[0] = 11, b[1] = 22, b[2] = 33, b[3] = 44;
    MPI_OK(MPI_Ibarrier(inter, &r[0]));
    MPI_OK(MPI_Ibcast(b, 4, MPI_INT, root, inter, &r[1]));
    MPI_OK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, inter, &r[2]));
    MPI_OK(MPI_Iallgather(&x, 1, MPI_INT, g, 1, MPI_INT, inter, &r[3]));
    MPI_OK(MPI_Ialltoall(t_in, 1, MPI_INT, t_out, 1, MPI_INT, inter, &r[4]));
    MPI_OK(MPI_Waitall(5, r, MPI_STATUSES_IGNORE));
    if (side == 0) CHECK(b[0] == 11 && b[3] == 44, "concurrent ibcast got %d..%d", b[0], b[3]);
    int want = 0;
    for (int j = 0; j < rsize; ++j) {
        want += remote_world(j);
        CHECK(g[j] == remote_world(j), "concurrent iallgather [%d] = %d", j, g[j]);
        CHECK(t_out[j] == a2a(remote_world(j), lrank, 0), "concurrent ialltoall [%d] = %d", j, t_out[j]);
    }
    CHECK(sum == want, "concurrent iallreduce %d, expected %d", sum, want);
    free(g);
    free(t_in);
    free(t_out);
}

#define EXPECT_CLASS(call, want)                                                                      \
    do {                                                                                              \
        int c_ = tl_class(call);                                                                      \
        CHECK(c_ == (want), "%s on an inter-communicator: class %d, expected %s", #call, c_, #want); \
    } while (0)

/* Calls erroneous on an inter-communicator: every process gets the error
   locally, without communication. */
static void test_errors(void) {
    int x[64] = {0}, y[64] = {0}, counts[64];
    MPI_Request r;
    for (int i = 0; i < 64; ++i) counts[i] = 1;
    EXPECT_CLASS(MPI_Scan(x, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Exscan(x, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Iscan(x, y, 1, MPI_INT, MPI_SUM, inter, &r), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Iexscan(x, y, 1, MPI_INT, MPI_SUM, inter, &r), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, inter), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, inter, &r), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, inter), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Iallgatherv(MPI_IN_PLACE, 1, MPI_INT, y, counts, counts, MPI_INT, inter, &r), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Allreduce(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, inter), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Reduce_scatter_block(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Ireduce_scatter(MPI_IN_PLACE, y, counts, MPI_INT, MPI_SUM, inter, &r), MPI_ERR_BUFFER);
    /* Rooted: the root passes MPI_IN_PLACE as its receive buffer, the other
       group as its send buffer. Only where the root is alone in its group:
       an MPI_PROC_NULL process would complete the call, which would then be
       erroneous at some processes only. */
    if (a_size == 1) {
        const int root = root_arg(0, 0);
        EXPECT_CLASS(MPI_Gather(root == MPI_ROOT ? x : MPI_IN_PLACE, 1, MPI_INT, root == MPI_ROOT ? MPI_IN_PLACE : y,
                                1, MPI_INT, root, inter),
                     MPI_ERR_BUFFER);
        EXPECT_CLASS(MPI_Reduce(root == MPI_ROOT ? x : MPI_IN_PLACE, root == MPI_ROOT ? MPI_IN_PLACE : y, 1, MPI_INT,
                                MPI_SUM, root, inter),
                     MPI_ERR_BUFFER);
    }
    EXPECT_CLASS(MPI_Bcast(x, 1, MPI_INT, rsize, inter), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Ibcast(x, 1, MPI_INT, -7, inter, &r), MPI_ERR_ROOT);
    MPI_Comm c = MPI_COMM_NULL;
    EXPECT_CLASS(MPI_Comm_create_group(inter, MPI_GROUP_EMPTY, 5, &c), MPI_ERR_COMM);
    CHECK(c == MPI_COMM_NULL, "Comm_create_group on an inter-communicator made a communicator");
}

/* A new inter-communicator `c` whose local group is local_w[0..nl) and remote
   group remote_w[0..nr) (world ranks, in rank order): checked through its
   groups and through an allgather on it. */
static void check_newinter(MPI_Comm c, const int *local_w, int nl, const int *remote_w, int nr, const char *what) {
    int flag = 0, n = 0, r = 0;
    MPI_OK(MPI_Comm_test_inter(c, &flag));
    CHECK(flag, "%s: not an inter-communicator", what);
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(n == nl, "%s: local size %d, expected %d", what, n, nl);
    MPI_OK(MPI_Comm_remote_size(c, &n));
    CHECK(n == nr, "%s: remote size %d, expected %d", what, n, nr);
    MPI_OK(MPI_Comm_rank(c, &r));
    CHECK(local_w[r] == world, "%s: local rank %d is world rank %d, not me (%d)", what, r, local_w[r], world);
    MPI_Group wg, lg, rg;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Comm_group(c, &lg));
    MPI_OK(MPI_Comm_remote_group(c, &rg));
    int idx[64], tr[64];
    for (int i = 0; i < 64; ++i) idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(lg, nl, idx, wg, tr));
    for (int i = 0; i < nl; ++i) CHECK(tr[i] == local_w[i], "%s: local rank %d is world %d, expected %d", what, i, tr[i], local_w[i]);
    MPI_OK(MPI_Group_translate_ranks(rg, nr, idx, wg, tr));
    for (int i = 0; i < nr; ++i) CHECK(tr[i] == remote_w[i], "%s: remote rank %d is world %d, expected %d", what, i, tr[i], remote_w[i]);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    int got[64];
    MPI_OK(MPI_Allgather(&world, 1, MPI_INT, got, 1, MPI_INT, c));
    for (int i = 0; i < nr; ++i) CHECK(got[i] == remote_w[i], "%s: allgather [%d] = %d, expected %d", what, i, got[i], remote_w[i]);
    MPI_OK(MPI_Barrier(c));
}

/* Split colors: A: local rank % 2. B: local rank 0 MPI_UNDEFINED, then
   (local rank - 1) % 3, so with 5 in B color 2 is in B only. Keys: A
   reverses its order, B ties (rank order). */
static int split_color(int s, int lr) {
    if (s == 0) return lr % 2;
    return lr == 0 ? MPI_UNDEFINED : (lr - 1) % 3;
}
static int split_key(int s, int lr) { return s == 0 ? -lr : 0; }

/* World ranks of group s with color `color`, in new rank order. */
static int members(int s, int color, int *out) {
    const int n = s == 0 ? a_size : wsize - a_size;
    int m = 0;
    for (int i = 0; i < n; ++i) {
        const int lr = s == 0 ? n - 1 - i : i; /* key order: A reversed, B as is */
        if (split_color(s, lr) == color) out[m++] = s == 0 ? lr : a_size + lr;
    }
    return m;
}

static void test_split(void) {
    const int color = split_color(side, lrank);
    MPI_Comm c = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_split(inter, color, split_key(side, lrank), &c));
    int lw[64], rw[64], nl = 0, nr = 0;
    if (color != MPI_UNDEFINED) {
        nl = members(side, color, lw);
        nr = members(1 - side, color, rw);
    }
    if (color == MPI_UNDEFINED || nr == 0) {
        CHECK(c == MPI_COMM_NULL, "split: color %d (remote members %d) gave a communicator", color, nr);
        return;
    }
    CHECK(c != MPI_COMM_NULL, "split: color %d gave MPI_COMM_NULL", color);
    check_newinter(c, lw, nl, rw, nr, "split");
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(c, &d));
    check_newinter(d, lw, nl, rw, nr, "dup of a split");
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&c));
}

/* split_type: MPI_COMM_TYPE_SHARED joins the processes of a node across the
   groups (MPICH's behaviour): one node here, so the whole inter-communicator. */
static void test_split_type(void) {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, lrank, MPI_INFO_NULL, &c));
    int lw[64], rw[64];
    for (int i = 0; i < lsize; ++i) lw[i] = local_world(i);
    for (int i = 0; i < rsize; ++i) rw[i] = remote_world(i);
    check_newinter(c, lw, lsize, rw, rsize, "split_type shared");
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
}

/* Group of local ranks sel[0..n) of the inter-communicator's local group. */
static MPI_Group local_subgroup(const int *sel, int n) {
    MPI_Group lg, g;
    MPI_OK(MPI_Comm_group(inter, &lg));
    MPI_OK(MPI_Group_incl(lg, n, sel, &g));
    MPI_Group_free(&lg);
    return g;
}

/* Create: A passes its group without local rank 0 (all of it when alone),
   B its odd local ranks in decreasing order. Then an empty group on A's
   side (all get MPI_COMM_NULL), then both whole groups. */
static void test_create(void) {
    int sel[2][64], n[2] = {0, 0};
    const int asz = a_size, bsz = wsize - a_size;
    for (int i = asz > 1 ? 1 : 0; i < asz; ++i) sel[0][n[0]++] = i;
    for (int i = bsz - 1; i >= 0; --i)
        if (i % 2 == 1) sel[1][n[1]++] = i;
    MPI_Group g = local_subgroup(sel[side], n[side]);
    MPI_Comm c = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_create(inter, g, &c));
    MPI_Group_free(&g);
    int in = 0;
    for (int i = 0; i < n[side]; ++i) in |= sel[side][i] == lrank;
    if (!in) {
        CHECK(c == MPI_COMM_NULL, "create: a process outside its group got a communicator");
    } else {
        int lw[64], rw[64];
        for (int i = 0; i < n[side]; ++i) lw[i] = side == 0 ? sel[0][i] : asz + sel[1][i];
        for (int i = 0; i < n[1 - side]; ++i) rw[i] = side == 1 ? sel[0][i] : asz + sel[1][i];
        check_newinter(c, lw, n[side], rw, n[1 - side], "create");
        MPI_OK(MPI_Comm_free(&c));
    }
    /* An empty group on one side: nobody gets a communicator. */
    g = side == 0 ? MPI_GROUP_EMPTY : local_subgroup(sel[1], n[1]);
    MPI_OK(MPI_Comm_create(inter, g, &c));
    CHECK(c == MPI_COMM_NULL, "create with an empty group on side 0 gave a communicator");
    if (side == 1) MPI_Group_free(&g);
    /* Both whole groups. */
    MPI_OK(MPI_Comm_group(inter, &g));
    MPI_OK(MPI_Comm_create(inter, g, &c));
    MPI_Group_free(&g);
    int lw[64], rw[64];
    for (int i = 0; i < lsize; ++i) lw[i] = local_world(i);
    for (int i = 0; i < rsize; ++i) rw[i] = remote_world(i);
    check_newinter(c, lw, lsize, rw, rsize, "create (whole groups)");
    MPI_OK(MPI_Comm_free(&c));
}

static void correctness(void) {
    for (int nb = 0; nb < 2; ++nb) {
        COLL(nb, MPI_Barrier(inter), MPI_Ibarrier(inter, &req_));
        for (int rside = 0; rside < 2; ++rside) {
            const int gsize = rside == 0 ? a_size : wsize - a_size;
            for (int rr = 0; rr < gsize; rr += gsize > 1 ? gsize - 1 : 1) { /* first and last rank */
                test_bcast(nb, rside, rr, 5);
                test_bcast(nb, rside, rr, 20000);
                test_reduce(nb, rside, rr, 6, 0);
                test_reduce(nb, rside, rr, 3, 1);
                test_gather(nb, rside, rr, 0);
                test_gather(nb, rside, rr, 1);
                test_scatter(nb, rside, rr, 0);
                test_scatter(nb, rside, rr, 1);
            }
        }
        test_allreduce(nb, 7, 0);
        test_allreduce(nb, 30000, 0);
        test_allreduce(nb, 4, 1);
        test_allgather(nb, 0);
        test_allgather(nb, 1);
        for (int kind = 0; kind < 3; ++kind) test_alltoall(nb, kind);
        test_reduce_scatter(nb, 0);
        test_reduce_scatter(nb, 1);
    }
    test_concurrent();
    test_errors();
    test_split();
    test_split_type();
    test_create();
}

/* ---- failures ---- */

static int is_failed(int rc) { return tl_class(rc) == MPI_ERR_PROC_FAILED; }

static int wait_rc(int rc, MPI_Request *r) {
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Wait(r, MPI_STATUS_IGNORE);
}

/* World rank V died before any of these. Returns the mask of calls that failed here. */
static unsigned after_death(int victim) {
    enum { N = 8 };
    int x[N * 64], y[N * 64], counts[64], displs[64];
    for (int i = 0; i < N * 64; ++i) x[i] = world, y[i] = -1;
    for (int i = 0; i < 64; ++i) counts[i] = 1, displs[i] = i;
    MPI_Request r;
    unsigned mask = 0;
    int bit = 0;
    /* Non-rooted: MPI_ERR_PROC_FAILED at every survivor of both groups. */
#define ALL_FAIL(call, what)                                                                             \
    do {                                                                                                 \
        int rc_ = (call);                                                                                \
        CHECK(is_failed(rc_), "%s returned class %d at world rank %d, expected MPI_ERR_PROC_FAILED at " \
              "every survivor", what, tl_class(rc_), world);                                             \
        mask |= 1u << bit++;                                                                             \
    } while (0)
    for (int nb = 0; nb < 2; ++nb) {
#define BOTH(blocking, nonblocking, what) ALL_FAIL(nb ? wait_rc(nonblocking, &r) : (blocking), what)
        BOTH(MPI_Barrier(inter), MPI_Ibarrier(inter, &r), "barrier");
        BOTH(MPI_Allreduce(x, y, N, MPI_INT, MPI_SUM, inter), MPI_Iallreduce(x, y, N, MPI_INT, MPI_SUM, inter, &r),
             "allreduce");
        BOTH(MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, inter), MPI_Iallgather(x, 1, MPI_INT, y, 1, MPI_INT, inter, &r),
             "allgather");
        BOTH(MPI_Allgatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, inter),
             MPI_Iallgatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, inter, &r), "allgatherv");
        BOTH(MPI_Alltoall(x, 1, MPI_INT, y, 1, MPI_INT, inter), MPI_Ialltoall(x, 1, MPI_INT, y, 1, MPI_INT, inter, &r),
             "alltoall");
        BOTH(MPI_Alltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, inter),
             MPI_Ialltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, inter, &r), "alltoallv");
        {
            int bd[64];
            MPI_Datatype ts[64];
            for (int i = 0; i < 64; ++i) bd[i] = i * (int)sizeof(int), ts[i] = MPI_INT;
            BOTH(MPI_Alltoallw(x, counts, bd, ts, y, counts, bd, ts, inter),
                 MPI_Ialltoallw(x, counts, bd, ts, y, counts, bd, ts, inter, &r), "alltoallw");
        }
        /* Reduce_scatter_block: recvcount (remote size) makes both groups' vectors equal. */
        BOTH(MPI_Reduce_scatter_block(x, y, rsize, MPI_INT, MPI_SUM, inter),
             MPI_Ireduce_scatter_block(x, y, rsize, MPI_INT, MPI_SUM, inter, &r), "reduce_scatter_block");
        {
            int rc[64];
            for (int i = 0; i < lsize; ++i) rc[i] = rsize;
            BOTH(MPI_Reduce_scatter(x, y, rc, MPI_INT, MPI_SUM, inter),
                 MPI_Ireduce_scatter(x, y, rc, MPI_INT, MPI_SUM, inter, &r), "reduce_scatter");
        }
#undef BOTH
    }
    /* Rooted: every call returns (success or MPI_ERR_PROC_FAILED), and a
       process that needs the dead rank's data (or is the root that the dead
       rank feeds) fails. */
    const int v_side = victim < a_size ? 0 : 1, v_lrank = v_side == 0 ? victim : victim - a_size;
    for (int rside = 0; rside < 2; ++rside) {
        const int gsize = rside == 0 ? a_size : wsize - a_size;
        for (int rr = 0; rr < gsize; ++rr) {
            const int root = root_arg(rside, rr);
            const int dead_root = rside == v_side && rr == v_lrank;
            int rc;
            /* Bcast/scatter from the dead root: every process of the other group fails. */
            rc = MPI_Bcast(x, N, MPI_INT, root, inter);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "bcast: class %d", tl_class(rc));
            if (dead_root && side != rside) CHECK(is_failed(rc), "bcast from the dead root succeeded at %d", world);
            rc = wait_rc(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, root, inter, &r), &r);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "iscatter: class %d", tl_class(rc));
            if (dead_root && side != rside) CHECK(is_failed(rc), "scatter from the dead root succeeded at %d", world);
            /* Gather/reduce to a root of the other group than the dead rank's: the root fails. */
            rc = MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, root, inter);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "gather: class %d", tl_class(rc));
            if (root == MPI_ROOT && rside != v_side) CHECK(is_failed(rc), "gather: the root missed the dead rank");
            rc = wait_rc(MPI_Ireduce(x, y, N, MPI_INT, MPI_SUM, root, inter, &r), &r);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "ireduce: class %d", tl_class(rc));
            if (root == MPI_ROOT && rside != v_side) CHECK(is_failed(rc), "reduce: the root missed the dead rank");
            rc = MPI_Gatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, root, inter);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "gatherv: class %d", tl_class(rc));
            rc = MPI_Scatterv(x, counts, displs, MPI_INT, y, 1, MPI_INT, root, inter);
            CHECK(rc == MPI_SUCCESS || is_failed(rc), "scatterv: class %d", tl_class(rc));
        }
    }
    /* Communicator creation is uniform: it fails at every survivor. */
    MPI_Comm c = MPI_COMM_NULL;
    ALL_FAIL(MPI_Comm_split(inter, 0, 0, &c), "split");
    CHECK(c == MPI_COMM_NULL, "a failed split made a communicator");
    MPI_Group g;
    MPI_OK(MPI_Comm_group(inter, &g));
    ALL_FAIL(MPI_Comm_create(inter, g, &c), "create");
    CHECK(c == MPI_COMM_NULL, "a failed create made a communicator");
    MPI_Group_free(&g);
#undef ALL_FAIL
    return mask;
}

/* The survivors of the world: shrink, then check that all saw the same
   failures and the same failed calls. */
static MPI_Comm survivors(int victim, unsigned mask) {
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    int n;
    MPI_OK(MPI_Comm_size(shrunk, &n));
    CHECK(n == wsize - 1, "shrunk world has %d ranks, expected %d", n, wsize - 1);
    tl_check_agreement(MPI_COMM_WORLD, &victim, 1);
    unsigned lo = mask, hi = mask;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UNSIGNED, MPI_BAND, shrunk));
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UNSIGNED, MPI_BOR, shrunk));
    CHECK(lo == hi, "survivors disagree on which calls failed: %#x vs %#x", lo, hi);
    int flag = 1;
    MPI_OK(MPIX_Comm_agree(shrunk, &flag));
    CHECK(flag == 1, "agree on the shrunk world gave %d", flag);
    return shrunk;
}

/* A survivor revokes the inter-communicator: every survivor's next
   collective on it fails with MPIX_ERR_REVOKED (or MPI_ERR_PROC_FAILED, should
   the failure stop it before the revoke reaches it), then it reads revoked. */
static void after_revoke(MPI_Comm shrunk) {
    int sr;
    MPI_OK(MPI_Comm_rank(shrunk, &sr));
    if (sr == 0) MPI_OK(MPIX_Comm_revoke(inter));
    MPI_OK(MPI_Barrier(shrunk));
    int x = 0, y = 0, flag = 0;
    const double until = MPI_Wtime() + 30;
    while (!flag && MPI_Wtime() < until) MPI_OK(MPIX_Comm_is_revoked(inter, &flag));
    CHECK(flag, "the revoke never reached world rank %d", world);
    CHECK_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, inter), MPIX_ERR_REVOKED);
    MPI_Request r;
    CHECK_CLASS(wait_rc(MPI_Ialltoall(&x, 1, MPI_INT, &y, 1, MPI_INT, inter, &r), &r), MPIX_ERR_REVOKED);
    CHECK_CLASS(MPI_Barrier(inter), MPIX_ERR_REVOKED);
}

/* Dies at a collective round (FTMPI_TEST_KILL_AT) inside this loop. */
static int mid_loop(void) {
    int x[64], y[64], counts[64], displs[64], errors = 0;
    for (int i = 0; i < 64; ++i) x[i] = world, counts[i] = 1, displs[i] = i;
    MPI_Request r;
#define OK_OR_FAILED(call)                                                                          \
    do {                                                                                            \
        int rc_ = (call);                                                                           \
        CHECK(rc_ == MPI_SUCCESS || is_failed(rc_), "%s: class %d at %d", #call, tl_class(rc_), world); \
        errors += rc_ != MPI_SUCCESS;                                                               \
    } while (0)
    for (int iter = 0; iter < 20; ++iter) {
        const int rside = iter % 2, gsize = rside == 0 ? a_size : wsize - a_size;
        const int root = root_arg(rside, iter % gsize);
        OK_OR_FAILED(MPI_Barrier(inter));
        OK_OR_FAILED(MPI_Bcast(x, 4, MPI_INT, root, inter));
        OK_OR_FAILED(MPI_Reduce(x, y, 4, MPI_INT, MPI_SUM, root, inter));
        OK_OR_FAILED(MPI_Allreduce(x, y, 4, MPI_INT, MPI_SUM, inter));
        OK_OR_FAILED(MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, root, inter));
        OK_OR_FAILED(MPI_Scatter(x, 1, MPI_INT, y, 1, MPI_INT, root, inter));
        OK_OR_FAILED(MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, inter));
        OK_OR_FAILED(MPI_Allgatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, inter));
        OK_OR_FAILED(MPI_Alltoall(x, 1, MPI_INT, y, 1, MPI_INT, inter));
        OK_OR_FAILED(wait_rc(MPI_Ialltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, inter, &r), &r));
        OK_OR_FAILED(wait_rc(MPI_Iallreduce(x, y, 4, MPI_INT, MPI_MAX, inter, &r), &r));
        OK_OR_FAILED(wait_rc(MPI_Ireduce_scatter_block(x, y, rsize, MPI_INT, MPI_SUM, inter, &r), &r));
        OK_OR_FAILED(wait_rc(MPI_Igatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, root, inter, &r), &r));
    }
#undef OK_OR_FAILED
    return errors;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "coll";
    const int victim = argc > 2 ? atoi(argv[2]) : -1;
    if (!strcmp(mode, "mid")) {
        char spec[64];
        snprintf(spec, sizeof spec, "coll.round:%d:%d", victim, argc > 3 ? atoi(argv[3]) : 1);
        setenv("FTMPI_TEST_KILL_AT", spec, 1);
    }
    tl_init(&argc, &argv, &world, &wsize, 4);
    CHECK(wsize <= 64, "at most 64 ranks");
    a_size = (wsize - 1) / 2;
    side = world < a_size ? 0 : 1;
    MPI_Comm local;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, side, world, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, side == 0 ? a_size : 0, 77, &inter));
    MPI_OK(MPI_Comm_free(&local));
    MPI_OK(MPI_Comm_rank(inter, &lrank));
    MPI_OK(MPI_Comm_size(inter, &lsize));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    MPI_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &pair_t));
    MPI_OK(MPI_Type_commit(&pair_t));
    MPI_OK(MPI_Op_create(compose, 0, &compose_op));
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));

    if (!strcmp(mode, "coll")) {
        correctness();
        MPI_OK(MPI_Comm_free(&inter));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (world == 0) printf("intercomm_coll: every collective, split and create checked on %d+%d ranks\n", a_size,
                               wsize - a_size);
    } else {
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        CHECK(victim >= 0 && victim < wsize, "victim %d", victim);
        unsigned mask = 0;
        if (!strcmp(mode, "kill")) {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            if (world == victim) tl_die(SIGKILL);
            mask = after_death(victim);
        } else {
            const int errors = mid_loop();
            CHECK(world != victim, "the victim outlived the loop: its kill round is too late");
            CHECK(errors > 0, "world rank %d saw no error although rank %d died", world, victim);
        }
        MPI_Comm shrunk = survivors(victim, mask);
        after_revoke(shrunk);
        MPI_OK(MPI_Comm_free(&inter));
        if (world == (victim == 0 ? 1 : 0))
            printf("intercomm_coll %s: rank %d died; every survivor of both groups failed, they agree\n", mode, victim);
        MPI_OK(MPI_Comm_free(&shrunk));
    }
    MPI_Op_free(&compose_op);
    MPI_Type_free(&pair_t);
    MPI_Finalize();
    return 0;
}
