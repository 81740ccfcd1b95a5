// Internals shared by communicator creation (comm_create.cpp) and
// inter-communicators (intercomm.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Context slots: slot s owns contexts 2s (point-to-point) and 2s+1 (collectives).
inline constexpr int k_slot_words = 64;  // 4096 slots
using SlotMask = std::array<std::uint64_t, k_slot_words>;

const SlotMask &free_slots();
// Slots of communicators made by nonblocking creation (MPI_Comm_idup):
// k_idup_first_slot + i for bit i of their own mask, so that a blocking
// creation never races one in flight for a slot (mpi/comm/comm_idup.cpp).
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
// runs even after an error and the first error class is returned. The root's
// result is the outcome it sends on: sending it to a member that died since
// it contributed fails only there. Not uniform when the root itself dies
// while sending (members it did not reach fail): what a caller makes from
// the result needs an agreement in which every member takes part.
int team_allgather(MPI_Comm team, const void *mine, int bytes, void *all);
// MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED or HW_UNGUIDED (comm_hw.cpp).
int hw_split(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm);
// MPI_Comm_split_type with MPI_COMM_TYPE_RESOURCE_GUIDED (comm_hw.cpp).
int pset_split(MPI_Comm comm, int key, MPI_Info info, MPI_Comm *newcomm);
// team_bcast: `root_err`, the root's error so far, reaches every member as
// this call's error (MPI_ERR_PROC_FAILED for a failure, else MPI_ERR_OTHER).
int team_bcast(MPI_Comm team, int root, void *buf, int bytes, int root_err = MPI_SUCCESS);
// The AND of the members' free-slot masks, and a fresh identifier common to
// the team (the XOR of a random nonce from each member; for ftmpi_comm_s::uid).
int team_common_slots(MPI_Comm team, SlotMask *common, std::uint64_t *uid = nullptr);
// team_common_slots, then claim the lowest (MPI_ERR_INTERN when none is left).
int agree_slot(MPI_Comm team, int *slot, std::uint64_t *uid);
// A communicator over all of comm's members (a window's or a file's), made at
// every member or at none: agree_slot, then an agreement over comm (which
// also runs on a revoked comm) on whether every member made it. When not,
// returns this member's error, else MPI_ERR_REVOKED or MPI_ERR_PROC_FAILED.
int make_hidden_comm(MPI_Comm comm, MPI_Comm *hidden);
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

// MPI_Comm_create_group's protocol, this process being in `group` (a group
// of comm's members): collective over the group only, on comm's collective
// context under tags derived from `tag`. Returns the error class, raising
// nothing (MPI_Comm_create_from_group reports on its own handler).
int create_over_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);

// A new communicator over `procs` (job ranks of comm's members, in order) at
// the processes listed there, MPI_COMM_NULL at comm's other members (each
// member may pass a different list; a process is in at most one). Collective
// over comm and uniform under failures (spec 000 §17.8.2): `err` is this
// member's outcome of whatever ran before (an exchange); the call fails at
// every member when it failed anywhere. Errors are raised on comm from `call`.
int create_subcomm(MPI_Comm comm, const char *call, int err, std::vector<int> procs, MPI_Comm *newcomm);

// The job ranks procs[r] of the members r whose (color, key), at pairs[2r]
// and pairs[2r+1], has `color`, ordered by (key, r); members for which
// skip(r) holds are left out (MPI_Comm_split's new groups).
std::vector<int> color_members(const std::vector<int> &pairs, const std::vector<int> &procs, int color,
                               const std::function<bool(int)> &skip = nullptr);

// MPI_Comm_split on an inter-communicator (MPI-3.1 §6.4.2): MPI_COMM_NULL
// where color is MPI_UNDEFINED or the other group has no member of the
// color. Collective over both groups and uniform under failures. Returns the
// error class (not raised).
int split_intercomm(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);

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
// communicator and the fault-tolerance view. True when the view outlives
// this call (operations on it are pending): it then releases the shared
// context slot itself when it retires, and holds the inter-communicator's
// object (its ft_owner) until then.
bool free_intercomm_parts(MPI_Comm comm);
// Destroys a communicator (intra or inter) and what it owns; its attributes
// are the caller's business. Its handle is dead at once; while something
// refers to it (ftmpi_comm_s::refs), its operations still run, and its
// context, queues and agreements stay; the last reference's release
// (comm_release) retires it.
void discard_comm(MPI_Comm c);
// Deletes a retired communicator's object (its queues and error handler).
void delete_comm_object(MPI_Comm c);

// References to a communicator object (ftmpi_comm_s::refs): a request on it,
// the fault-tolerance channel's lingering, an error being reported, a walk
// that completes requests. The last one's release retires a freed
// communicator, or deletes a retired one's object.
inline void comm_retain(MPI_Comm c) { ++c->refs; }
void comm_release(MPI_Comm c);

// Holds a communicator (may be null) for a scope: a request's error is
// reported on its communicator after the request is released, and the
// communicator may have been freed meanwhile.
class CommRef {
public:
    explicit CommRef(MPI_Comm c) : c_(c) {
        if (c_ != nullptr) comm_retain(c_);
    }
    CommRef(const CommRef &) = delete;
    CommRef &operator=(const CommRef &) = delete;
    ~CommRef() { reset(nullptr); }
    void reset(MPI_Comm c) {
        if (c != nullptr) comm_retain(c);
        if (c_ != nullptr) comm_release(c_);
        c_ = c;
    }
    MPI_Comm get() const { return c_; }

private:
    MPI_Comm c_;
};

}  // namespace ftmpi::mpi
