// The active-message protocol of one-sided communication: what the MPI calls
// in mpi/rma/window*.cpp send, and the hooks that attach a window to the
// progress engine. See mpi/rma/window.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "ft/failures.hpp"
#include "mpi/rma/window.hpp"

namespace ftmpi::mpi::rma {

// The message kinds (the tag on the window's context).
enum class Kind : std::int32_t {
    put = 1,
    acc,
    get,
    get_acc,
    cas,
    ack,
    reply,
    lock,
    unlock,
    grant,
    deny,
    fence,
    post,
    complete,
    free
};

// Whether window rank `rank` is known failed here.
[[gnu::always_inline]] inline bool member_failed(MPI_Win w, int rank) {
    return ft::failures().is_failed(w->comm->procs[static_cast<std::size_t>(rank)]);
}

// Sends `payload` to window rank `rank`. False when the target is known failed
// (nothing was sent).
bool send(MPI_Win w, int rank, Kind kind, std::vector<char> payload);

// The header and target-type description of an operation on `count`
// elements of `type` at displacement `disp`, with predefined op id `op`
// (op_replace for a put or get), `data_bytes` of packed data to follow, and
// the Fetch id of a GET-type operation. Append the data, then send.
std::vector<char> operation(MPI_Aint disp, int count, MPI_Datatype type, int op, std::size_t data_bytes,
                            std::uint64_t fetch);

// Runs an accumulate, get-accumulate or compare-and-swap (`msg` as
// operation() encodes it, with its data) on target's memory mapped here, at
// once, under its accumulate lock; a fetching one appends what it read to
// `fetched` (packed, as a REPLY carries it).
void run_mapped(MPI_Win w, int target, Kind kind, const std::vector<char> &msg, std::vector<char> &fetched);

// The accumulate lock of a member's mapped memory (mpi/rma/shm_atomic.cpp):
// a spin lock, whose waiter drives progress while it waits long and takes
// the lock over from a holder that died (its process is gone, or the
// member is known failed). Null: no lock (memory no one else maps).
class LockGuard {
public:
    LockGuard(MPI_Win w, AccLock *lock) : lock_(lock) {
        if (lock_ == nullptr) return;
        std::uint64_t free = 0;
        if (!lock_->word.compare_exchange_strong(free, w->acc_holder, std::memory_order_acquire)) wait(w, lock_);
    }
    ~LockGuard() {
        if (lock_ != nullptr) lock_->word.store(0, std::memory_order_release);
    }
    LockGuard(const LockGuard &) = delete;
    LockGuard &operator=(const LockGuard &) = delete;

private:
    static void wait(MPI_Win w, AccLock *lock);
    AccLock *lock_;
};

// The common atomics on mapped memory, without a message's encoding: count
// elements of a contiguous predefined type (on both sides) at disp of
// target's memory combined with origin's by op (op_replace, op_no_op too),
// what was there first copied to result (not null); a compare-and-swap of
// one element. False: target's memory is not mapped here, or the types ask
// for run_mapped.
bool mapped_accumulate(MPI_Win w, int target, MPI_Aint disp, const void *origin, int count, MPI_Datatype type,
                       const ftmpi_op_s &op, void *result);
bool mapped_compare_and_swap(MPI_Win w, int target, MPI_Aint disp, const void *origin, const void *compare,
                             void *result, MPI_Datatype type);

// An operation on MPI_Win_create memory of a member on this node, while this
// process holds its exclusive lock and has no operation in flight to it:
// done here by single copy (mpi/rma/single_copy.cpp). Contiguous data of
// `bytes` on both sides; an accumulate's (kind acc, get_acc) of predefined
// `type` combined by `op`; get and get_acc read into `result`. `no`: not
// possible (then send it as a message); `target_gone`: the target's
// process has ended.
enum class SingleCopy { no, done, target_gone };
SingleCopy single_copy(MPI_Win w, int target, MPI_Aint disp, Kind kind, const void *origin, void *result,
                       std::size_t bytes, MPI_Datatype type, const ftmpi_op_s *op);

// Attaches the window's handler to its queue (it takes what arrived before),
// and detaches it.
void open_window(MPI_Win w);
void close_window(MPI_Win w);

// After new failures: fails pending operations and lock requests toward the
// failed members, and poisons locks they held.
void on_failures();

}  // namespace ftmpi::mpi::rma
