// One-sided communication (RMA): the window object and its active-message
// protocol.
//
// Every window has a hidden communicator (a dup of the one it was created
// over). Operations travel as messages on its point-to-point context, and
// the target handles them as they arrive, inside whatever MPI call drives its
// progress (mpi/p2p/matching.hpp: a queue with a handler): a passive-target
// epoch progresses when the target calls into MPI, not asynchronously.
//
//   origin                          target
//   PUT/ACC (header, type, data) -> applied to the window memory -> ACK
//   GET/GET_ACC/CAS (header...)  -> read (then applied)          -> REPLY(data)
//   LOCK(type)                   -> lock manager                 -> GRANT | DENY
//   UNLOCK                       -> lock manager (no answer)
//   FENCE(seq)                   -> counted (a fence waits for every live member's)
//   FREE                         -> noted (MPI_Win_free waits for every live member's)
//   POST / COMPLETE              -> counted (PSCW: start waits for its targets' POSTs,
//                                   wait for its origins' COMPLETEs)
//
// The target applies accumulates one whole operation at a time on the
// progress thread: concurrent accumulates are atomic per operation, and the
// operations of one origin are applied in the order it issued them (a large
// one, received by rendezvous, holds back that origin's later messages).
// Completion is remote: an origin counts its operations to each target until
// their ACK or REPLY, so flush, unlock and fence complete them at the target.
//
// Failure (spec 000 §17.11, spec 001 §1.2.3): an operation toward a target
// known failed fails at once with MPI_ERR_PROC_FAILED; one that the failure
// overtakes is reported by the next synchronization (flush, unlock, fence),
// which completes the epoch with the live targets. A lock whose holder
// failed is poisoned: every later request is denied (MPI_ERR_PROC_FAILED).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/objects.hpp"

namespace ftmpi::mpi::rma {

// What this process knows of one target (by rank in the window's group).
struct Target {
    int pending = 0;          // operations sent to it and not yet acknowledged or answered
    int lock = 0;             // the lock held there: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE
    bool nocheck = false;     // locked with MPI_MODE_NOCHECK: no lock message was sent
    int answer = 0;           // to a LOCK request: 0 waiting, 1 granted, -1 denied or failed
    bool failed = false;      // an operation to it was lost to its failure, not yet reported
    bool pscw = false;        // in the access group of the open MPI_Win_start epoch
    int error = MPI_SUCCESS;  // an operation the target refused (MPI_ERR_RMA_RANGE), not yet reported
    MPI_Aint size = 0;        // its window's size and displacement unit (for range checks)
    int disp_unit = 1;
    // MPI_Win_create's memory of a member on this node: its address there and
    // its pid, for single copies while this process holds its exclusive lock
    // (mpi/rma/single_copy.cpp); pid 0: none.
    std::uint64_t remote_base = 0;
    int pid = 0;
};

// A GET-type operation waiting for its REPLY.
struct Fetch {
    void *buf;
    int count;
    MPI_Datatype type;
    int target;
    MPI_Request request;  // MPI_Rget / MPI_Rget_accumulate: completed with the REPLY; else null
};

// A message that waits behind a rendezvous transfer from the same origin.
struct Deferred {
    transport::Arrival arrival;  // rendezvous: what accept() needs; eager: tag and length
    std::vector<char> data;      // eager payload
};

// What this process knows of one origin (by rank in the window's group).
struct Source {
    bool receiving = false;                           // a rendezvous transfer from it is under way
    std::deque<Deferred> deferred;                    // its later messages, in order
    std::uint64_t fence = 0;                          // the last FENCE sequence number received
    bool freed = false;                               // it is in MPI_Win_free: done with this window
    std::uint64_t posts = 0, posts_used = 0;          // PSCW: its POSTs received, and consumed by MPI_Win_start
    std::uint64_t completes = 0, completes_used = 0;  // PSCW: its COMPLETEs received, and consumed by wait/test
};

struct LockRequest {
    int rank;
    int type;
};

// The accumulate lock of a member's window memory that the members on its
// node map (MPI_Win_allocate, _shared), in that memory after the member's
// bytes: accumulates to it, from the messages of other nodes' members and
// from the mapped members' own calls alike, run under it one whole
// operation at a time (mpi/rma/shm_atomic.cpp). 0: free; else the holder's
// window rank + 1 (high half) and pid (low half), so that a holder that died
// holding it can be told.
struct alignas(64) AccLock {
    std::atomic<std::uint64_t> word;
};
inline constexpr std::size_t k_acc_lock_bytes = sizeof(AccLock);
// Where a member's lock lies in its memory of `size` bytes.
inline std::size_t acc_lock_offset(MPI_Aint size) {
    return (static_cast<std::size_t>(size > 0 ? size : 0) + k_acc_lock_bytes - 1) / k_acc_lock_bytes * k_acc_lock_bytes;
}

}  // namespace ftmpi::mpi::rma

