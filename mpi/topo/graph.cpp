// Graph topologies: MPI_Graph_create, _get, _neighbors_count, _neighbors,
// _map and MPI_Graphdims_get. Every process holds the whole graph (it is
// given whole at every process). No reordering: node i is rank i of the old
// communicator, and its ranks beyond nnodes get MPI_COMM_NULL.
#include <algorithm>
#include <memory>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/topo/topology.hpp"

namespace ftmpi::mpi {

namespace {

constexpr auto k_graph = Topology::Kind::graph;

// nnodes, index and edges of Graph_create / Graph_map.
int check_graph(const char *call, MPI_Comm comm, int nnodes, const int *index, const int *edges) {
    if (nnodes < 0) return raise(comm, MPI_ERR_ARG, call, "negative nnodes %d (argument nnodes)", nnodes);
    if (nnodes > comm->size)
        return raise(comm, MPI_ERR_ARG, call, "nnodes %d is more than the %d processes of %s (argument nnodes)", nnodes,
                     comm->size, comm_label(comm));
    if (nnodes == 0) return MPI_SUCCESS;
    FTMPI_TRY(check_nonnull(call, comm, index, "index"));
    for (int i = 0; i < nnodes; ++i)
        if (index[i] < (i == 0 ? 0 : index[i - 1]))
            return raise(comm, MPI_ERR_ARG, call, "index[%d] = %d is %s (argument index)", i, index[i],
                         i == 0 ? "negative" : "less than the entry before it");
    const int nedges = index[nnodes - 1];
    if (nedges > 0) FTMPI_TRY(check_nonnull(call, comm, edges, "edges"));
    for (int e = 0; e < nedges; ++e)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return raise(comm, MPI_ERR_ARG, call, "edges[%d] = %d is not a node 0..%d (argument edges)", e, edges[e],
                         nnodes - 1);
    return MPI_SUCCESS;
}

// Node `rank`'s neighbors: edges[first .. last-1].
int neighbors_of(const char *call, MPI_Comm comm, const Topology &t, int rank, int *first, int *last) {
    if (rank < 0 || rank >= static_cast<int>(t.index.size()))
        return raise(comm, MPI_ERR_RANK, call, "invalid rank %d (argument rank; the graph has %zu nodes)", rank,
                     t.index.size());
    const auto r = static_cast<std::size_t>(rank);
    *first = r == 0 ? 0 : t.index[r - 1];
    *last = t.index[r];
    return MPI_SUCCESS;
}

}  // namespace

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

// Collective over comm_old; reorder is ignored (identity).
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int, MPI_Comm *comm_graph) {
    static constexpr const char *call = "MPI_Graph_create";
    FTMPI_TRY(check_topo_comm(call, comm_old, comm_graph, "comm_graph"));
    FTMPI_TRY(check_graph(call, comm_old, nnodes, index, edges));
    auto t = std::make_unique<Topology>();
    t->kind = Topology::Kind::graph;
    if (nnodes > 0) {
        t->index.assign(index, index + nnodes);
        t->edges.assign(edges, edges + index[nnodes - 1]);
    }
    return create_topo_comm(comm_old, call, MPI_SUCCESS, first_ranks(nnodes), std::move(t), comm_graph);
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank) {
    static constexpr const char *call = "MPI_Graph_map";
    FTMPI_TRY(check_topo_comm(call, comm, newrank, "newrank"));
    FTMPI_TRY(check_graph(call, comm, nnodes, index, edges));
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges) {
    static constexpr const char *call = "MPI_Graphdims_get";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_graph, &err);
    if (t == nullptr) return err;
    FTMPI_CHECK(check_nonnull(call, comm, nnodes, "nnodes"));
    FTMPI_CHECK(check_nonnull(call, comm, nedges, "nedges"));
    *nnodes = static_cast<int>(t->index.size());
    *nedges = static_cast<int>(t->edges.size());
    return MPI_SUCCESS;
}

// Copies the first maxindex entries of index and maxedges of edges.
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
    static constexpr const char *call = "MPI_Graph_get";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_graph, &err);
    if (t == nullptr) return err;
    if (maxindex < 0) return raise(comm, MPI_ERR_ARG, call, "negative maxindex %d (argument maxindex)", maxindex);
    if (maxedges < 0) return raise(comm, MPI_ERR_ARG, call, "negative maxedges %d (argument maxedges)", maxedges);
    const auto ni = std::min(static_cast<std::size_t>(maxindex), t->index.size());
    const auto ne = std::min(static_cast<std::size_t>(maxedges), t->edges.size());
    if (ni > 0) FTMPI_CHECK(check_nonnull(call, comm, index, "index"));
    if (ne > 0) FTMPI_CHECK(check_nonnull(call, comm, edges, "edges"));
    std::copy_n(t->index.begin(), ni, index);
    std::copy_n(t->edges.begin(), ne, edges);
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors) {
    static constexpr const char *call = "MPI_Graph_neighbors_count";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_graph, &err);
    if (t == nullptr) return err;
    FTMPI_CHECK(check_nonnull(call, comm, nneighbors, "nneighbors"));
    int first = 0, last = 0;
    FTMPI_TRY(neighbors_of(call, comm, *t, rank, &first, &last));
    *nneighbors = last - first;
    return MPI_SUCCESS;
}

// Copies the first maxneighbors neighbors.
int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
    static constexpr const char *call = "MPI_Graph_neighbors";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_graph, &err);
    if (t == nullptr) return err;
    int first = 0, last = 0;
    FTMPI_TRY(neighbors_of(call, comm, *t, rank, &first, &last));
    if (maxneighbors < 0)
        return raise(comm, MPI_ERR_ARG, call, "negative maxneighbors %d (argument maxneighbors)", maxneighbors);
    const int n = std::min(maxneighbors, last - first);
    if (n > 0) FTMPI_CHECK(check_nonnull(call, comm, neighbors, "neighbors"));
    std::copy_n(t->edges.begin() + first, n, neighbors);
    return MPI_SUCCESS;
}

}  // extern "C"
