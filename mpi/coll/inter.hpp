// Collectives on inter-communicators (mpi/coll/inter.cpp). Each returns
// MPI_SUCCESS or the first error class; the caller raises it.
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

int inter_barrier(MPI_Comm comm);
int inter_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int inter_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                 MPI_Comm comm);
int inter_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

// The MPI entry points' inter-communicator branch: argument checks, the
// collective, and the error raised on comm.
inline bool is_inter(MPI_Comm comm) { return comm != MPI_COMM_NULL && comm->magic == Magic::comm && comm->inter; }
int inter_call_barrier(MPI_Comm comm);
int inter_call_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int inter_call_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                      MPI_Comm comm);
int inter_call_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm);

}  // namespace ftmpi::mpi
