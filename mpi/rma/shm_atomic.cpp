// Accumulates and atomics on window memory mapped here (MPI_Win_allocate and
// MPI_Win_allocate_shared members on this node): run at once by the origin,
// under the target memory's lock, instead of a round trip through the
// target's progress. The target takes the same lock for the accumulates it
// receives as messages (protocol.cpp), so each operation stays atomic
// against all others, and an origin's operations to one target stay in
// order (they complete before the call returns).
#include <sched.h>
#include <signal.h>

#include <cerrno>
#include <cstring>

#include "mpi/coll/ops.hpp"
#include "mpi/rma/protocol.hpp"
#include "mpi/state.hpp"
#include "runtime/cpu_relax.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi::rma {
namespace {

// Spins between two looks at whether the holder is still there.
constexpr unsigned k_spins = 1024;

// Whether the holder of `word` died holding the lock: its process is gone,
// or it is known failed (and will never release it).
bool holder_gone(MPI_Win w, std::uint64_t word) {
    const auto pid = static_cast<pid_t>(word & 0xffffffffu);
    const int rank = static_cast<int>(word >> 32) - 1;
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) return true;
    return rank >= 0 && rank < w->comm->size && member_failed(w, rank);
}

}  // namespace

// A holder runs one operation and lets go: waits are short unless the holder
// was descheduled (oversubscribed, or stopped). A long wait drives progress,
// so that this process keeps serving the others (and hears of failures), and
// gives the CPU away; from inside progress (a message's accumulate) that
// returns at once and the wait just spins.
void LockGuard::wait(MPI_Win w, AccLock *lock) {
    const std::uint64_t mine = w->acc_holder;
    for (unsigned spins = 1;; ++spins) {
        std::uint64_t seen = lock->word.load(std::memory_order_relaxed);
        if (seen == 0) {
            if (lock->word.compare_exchange_weak(seen, mine, std::memory_order_acquire)) return;
            continue;
        }
        if (spins % k_spins != 0) {
            runtime::cpu_relax();
            continue;
        }
        if (holder_gone(w, seen) && lock->word.compare_exchange_strong(seen, mine, std::memory_order_acquire))
            return;  // what the holder was writing is left as it was
        progress();
        ::sched_yield();
    }
}

bool mapped_accumulate(MPI_Win w, int target, MPI_Aint disp, const void *origin, int count, MPI_Datatype type,
                       const ftmpi_op_s &op, void *result) {
    const auto t = static_cast<std::size_t>(target);
    char *mem = w->direct[t];
    if (mem == nullptr || !type->predefined || !type->contiguous) return false;
    char *at = mem + disp * w->targets[t].disp_unit;
    const std::size_t bytes = type->size * static_cast<std::size_t>(count);
    const LockGuard guard(w, w->acc_locks[t]);
    runtime::test_kill_point("rma.acc_locked");  // tests: a death holding the lock
    if (result != nullptr) std::memcpy(result, at, bytes);
    if (op.id == op_replace) std::memcpy(at, origin, bytes);
    else if (op.id != op_no_op) op_apply(op, origin, at, count, type);
    return true;
}

bool mapped_compare_and_swap(MPI_Win w, int target, MPI_Aint disp, const void *origin, const void *compare,
                             void *result, MPI_Datatype type) {
    const auto t = static_cast<std::size_t>(target);
    char *mem = w->direct[t];
    if (mem == nullptr || !type->contiguous) return false;
    char *at = mem + disp * w->targets[t].disp_unit;
    const LockGuard guard(w, w->acc_locks[t]);
    std::memcpy(result, at, type->size);
    if (std::memcmp(at, compare, type->size) == 0) std::memcpy(at, origin, type->size);
    return true;
}

}  // namespace ftmpi::mpi::rma
