/*
 * Process topologies (MPI-3.1 chapter 7), checked against computed
 * expectations: MPI_Dims_create (table of cases, errors included), Cartesian
 * communicators (periodic and not, ranks beyond the grid, coordinates <->
 * rank, shifts at the edges, sub-grids with reductions over them, zero
 * dimensions, dup), graphs, distributed graphs (adjacent and general, with
 * and without weights), MPI_Topo_test, and the error classes of bad
 * arguments under MPI_ERRORS_RETURN.
 */
#include "testlib.h"

static int rank, size;

#define EXPECT_ERR(call, cls)                                                                           \
    do {                                                                                                \
        int tl_rc_ = (call), tl_cls_ = -1;                                                              \
        MPI_Error_class(tl_rc_, &tl_cls_);                                                              \
        CHECK(tl_cls_ == (cls), "%s returned class %d, expected %s (%d)", #call, tl_cls_, #cls, (cls)); \
    } while (0)

static void check_ints(const int *got, const int *want, int n, const char *what) {
    for (int i = 0; i < n; ++i) CHECK(got[i] == want[i], "%s[%d] = %d, expected %d", what, i, got[i], want[i]);
}

/* ---- MPI_Dims_create ---- */

struct dims_case {
    int nnodes, ndims;
    int in[4], want[4];
};

static void test_dims(void) {
    static const struct dims_case cases[] = {
        {1, 1, {0}, {1}},
        {1, 3, {0, 0, 0}, {1, 1, 1}},
        {6, 2, {0, 0}, {3, 2}},
        {12, 2, {0, 0}, {4, 3}},
        {12, 3, {0, 0, 0}, {3, 2, 2}},
        {16, 2, {0, 0}, {4, 4}},
        {16, 3, {0, 0, 0}, {4, 2, 2}},
        {16, 4, {0, 0, 0, 0}, {2, 2, 2, 2}},
        {7, 3, {0, 0, 0}, {7, 1, 1}},
        {24, 3, {0, 0, 0}, {4, 3, 2}},
        {60, 3, {0, 0, 0}, {5, 4, 3}},
        {72, 2, {0, 0}, {9, 8}},
        {100, 2, {0, 0}, {10, 10}},
        {12, 3, {0, 3, 0}, {2, 3, 2}},
        {8, 3, {0, 2, 0}, {2, 2, 2}},
        {12, 2, {4, 3}, {4, 3}},
        {30, 3, {0, 0, 5}, {3, 2, 5}},
        {5, 0, {0}, {0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        int d[4];
        memcpy(d, cases[c].in, sizeof d);
        MPI_OK(MPI_Dims_create(cases[c].nnodes, cases[c].ndims, d));
        for (int i = 0; i < cases[c].ndims; ++i)
            CHECK(d[i] == cases[c].want[i], "Dims_create(%d, %d) case %zu: dims[%d] = %d, expected %d", cases[c].nnodes,
                  cases[c].ndims, c, i, d[i], cases[c].want[i]);
    }
    int d[3] = {5, 0, 0};
    EXPECT_ERR(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS); /* 5 does not divide 12 */
    int e[2] = {4, 4};
    EXPECT_ERR(MPI_Dims_create(12, 2, e), MPI_ERR_DIMS); /* no free entry, 16 != 12 */
    int f[2] = {-1, 0};
    EXPECT_ERR(MPI_Dims_create(12, 2, f), MPI_ERR_DIMS);
    int g[2] = {0, 0};
    EXPECT_ERR(MPI_Dims_create(-4, 2, g), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Dims_create(0, 2, g), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Dims_create(4, -1, g), MPI_ERR_ARG);
    CHECK(g[0] == 0 && g[1] == 0, "a failed MPI_Dims_create wrote dims");
}

/* ---- Cartesian ---- */

static int row_major(const int *c, const int *dims, int nd) {
    int r = 0;
    for (int i = 0; i < nd; ++i) r = r * dims[i] + c[i];
    return r;
}

static int wrap(int x, int d) { return ((x % d) + d) % d; }

/* The expected neighbor of (c0, c1) moved by `disp` along `dir`. */
static int expect_shift(const int *c, const int *dims, const int *periods, int dir, int disp) {
    int m[2] = {c[0], c[1]};
    m[dir] += disp;
    if (m[dir] < 0 || m[dir] >= dims[dir]) {
        if (!periods[dir]) return MPI_PROC_NULL;
        m[dir] = wrap(m[dir], dims[dir]);
    }
    return row_major(m, dims, 2);
}

/* Cart_sub: rows (dimension 1 kept), columns (dimension 0 kept), nothing kept. */
static void check_cart_sub(MPI_Comm cart, const int *dims, const int *periods, const int *mine) {
    int nd = -1;
    /* rows (dimension 1 kept) and columns (dimension 0 kept) */
    for (int keep = 0; keep < 2; ++keep) {
        const int remain[2] = {keep == 0, keep == 1};
        MPI_Comm sub;
        MPI_OK(MPI_Cart_sub(cart, remain, &sub));
        int sr, sn, snd, sd, sp, sc;
        MPI_OK(MPI_Comm_rank(sub, &sr));
        MPI_OK(MPI_Comm_size(sub, &sn));
        CHECK(sn == dims[keep] && sr == mine[keep], "Cart_sub keep %d: rank %d size %d", keep, sr, sn);
        MPI_OK(MPI_Cartdim_get(sub, &snd));
        CHECK(snd == 1, "Cart_sub ndims %d", snd);
        MPI_OK(MPI_Cart_get(sub, 1, &sd, &sp, &sc));
        CHECK(sd == dims[keep] && sp == periods[keep] && sc == mine[keep], "Cart_sub get (%d,%d,%d)", sd, sp, sc);
        /* the sum of the world ranks in my row / column */
        int sum = 0, want = 0;
        for (int k = 0; k < dims[keep]; ++k) {
            int c[2] = {mine[0], mine[1]};
            c[keep] = k;
            want += row_major(c, dims, 2);
        }
        MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub));
        CHECK(sum == want, "Cart_sub keep %d: allreduce %d, expected %d", keep, sum, want);
        MPI_OK(MPI_Comm_free(&sub));
    }
    /* nothing kept: a zero-dimensional grid of me alone */
    const int none[2] = {0, 0};
    MPI_Comm self;
    MPI_OK(MPI_Cart_sub(cart, none, &self));
    int self_size = -1;
    MPI_OK(MPI_Comm_size(self, &self_size));
    MPI_OK(MPI_Cartdim_get(self, &nd));
    CHECK(self_size == 1 && nd == 0, "Cart_sub of nothing: size %d ndims %d", self_size, nd);
    MPI_OK(MPI_Comm_free(&self));
}

static void check_cart_2d(MPI_Comm cart, const int *dims, const int *periods) {
    int status = -1, nd = -1, r = -1, n = -1;
    MPI_OK(MPI_Topo_test(cart, &status));
    CHECK(status == MPI_CART, "Topo_test %d, expected MPI_CART", status);
    MPI_OK(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2, "Cartdim_get %d", nd);
    MPI_OK(MPI_Comm_rank(cart, &r));
    MPI_OK(MPI_Comm_size(cart, &n));
    CHECK(r == rank && n == dims[0] * dims[1], "cart rank %d size %d (world rank %d)", r, n, rank);
    int gd[2], gp[2], gc[2];
    MPI_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
    check_ints(gd, dims, 2, "Cart_get dims");
    check_ints(gp, periods, 2, "Cart_get periods");
    const int mine[2] = {rank / dims[1], rank % dims[1]};
    check_ints(gc, mine, 2, "Cart_get coords");

    /* coords <-> rank for every rank */
    for (int q = 0; q < n; ++q) {
        int c[2], back = -1;
        MPI_OK(MPI_Cart_coords(cart, q, 2, c));
        CHECK(c[0] == q / dims[1] && c[1] == q % dims[1], "Cart_coords(%d) = (%d,%d)", q, c[0], c[1]);
        MPI_OK(MPI_Cart_rank(cart, c, &back));
        CHECK(back == q, "Cart_rank(Cart_coords(%d)) = %d", q, back);
    }
    /* out of range: wraps where periodic, MPI_ERR_ARG where not */
    for (int dir = 0; dir < 2; ++dir)
        for (int off = -2; off <= 2; off += 4) {
            int c[2] = {mine[0], mine[1]}, got = -1;
            c[dir] += off * dims[dir];
            if (periods[dir]) {
                MPI_OK(MPI_Cart_rank(cart, c, &got));
                CHECK(got == rank, "wrapped Cart_rank (%d,%d) = %d, expected %d", c[0], c[1], got, rank);
            } else {
                EXPECT_ERR(MPI_Cart_rank(cart, c, &got), MPI_ERR_ARG);
            }
        }
    /* shifts, at the edges too */
    for (int dir = 0; dir < 2; ++dir)
        for (int disp = -3; disp <= 3; ++disp) {
            int src = -5, dst = -5;
            MPI_OK(MPI_Cart_shift(cart, dir, disp, &src, &dst));
            const int ws = expect_shift(mine, dims, periods, dir, -disp);
            const int wd = expect_shift(mine, dims, periods, dir, disp);
            CHECK(src == ws && dst == wd, "Cart_shift(dir %d, disp %d) = (%d,%d), expected (%d,%d)", dir, disp, src,
                  dst, ws, wd);
        }
    /* a halo exchange along each dimension over the shift's ranks */
    for (int dir = 0; dir < 2; ++dir) {
        int src, dst, in = -7;
        MPI_OK(MPI_Cart_shift(cart, dir, 1, &src, &dst));
        MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 5, &in, 1, MPI_INT, src, 5, cart, MPI_STATUS_IGNORE));
        CHECK(in == (src == MPI_PROC_NULL ? -7 : src), "halo along %d: got %d from %d", dir, in, src);
    }

    check_cart_sub(cart, dims, periods, mine);

    /* a dup keeps the topology */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(cart, &dup));
    MPI_OK(MPI_Topo_test(dup, &status));
    CHECK(status == MPI_CART, "dup of a Cartesian communicator: Topo_test %d", status);
    MPI_OK(MPI_Cart_get(dup, 2, gd, gp, gc));
    check_ints(gd, dims, 2, "dup Cart_get dims");
    check_ints(gp, periods, 2, "dup Cart_get periods");
    check_ints(gc, mine, 2, "dup Cart_get coords");
    MPI_OK(MPI_Comm_free(&dup));

    /* bad arguments */
    int c2[2], a, b;
    EXPECT_ERR(MPI_Cart_shift(cart, 2, 1, &a, &b), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Cart_shift(cart, -1, 1, &a, &b), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Cart_coords(cart, dims[0] * dims[1], 2, c2), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Cart_coords(cart, -1, 2, c2), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Cart_coords(cart, 0, 1, c2), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Cart_get(cart, 1, gd, gp, gc), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Graphdims_get(cart, &a, &b), MPI_ERR_TOPOLOGY);
    EXPECT_ERR(MPI_Graph_neighbors_count(cart, 0, &a), MPI_ERR_TOPOLOGY);
    EXPECT_ERR(MPI_Dist_graph_neighbors_count(cart, &a, &b, &nd), MPI_ERR_TOPOLOGY);
}

