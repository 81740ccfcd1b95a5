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
// process has not yet taken in), comm not revoked (the schedule fails
// then), a predefined datatype, and at most k_direct_bytes.
bool direct_fits(MPI_Comm comm, int count, MPI_Datatype t);

// Most members a rooted or all-to-all collective takes on the direct path
// (it posts a transfer per member before it waits).
inline constexpr int k_direct_peers = 32;

// An intra-communicator of at most k_direct_peers members: the direct path's
// tables (its posted transfers) hold one entry per member.
inline bool direct_small(MPI_Comm comm) { return !comm->inter && comm->size <= k_direct_peers; }

// Whether a gather, scatter, allgather or alltoall (v or not) on an
// intra-communicator of at most k_direct_peers members takes the direct
// path. Rooted (gather, scatter; allgather as if every member were the
// root): `mine` is the side every member uses (gather's send, scatter's
// receive; MPI_IN_PLACE at the root: unused), `many` the root's other side,
// a count per member. A pair (alltoall, not in place): a count per member
// on each side.
bool direct_fits_rooted(MPI_Comm comm, int root, const void *mine, int mine_count, MPI_Datatype mine_type,
                        const int *many_counts, MPI_Datatype many_type);
bool direct_fits_pair(MPI_Comm comm, const void *sendbuf, const int *scounts, MPI_Datatype st, const int *rcounts,
                      MPI_Datatype rt);

// The bcast's messages, for the direct path (direct_bcast) and the schedule
// (build_bcast) alike, in ranks relative to the root (vr = 0 is the root) of
// `n`, for a message of `bytes`: recv(from) for the one receive of a
// non-root, send(to) for each send in order, round() after the receive and
// after the sends.
// - 3 or 4 ranks and at most k_direct_bytes: the root sends to every rank
//   itself, so a rank waits for the root only. Oversubscribed (4 ranks on 2
//   cores) runs of bcasts then settle where a rank that comes after the
//   root never gives its CPU away (Open MPI's linear bcast, forced: 0.26 to
//   0.43 us in 5 of 5 runs; its binomial: 4 of 5; ftmpi's binomial: 1 of 6,
//   the others 8-13 us).
// - 3 or 4 ranks and at least k_bcast_linear_bytes, where the caller allows
//   it (`large_linear`: the bcast's schedule): the same, so that every rank
//   pulls its copy from the root's buffer (single copy) at once, where the
//   tree's second round waited for its first. 4 ranks on 2 cores, osu_bcast
//   at 128/256/512 KiB: 23.2/43.5/91.1 -> 18.5/34.8/71.7 us (Open MPI
//   19.5/42.3/81.4); at 64 KiB, eager there, the tree stays ahead (8.9
//   against 10.3).
// - otherwise a binomial tree.
inline constexpr std::size_t k_bcast_linear_bytes = 128 * 1024;
template <class Recv, class Send, class Round>
void bcast_pattern(int n, int vr, std::size_t bytes, Recv &&recv, Send &&send, Round &&round,
                   bool large_linear = false) {
    if ((n == 3 || n == 4) && (bytes <= k_direct_bytes || (large_linear && bytes >= k_bcast_linear_bytes))) {
        if (vr != 0) {
            recv(0);
        } else {
            for (int v = 1; v < n; ++v) send(v);
        }
        round();
        return;
    }
    int mask = 1;
    while (mask < n) {
        if (vr & mask) {
            recv(vr - mask);
            round();
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n) send(vr + mask);
    round();
}

// Each returns MPI_SUCCESS or the first error class (as the schedules do).
int direct_barrier(MPI_Comm comm);
int direct_bcast(MPI_Comm comm, void *buf, int count, MPI_Datatype t, int root);
int direct_reduce(MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, const ftmpi_op_s &op,
                  int root);
int direct_allreduce(MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,
                     const ftmpi_op_s &op);
// Where direct_fits_rooted / _pair hold (counts and displacements in
// elements, as the v calls take them).
int direct_gatherv(MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype st, void *recvbuf, const int *rcounts,
                   const int *displs, MPI_Datatype rt, int root);
int direct_scatterv(MPI_Comm comm, const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype st,
                    void *recvbuf, int rcount, MPI_Datatype rt, int root);
int direct_allgatherv(MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype st, void *recvbuf,
                      const int *rcounts, const int *displs, MPI_Datatype rt);
int direct_alltoallv(MPI_Comm comm, const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype st,
                     void *recvbuf, const int *rcounts, const int *rdispls, MPI_Datatype rt);
// A commutative op's reduce-scatter whose whole vector fits (direct_fits), on
// an intra-communicator of at most k_direct_peers members.
int direct_reduce_scatter(MPI_Comm comm, const void *sendbuf, void *recvbuf, const int *counts, MPI_Datatype t,
                          const ftmpi_op_s &op);

}  // namespace ftmpi::mpi
