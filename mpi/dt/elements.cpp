// elements_type (derived.hpp): counts and displacements beyond INT_MAX as
// one element of a derived type, built with the public constructors.
#include "mpi/dt/derived.hpp"

namespace ftmpi::mpi {
namespace {

constexpr MPI_Count k_chunk = MPI_Count{1} << 30;

}  // namespace

MPI_Datatype elements_type(MPI_Count count, MPI_Datatype t, MPI_Aint at) {
    // Whole chunks of 2^30 elements, and the rest, each placed where it starts.
    const MPI_Count q = count / k_chunk, r = count % k_chunk;
    MPI_Datatype parts[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL}, out = MPI_DATATYPE_NULL;
    int lens[2] = {1, static_cast<int>(r)};
    MPI_Aint disps[2] = {at, at + static_cast<MPI_Aint>(q * k_chunk) * t->extent};
    int n = 0;
    if (q > 0) {
        MPI_Datatype chunk = MPI_DATATYPE_NULL;
        if (MPI_Type_contiguous(static_cast<int>(k_chunk), t, &chunk) != MPI_SUCCESS) return MPI_DATATYPE_NULL;
        const int rc = MPI_Type_contiguous(static_cast<int>(q), chunk, &parts[0]);
        MPI_Type_free(&chunk);
        if (rc != MPI_SUCCESS) return MPI_DATATYPE_NULL;
        n = 1;
    }
    if (r > 0 || n == 0) {  // the rest (or an empty block: zero elements)
        parts[n] = t;
        lens[n] = static_cast<int>(r);
        disps[n] = disps[1];
        ++n;
    }
    if (MPI_Type_create_struct(n, lens, disps, parts, &out) != MPI_SUCCESS) out = MPI_DATATYPE_NULL;
    if (q > 0) MPI_Type_free(&parts[0]);
    if (out == MPI_DATATYPE_NULL) return out;
    MPI_Type_commit(&out);
    out->derived->element = t;
    out->derived->elements = count;
    out->derived->elements_at = at;
    return out;
}

}  // namespace ftmpi::mpi
