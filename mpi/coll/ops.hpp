// Reduction operations: the predefined ops, user ops, and their kernels.
//
// Contract: op_apply(op, in, inout, count, type) computes
// inout[i] = in[i] op inout[i] for i < count (the MPI_User_function
// convention: `in` is the lower-ranked operand). It never raises; callers
// validate the (op, type) pair first with op_supports.
#pragma once

#include <mpi.h>

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Ids of the predefined ops (ftmpi_op_s::id); user ops have id 0.
enum OpId : int {
    op_user = 0,
    op_max = 1,
    op_min,
    op_sum,
    op_prod,
    op_land,
    op_band,
    op_lor,
    op_bor,
    op_lxor,
    op_bxor,
    op_minloc,
    op_maxloc,
    op_replace,
    op_no_op,
};

// MPI_SUCCESS when `op` may reduce elements of `type`; otherwise the class to
// raise: MPI_ERR_OP (predefined op not defined on that predefined type) or
// MPI_ERR_UNSUPPORTED_OPERATION (predefined op on a derived datatype whose
// signature mixes basic types). Homogeneous derived types (a contiguous or
// vector of MPI_INT, ...) reduce like their basic type.
int op_supports(MPI_Op op, MPI_Datatype type);

// The vector unit of the predefined ops' loops, widest last: x86-64's
// 16-byte vectors (base, and the only one elsewhere), AVX2, AVX-512.
enum class OpIsa : int { base, avx2, avx512 };
// The one in use: FTMPI_OP_ISA's, or the widest the CPU has (decided at
// the first call).
OpIsa op_isa();
// From now on `isa`, or the widest below it that the CPU has (returned):
// tests run each one's loops.
OpIsa op_use_isa(OpIsa isa);

// inout = in op inout, elementwise. `op` may be a copy of the handle's object.
void op_apply(const ftmpi_op_s &op, const void *in, void *inout, int count, MPI_Datatype type);
// out = in op src, elementwise, for a contiguous type; out overlaps neither
// in nor src. One pass for the predefined sum, prod, max and min on
// predefined types; a copy of src into out and op_apply otherwise.
void op_combine(const ftmpi_op_s &op, const void *in, const void *src, void *out, int count, MPI_Datatype type);

// Validates comm-less op arguments for `call`; raises on `comm`.
int check_op(const char *call, MPI_Comm comm, MPI_Op op);
// check_op plus op_supports, raising with a message naming the call.
int check_op_type(const char *call, MPI_Comm comm, MPI_Op op, MPI_Datatype type);

}  // namespace ftmpi::mpi
