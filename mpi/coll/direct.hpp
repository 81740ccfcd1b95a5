// Small blocking collectives without a schedule: barrier, bcast, reduce and
// allreduce of a few predefined elements, on the failure-free path.
//
// They run the very algorithms and tags of the schedules (barrier.cpp,
// reduce.cpp), one step at a time from the caller's stack: no rounds to
// build, no closures, no scratch allocation. So a member on this path and one
// on the schedule's (a member that already learned of a failure takes the
// schedule) exchange the same messages and still match. Failure behaviour is
// the schedules': every step runs even after an error, whose class the later
// sends carry on (k_coll_poison), so each survivor gets an error and none
// waits forever.
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Largest message of the direct path (bytes; the stack holds a scratch copy).
inline constexpr std::size_t k_direct_bytes = 2048;

// Whether `count` elements of `t` go on the direct path on comm: nothing
// failed so far (neither known here nor recognized by a validate that this
// process has not yet taken in), a predefined datatype, and at most
// k_direct_bytes.
bool direct_fits(MPI_Comm comm, int count, MPI_Datatype t);

// Each returns MPI_SUCCESS or the first error class (as the schedules do).
int direct_barrier(MPI_Comm comm);
int direct_bcast(MPI_Comm comm, void *buf, int count, MPI_Datatype t, int root);
int direct_reduce(MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, const ftmpi_op_s &op,
                  int root);
int direct_allreduce(MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,
                     const ftmpi_op_s &op);

}  // namespace ftmpi::mpi
