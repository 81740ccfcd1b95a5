// Neighborhood collectives (MPI 3.1 §7.6): MPI_(I)neighbor_allgather(v) and
// MPI_(I)neighbor_alltoall(v,w), as one-round schedules of the collective
// core (mpi/coll/sched.hpp) over the communicator's topology.
//
// Neighbours, in MPI's order:
//   Cartesian: for each dimension, the -1 then the +1 neighbour (both the
//   sources and the destinations), MPI_PROC_NULL past a non-periodic edge;
//   graph: the node's edges in order (sources = destinations);
//   distributed graph: the sources and the destinations as given.
// One call's messages share a tag, so a pair that are neighbours twice (a
// periodic dimension of size 1 or 2, a multigraph) pair up in posting order.
// For a Cartesian topology each dimension posts its sends +1 first and its
// receives -1 first: the message that went in the +1 direction is the one
// received from the -1 neighbour.
#include <memory>
#include <vector>

#include "mpi/coll/common.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/topo/topology.hpp"

namespace ftmpi::mpi {
namespace {

std::vector<std::size_t> in_order(std::size_t n) {
    std::vector<std::size_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = i;
    return v;
}

Neighbours find_neighbours(MPI_Comm comm) {
    const Topology &t = *comm->topo;
    Neighbours n;
    switch (t.kind) {
    case Topology::Kind::cart: {
        const std::size_t nd = t.dims.size();
        std::vector<int> coords(nd);
        cart_coords_of(t, comm->rank, coords.data());
        for (std::size_t d = 0; d < nd; ++d) {
            for (int dir : {-1, +1}) {
                std::vector<int> c = coords;
                c[d] += dir;
                int r = MPI_PROC_NULL;
                if (t.periods[d] != 0) {
                    c[d] = (c[d] % t.dims[d] + t.dims[d]) % t.dims[d];
                    r = cart_rank_of(t, c.data());
                } else if (c[d] >= 0 && c[d] < t.dims[d]) {
                    r = cart_rank_of(t, c.data());
                }
                n.in.push_back(r);
            }
            n.sends.push_back(2 * d + 1);
            n.sends.push_back(2 * d);
            n.receives.push_back(2 * d);
            n.receives.push_back(2 * d + 1);
        }
        n.out = n.in;
        return n;
    }
    case Topology::Kind::graph: {
        const auto me = static_cast<std::size_t>(comm->rank);
        const int first = me == 0 ? 0 : t.index[me - 1];
        n.in.assign(t.edges.begin() + first, t.edges.begin() + t.index[me]);
        n.out = n.in;
        break;
    }
    case Topology::Kind::dist_graph:
        n.in = t.sources;
        n.out = t.destinations;
        break;
    }
    n.sends = in_order(n.out.size());
    n.receives = in_order(n.in.size());
    return n;
}

// Found once per communicator.
const Neighbours &neighbours_of(MPI_Comm comm) {
    Topology &t = *comm->topo;
    if (!t.neighbours) t.neighbours = std::make_shared<const Neighbours>(find_neighbours(comm));
    return *t.neighbours;
}

// A call's blocks, `n` on a side: where block i is (bytes from the buffer),
// its count and type. Filled by one of the functions below.
struct Blocks {
    explicit Blocks(std::size_t n) : disp(n, 0), count(n, 0), type(n, MPI_DATATYPE_NULL) {}
    PerRank<MPI_Aint> disp;
    PerRank<int> count;
    PerRank<MPI_Datatype> type;
};

void regular(Blocks &b, int count, MPI_Datatype t) {
    for (std::size_t i = 0; i < b.count.size(); ++i)
        b.disp[i] = static_cast<MPI_Aint>(i) * count * t->extent, b.count[i] = count, b.type[i] = t;
}

void displaced(Blocks &b, const int *counts, const int *displs, MPI_Datatype t) {
    for (std::size_t i = 0; i < b.count.size(); ++i)
        b.disp[i] = static_cast<MPI_Aint>(displs[i]) * t->extent, b.count[i] = counts[i], b.type[i] = t;
}

// The same send buffer to every destination (allgather).
void repeated(Blocks &b, int count, MPI_Datatype t) {
    for (std::size_t i = 0; i < b.count.size(); ++i) b.count[i] = count, b.type[i] = t;
}

void build(Sched &s, const Neighbours &n, const void *sendbuf, const Blocks &sb, void *recvbuf, const Blocks &rb) {
    for (std::size_t i : n.receives) {
        if (n.in[i] == MPI_PROC_NULL || rb.count[i] == 0) continue;
        const int peer = s.root(n.in[i]);
        if (peer >= 0) s.add_recv(static_cast<char *>(recvbuf) + rb.disp[i], rb.count[i], rb.type[i], peer);
    }
    for (std::size_t i : n.sends) {
        if (n.out[i] == MPI_PROC_NULL || sb.count[i] == 0) continue;
        const int peer = s.root(n.out[i]);
        if (peer >= 0) s.add_send(static_cast<const char *>(sendbuf) + sb.disp[i], sb.count[i], sb.type[i], peer);
    }
    s.next_round();
}

// The checks every neighborhood collective shares: a topology, and the
// buffers and types of each side (counts checked per block).
int check_start(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_intra_coll_start(call, comm));
    if (comm->topo == nullptr)
        return raise(comm, MPI_ERR_TOPOLOGY, call, "%s has no process topology (argument comm)", comm_label(comm));
    return MPI_SUCCESS;
}

int check_blocks(const char *call, MPI_Comm comm, const void *buf, const Blocks &b, const char *buf_arg,
                 const char *counts_arg, const char *types_arg) {
    FTMPI_TRY(check_no_in_place(call, comm, buf, buf_arg));
    for (std::size_t i = 0; i < b.count.size(); ++i) {
        if (b.count[i] < 0) return raise(comm, MPI_ERR_COUNT, call, "negative %s[%zu] = %d", counts_arg, i, b.count[i]);
        FTMPI_TRY(check_type(call, comm, b.type[i], types_arg));
        if (!b.type[i]->committed)
            return raise(comm, MPI_ERR_TYPE, call, "datatype not committed (argument %s)", types_arg);
        FTMPI_TRY(check_typed_buffer(call, comm, buf, b.count[i], b.type[i], buf_arg, b.disp[i]));
    }
    return MPI_SUCCESS;
}

int neighbor(const char *call, bool nb, MPI_Request *request, MPI_Comm comm, const void *sendbuf, const Blocks &sb,
             void *recvbuf, const Blocks &rb, const Neighbours &n, Run run = Run::nonblocking) {
    FTMPI_CHECK(check_blocks(call, comm, sendbuf, sb, "sendbuf", "sendcounts", "sendtype"));
    FTMPI_CHECK(check_blocks(call, comm, recvbuf, rb, "recvbuf", "recvcounts", "recvtype"));
    if (nb) {
        FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
        return run_nonblocking(comm, request, run, [&](Sched &s) { build(s, n, sendbuf, sb, recvbuf, rb); });
    }
    return run_blocking(call, comm, [&](Sched &s) { build(s, n, sendbuf, sb, recvbuf, rb); });
}

int nbr_allgather(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount,
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                  Run run = Run::nonblocking) {
    FTMPI_TRY(check_start(call, comm));
    FTMPI_CHECK(check_type(call, comm, recvtype, "recvtype"));
    const Neighbours &n = neighbours_of(comm);
    Blocks sb(n.out.size()), rb(n.in.size());
    repeated(sb, sendcount, sendtype);
    regular(rb, recvcount, recvtype);
    return neighbor(call, nb, request, comm, sendbuf, sb, recvbuf, rb, n, run);
}

int nbr_allgatherv(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount,
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                   MPI_Datatype recvtype, MPI_Comm comm, Run run = Run::nonblocking) {
    FTMPI_TRY(check_start(call, comm));
    FTMPI_CHECK(check_type(call, comm, recvtype, "recvtype"));
    const Neighbours &n = neighbours_of(comm);
    if (!n.in.empty()) {
        FTMPI_CHECK(check_nonnull(call, comm, recvcounts, "recvcounts"));
        FTMPI_CHECK(check_nonnull(call, comm, displs, "displs"));
    }
    Blocks sb(n.out.size()), rb(n.in.size());
    repeated(sb, sendcount, sendtype);
    displaced(rb, recvcounts, displs, recvtype);
    return neighbor(call, nb, request, comm, sendbuf, sb, recvbuf, rb, n, run);
}

int nbr_alltoall(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount,
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                 Run run = Run::nonblocking) {
    FTMPI_TRY(check_start(call, comm));
    FTMPI_CHECK(check_type(call, comm, sendtype, "sendtype"));
    FTMPI_CHECK(check_type(call, comm, recvtype, "recvtype"));
    const Neighbours &n = neighbours_of(comm);
    Blocks sb(n.out.size()), rb(n.in.size());
    regular(sb, sendcount, sendtype);
    regular(rb, recvcount, recvtype);
    return neighbor(call, nb, request, comm, sendbuf, sb, recvbuf, rb, n, run);
}

int nbr_alltoallv(const char *call, bool nb, MPI_Request *request, const void *sendbuf, const int sendcounts[],
                  const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, Run run = Run::nonblocking) {
    FTMPI_TRY(check_start(call, comm));
    FTMPI_CHECK(check_type(call, comm, sendtype, "sendtype"));
    FTMPI_CHECK(check_type(call, comm, recvtype, "recvtype"));
    const Neighbours &n = neighbours_of(comm);
    if (!n.out.empty()) {
        FTMPI_CHECK(check_nonnull(call, comm, sendcounts, "sendcounts"));
        FTMPI_CHECK(check_nonnull(call, comm, sdispls, "sdispls"));
    }
    if (!n.in.empty()) {
        FTMPI_CHECK(check_nonnull(call, comm, recvcounts, "recvcounts"));
        FTMPI_CHECK(check_nonnull(call, comm, rdispls, "rdispls"));
    }
    Blocks sb(n.out.size()), rb(n.in.size());
    displaced(sb, sendcounts, sdispls, sendtype);
    displaced(rb, recvcounts, rdispls, recvtype);
    return neighbor(call, nb, request, comm, sendbuf, sb, recvbuf, rb, n, run);
}

int nbr_alltoallw(const char *call, bool nb, MPI_Request *request, const void *sendbuf, const int sendcounts[],
                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, Run run = Run::nonblocking) {
    FTMPI_TRY(check_start(call, comm));
    const Neighbours &n = neighbours_of(comm);
    if (!n.out.empty()) {
        FTMPI_CHECK(check_nonnull(call, comm, sendcounts, "sendcounts"));
        FTMPI_CHECK(check_nonnull(call, comm, sdispls, "sdispls"));
        FTMPI_CHECK(check_nonnull(call, comm, sendtypes, "sendtypes"));
    }
    if (!n.in.empty()) {
        FTMPI_CHECK(check_nonnull(call, comm, recvcounts, "recvcounts"));
        FTMPI_CHECK(check_nonnull(call, comm, rdispls, "rdispls"));
        FTMPI_CHECK(check_nonnull(call, comm, recvtypes, "recvtypes"));
    }
    Blocks sb(n.out.size()), rb(n.in.size());
    for (std::size_t i = 0; i < n.out.size(); ++i)
        sb.disp[i] = sdispls[i], sb.count[i] = sendcounts[i], sb.type[i] = sendtypes[i];
    for (std::size_t i = 0; i < n.in.size(); ++i)
        rb.disp[i] = rdispls[i], rb.count[i] = recvcounts[i], rb.type[i] = recvtypes[i];
    return neighbor(call, nb, request, comm, sendbuf, sb, recvbuf, rb, n, run);
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
    return nbr_allgather("MPI_Neighbor_allgather", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm);
}
int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return nbr_allgather("MPI_Ineighbor_allgather", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm);
}
// MPI 4.0
int MPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Neighbor_allgather_init", comm, info));
    return nbr_allgather("MPI_Neighbor_allgather_init", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, Run::persistent);
}
int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    return nbr_allgatherv("MPI_Neighbor_allgatherv", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                          displs, recvtype, comm);
}
int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request) {
    return nbr_allgatherv("MPI_Ineighbor_allgatherv", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                          displs, recvtype, comm);
}
// MPI 4.0
int MPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Neighbor_allgatherv_init", comm, info));
    return nbr_allgatherv("MPI_Neighbor_allgatherv_init", true, request, sendbuf, sendcount, sendtype, recvbuf,
                          recvcounts, displs, recvtype, comm, Run::persistent);
}
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
    return nbr_alltoall("MPI_Neighbor_alltoall", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm);
}
int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return nbr_alltoall("MPI_Ineighbor_alltoall", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm);
}
// MPI 4.0
int MPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Neighbor_alltoall_init", comm, info));
    return nbr_alltoall("MPI_Neighbor_alltoall_init", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, Run::persistent);
}
int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm) {
    return nbr_alltoallv("MPI_Neighbor_alltoallv", false, nullptr, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                         recvcounts, rdispls, recvtype, comm);
}
int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *request) {
    return nbr_alltoallv("MPI_Ineighbor_alltoallv", true, request, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                         recvcounts, rdispls, recvtype, comm);
}
// MPI 4.0
int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Neighbor_alltoallv_init", comm, info));
    return nbr_alltoallv("MPI_Neighbor_alltoallv_init", true, request, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                         recvcounts, rdispls, recvtype, comm, Run::persistent);
}
int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return nbr_alltoallw("MPI_Neighbor_alltoallw", false, nullptr, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                         recvcounts, rdispls, recvtypes, comm);
}
int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request) {
    return nbr_alltoallw("MPI_Ineighbor_alltoallw", true, request, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                         recvcounts, rdispls, recvtypes, comm);
}
// MPI 4.0
int MPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Neighbor_alltoallw_init", comm, info));
    return nbr_alltoallw("MPI_Neighbor_alltoallw_init", true, request, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                         recvcounts, rdispls, recvtypes, comm, Run::persistent);
}

}  // extern "C"
