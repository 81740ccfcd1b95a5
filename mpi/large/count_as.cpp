#include "mpi/large/count_as.hpp"

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/objects.hpp"

namespace ftmpi::mpi {
namespace {

void neighbor_degrees(MPI_Comm comm, Shape &s) {
    int kind = MPI_UNDEFINED, rank = 0;
    if (MPI_Topo_test(comm, &kind) != MPI_SUCCESS) return;
    MPI_Comm_rank(comm, &rank);
    int in = -1, out = -1, weighted = 0, ndims = 0;
    if (kind == MPI_CART && MPI_Cartdim_get(comm, &ndims) == MPI_SUCCESS) {
        in = out = 2 * ndims;
    } else if (kind == MPI_GRAPH) {
        if (MPI_Graph_neighbors_count(comm, rank, &in) == MPI_SUCCESS) out = in;
    } else if (kind == MPI_DIST_GRAPH) {
        if (MPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted) != MPI_SUCCESS) in = out = -1;
    }
    s.in = in;
    s.out = out;
}

}  // namespace

CountAs::CountAs(MPI_Count count, MPI_Datatype type) : count_(int_or_invalid(count)), type_(type) {
    if (count <= 0x7fffffff) return;  // fits (or negative: the twin reports it)
    if (!valid_type(type) || !type->committed) {
        count_ = 0;  // the twin reports the type
        return;
    }
    const MPI_Datatype big = elements_type(count, type);
    if (big == MPI_DATATYPE_NULL) return;  // out of memory: the twin reports count -1
    count_ = 1;
    type_ = big;
    owned_ = true;
}

CountAs::~CountAs() {
    if (owned_) MPI_Type_free(&type_);
}

void CountAs::keep(const MPI_Request *request, int rc) const {
    if (!owned_ || rc != MPI_SUCCESS || request == nullptr || *request == MPI_REQUEST_NULL) return;
    if ((*request)->datatype != nullptr) return;  // a point-to-point request holds its own
    (*request)->datatype = type_;
    dt_acquire(type_);  // released with the request (release_request)
}

Shape shape_of(MPI_Comm comm, bool neighbor, int root) {
    Shape s;
    if (!valid_comm(comm)) return s;  // the twin reports it
    // An inter-communicator's size is its remote group's (objects.hpp).
    s.local = comm->inter ? static_cast<int>(comm->local_procs.size()) : comm->size;
    s.in = s.out = comm->size;
    s.root_side = comm->inter ? root == MPI_ROOT : comm->rank == root;
    if (neighbor) neighbor_degrees(comm, s);
    return s;
}

}  // namespace ftmpi::mpi
