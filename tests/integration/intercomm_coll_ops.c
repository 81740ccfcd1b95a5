/* intercomm_coll: every collective on the inter-communicator, results
   checked exactly, and the calls erroneous on one (see intercomm_coll.c). */
#include "intercomm_coll.h"

/* (a then b) = (a.m * b.m, b.m * a.c + b.c); inout = in op inout. */
void compose(void *in, void *inout, int *len, MPI_Datatype *t) {
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
        CHECK(out[2 * i] == acc[0] && out[2 * i + 1] == acc[1], "%s: element %d = (%u, %u), expected (%u, %u)", what, i,
              out[2 * i], out[2 * i + 1], acc[0], acc[1]);
    }
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
            CHECK(out[i] == want, "reduce sum (root %d of side %d, nb %d): out[%d] = %d, expected %d", rroot, rside, nb,
                  i, out[i], want);
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
            CHECK(out[i] == want, "allreduce (nb %d, count %d): out[%d] = %d, expected %d", nb, count, i, out[i], want);
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
                CHECK(out[next] == val(remote_world(j), i), "gather(v %d, nb %d, root side %d): block %d [%d] = %d", v,
                      nb, rside, j, i, out[next]);
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
            CHECK(out[next] == a2a(remote_world(j), lrank, i),
                  "alltoall kind %d (nb %d): from %d [%d] = %d, expected %d", kind, nb, j, i, out[next],
                  a2a(remote_world(j), lrank, i));
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

#define EXPECT_CLASS(call, want)                                                                     \
    do {                                                                                             \
        int c_ = tl_class(call);                                                                     \
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
        EXPECT_CLASS(MPI_Gather(root == MPI_ROOT ? x : MPI_IN_PLACE, 1, MPI_INT, root == MPI_ROOT ? MPI_IN_PLACE : y, 1,
                                MPI_INT, root, inter),
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

void correctness(void) {
    for (int nb = 0; nb < 2; ++nb) {
        COLL(nb, MPI_Barrier(inter), MPI_Ibarrier(inter, &req_));
        for (int rside = 0; rside < 2; ++rside) {
            const int gsize = rside == 0 ? a_size : wsize - a_size;
            for (int rr = 0; rr<gsize; rr += gsize> 1 ? gsize - 1 : 1) { /* first and last rank */
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