static void test_cart(void) {
    int dims[2] = {0, 0};
    MPI_OK(MPI_Dims_create(size, 2, dims));
    CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "Dims_create(%d, 2) = %dx%d", size, dims[0], dims[1]);
    static const int period_sets[3][2] = {{1, 1}, {0, 0}, {1, 0}};
    for (int p = 0; p < 3; ++p) {
        MPI_Comm cart;
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, period_sets[p], 0, &cart));
        CHECK(cart != MPI_COMM_NULL, "Cart_create over all ranks gave MPI_COMM_NULL");
        check_cart_2d(cart, dims, period_sets[p]);
        MPI_OK(MPI_Comm_free(&cart));
        CHECK(cart == MPI_COMM_NULL, "Comm_free did not null the handle");
    }

    /* a grid smaller than the communicator: the others get MPI_COMM_NULL */
    const int line = size > 1 ? size - 1 : 1, periodic = 1;
    MPI_Comm cart;
    int newrank = -3;
    MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &line, &periodic, &newrank));
    CHECK(newrank == (rank < line ? rank : MPI_UNDEFINED), "Cart_map gave %d", newrank);
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &line, &periodic, 1, &cart));
    if (rank >= line) {
        CHECK(cart == MPI_COMM_NULL, "rank %d beyond a grid of %d got a communicator", rank, line);
    } else {
        int n, src, dst;
        MPI_OK(MPI_Comm_size(cart, &n));
        CHECK(n == line, "1-D grid size %d, expected %d", n, line);
        MPI_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
        CHECK(src == (rank + line - 1) % line && dst == (rank + 1) % line, "1-D periodic shift (%d,%d)", src, dst);
        MPI_OK(MPI_Comm_free(&cart));
    }

    /* zero dimensions: a grid of one process */
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &cart));
    if (rank == 0) {
        int n, nd, status;
        MPI_OK(MPI_Comm_size(cart, &n));
        MPI_OK(MPI_Cartdim_get(cart, &nd));
        MPI_OK(MPI_Topo_test(cart, &status));
        CHECK(n == 1 && nd == 0 && status == MPI_CART, "0-D grid: size %d ndims %d topo %d", n, nd, status);
        MPI_OK(MPI_Comm_free(&cart));
    } else {
        CHECK(cart == MPI_COMM_NULL, "rank %d got a 0-D grid", rank);
    }

    /* bad arguments (all ranks alike, so nobody enters the creation) */
    const int too_big[2] = {size + 1, 1}, zero[2] = {0, 1}, per[2] = {0, 0};
    EXPECT_ERR(MPI_Cart_create(MPI_COMM_WORLD, 2, too_big, per, 0, &cart), MPI_ERR_DIMS);
    EXPECT_ERR(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, per, 0, &cart), MPI_ERR_DIMS);
    EXPECT_ERR(MPI_Cart_create(MPI_COMM_WORLD, -1, zero, per, 0, &cart), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Cart_create(MPI_COMM_NULL, 2, dims, per, 0, &cart), MPI_ERR_COMM);
    EXPECT_ERR(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, NULL), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Cart_map(MPI_COMM_WORLD, 2, too_big, per, &newrank), MPI_ERR_DIMS);
    int a, b, c[2] = {0, 0};
    EXPECT_ERR(MPI_Cartdim_get(MPI_COMM_WORLD, &a), MPI_ERR_TOPOLOGY);
    EXPECT_ERR(MPI_Cart_rank(MPI_COMM_WORLD, c, &a), MPI_ERR_TOPOLOGY);
    EXPECT_ERR(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &a, &b), MPI_ERR_TOPOLOGY);
    EXPECT_ERR(MPI_Cart_sub(MPI_COMM_WORLD, c, &cart), MPI_ERR_TOPOLOGY);
    EXPECT_ERR(MPI_Cart_get(MPI_COMM_NULL, 2, c, c, c), MPI_ERR_COMM);
}

