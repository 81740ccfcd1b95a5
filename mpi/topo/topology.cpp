// What the topology calls share: the lookup of a communicator's topology,
// the constructors' common checks and creation, and MPI_Topo_test.
#include "mpi/topo/topology.hpp"

#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"

namespace ftmpi::mpi {

namespace {
const char *kind_name(Topology::Kind kind) {
    switch (kind) {
    case Topology::Kind::cart: return "a Cartesian topology";
    case Topology::Kind::graph: return "a graph topology";
    case Topology::Kind::dist_graph: return "a distributed graph topology";
    }
    return "?";
}
}  // namespace

const Topology *topology_of(const char *call, MPI_Comm comm, Topology::Kind kind, int *err) {
    *err = check_init(call);
    if (*err == MPI_SUCCESS) *err = check_comm(call, comm);
    if (*err != MPI_SUCCESS) return nullptr;
    if (comm->topo != nullptr && comm->topo->kind == kind) return comm->topo;
    *err = raise(comm, MPI_ERR_TOPOLOGY, call, "%s has %s, not %s (argument comm)", comm_label(comm),
                 comm->topo == nullptr ? "no topology" : kind_name(comm->topo->kind), kind_name(kind));
    return nullptr;
}

int check_topo_comm(const char *call, MPI_Comm comm, const void *newcomm, const char *newcomm_arg) {
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_comm(call, comm));
    if (comm->inter)
        return raise(comm, MPI_ERR_COMM, call, "%s is an inter-communicator (argument comm)", comm_label(comm));
    return check_nonnull(call, comm, newcomm, newcomm_arg);
}

std::vector<int> first_ranks(int n) {
    std::vector<int> r(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = i;
    return r;
}

int create_topo_comm(MPI_Comm comm, const char *call, int err, const std::vector<int> &ranks,
                     std::unique_ptr<Topology> topo, MPI_Comm *newcomm) {
    std::vector<int> procs;
    procs.reserve(ranks.size());
    for (int r : ranks) procs.push_back(comm->procs[static_cast<std::size_t>(r)]);
    MPI_Comm c = MPI_COMM_NULL;
    FTMPI_TRY(create_subcomm(comm, call, err, std::move(procs), &c));
    if (c != MPI_COMM_NULL) c->topo = topo.release();
    *newcomm = c;
    return MPI_SUCCESS;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Topo_test(MPI_Comm comm, int *status) {
    FTMPI_TRY(check_init("MPI_Topo_test"));
    FTMPI_CHECK(check_comm("MPI_Topo_test", comm));
    FTMPI_CHECK(check_nonnull("MPI_Topo_test", comm, status, "status"));
    if (comm->topo == nullptr) {
        *status = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    switch (comm->topo->kind) {
    case Topology::Kind::cart: *status = MPI_CART; break;
    case Topology::Kind::graph: *status = MPI_GRAPH; break;
    case Topology::Kind::dist_graph: *status = MPI_DIST_GRAPH; break;
    }
    return MPI_SUCCESS;
}

}  // extern "C"
