// Barrier over the failure-aware point-to-point core.
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Barrier on comm's collective context (barrier_pattern). Every step is run
// even after an error, so no surviving member waits forever on this process.
// Returns MPI_SUCCESS or the first error class seen (MPI_ERR_PROC_FAILED).
int barrier(MPI_Comm comm);

// The barrier's messages, for the direct path (direct_barrier) and the
// schedule (build_ibarrier) alike: rank `me` of `n` calls step(to, from) for
// each exchange of a token in order (-1: no such side), and round() after
// each round.
// - 3 or 4 ranks: a fan-in to rank 0, then a fan-out from it. Each rank
//   waits for one message only, from rank 0. With more ranks than cores
//   (every wait yields the CPU) a run of back-to-back barriers then settles
//   in the rhythm where each rank gives its CPU away once per barrier far
//   more often than with dissemination: 4 ranks on 2 cores, per-run
//   medians of 11-13 us in 10 of 16 runs, against 0 of 5 (22-24 us) with
//   dissemination. Open MPI behaves alike: its default at 4 ranks (a fan-in
//   and fan-out too) settled fast in 3 of 3 runs, forced to dissemination
//   (bruck) in 1 of 3, to recursive doubling in 0 of 3.
// - otherwise dissemination: ceil(log2 n) rounds, to me + 2^k and from
//   me - 2^k.
template <class Step, class Round>
void barrier_pattern(int n, int me, Step &&step, Round &&round) {
    if (n == 3 || n == 4) {
        if (me == 0) {
            for (int r = 1; r < n; ++r) step(-1, r);
            round();
            for (int r = 1; r < n; ++r) step(r, -1);
        } else {
            step(0, 0);
        }
        round();
        return;
    }
    for (int dist = 1; dist < n; dist *= 2) {
        step((me + dist) % n, (me - dist + n) % n);
        round();
    }
}

}  // namespace ftmpi::mpi