/* ---- graph ---- */

/* Node i: i+1 and i-1 (mod n); node 0 also every other node. */
static void ring_star(int n, int *index, int *edges) {
    int e = 0;
    for (int i = 0; i < n; ++i) {
        edges[e++] = (i + 1) % n;
        edges[e++] = (i + n - 1) % n;
        if (i == 0)
            for (int j = 1; j < n; ++j) edges[e++] = j;
        index[i] = e;
    }
}

static void test_graph(void) {
    int index[64], edges[256];
    CHECK(size <= 64, "test written for up to 64 ranks");
    const int nnodes = size > 1 ? size - 1 : 1;
    ring_star(nnodes, index, edges);
    const int nedges = index[nnodes - 1];
    int newrank = -3;
    MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, nnodes, index, edges, &newrank));
    CHECK(newrank == (rank < nnodes ? rank : MPI_UNDEFINED), "Graph_map gave %d", newrank);
    MPI_Comm graph;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 0, &graph));
    if (rank >= nnodes) {
        CHECK(graph == MPI_COMM_NULL, "rank %d beyond %d nodes got a communicator", rank, nnodes);
    } else {
        int status, nn, ne, gi[64], ge[256];
        MPI_OK(MPI_Topo_test(graph, &status));
        CHECK(status == MPI_GRAPH, "Topo_test %d, expected MPI_GRAPH", status);
        MPI_OK(MPI_Graphdims_get(graph, &nn, &ne));
        CHECK(nn == nnodes && ne == nedges, "Graphdims_get (%d,%d), expected (%d,%d)", nn, ne, nnodes, nedges);
        MPI_OK(MPI_Graph_get(graph, 64, 256, gi, ge));
        check_ints(gi, index, nnodes, "Graph_get index");
        check_ints(ge, edges, nedges, "Graph_get edges");
        /* truncated copies */
        int ti[1] = {-1}, te[2] = {-1, -1};
        MPI_OK(MPI_Graph_get(graph, 1, 1, ti, te));
        CHECK(ti[0] == index[0] && te[0] == edges[0] && te[1] == -1, "truncated Graph_get");
        for (int q = 0; q < nnodes; ++q) {
            int cnt = -1, nb[256];
            const int first = q == 0 ? 0 : index[q - 1];
            MPI_OK(MPI_Graph_neighbors_count(graph, q, &cnt));
            CHECK(cnt == index[q] - first, "Graph_neighbors_count(%d) = %d", q, cnt);
            MPI_OK(MPI_Graph_neighbors(graph, q, 256, nb));
            check_ints(nb, edges + first, cnt, "Graph_neighbors");
        }
        /* a message to each neighbor, one from each node that names me */
        int expected = 0, got = 0, cnt, nb[256];
        MPI_OK(MPI_Graph_neighbors_count(graph, rank, &cnt));
        MPI_OK(MPI_Graph_neighbors(graph, rank, cnt, nb));
        MPI_Request reqs[256];
        for (int k = 0; k < cnt; ++k) MPI_OK(MPI_Isend(&rank, 1, MPI_INT, nb[k], 8, graph, &reqs[k]));
        for (int e = 0; e < nedges; ++e) expected += edges[e] == rank;
        for (int k = 0; k < expected; ++k) {
            int v;
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 8, graph, MPI_STATUS_IGNORE));
            got++;
        }
        MPI_OK(MPI_Waitall(cnt, reqs, MPI_STATUSES_IGNORE));
        CHECK(got == expected, "graph messages %d, expected %d", got, expected);
        MPI_Comm dup;
        MPI_OK(MPI_Comm_dup(graph, &dup));
        MPI_OK(MPI_Graphdims_get(dup, &nn, &ne));
        CHECK(nn == nnodes && ne == nedges, "dup Graphdims_get (%d,%d)", nn, ne);
        MPI_OK(MPI_Comm_free(&dup));
        int a, c[2];
        EXPECT_ERR(MPI_Graph_neighbors_count(graph, nnodes, &a), MPI_ERR_RANK);
        EXPECT_ERR(MPI_Graph_neighbors(graph, -1, 1, c), MPI_ERR_RANK);
        EXPECT_ERR(MPI_Cart_shift(graph, 0, 1, &a, c), MPI_ERR_TOPOLOGY);
        EXPECT_ERR(MPI_Cartdim_get(graph, &a), MPI_ERR_TOPOLOGY);
        MPI_OK(MPI_Comm_free(&graph));
    }
    /* no nodes: MPI_COMM_NULL everywhere */
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, 0, index, edges, 0, &graph));
    CHECK(graph == MPI_COMM_NULL, "a graph of no nodes gave a communicator");

    int bad_edges[256];
    memcpy(bad_edges, edges, sizeof bad_edges);
    bad_edges[0] = nnodes;
    EXPECT_ERR(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, bad_edges, 0, &graph), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &graph), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &graph), MPI_ERR_ARG);
    int bad_index[2] = {2, 1};
    if (size >= 2) EXPECT_ERR(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_index, edges, 0, &graph), MPI_ERR_ARG);
    int a, b;
    EXPECT_ERR(MPI_Graphdims_get(MPI_COMM_WORLD, &a, &b), MPI_ERR_TOPOLOGY);
}

