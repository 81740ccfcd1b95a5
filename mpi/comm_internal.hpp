// Internals shared by communicator creation (comm_create.cpp) and
// inter-communicators (intercomm.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Context slots: slot s owns contexts 2s (point-to-point) and 2s+1 (collectives).
inline constexpr int k_slot_words = 64;  // 4096 slots
using SlotMask = std::array<std::uint64_t, k_slot_words>;

const SlotMask &free_slots();
// Slots of communicators made by nonblocking creation (MPI_Comm_idup):
// k_idup_first_slot + i for bit i of their own mask, so that a blocking
// creation never races one in flight for a slot (mpi/comm_idup.cpp).
inline constexpr int k_idup_first_slot = k_slot_words * 64;
const SlotMask &free_idup_slots();
// Claims idup slot `slot` (k_idup_first_slot + i) here; false when taken.
bool claim_idup_slot(int slot);
// Lowest slot set in `m` (-1 when none).
int lowest_slot(const SlotMask &m);
// Claims `slot` here; false when it is not free here.
bool claim_slot(int slot);
// Lowest slot free in `m` (free everywhere its members are), claimed here; -1 when none.
int claim_lowest(const SlotMask &m);
// Frees the slot of `context` (either kind).
void release_slot(std::uint32_t context);

// Exchanges among the members of `team` on its collective context; every step
// runs even after an error and the first error class is returned.
int team_allgather(MPI_Comm team, const void *mine, int bytes, void *all);
int team_bcast(MPI_Comm team, int root, void *buf, int bytes);
// The AND of the members' free-slot masks, and a fresh identifier common to
// the team (the XOR of a random nonce from each member; for ftmpi_comm_s::uid).
int team_common_slots(MPI_Comm team, SlotMask *common, std::uint64_t *uid = nullptr);
// team_common_slots, then claim the lowest (MPI_ERR_INTERN when none is left).
int agree_slot(MPI_Comm team, int *slot, std::uint64_t *uid);
// A random 64-bit nonce (per-process generator).
std::uint64_t random_nonce();
// A deterministic mix of values every member knows (for identifiers derived
// from agreed data).
std::uint64_t mix_uid(std::uint64_t a, std::uint64_t b);
// One message to / from `peer` of `team` on its collective context.
int team_send(MPI_Comm team, int peer, int tag, const void *buf, int bytes);
int team_recv(MPI_Comm team, int peer, int tag, void *buf, int bytes);
// A fresh tag for one collective operation on team's collective context; its
// low 5 bits are 0 (room for rounds) and it never has k_coll_poison or
// k_cross_tag set.
int next_team_tag(MPI_Comm team);
// Sends `out` to and receives `in` from `peer` of `link` at once (no
// rendezvous deadlock between two processes that both send first).
int team_swap(MPI_Comm link, int peer, int tag, const void *out, int out_bytes, void *in, int in_bytes);

// A new intra-communicator over `procs` (job ranks, in order) holding `slot`,
// inheriting parent's error handler.
MPI_Comm make_comm(MPI_Comm parent, int slot, std::vector<int> procs, std::uint64_t uid);

// A new communicator over `procs` (job ranks of comm's members, in order) at
// the processes listed there, MPI_COMM_NULL at comm's other members (each
// member may pass a different list; a process is in at most one). Collective
// over comm and uniform under failures (spec 000 §17.8.2): `err` is this
// member's outcome of whatever ran before (an exchange); the call fails at
// every member when it failed anywhere. Errors are raised on comm from `call`.
int create_subcomm(MPI_Comm comm, const char *call, int err, std::vector<int> procs, MPI_Comm *newcomm);

// A new inter-communicator holding `slot`, over the hidden intra-communicator
// `local` (its own group) and the remote group; `uid` is agreed by both
// groups. Registers its fault-tolerance view (ftmpi_comm_s::ft).
MPI_Comm make_intercomm(MPI_Comm local, int slot, std::vector<int> remote_procs, MPI_Errhandler errhandler,
                        std::uint64_t uid);
// MPI_Intercomm_create after its argument checks: the leaders talk over
// peer_comm (leaders only) with tags from `ltag`; uniform at both groups.
// `err_in`: this member already failed (it takes part, and the creation
// fails everywhere). Returns the error class (not raised) and `why`.
int intercomm_from_leaders(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int ltag,
                           int err_in, MPI_Comm *newintercomm, const char **why);
// Frees what an inter-communicator owns besides itself: the hidden local
// communicator and the fault-tolerance view.
void free_intercomm_parts(MPI_Comm comm);
// Destroys a communicator (intra or inter) and what it owns; its attributes
// are the caller's business. Its handle is dead at once; while requests
// refer to it (ftmpi_comm_s::refs), its operations still run, and its context,
// queues and agreements stay; the last one's release (unref_comm) retires it.
void discard_comm(MPI_Comm c);
// A reference to c (a request's) goes: a discarded communicator is retired
// or deleted when it was the last.
void unref_comm(MPI_Comm c);
// Deletes a retired communicator's object (its queues and error handler).
void delete_comm_object(MPI_Comm c);

}  // namespace ftmpi::mpi
