// Operations on MPI_Win_create memory of a member on this node while this
// process holds that member's exclusive lock: no other process can access
// the memory in that epoch (a conflicting lock waits, and the target's own
// operations on its window need a lock too), so the origin reads and writes
// it itself by single copy (process_vm_readv/writev), with no message and
// nothing for the target to run. An accumulate is a read, the op here, and
// a write back. Operations still in flight to the target as messages go
// first (this path is taken only when none is), so one origin's operations
// stay in the order it issued them.
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "mpi/coll/ops.hpp"
#include "mpi/rma/protocol.hpp"
#include "mpi/state.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"

namespace ftmpi::mpi::rma {
namespace {

// Below this, a message is faster when the target is in MPI (its progress
// answers within a few hundred nanoseconds) than the two system calls of a
// read and a write: osu_get_acc_latency, 2 ranks, us at 1/1K/2K/4K/64K:
// messages 1.5/2.4-2.7/2.9-3.0/4.1-4.2/33-40, single copy 2.5-2.7/2.7-2.8/
// 2.8-3.0/2.9-3.4/14.
constexpr std::size_t k_min_bytes = 2048;

// One copy between `local` and the target's memory at `remote`. ESRCH: the
// target's process is gone (its failure will be known).
bool copy(const Target &t, void *local, std::uint64_t remote, std::size_t bytes, bool write, int *err) {
    iovec l{local, bytes}, r{reinterpret_cast<void *>(remote), bytes};
    const ssize_t n = write ? ::process_vm_writev(t.pid, &l, 1, &r, 1, 0) : ::process_vm_readv(t.pid, &l, 1, &r, 1, 0);
    if (n == static_cast<ssize_t>(bytes)) return true;
    *err = n < 0 ? errno : EFAULT;
    return false;
}

}  // namespace

SingleCopy single_copy(MPI_Win w, int target, MPI_Aint disp, Kind kind, const void *origin, void *result,
                       std::size_t bytes, MPI_Datatype type, const ftmpi_op_s *op) {
    Target &t = w->targets[static_cast<std::size_t>(target)];
    if (t.pid == 0 || bytes < k_min_bytes || t.lock != MPI_LOCK_EXCLUSIVE || t.pending > 0 ||
        w->flavor != MPI_WIN_FLAVOR_CREATE || runtime::config().RMA_SHM == 0)
        return SingleCopy::no;
    const std::uint64_t at = t.remote_base + static_cast<std::uint64_t>(disp) * static_cast<std::uint64_t>(t.disp_unit);
    int err = 0;
    bool ok = true;
    switch (kind) {
    case Kind::put: ok = copy(t, const_cast<void *>(origin), at, bytes, true, &err); break;
    case Kind::get: ok = copy(t, result, at, bytes, false, &err); break;
    case Kind::acc:
    case Kind::get_acc: {
        const bool fetch = kind == Kind::get_acc;
        if (fetch) ok = copy(t, result, at, bytes, false, &err);
        if (!ok || op->id == op_no_op) break;
        if (op->id == op_replace) {
            ok = copy(t, const_cast<void *>(origin), at, bytes, true, &err);
            break;
        }
        thread_local std::vector<char> scratch;
        if (scratch.size() < bytes) scratch.resize(bytes);
        if (fetch) std::memcpy(scratch.data(), result, bytes);
        else ok = copy(t, scratch.data(), at, bytes, false, &err);
        if (!ok) break;
        op_apply(*op, origin, scratch.data(), static_cast<int>(bytes / type->size), type);
        ok = copy(t, scratch.data(), at, bytes, true, &err);
        break;
    }
    default: return SingleCopy::no;
    }
    if (ok) return SingleCopy::done;
    if (err == ESRCH) return SingleCopy::target_gone;
    // Refused (ptrace rules, another user): messages to this member from now on.
    FTMPI_INFO("one-sided single copy to rank %d refused (%s): its operations go as messages", target,
               std::strerror(err));
    t.pid = 0;
    return SingleCopy::no;
}

}  // namespace ftmpi::mpi::rma
