// Cartesian topologies: MPI_Cart_create, _get, _rank, _coords, _shift, _sub,
// _map and MPI_Cartdim_get. No reordering: grid position i (row-major) is
// rank i of the old communicator, and its ranks beyond the grid get
// MPI_COMM_NULL.
#include <memory>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/topo/topology.hpp"

namespace ftmpi::mpi {

int cart_rank_of(const Topology &t, const int *coords) {
    int rank = 0;
    for (std::size_t i = 0; i < t.dims.size(); ++i) rank = rank * t.dims[i] + coords[i];
    return rank;
}

void cart_coords_of(const Topology &t, int rank, int *coords) {
    for (std::size_t i = t.dims.size(); i-- > 0;) {
        coords[i] = rank % t.dims[i];
        rank /= t.dims[i];
    }
}

namespace {

constexpr auto k_cart = Topology::Kind::cart;

// ndims, dims and periods of Cart_create / Cart_map; the grid's size in *nodes.
int check_grid(const char *call, MPI_Comm comm, int ndims, const int *dims, const int *periods, int *nodes) {
    if (ndims < 0) return raise(comm, MPI_ERR_ARG, call, "negative ndims %d (argument ndims)", ndims);
    if (ndims > 0) {
        FTMPI_TRY(check_nonnull(call, comm, dims, "dims"));
        FTMPI_TRY(check_nonnull(call, comm, periods, "periods"));
    }
    long long n = 1;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] <= 0)
            return raise(comm, MPI_ERR_DIMS, call, "dims[%d] = %d is not positive (argument dims)", i, dims[i]);
        n *= dims[i];
        if (n > comm->size)
            return raise(comm, MPI_ERR_DIMS, call, "the grid (argument dims) has more than the %d processes of %s",
                         comm->size, comm_label(comm));
    }
    *nodes = static_cast<int>(n);
    return MPI_SUCCESS;
}

int check_maxdims(const char *call, MPI_Comm comm, const Topology &t, int maxdims) {
    const int ndims = static_cast<int>(t.dims.size());
    if (maxdims >= ndims) return MPI_SUCCESS;
    return raise(comm, MPI_ERR_ARG, call, "maxdims %d is less than the %d dimensions of %s (argument maxdims)", maxdims,
                 ndims, comm_label(comm));
}

}  // namespace

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

// Collective over comm_old; reorder is ignored (identity).
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int, MPI_Comm *comm_cart) {
    static constexpr const char *call = "MPI_Cart_create";
    FTMPI_TRY(check_topo_comm(call, comm_old, comm_cart, "comm_cart"));
    int nodes = 0;
    FTMPI_TRY(check_grid(call, comm_old, ndims, dims, periods, &nodes));
    auto t = std::make_unique<Topology>();
    t->kind = Topology::Kind::cart;
    t->dims.assign(dims, dims + ndims);
    for (int i = 0; i < ndims; ++i) t->periods.push_back(periods[i] ? 1 : 0);
    return create_topo_comm(comm_old, call, MPI_SUCCESS, first_ranks(nodes), std::move(t), comm_cart);
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank) {
    static constexpr const char *call = "MPI_Cart_map";
    FTMPI_TRY(check_topo_comm(call, comm, newrank, "newrank"));
    int nodes = 0;
    FTMPI_TRY(check_grid(call, comm, ndims, dims, periods, &nodes));
    *newrank = comm->rank < nodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims) {
    int err = MPI_SUCCESS;
    const Topology *t = topology_of("MPI_Cartdim_get", comm, k_cart, &err);
    if (t == nullptr) return err;
    FTMPI_CHECK(check_nonnull("MPI_Cartdim_get", comm, ndims, "ndims"));
    *ndims = static_cast<int>(t->dims.size());
    return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    static constexpr const char *call = "MPI_Cart_get";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_cart, &err);
    if (t == nullptr) return err;
    FTMPI_TRY(check_maxdims(call, comm, *t, maxdims));
    const int ndims = static_cast<int>(t->dims.size());
    if (ndims > 0) {
        FTMPI_CHECK(check_nonnull(call, comm, dims, "dims"));
        FTMPI_CHECK(check_nonnull(call, comm, periods, "periods"));
        FTMPI_CHECK(check_nonnull(call, comm, coords, "coords"));
    }
    std::copy(t->dims.begin(), t->dims.end(), dims);
    std::copy(t->periods.begin(), t->periods.end(), periods);
    cart_coords_of(*t, comm->rank, coords);
    return MPI_SUCCESS;
}

