// Each communicator's view of the process's failure record (spec 004's set L
// and the acknowledged subset), and the wildcard-receive rules built on it.
#pragma once

#include <algorithm>
#include <vector>

#include "mpi/objects.hpp"
#include "mpi/state.hpp"

namespace ftmpi::mpi {

void refresh_failed_slow(MPI_Comm c);

// Brings c->failed up to date with the process's failure record.
inline void refresh_failed(MPI_Comm c) {
    if (c->failed.scanned != ft::failures().in_order().size()) refresh_failed_slow(c);
}

// Wildcard receives are disabled while c has failures not yet acknowledged
// (ULFM; spec 000 §17.6 for the 2011 API's reenable_any_source).
inline bool any_source_disabled(MPI_Comm c) {
    if (ft::failures().epoch() == 0) return false;  // nothing ever failed: one load
    refresh_failed(c);
    return c->failed.ranks.size() > c->failed.acked;
}

// 2011 API (spec 000 §17.7): c is collectively active when every failure
// known here is among those the last MPI_Comm_validate recognized (G).
bool collectives_active(MPI_Comm c);

// The 2011 rule, once a validate ran on c: a failure not recognized makes c
// collectively inactive, and its collectives fail at once, pending ones too.
// (Without validate, ULFM's rules: a collective fails where a failure keeps
// it from completing.)
inline bool collectively_inactive(MPI_Comm c) { return c->failed.validated && !collectives_active(c); }

// Sets G (comm ranks, ascending) after a validate agreed on it: L becomes G
// (spec 004), and collectives run over the other ranks (c->coll_ranks).
void set_recognized(MPI_Comm c, std::vector<int> global);

// A communicator made from `parent` represents the parent's recognized
// failures among its procs as recognized (spec 000 §17.8.2).
void inherit_recognized(MPI_Comm parent, MPI_Comm child);

// Whether comm rank r of c is a recognized failure (its collectives skip it).
inline bool recognized(MPI_Comm c, int r) {
    return !c->failed.global.empty() && std::binary_search(c->failed.global.begin(), c->failed.global.end(), r);
}

// Acknowledges the first `n` failures of c (all of them with n = SIZE_MAX);
// pending wildcard receives on c then proceed.
void acknowledge(MPI_Comm c, std::size_t n);

// The progress thread's reaction to a newly ingested failure: fails posted
// receives naming a failed process, and applies the wildcard rules to posted
// MPI_ANY_SOURCE receives (blocking: MPI_ERR_PROC_FAILED; nonblocking: pending).
void apply_failures_to_posted();

}  // namespace ftmpi::mpi
