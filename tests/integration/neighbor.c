/*
 * Neighborhood collectives, all ten calls, on Cartesian (periodic and not,
 * 1-D and 2-D), graph and distributed-graph topologies, against a reference
 * computed from the topology queries: block j that rank s sends goes to its
 * j-th destination, and lands in the receiver's slot for s (MPI 3.1 §7.6;
 * Cartesian: what goes in the +1 direction is received from the -1
 * neighbour). Slots of MPI_PROC_NULL neighbours are left alone.
 */
#include "testlib.h"

enum { SENTINEL = -12345, MAXN = 64 };

static int rank, size;

/* Where each of my in-slots comes from: the sender and its block index
   (-1: MPI_PROC_NULL). */
typedef struct {
    int nin, nout;
    int src[MAXN], src_block[MAXN];
} Expect;

static void check_slots(const char *what, const Expect *e, const int *got, int value_of_block) {
    for (int i = 0; i < e->nin; ++i) {
        const int want = e->src[i] < 0 ? SENTINEL : 1000 * e->src[i] + (value_of_block ? e->src_block[i] : 7);
        CHECK(got[i] == want, "%s: slot %d from %d holds %d, expected %d", what, i, e->src[i], got[i], want);
    }
}

static void run_all(const char *topo, MPI_Comm comm, const Expect *e) {
    int send[MAXN], recv[MAXN], one = 1000 * rank + 7;
    int counts_in[MAXN], counts_out[MAXN], displs_in[MAXN], displs_out[MAXN];
    MPI_Aint bdispl_in[MAXN], bdispl_out[MAXN];
    MPI_Datatype types_in[MAXN], types_out[MAXN];
    for (int j = 0; j < e->nout; ++j) {
        send[j] = 1000 * rank + j;
        counts_out[j] = 1;
        displs_out[j] = j;
        bdispl_out[j] = (MPI_Aint)(j * (int)sizeof(int));
        types_out[j] = MPI_INT;
    }
    for (int i = 0; i < e->nin; ++i) {
        counts_in[i] = 1;
        displs_in[i] = e->nin - 1 - i; /* reversed: displacements are honoured */
        bdispl_in[i] = (MPI_Aint)((e->nin - 1 - i) * (int)sizeof(int));
        types_in[i] = MPI_INT;
    }
    char what[96];
    int tmp[MAXN];
    MPI_Request req;
#define RESET() \
    for (int i_ = 0; i_ < MAXN; ++i_) recv[i_] = SENTINEL
#define UNREVERSE()                                                          \
    do {                                                                     \
        for (int i_ = 0; i_ < e->nin; ++i_) tmp[i_] = recv[e->nin - 1 - i_]; \
    } while (0)
    for (int nb = 0; nb < 2; ++nb) {
        RESET();
        if (nb) {
            MPI_OK(MPI_Ineighbor_allgather(&one, 1, MPI_INT, recv, 1, MPI_INT, comm, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Neighbor_allgather(&one, 1, MPI_INT, recv, 1, MPI_INT, comm));
        }
        snprintf(what, sizeof what, "%s %sneighbor_allgather", topo, nb ? "i" : "");
        check_slots(what, e, recv, 0);

        RESET();
        if (nb) {
            MPI_OK(MPI_Ineighbor_allgatherv(&one, 1, MPI_INT, recv, counts_in, displs_in, MPI_INT, comm, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Neighbor_allgatherv(&one, 1, MPI_INT, recv, counts_in, displs_in, MPI_INT, comm));
        }
        UNREVERSE();
        snprintf(what, sizeof what, "%s %sneighbor_allgatherv", topo, nb ? "i" : "");
        check_slots(what, e, tmp, 0);

        RESET();
        if (nb) {
            MPI_OK(MPI_Ineighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, comm, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, comm));
        }
        snprintf(what, sizeof what, "%s %sneighbor_alltoall", topo, nb ? "i" : "");
        check_slots(what, e, recv, 1);

        RESET();
        if (nb) {
            MPI_OK(MPI_Ineighbor_alltoallv(send, counts_out, displs_out, MPI_INT, recv, counts_in, displs_in, MPI_INT,
                                           comm, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Neighbor_alltoallv(send, counts_out, displs_out, MPI_INT, recv, counts_in, displs_in, MPI_INT,
                                          comm));
        }
        UNREVERSE();
        snprintf(what, sizeof what, "%s %sneighbor_alltoallv", topo, nb ? "i" : "");
        check_slots(what, e, tmp, 1);

        RESET();
        if (nb) {
            MPI_OK(MPI_Ineighbor_alltoallw(send, counts_out, bdispl_out, types_out, recv, counts_in, bdispl_in,
                                           types_in, comm, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Neighbor_alltoallw(send, counts_out, bdispl_out, types_out, recv, counts_in, bdispl_in, types_in,
                                          comm));
        }
        UNREVERSE();
        snprintf(what, sizeof what, "%s %sneighbor_alltoallw", topo, nb ? "i" : "");
        check_slots(what, e, tmp, 1);
    }
}

/* The k-th slot of `src` in my list pairs with the k-th occurrence of me in
   src's destination list. */
static int nth_block(const int *dests, int ndest, int me, int k) {
    for (int j = 0; j < ndest; ++j)
        if (dests[j] == me && k-- == 0) return j;
    return -1;
}

static void cart(int ndims, const int *periods, const char *name) {
    int dims[2] = {0, 0};
    MPI_OK(MPI_Dims_create(size, ndims, dims));
    MPI_Comm comm;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &comm));
    Expect e;
    e.nin = e.nout = 2 * ndims;
    for (int d = 0; d < ndims; ++d) {
        int minus, plus;
        MPI_OK(MPI_Cart_shift(comm, d, 1, &minus, &plus));
        e.src[2 * d] = minus; /* my -1 neighbour sent its +1 block */
        e.src_block[2 * d] = 2 * d + 1;
        e.src[2 * d + 1] = plus; /* my +1 neighbour sent its -1 block */
        e.src_block[2 * d + 1] = 2 * d;
        if (minus == MPI_PROC_NULL) e.src[2 * d] = -1;
        if (plus == MPI_PROC_NULL) e.src[2 * d + 1] = -1;
    }
    char topo[64];
    snprintf(topo, sizeof topo, "%s %dx%d", name, dims[0], ndims > 1 ? dims[1] : 1);
    run_all(topo, comm, &e);
    MPI_Comm_free(&comm);
}

static void graph(void) {
    /* A ring plus a star around rank 0: symmetric, and a multigraph at small
       sizes (the same neighbour listed twice or three times). */
    int index[MAXN], edges[4 * MAXN], ne = 0;
    for (int r = 0; r < size; ++r) {
        edges[ne++] = (r + 1) % size;
        edges[ne++] = (r + size - 1) % size;
        if (r != 0) edges[ne++] = 0;
        else
            for (int q = 1; q < size; ++q) edges[ne++] = q;
        index[r] = ne;
    }
    MPI_Comm comm;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &comm));
    Expect e;
    int mine[MAXN];
    MPI_OK(MPI_Graph_neighbors_count(comm, rank, &e.nin));
    MPI_OK(MPI_Graph_neighbors(comm, rank, MAXN, mine));
    e.nout = e.nin;
    for (int i = 0; i < e.nin; ++i) {
        int k = 0, theirs[MAXN], nt;
        for (int p = 0; p < i; ++p) k += mine[p] == mine[i];
        MPI_OK(MPI_Graph_neighbors_count(comm, mine[i], &nt));
        MPI_OK(MPI_Graph_neighbors(comm, mine[i], MAXN, theirs));
        e.src[i] = mine[i];
        e.src_block[i] = nth_block(theirs, nt, rank, k);
        CHECK(e.src_block[i] >= 0, "graph: %d does not list %d", mine[i], rank);
    }
    run_all("graph", comm, &e);
    MPI_Comm_free(&comm);
}

