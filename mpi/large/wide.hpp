// The v and w collectives' large-count forms when a count or displacement
// of theirs is beyond INT_MAX (mpi/api/large.py calls these then): each block
// becomes one element of a type made of its elements at its displacement
// (elements_type), and the call runs with counts of 0 or 1, displacements 0
// and a type per block. The messages are those of the int form, so the other
// members may call either.
//
// Arguments: the _c function's, after how it runs (blocking unless nb;
// nonblocking or persistent as run says) and its request and info
// (MPI_INFO_NULL when it has none).
#pragma once

#include <mpi.h>

#include "mpi/coll/common.hpp"

namespace ftmpi::mpi {

int wide_gatherv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                 MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                 const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int wide_scatterv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                  const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int wide_allgatherv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                    MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm);
int wide_alltoallv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                   const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int wide_alltoallw(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                   const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm);
int wide_neighbor_allgatherv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info,
                             const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                             MPI_Comm comm);
int wide_neighbor_alltoallv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info,
                            const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int wide_neighbor_alltoallw(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info,
                            const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);

}  // namespace ftmpi::mpi
