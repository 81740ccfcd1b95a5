// Datatype argument checks (see mpi/checks.hpp for the conventions): each
// returns MPI_SUCCESS or raise()'s result, with the call and argument named.
#pragma once

#include <initializer_list>
#include <utility>

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"

namespace ftmpi::mpi {

// A datatype used to move data (communication, MPI_Pack): valid and committed.
inline int check_comm_type(const char *call, MPI_Comm c, MPI_Datatype t, const char *arg = "datatype") {
    FTMPI_TRY(check_type(call, c, t, arg));
    if (t->committed) return MPI_SUCCESS;
    return raise(c, MPI_ERR_TYPE, call, "datatype is not committed (argument %s; call MPI_Type_commit first)", arg);
}

// `count` elements of valid type `t` at buf + disp bytes (disp: the
// displacement a v/w collective adds). A NULL buf is MPI_BOTTOM, legal
// whenever no data byte lands at address 0: count 0, a type without data,
// data at absolute addresses (a derived type's displacements, or the
// displacement of an Alltoallw, Neighbor_alltoallw, ...). Only data that
// would start at address 0 is MPI_ERR_BUFFER (MPICH's test too).
inline bool buffer_ok(const void *buf, int count, MPI_Datatype t, MPI_Aint disp = 0) {
    return buf != nullptr || count == 0 || t->size == 0 || disp + type_layout(t).true_lb != 0;
}
inline int check_typed_buffer(const char *call, MPI_Comm c, const void *buf, int count, MPI_Datatype t,
                              const char *arg = "buf", MPI_Aint disp = 0) {
    if (buffer_ok(buf, count, t, disp)) return MPI_SUCCESS;
    return raise(c, MPI_ERR_BUFFER, call, "%s is NULL (MPI_BOTTOM) with count %d of a datatype whose data starts at 0",
                 arg, count);
}

// An array argument that may be NULL only when `count` is 0.
inline int check_array(const char *call, const void *p, int count, const char *arg) {
    if (p != nullptr || count == 0) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "argument %s is NULL with count %d", arg, count);
}

// index >= 0: the argument is element `index` of array `arg`.
inline int check_blocklength(const char *call, int len, const char *arg = "blocklength", int index = -1) {
    if (len >= 0) return MPI_SUCCESS;
    if (index >= 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative %s[%d] %d", arg, index, len);
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative %s %d", arg, len);
}

// The arguments every constructor has: a count (0 where it has none), the
// old type and where the new one goes.
inline int check_constructor(const char *call, int count, MPI_Datatype old, MPI_Datatype *newtype) {
    FTMPI_CHECK(check_count(call, MPI_COMM_NULL, count));
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, old, "oldtype"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, newtype, "newtype"));
    return MPI_SUCCESS;
}

// The shape arguments of the array constructors (subarray, darray): ndims > 0
// (MPI_ERR_DIMS), each per-dimension array (pointer, argument name) non-null,
// and order MPI_ORDER_C or MPI_ORDER_FORTRAN.
inline int check_array_shape(const char *call, int ndims,
                             std::initializer_list<std::pair<const void *, const char *>> arrays, int order) {
    if (ndims <= 0) return raise(MPI_COMM_NULL, MPI_ERR_DIMS, call, "ndims is %d (must be positive)", ndims);
    for (const auto &[array, arg] : arrays) FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, array, arg));
    if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "order is %d (must be MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
}

// The handle the caller passes in to a free/commit: non-null pointer, valid type.
inline int check_type_slot(const char *call, MPI_Datatype *slot) {
    FTMPI_TRY(check_nonnull(call, MPI_COMM_NULL, slot, "datatype"));
    return check_type(call, MPI_COMM_NULL, *slot);
}

}  // namespace ftmpi::mpi
