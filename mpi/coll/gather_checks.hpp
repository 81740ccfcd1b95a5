// The argument checks of gather(v), scatter(v), allgather(v) and
// alltoall(v,w), blocking, nonblocking and persistent (mpi/coll/gather.cpp).
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

int check_gather(const char *call, MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype stype,
                 const void *recvbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, int root, bool v,
                 const MPI_Datatype *types = nullptr);
int check_scatter(const char *call, MPI_Comm comm, const void *sendbuf, const int *scounts, const int *displs,
                  MPI_Datatype stype, const void *recvbuf, int rcount, MPI_Datatype rtype, int root, bool v,
                  const MPI_Datatype *types = nullptr);
int check_allgather(const char *call, MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype stype,
                    const void *recvbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, bool v,
                    const MPI_Datatype *types = nullptr);
// Alltoall family: counts/displacements per peer (v: arrays; otherwise one
// count), types per peer when w.
int check_alltoall(const char *call, MPI_Comm comm, const void *sendbuf, const int *scounts, const void *sdispls,
                   const MPI_Datatype *stypes, const void *recvbuf, const int *rcounts, const void *rdispls,
                   const MPI_Datatype *rtypes, bool v, bool w);

}  // namespace ftmpi::mpi