/* ---- distributed graph ---- */

/* Sorts n (rank, weight) pairs so neighbor lists compare as multisets. */
static void sort_pairs(int *ranks, int *weights, int n) {
    for (int i = 1; i < n; ++i)
        for (int j = i;
             j > 0 && (ranks[j - 1] > ranks[j] || (ranks[j - 1] == ranks[j] && weights && weights[j - 1] > weights[j]));
             --j) {
            int t = ranks[j];
            ranks[j] = ranks[j - 1];
            ranks[j - 1] = t;
            if (weights) {
                t = weights[j];
                weights[j] = weights[j - 1];
                weights[j - 1] = t;
            }
        }
}

static void check_neighbors(MPI_Comm c, int indeg, const int *src, const int *sw, int outdeg, const int *dst,
                            const int *dw, int weighted, const char *what) {
    int in, out, w, status;
    MPI_OK(MPI_Topo_test(c, &status));
    CHECK(status == MPI_DIST_GRAPH, "%s: Topo_test %d", what, status);
    MPI_OK(MPI_Dist_graph_neighbors_count(c, &in, &out, &w));
    CHECK(in == indeg && out == outdeg && w == weighted, "%s: counts (%d,%d,%d), expected (%d,%d,%d)", what, in, out, w,
          indeg, outdeg, weighted);
    int gs[256], gsw[256], gd[256], gdw[256];
    int ws[256], wsw[256], wd[256], wdw[256];
    MPI_OK(
        MPI_Dist_graph_neighbors(c, in, gs, weighted ? gsw : MPI_UNWEIGHTED, out, gd, weighted ? gdw : MPI_UNWEIGHTED));
    memcpy(ws, src, sizeof(int) * (size_t)in);
    memcpy(wd, dst, sizeof(int) * (size_t)out);
    if (weighted) {
        memcpy(wsw, sw, sizeof(int) * (size_t)in);
        memcpy(wdw, dw, sizeof(int) * (size_t)out);
    }
    sort_pairs(gs, weighted ? gsw : NULL, in);
    sort_pairs(ws, weighted ? wsw : NULL, in);
    sort_pairs(gd, weighted ? gdw : NULL, out);
    sort_pairs(wd, weighted ? wdw : NULL, out);
    check_ints(gs, ws, in, "sources");
    check_ints(gd, wd, out, "destinations");
    if (weighted) {
        check_ints(gsw, wsw, in, "sourceweights");
        check_ints(gdw, wdw, out, "destweights");
    }
}

