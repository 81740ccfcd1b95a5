// Distributed graph topologies: MPI_Dist_graph_create_adjacent,
// MPI_Dist_graph_create, MPI_Dist_graph_neighbors_count and
// MPI_Dist_graph_neighbors. Each process holds only its own in- and
// out-neighbors. No reordering: the new communicator's ranks are the old ones.
#include <algorithm>
#include <memory>
#include <vector>

#include "mpi/coll/common.hpp"
#include "mpi/topo/topology.hpp"

namespace ftmpi::mpi {

namespace {

constexpr auto k_dist = Topology::Kind::dist_graph;

// A weights argument for n edges: MPI_UNWEIGHTED (*weighted = false), or
// MPI_WEIGHTS_EMPTY / NULL with n == 0, or n nonnegative weights.
int check_weights(const char *call, MPI_Comm comm, const int *w, int n, const char *arg, bool *weighted) {
    *weighted = w != MPI_UNWEIGHTED;
    if (w == MPI_UNWEIGHTED || n == 0) return MPI_SUCCESS;
    if (w == MPI_WEIGHTS_EMPTY || w == nullptr)
        return raise(comm, MPI_ERR_ARG, call, "argument %s is %s with %d edges", arg,
                     w == nullptr ? "NULL" : "MPI_WEIGHTS_EMPTY", n);
    for (int i = 0; i < n; ++i)
        if (w[i] < 0) return raise(comm, MPI_ERR_ARG, call, "negative weight %s[%d] = %d", arg, i, w[i]);
    return MPI_SUCCESS;
}

// n ranks of comm (MPI_PROC_NULL is not one).
int check_ranks(const char *call, MPI_Comm comm, const int *ranks, int n, const char *arg) {
    if (n > 0) FTMPI_TRY(check_nonnull(call, comm, ranks, arg));
    for (int i = 0; i < n; ++i)
        if (ranks[i] < 0 || ranks[i] >= comm->size)
            return raise(comm, MPI_ERR_RANK, call, "invalid rank %s[%d] = %d (%s has %d ranks)", arg, i, ranks[i],
                         comm_label(comm), comm->size);
    return MPI_SUCCESS;
}

int check_degree(const char *call, MPI_Comm comm, int degree, const char *arg) {
    if (degree >= 0) return MPI_SUCCESS;
    return raise(comm, MPI_ERR_ARG, call, "negative %s %d", arg, degree);
}

// One edge as Dist_graph_create sends it to one of its ends.
struct EdgeEnd {
    int out;  // 1: `peer` is the receiver's out-neighbor (the receiver is the source), 0: in-neighbor
    int peer;
    int weight;
};
constexpr int k_ints_per_edge = sizeof(EdgeEnd) / sizeof(int);
static_assert(sizeof(EdgeEnd) == k_ints_per_edge * sizeof(int));

// An alltoallv of ints over comm's collective context, without raising:
// returns MPI_SUCCESS or the error class. Counts and displacements in ints.
int exchange_ints(MPI_Comm comm, const int *sendbuf, const std::vector<int> &scounts, const std::vector<int> &sdispls,
                  int *recvbuf, const std::vector<int> &rcounts, const std::vector<int> &rdispls) {
    const auto n = static_cast<std::size_t>(comm->size);
    std::vector<MPI_Aint> sd(n), rd(n);
    for (std::size_t i = 0; i < n; ++i) {
        sd[i] = static_cast<MPI_Aint>(sdispls[i]) * static_cast<MPI_Aint>(sizeof(int));
        rd[i] = static_cast<MPI_Aint>(rdispls[i]) * static_cast<MPI_Aint>(sizeof(int));
    }
    const std::vector<MPI_Datatype> types(n, MPI_INT);
    Sched s(comm);
    build_alltoallw(s, comm, sendbuf, scounts.data(), sd.data(), types.data(), recvbuf, rcounts.data(), rd.data(),
                    types.data());
    return s.run();
}

std::vector<int> prefix_sums(const std::vector<int> &counts) {
    std::vector<int> d(counts.size());
    for (std::size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
    return d;
}

// Dist_graph_create's exchange: every edge goes to both its ends, which
// learn their neighbors from it (ordered by the rank that gave the edge, then
// by its position there). *weighted is false when any process passed
// MPI_UNWEIGHTED. Every step runs even after an error (no peer waits forever
// on this process); returns the first error class.
int exchange_edges(MPI_Comm comm, const std::vector<std::vector<EdgeEnd>> &to, Topology *t, bool *weighted) {
    const auto n = static_cast<std::size_t>(comm->size);
    // Round 1: how many edge ends go to each peer, and whether I am unweighted.
    std::vector<int> head(2 * n), heads(2 * n, 0), two(n, 2), two_displs(n);
    for (std::size_t p = 0; p < n; ++p) {
        head[2 * p] = static_cast<int>(to[p].size()) * k_ints_per_edge;
        head[2 * p + 1] = *weighted ? 0 : 1;
        two_displs[p] = static_cast<int>(2 * p);
    }
    int err = exchange_ints(comm, head.data(), two, two_displs, heads.data(), two, two_displs);
    // Round 2: the edge ends themselves.
    std::vector<int> scounts(n), rcounts(n, 0);
    std::vector<int> out;
    for (std::size_t p = 0; p < n; ++p) {
        scounts[p] = head[2 * p];
        for (const EdgeEnd &e : to[p]) out.insert(out.end(), {e.out, e.peer, e.weight});
        if (err == MPI_SUCCESS) rcounts[p] = heads[2 * p];
        if (heads[2 * p + 1] != 0) *weighted = false;
    }
    const std::vector<int> sdispls = prefix_sums(scounts), rdispls = prefix_sums(rcounts);
    std::vector<int> in(static_cast<std::size_t>(rdispls.empty() ? 0 : rdispls.back() + rcounts.back()));
    const int e2 = exchange_ints(comm, out.data(), scounts, sdispls, in.data(), rcounts, rdispls);
    if (err == MPI_SUCCESS) err = e2;
    if (err != MPI_SUCCESS) return err;
    for (std::size_t i = 0; i + k_ints_per_edge <= in.size(); i += k_ints_per_edge) {
        const bool is_out = in[i] != 0;
        (is_out ? t->destinations : t->sources).push_back(in[i + 1]);
        (is_out ? t->dest_weights : t->source_weights).push_back(in[i + 2]);
    }
    return MPI_SUCCESS;
}

}  // namespace

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

// Collective over comm_old; info and reorder are ignored.
int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info, int,
                                   MPI_Comm *comm_dist_graph) {
    static constexpr const char *call = "MPI_Dist_graph_create_adjacent";
    FTMPI_TRY(check_topo_comm(call, comm_old, comm_dist_graph, "comm_dist_graph"));
    FTMPI_TRY(check_degree(call, comm_old, indegree, "indegree"));
    FTMPI_TRY(check_degree(call, comm_old, outdegree, "outdegree"));
    FTMPI_TRY(check_ranks(call, comm_old, sources, indegree, "sources"));
    FTMPI_TRY(check_ranks(call, comm_old, destinations, outdegree, "destinations"));
    bool in_weighted = false, out_weighted = false;
    FTMPI_TRY(check_weights(call, comm_old, sourceweights, indegree, "sourceweights", &in_weighted));
    FTMPI_TRY(check_weights(call, comm_old, destweights, outdegree, "destweights", &out_weighted));
    auto t = std::make_unique<Topology>();
    t->kind = Topology::Kind::dist_graph;
    t->weighted = in_weighted && out_weighted;
    t->sources.assign(sources, sources + indegree);
    t->destinations.assign(destinations, destinations + outdegree);
    if (t->weighted) {
        t->source_weights.assign(sourceweights, sourceweights + indegree);
        t->dest_weights.assign(destweights, destweights + outdegree);
    }
    return create_topo_comm(comm_old, call, MPI_SUCCESS, first_ranks(comm_old->size), std::move(t), comm_dist_graph);
}

// Collective over comm_old; info and reorder are ignored. Process i of the
// n given here has edges sources[i] -> destinations[k] for its degrees[i]
// entries k (in order), with weights[k].
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info, int, MPI_Comm *comm_dist_graph) {
    static constexpr const char *call = "MPI_Dist_graph_create";
    FTMPI_TRY(check_topo_comm(call, comm_old, comm_dist_graph, "comm_dist_graph"));
    FTMPI_TRY(check_degree(call, comm_old, n, "n"));
    FTMPI_TRY(check_ranks(call, comm_old, sources, n, "sources"));
    if (n > 0) FTMPI_TRY(check_nonnull(call, comm_old, degrees, "degrees"));
    long long nedges = 0;
    for (int i = 0; i < n; ++i) {
        if (degrees[i] < 0) return raise(comm_old, MPI_ERR_ARG, call, "negative degrees[%d] = %d", i, degrees[i]);
        nedges += degrees[i];
    }
    if (nedges > 0x7fffffff)
        return raise(comm_old, MPI_ERR_ARG, call, "%lld edges (argument degrees) are more than an int counts", nedges);
    const int ne = static_cast<int>(nedges);
    FTMPI_TRY(check_ranks(call, comm_old, destinations, ne, "destinations"));
    bool weighted = false;
    FTMPI_TRY(check_weights(call, comm_old, weights, ne, "weights", &weighted));
    std::vector<std::vector<EdgeEnd>> to(static_cast<std::size_t>(comm_old->size));
    for (int i = 0, k = 0; i < n; ++i)
        for (int j = 0; j < degrees[i]; ++j, ++k) {
            const int w = weighted ? weights[k] : 0;
            to[static_cast<std::size_t>(sources[i])].push_back({1, destinations[k], w});
            to[static_cast<std::size_t>(destinations[k])].push_back({0, sources[i], w});
        }
    auto t = std::make_unique<Topology>();
    t->kind = Topology::Kind::dist_graph;
    const int err = exchange_edges(comm_old, to, t.get(), &weighted);
    t->weighted = weighted;
    if (!weighted) {
        t->source_weights.clear();
        t->dest_weights.clear();
    }
    return create_topo_comm(comm_old, call, err, first_ranks(comm_old->size), std::move(t), comm_dist_graph);
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted) {
    static constexpr const char *call = "MPI_Dist_graph_neighbors_count";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_dist, &err);
    if (t == nullptr) return err;
    FTMPI_CHECK(check_nonnull(call, comm, indegree, "indegree"));
    FTMPI_CHECK(check_nonnull(call, comm, outdegree, "outdegree"));
    FTMPI_CHECK(check_nonnull(call, comm, weighted, "weighted"));
    *indegree = static_cast<int>(t->sources.size());
    *outdegree = static_cast<int>(t->destinations.size());
    *weighted = t->weighted ? 1 : 0;
    return MPI_SUCCESS;
}

