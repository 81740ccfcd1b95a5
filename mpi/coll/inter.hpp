// Collectives on inter-communicators (MPI-3.1 §5.2.2): schedule builders
// (mpi/coll/inter.cpp) for a Sched made on the inter-communicator. The
// entry points (barrier.cpp, gather.cpp, reduce.cpp) check the arguments and
// pick these builders for an inter-communicator.
//
// Roots: MPI_ROOT at the root, MPI_PROC_NULL at the other members of its
// group, the root's rank in the remote group at every member of the other
// group. Per-rank arrays (counts, displacements, types) of the v and w
// versions are indexed by remote rank, except reduce_scatter's counts, which
// are per local rank (each group scatters the other group's reduction among
// its own members).
//
// Failures: in every collective without a root each member's result depends
// on every member of both groups (all traffic meets at the two leaders, local
// rank 0, before reaching anyone), so a member that failed to enter makes the
// call fail at every survivor of both groups (spec 001's rule). The rooted
// ones fail where the root's data, or the root's result, depends on the
// failed process. Every schedule runs to its end after an error, so no
// survivor waits forever.
#pragma once

#include "mpi/coll/sched.hpp"

namespace ftmpi::mpi {

void build_inter_barrier(Sched &s);
void build_inter_bcast(Sched &s, void *buf, int count, MPI_Datatype t, int root);
void build_inter_reduce(Sched &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, int root);
void build_inter_allreduce(Sched &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t);
// counts: per local rank (their sum is the length of every member's vector).
void build_inter_reduce_scatter(Sched &s, const void *sendbuf, void *recvbuf, const int *counts, MPI_Datatype t);
void build_inter_gatherv(Sched &s, const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                         const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                         const MPI_Datatype *types = nullptr);
void build_inter_scatterv(Sched &s, const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype stype,
                          void *recvbuf, int rcount, MPI_Datatype rtype, int root, const MPI_Datatype *types = nullptr);
void build_inter_allgatherv(Sched &s, const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                            const int *rcounts, const int *displs, MPI_Datatype rtype,
                            const MPI_Datatype *types = nullptr);
// A vector longer than INT_MAX elements (MPI_Count counts, per local rank).
void build_inter_reduce_scatter_wide(Sched &s, const void *sendbuf, void *recvbuf, const MPI_Count *counts,
                                     MPI_Datatype t);
// Displacements in bytes, one type per remote rank.
void build_inter_alltoallw(Sched &s, const void *sendbuf, const int *scounts, const MPI_Aint *sdispls,
                           const MPI_Datatype *stypes, void *recvbuf, const int *rcounts, const MPI_Aint *rdispls,
                           const MPI_Datatype *rtypes);

}  // namespace ftmpi::mpi