static void test_dist_graph_adjacent(void) {
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    const int src[1] = {left}, dst[1] = {right};
    const int sw[1] = {100 * left + rank}, dw[1] = {100 * rank + right};
    MPI_Comm dg;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, 1, dst, dw, MPI_INFO_NULL, 0, &dg));
    check_neighbors(dg, 1, src, sw, 1, dst, dw, 1, "adjacent weighted");
    int in = -1, out[1] = {-1};
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 4, &in, 1, MPI_INT, left, 4, dg, MPI_STATUS_IGNORE));
    CHECK(in == left, "ring over the distributed graph: got %d, expected %d", in, left);
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(dg, &dup));
    check_neighbors(dup, 1, src, sw, 1, dst, dw, 1, "dup of adjacent weighted");
    MPI_OK(MPI_Comm_free(&dup));
    int a, b, c;
    EXPECT_ERR(MPI_Dist_graph_neighbors(dg, 0, out, out, 1, out, out), MPI_ERR_ARG); /* maxindegree too small */
    EXPECT_ERR(MPI_Cart_get(dg, 1, &a, &b, &c), MPI_ERR_TOPOLOGY);
    EXPECT_ERR(MPI_Graph_neighbors(dg, 0, 1, &a), MPI_ERR_TOPOLOGY);
    MPI_OK(MPI_Comm_free(&dg));

    /* unweighted, and a process with no neighbors at all */
    const int deg = rank == 0 ? 0 : 1;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, src, MPI_UNWEIGHTED, deg, dst, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &dg));
    check_neighbors(dg, deg, src, NULL, deg, dst, NULL, 0, "adjacent unweighted");
    MPI_OK(MPI_Comm_free(&dg));
    /* weighted with MPI_WEIGHTS_EMPTY at the process without edges */
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, src, deg ? sw : MPI_WEIGHTS_EMPTY, deg, dst,
                                          deg ? dw : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg));
    check_neighbors(dg, deg, src, sw, deg, dst, dw, 1, "adjacent weighted, empty at 0");
    MPI_OK(MPI_Comm_free(&dg));

    const int bad[1] = {size}, neg_w[1] = {-1};
    EXPECT_ERR(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, sw, 1, dst, dw, MPI_INFO_NULL, 0, &dg),
               MPI_ERR_RANK);
    EXPECT_ERR(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, src, sw, 1, dst, dw, MPI_INFO_NULL, 0, &dg),
               MPI_ERR_ARG);
    EXPECT_ERR(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, neg_w, 1, dst, dw, MPI_INFO_NULL, 0, &dg),
               MPI_ERR_ARG);
    EXPECT_ERR(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &a, &b, &c), MPI_ERR_TOPOLOGY);
}

