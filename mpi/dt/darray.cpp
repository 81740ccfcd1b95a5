// MPI_Type_create_darray (MPI 3.1 §4.1.4): the part of a global array that
// one process of a process grid owns under a HPF-style distribution.
//
// The grid is row-major (the last dimension varies fastest in the rank, as
// for Cartesian topologies) whatever `order` says; `order` is the storage
// order of the global array. Along dimension d, process coordinate c owns
//   NONE:          every index (psizes[d] must be 1; the darg is ignored);
//   BLOCK(b):      [c*b, min((c+1)*b, gsize)), b = ceil(gsize/psize) by default;
//                  an explicit b must satisfy b * psize >= gsize;
//   CYCLIC(b):     the blocks [k*b, k*b + b) with k % psize == c, b = 1 by default.
// The type holds those elements in the array's storage order, and its bounds
// are the whole global array (lb 0, extent product(gsizes) * oldtype's extent).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"

using namespace ftmpi::mpi;

namespace {

// The block size of dimension `d` (distrib BLOCK or CYCLIC, darg valid).
MPI_Aint block_of(int distrib, int darg, MPI_Aint gsize, int psize) {
    if (darg != MPI_DISTRIBUTE_DFLT_DARG) return darg;
    return distrib == MPI_DISTRIBUTE_CYCLIC ? 1 : (gsize + psize - 1) / psize;
}

// The indices of dimension `d` that grid coordinate `coord` owns.
std::vector<IndexRun> owned_runs(MPI_Aint gsize, int distrib, int darg, int psize, int coord) {
    std::vector<IndexRun> runs;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        runs.push_back({0, gsize});
        return runs;
    }
    const MPI_Aint b = block_of(distrib, darg, gsize, psize);
    // BLOCK is CYCLIC whose first round covers the whole dimension.
    const MPI_Aint period = distrib == MPI_DISTRIBUTE_BLOCK ? gsize : b * psize;
    for (MPI_Aint s = static_cast<MPI_Aint>(coord) * b; s < gsize; s += period)
        runs.push_back({s, std::min<MPI_Aint>(b, gsize - s)});
    return runs;
}

int check_dimension(const char *call, int d, long long gsize, int distrib, int darg, int psize) {
    if (gsize <= 0)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "array_of_gsizes[%d] is %lld (must be positive)", d, gsize);
    if (psize <= 0)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "array_of_psizes[%d] is %d (must be positive)", d, psize);
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        if (psize == 1) return MPI_SUCCESS;
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call,
                     "array_of_psizes[%d] is %d but dimension %d is MPI_DISTRIBUTE_NONE (must be 1)", d, psize, d);
    case MPI_DISTRIBUTE_BLOCK:
    case MPI_DISTRIBUTE_CYCLIC: break;
    default:
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call,
                     "array_of_distribs[%d] is %d (MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE)", d, distrib);
    }
    if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call,
                     "array_of_dargs[%d] is %d (must be positive or MPI_DISTRIBUTE_DFLT_DARG)", d, darg);
    if (distrib == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG &&
        static_cast<MPI_Aint>(darg) * psize < gsize)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call,
                     "array_of_dargs[%d] is %d: %d blocks of it do not cover array_of_gsizes[%d] = %lld", d, darg,
                     psize, d, gsize);
    return MPI_SUCCESS;
}

// MPI_Type_create_darray, and (G = MPI_Count) MPI_Type_create_darray_c,
// whose contents hold the global sizes as large counts.
template <typename G>
int darray(const char *call, int size, int rank, int ndims, const G array_of_gsizes[], const int array_of_distribs[],
           const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
           MPI_Datatype *newtype) {
    FTMPI_TRY(check_constructor(call, 0, oldtype, newtype));
    if (size <= 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "size is %d (must be positive)", size);
    if (rank < 0 || rank >= size)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "rank is %d (must be in 0..%d)", rank, size - 1);
    FTMPI_TRY(check_array_shape(call, ndims,
                                {{array_of_gsizes, "array_of_gsizes"},
                                 {array_of_distribs, "array_of_distribs"},
                                 {array_of_dargs, "array_of_dargs"},
                                 {array_of_psizes, "array_of_psizes"}},
                                order));
    MPI_Aint procs = 1;
    for (int d = 0; d < ndims; ++d) {
        FTMPI_TRY(check_dimension(call, d, static_cast<long long>(array_of_gsizes[d]), array_of_distribs[d],
                                  array_of_dargs[d], array_of_psizes[d]));
        procs *= array_of_psizes[d];
    }
    if (procs != size)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call,
                     "the process grid array_of_psizes has %lld processes but size is %d",
                     static_cast<long long>(procs), size);

    const auto n = static_cast<std::size_t>(ndims);
    std::vector<MPI_Aint> gsizes(array_of_gsizes, array_of_gsizes + n);
    std::vector<std::vector<IndexRun>> runs(n);
    for (int d = ndims - 1, r = rank; d >= 0; r /= array_of_psizes[d], --d)  // row-major grid coordinates
        runs[static_cast<std::size_t>(d)] = owned_runs(gsizes[static_cast<std::size_t>(d)], array_of_distribs[d],
                                                       array_of_dargs[d], array_of_psizes[d], r % array_of_psizes[d]);

    Contents c{MPI_COMBINER_DARRAY, {size, rank, ndims}, {}, {oldtype}};
    if constexpr (std::is_same_v<G, int>) c.ints.insert(c.ints.end(), array_of_gsizes, array_of_gsizes + n);
    else c.large.assign(array_of_gsizes, array_of_gsizes + n);
    for (const int *a : {array_of_distribs, array_of_dargs, array_of_psizes}) c.ints.insert(c.ints.end(), a, a + n);
    c.ints.push_back(order);
    return finish_type(array_layout(gsizes, runs, order, oldtype), std::move(c), newtype);
}

}  // namespace

extern "C" {

int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                           const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype) {
    return darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                  array_of_psizes, order, oldtype, newtype);
}
int MPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                             const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                             int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return darray("MPI_Type_create_darray_c", size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                  array_of_psizes, order, oldtype, newtype);
}

}  // extern "C"