static void dist_graph(void) {
    /* Each rank sends to r+1 and r+2, so it hears from r-1 and r-2. */
    int dests[2] = {(rank + 1) % size, (rank + 2) % size};
    int srcs[2] = {(rank + size - 1) % size, (rank + 2 * size - 2) % size};
    MPI_Comm comm;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dests, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &comm));
    Expect e;
    e.nin = e.nout = 2;
    for (int i = 0; i < 2; ++i) {
        const int s = srcs[i];
        const int theirs[2] = {(s + 1) % size, (s + 2) % size};
        int k = 0;
        for (int p = 0; p < i; ++p) k += srcs[p] == s;
        e.src[i] = s;
        e.src_block[i] = nth_block(theirs, 2, rank, k);
        CHECK(e.src_block[i] >= 0, "dist graph: %d does not send to %d", s, rank);
    }
    run_all("dist_graph", comm, &e);
    MPI_Comm_free(&comm);

    /* Without a topology: MPI_ERR_TOPOLOGY. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, y[MAXN], cls = -1;
    MPI_Error_class(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "neighbor_allgather on MPI_COMM_WORLD: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 1);
    CHECK(size <= MAXN / 3, "at most %d ranks", MAXN / 3);
    const int periodic[2] = {1, 1}, open[2] = {0, 0}, mixed[2] = {1, 0};
    cart(1, periodic, "cart periodic");
    cart(1, open, "cart open");
    cart(2, periodic, "cart periodic");
    cart(2, open, "cart open");
    cart(2, mixed, "cart mixed");
    graph();
    dist_graph();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("neighbor: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