struct ftmpi_win_s {
    ftmpi::mpi::Magic magic = ftmpi::mpi::Magic::win;
    MPI_Comm comm = nullptr;  // hidden: the operations' context, and the window's error handler
    void *base = nullptr;
    MPI_Aint size = 0;
    int disp_unit = 1;
    int flavor = MPI_WIN_FLAVOR_CREATE;
    int model = MPI_WIN_UNIFIED;
    // By rank: the member's window memory mapped in this process (members on
    // this node, with MPI_Win_allocate or _shared), where puts and gets are
    // plain copies; null: operations travel as messages.
    std::vector<char *> direct;
    std::vector<ftmpi::mpi::rma::AccLock *> acc_locks;     // by rank, where direct is set: its accumulate lock
    unsigned idle_flushes = 0;                             // flushes that had nothing to wait for (window_sync.cpp)
    std::uint64_t acc_holder = 0;                          // this process's AccLock word
    std::vector<std::pair<void *, std::size_t>> mappings;  // unmapped at free
    std::string segment;                                   // this process's segment, unlinked at free
    void *private_memory = nullptr;                        // MPI_Win_allocate with FTMPI_RMA_SHM=0: freed at free
    // A dynamic window's memory (MPI_Win_attach): base address -> size, in
    // address order, so a target finds the regions an operation touches in
    // O(log n) however many are attached (a list attaches one per element).
    std::map<std::uintptr_t, std::size_t> attached;
    std::vector<std::pair<std::string, std::string>> info;  // hints as set (MPI_Win_get_info)
    // Origin side.
    std::vector<ftmpi::mpi::rma::Target> targets;
    std::uint64_t next_fetch = 1;
    std::map<std::uint64_t, ftmpi::mpi::rma::Fetch> fetches;
    // Fences (MPI 3.1 §11.5.1): after one without MPI_MODE_NOSUCCEED a fence
    // epoch may follow; it begins only with an operation (fence_ops). Until
    // then lock, lock_all and start may end it instead.
    bool fence_epoch = false;
    bool fence_ops = false;
    bool lock_all = false;
    // PSCW: the open access epoch's targets (MPI_Win_start) and exposure
    // epoch's origins (MPI_Win_post), as window ranks, with those already
    // failed when the epoch began.
    bool access_open = false, exposure_open = false;
    std::vector<int> access_group, exposure_group;
    std::vector<int> access_failed, exposure_failed;
    std::uint64_t fence_seq = 0;
    std::size_t failures_reported = 0;  // members' failures a fence already reported
    int refused_by = -1;                // the target of the last refused operation (MPI_ERR_RMA_RANGE)
    // Target side.
    std::vector<ftmpi::mpi::rma::Source> sources;
    int exclusive_holder = -1;
    std::vector<int> shared_holders;
    std::deque<ftmpi::mpi::rma::LockRequest> lock_queue;
    int lock_poisoned_by = -1;   // a holder that failed: the lock is never granted again
    ftmpi::mpi::AttrList attrs;  // (keyval, value) in the order first set (mpi/comm/attributes.cpp)
};

namespace ftmpi::mpi {

inline bool valid_win(MPI_Win w) { return w != MPI_WIN_NULL && w->magic == Magic::win; }
// Checks that `win` is a window; errors on an invalid one go to MPI_COMM_WORLD's handler.
// Inline: every one-sided operation's first check.
inline int check_win(const char *call, MPI_Win w) {
    FTMPI_TRY(check_init(call));
    if (valid_win(w)) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_WIN, call, "invalid window (argument win is %s)",
                 w == MPI_WIN_NULL ? "MPI_WIN_NULL" : "not a window");
}

// Progress thread, after new failures: fails what they make impossible on
// every window (called from on_new_failures).
void rma_on_failures();

}  // namespace ftmpi::mpi
