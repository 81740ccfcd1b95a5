// Process topologies (MPI-3.1 chapter 7): the description a communicator
// carries, and what the topology calls share.
//
// A communicator owns its Topology (ftmpi_comm_s::topo, null when it has
// none): MPI_Comm_dup copies it, freeing the communicator deletes it.
// Cartesian ranks are row-major (the last dimension varies fastest) and the
// topology constructors never reorder: rank i of the new communicator is
// rank i of the old one.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// This process's neighbours in a topology, as the neighborhood collectives
// post to them (mpi/topo/neighbor.cpp).
struct Neighbours {
    std::vector<int> in, out;           // comm ranks or MPI_PROC_NULL, by block index
    std::vector<std::size_t> sends;     // block indices of `out` in posting order
    std::vector<std::size_t> receives;  // block indices of `in` in posting order
};

struct Topology {
    enum class Kind { cart, graph, dist_graph } kind;
    // Cartesian: one entry per dimension (periods are 0 or 1).
    std::vector<int> dims, periods;
    // Graph (MPI_Graph_create's arrays): node i's neighbors are
    // edges[index[i-1] .. index[i]-1], with index[-1] = 0.
    std::vector<int> index, edges;
    // Distributed graph: this process's in- and out-neighbors (comm ranks) and
    // their weights (empty when unweighted).
    std::vector<int> sources, source_weights, destinations, dest_weights;
    bool weighted = false;
    // This process's neighbours, found at the first neighborhood collective
    // (a topology never changes; a copy is a duplicate's, of the same rank).
    std::shared_ptr<const Neighbours> neighbours;
};

// Balanced factorization (MPI_Dims_create without argument checks): fills the
// zero entries of dims[0..ndims-1] so that the product of all entries is
// nnodes and the filled entries are as close to each other as possible (the
// smallest difference between the largest and the smallest; among those, the
// largest smallest entry, as MPICH), in non-increasing order. False when the nonzero entries' product does not
// divide nnodes (or, without zero entries, is not nnodes). nnodes >= 1 and
// the nonzero entries are positive.
bool balanced_dims(int nnodes, int ndims, int *dims);

// Cartesian rank <-> coordinates (coordinates already in range).
int cart_rank_of(const Topology &t, const int *coords);
void cart_coords_of(const Topology &t, int rank, int *coords);

// The topology of `comm` when it is of kind `kind`; otherwise raises
// MPI_ERR_TOPOLOGY (MPI_ERR_COMM for an invalid communicator) from `call` and
// returns null, the error class in *err.
const Topology *topology_of(const char *call, MPI_Comm comm, Topology::Kind kind, int *err);

// Checks shared by the constructors: an initialized library and a valid
// intra-communicator (MPI_ERR_COMM otherwise), and a non-null result argument.
int check_topo_comm(const char *call, MPI_Comm comm, const void *newcomm, const char *newcomm_arg);

// The comm ranks 0..n-1 (the members of a topology built without reordering).
std::vector<int> first_ranks(int n);

// Creates the communicator of a topology constructor: the members of `comm`
// whose comm ranks are listed in `ranks` (ascending), the others get
// MPI_COMM_NULL, and `topo` goes to the new communicator. Collective over
// comm, and uniform under failures like every creator (mpi/comm/comm_create.cpp):
// `err` is this member's outcome of any exchange done before. Errors are
// raised on comm from `call`.
int create_topo_comm(MPI_Comm comm, const char *call, int err, const std::vector<int> &ranks,
                     std::unique_ptr<Topology> topo, MPI_Comm *newcomm);

}  // namespace ftmpi::mpi