// The weights are written only for a weighted graph and a weights argument
// other than MPI_UNWEIGHTED (ignored otherwise). maxindegree / maxoutdegree
// below the degree is MPI_ERR_ARG.
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                             int destinations[], int destweights[]) {
    static constexpr const char *call = "MPI_Dist_graph_neighbors";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_dist, &err);
    if (t == nullptr) return err;
    struct Side {
        const std::vector<int> &ranks, &weights;
        int max;
        int *out_ranks, *out_weights;
        const char *max_arg, *ranks_arg, *weights_arg;
    };
    for (const Side &s : {Side{t->sources, t->source_weights, maxindegree, sources, sourceweights, "maxindegree",
                               "sources", "sourceweights"},
                          Side{t->destinations, t->dest_weights, maxoutdegree, destinations, destweights,
                               "maxoutdegree", "destinations", "destweights"}}) {
        const int degree = static_cast<int>(s.ranks.size());
        if (s.max < degree)
            return raise(comm, MPI_ERR_ARG, call, "%s %d is less than the degree %d (argument %s)", s.max_arg, s.max,
                         degree, s.max_arg);
        if (degree == 0) continue;
        FTMPI_CHECK(check_nonnull(call, comm, s.out_ranks, s.ranks_arg));
        std::copy(s.ranks.begin(), s.ranks.end(), s.out_ranks);
        if (!t->weighted || s.out_weights == MPI_UNWEIGHTED) continue;  // no weights wanted
        if (s.out_weights == MPI_WEIGHTS_EMPTY || s.out_weights == nullptr)
            return raise(comm, MPI_ERR_ARG, call, "argument %s is %s with degree %d", s.weights_arg,
                         s.out_weights == nullptr ? "NULL" : "MPI_WEIGHTS_EMPTY", degree);
        std::copy(s.weights.begin(), s.weights.end(), s.out_weights);
    }
    return MPI_SUCCESS;
}

}  // extern "C"