/* The edges process p gives Dist_graph_create: p -> p+1 and p -> p+2 (mod
   size) with weights 1000*source + destination, and process 0 also the edge
   size-1 -> 0 on behalf of its source. Returns the count, fills arrays. */
static int edges_given_by(int p, int *s, int *d, int *w) {
    int k = 0;
    for (int off = 1; off <= 2; ++off) {
        s[k] = p;
        d[k] = (p + off) % size;
        w[k] = 1000 * s[k] + d[k];
        ++k;
    }
    if (p == 0) {
        s[k] = size - 1;
        d[k] = 0;
        w[k] = 1000 * s[k] + d[k];
        ++k;
    }
    return k;
}

static void test_dist_graph(void) {
    /* what I give: one entry per edge (n sources of degree 1) */
    int s[3], d[3], w[3], ones[3] = {1, 1, 1};
    const int mine = edges_given_by(rank, s, d, w);
    /* what I expect: every edge of every process that ends at me */
    int src[256], sw[256], dst[256], dw[256], in = 0, out = 0;
    for (int p = 0; p < size; ++p) {
        int ps[3], pd[3], pw[3];
        const int k = edges_given_by(p, ps, pd, pw);
        for (int e = 0; e < k; ++e) {
            if (pd[e] == rank) {
                src[in] = ps[e];
                sw[in++] = pw[e];
            }
            if (ps[e] == rank) {
                dst[out] = pd[e];
                dw[out++] = pw[e];
            }
        }
    }
    MPI_Comm dg;
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, mine, s, ones, d, w, MPI_INFO_NULL, 0, &dg));
    check_neighbors(dg, in, src, sw, out, dst, dw, 1, "Dist_graph_create weighted");
    /* traffic along every out-edge arrives along the in-edges */
    MPI_Request reqs[256];
    for (int k = 0; k < out; ++k) MPI_OK(MPI_Isend(&dw[k], 1, MPI_INT, dst[k], 6, dg, &reqs[k]));
    int got[256];
    for (int k = 0; k < in; ++k) MPI_OK(MPI_Recv(&got[k], 1, MPI_INT, MPI_ANY_SOURCE, 6, dg, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Waitall(out, reqs, MPI_STATUSES_IGNORE));
    int want[256];
    memcpy(want, sw, sizeof(int) * (size_t)in);
    sort_pairs(got, NULL, in);
    sort_pairs(want, NULL, in);
    check_ints(got, want, in, "weights received along the in-edges");
    MPI_OK(MPI_Comm_free(&dg));

    /* the same edges as one source with several destinations, unweighted */
    int deg[2] = {2, 0};
    const int srcs[2] = {rank, size - 1};
    int n = 1;
    if (rank == 0) {
        deg[1] = 1;
        n = 2;
    }
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, deg, d, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    check_neighbors(dg, in, src, NULL, out, dst, NULL, 0, "Dist_graph_create unweighted");
    MPI_OK(MPI_Comm_free(&dg));

    /* only rank 0 gives edges (all of them); the others MPI_WEIGHTS_EMPTY */
    int as[768], ad[768], aw[768], total = 0;
    if (rank == 0)
        for (int p = 0; p < size; ++p) total += edges_given_by(p, as + total, ad + total, aw + total);
    int aones[768];
    for (int i = 0; i < total; ++i) aones[i] = 1;
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, total, as, aones, ad, total ? aw : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0,
                                 &dg));
    check_neighbors(dg, in, src, sw, out, dst, dw, 1, "Dist_graph_create from one process");
    MPI_OK(MPI_Comm_free(&dg));

    const int bad[1] = {-1}, one[1] = {1}, negdeg[1] = {-1};
    EXPECT_ERR(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, bad, one, d, w, MPI_INFO_NULL, 0, &dg), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, s, negdeg, d, w, MPI_INFO_NULL, 0, &dg), MPI_ERR_ARG);
    EXPECT_ERR(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, s, one, d, w, MPI_INFO_NULL, 0, &dg), MPI_ERR_ARG);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 1);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int status = -1;
    MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "MPI_COMM_WORLD: Topo_test %d, expected MPI_UNDEFINED", status);
    test_dims();
    test_cart();
    test_graph();
    test_dist_graph_adjacent();
    test_dist_graph();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("topo: all checks passed on %d ranks\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