// Coordinates out of range wrap in periodic dimensions and are MPI_ERR_ARG in
// the others.
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank) {
    static constexpr const char *call = "MPI_Cart_rank";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_cart, &err);
    if (t == nullptr) return err;
    FTMPI_CHECK(check_nonnull(call, comm, rank, "rank"));
    const std::size_t ndims = t->dims.size();
    if (ndims > 0) FTMPI_CHECK(check_nonnull(call, comm, coords, "coords"));
    std::vector<int> c(ndims);
    for (std::size_t i = 0; i < ndims; ++i) {
        const int d = t->dims[i];
        if (t->periods[i]) {
            c[i] = (coords[i] % d + d) % d;
        } else if (coords[i] < 0 || coords[i] >= d) {
            return raise(comm, MPI_ERR_ARG, call,
                         "coords[%zu] = %d is outside 0..%d in a non-periodic dimension (argument coords)", i,
                         coords[i], d - 1);
        } else {
            c[i] = coords[i];
        }
    }
    *rank = cart_rank_of(*t, c.data());
    return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    static constexpr const char *call = "MPI_Cart_coords";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_cart, &err);
    if (t == nullptr) return err;
    if (rank < 0 || rank >= comm->size)
        return raise(comm, MPI_ERR_RANK, call, "invalid rank %d (argument rank; %s has %d ranks)", rank,
                     comm_label(comm), comm->size);
    FTMPI_TRY(check_maxdims(call, comm, *t, maxdims));
    if (!t->dims.empty()) FTMPI_CHECK(check_nonnull(call, comm, coords, "coords"));
    cart_coords_of(*t, rank, coords);
    return MPI_SUCCESS;
}

// The neighbors `disp` steps down (source) and up (dest) along `direction`;
// MPI_PROC_NULL past the edge of a non-periodic dimension.
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest) {
    static constexpr const char *call = "MPI_Cart_shift";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_cart, &err);
    if (t == nullptr) return err;
    FTMPI_CHECK(check_nonnull(call, comm, rank_source, "rank_source"));
    FTMPI_CHECK(check_nonnull(call, comm, rank_dest, "rank_dest"));
    const int ndims = static_cast<int>(t->dims.size());
    if (direction < 0 || direction >= ndims)
        return raise(comm, MPI_ERR_ARG, call, "direction %d is outside 0..%d (argument direction)", direction,
                     ndims - 1);
    std::vector<int> c(static_cast<std::size_t>(ndims));
    cart_coords_of(*t, comm->rank, c.data());
    const auto dir = static_cast<std::size_t>(direction);
    const int d = t->dims[dir], mine = c[dir];
    auto neighbor = [&](long long to) {
        if (t->periods[dir]) to = ((to % d) + d) % d;
        else if (to < 0 || to >= d) return MPI_PROC_NULL;
        c[dir] = static_cast<int>(to);
        return cart_rank_of(*t, c.data());
    };
    *rank_source = neighbor(static_cast<long long>(mine) - disp);
    *rank_dest = neighbor(static_cast<long long>(mine) + disp);
    return MPI_SUCCESS;
}

// Collective over comm: every process gets the subgrid through it that spans
// the dimensions kept (a zero-dimensional one of itself alone when none is).
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
    static constexpr const char *call = "MPI_Cart_sub";
    int err = MPI_SUCCESS;
    const Topology *t = topology_of(call, comm, k_cart, &err);
    if (t == nullptr) return err;
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    const std::size_t ndims = t->dims.size();
    if (ndims > 0) FTMPI_CHECK(check_nonnull(call, comm, remain_dims, "remain_dims"));
    auto sub = std::make_unique<Topology>();
    sub->kind = Topology::Kind::cart;
    for (std::size_t i = 0; i < ndims; ++i)
        if (remain_dims[i]) {
            sub->dims.push_back(t->dims[i]);
            sub->periods.push_back(t->periods[i]);
        }
    // My subgrid: the ranks whose coordinates in the dropped dimensions are
    // mine, in rank order (row-major in the kept dimensions).
    std::vector<int> mine(ndims), other(ndims), ranks;
    cart_coords_of(*t, comm->rank, mine.data());
    for (int r = 0; r < comm->size; ++r) {
        cart_coords_of(*t, r, other.data());
        bool same = true;
        for (std::size_t i = 0; i < ndims && same; ++i) same = remain_dims[i] || other[i] == mine[i];
        if (same) ranks.push_back(r);
    }
    return create_topo_comm(comm, call, MPI_SUCCESS, ranks, std::move(sub), newcomm);
}

}  // extern "C"
