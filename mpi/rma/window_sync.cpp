// One-sided synchronization: fences, PSCW (post, start, complete, wait, test),
// locks (lock, lock_all, unlock), flushes and MPI_Win_sync.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/rma/protocol.hpp"
#include "mpi/rma/window.hpp"
#include "mpi/rma/window_internal.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {
namespace {

constexpr int k_all_asserts =
    MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;

int revoked_error(const char *call, MPI_Win w) {
    return raise(w->comm, MPI_ERR_REVOKED, call, "%s was revoked while this call waited", comm_label(w->comm));
}

int check_assert(const char *call, MPI_Win w, int assert, int allowed) {
    if ((assert & ~allowed) == 0) return MPI_SUCCESS;
    return raise(w->comm, MPI_ERR_ASSERT, call, "invalid assert 0x%x (argument assert; allowed bits 0x%x)", assert,
                 allowed);
}

// Every wait of one-sided communication: drives progress until done()
// holds (true), or until the window's communicator is revoked (false;
// never when `interruptible` is false).
template <typename Done>
bool wait_until(MPI_Win w, Done done, bool interruptible = true) {
    while (!done()) {
        if (interruptible && w->comm->revoked) return false;
        progress_wait();
    }
    return true;
}

// Drives progress until no operation to the targets `pred` selects is
// pending. Returns MPI_ERR_PROC_FAILED (and clears the mark) when one of them
// lost operations to a failure.
//
// It drives progress at least once, even with nothing pending: operations to
// oneself and to mapped memory complete inside their calls, so a loop of
// them and flushes (a process polling its own memory for what another
// writes) would otherwise never serve the others' operations, lock requests
// and unlocks, and they would wait for it forever. A flush with nothing to
// wait for drives it one time in k_idle_flush_progress: enough for them (a
// few microseconds between two polls), and a loop of atomics and flushes to
// mapped memory no longer spends a third of its time polling.
constexpr unsigned k_idle_flush_progress = 16;

template <typename Pred>
int complete(MPI_Win w, Pred pred, bool flush = false) {
    bool waited = false;
    const bool done = wait_until(w, [&] {
        bool waiting = false;
        for (int r = 0; r < w->comm->size && !waiting; ++r)
            waiting = pred(r) && w->targets[static_cast<std::size_t>(r)].pending > 0;
        waited = waited || waiting;
        return !waiting;
    });
    if (!done) return MPI_ERR_REVOKED;
    if (!waited && (!flush || ++w->idle_flushes % k_idle_flush_progress == 0)) progress();
    // Direct copies into mapped memory are ordered before what follows
    // (whatever tells the target they are done: a message, a store it reads).
    std::atomic_thread_fence(std::memory_order_release);
    int err = MPI_SUCCESS;
    for (int r = 0; r < w->comm->size; ++r) {
        Target &t = w->targets[static_cast<std::size_t>(r)];
        if (!pred(r)) continue;
        if (t.failed) {
            t.failed = false;
            err = MPI_ERR_PROC_FAILED;
        } else if (t.error != MPI_SUCCESS) {
            if (err == MPI_SUCCESS) {
                err = t.error;
                w->refused_by = r;
            }
            t.error = MPI_SUCCESS;
        }
    }
    return err;
}

// Raises what a synchronization learned that is not a failure: the window
// was revoked, or a target refused an operation outside its memory (a
// dynamic window's range is only known there). Returns `err` otherwise.
int sync_error(const char *call, MPI_Win w, int err) {
    if (err == MPI_ERR_REVOKED)
        return raise(w->comm, MPI_ERR_REVOKED, call, "%s was revoked while this call waited", comm_label(w->comm));
    if (err == MPI_ERR_RMA_RANGE)
        return raise(w->comm, err, call,
                     "an operation toward rank %d of %s fell outside its window memory (nothing was written there)",
                     w->refused_by, comm_label(w->comm));
    return err;
}

int first_failed_target(MPI_Win w) {
    for (int r = 0; r < w->comm->size; ++r)
        if (member_failed(w, r)) return r;
    return -1;
}

// Access epochs of one window are disjoint (MPI 3.1 §11.5): before
// MPI_Win_lock (of `rank`), MPI_Win_lock_all or MPI_Win_start (rank -1)
// no other may be open, except the locks of other ranks before a lock. A
// fence opens an epoch only if an operation follows it: without one, this
// call ends the fence's epoch (as MPICH does), so a lock may follow a
// fence, e.g. fence(0) ... fence(0); lock. MPI_ERR_RMA_SYNC otherwise.
int begin_access(const char *call, MPI_Win w, int rank) {
    const char *open = nullptr;
    if (w->fence_epoch && w->fence_ops) open = "a fence epoch with operations (end it with MPI_Win_fence)";
    else if (w->lock_all) open = "an MPI_Win_lock_all epoch";
    else if (w->access_open) open = "an MPI_Win_start epoch";
    else if (rank >= 0 && w->targets[static_cast<std::size_t>(rank)].lock != 0)
        return raise(w->comm, MPI_ERR_RMA_SYNC, call, "rank %d of %s is already locked", rank, comm_label(w->comm));
    else if (rank < 0 && passive_epoch(w)) open = "an MPI_Win_lock epoch";
    if (open != nullptr)
        return raise(w->comm, MPI_ERR_RMA_SYNC, call, "%s is open on %s; access epochs of a window may not overlap",
                     open, comm_label(w->comm));
    w->fence_epoch = false;
    return MPI_SUCCESS;
}

// Flushes are passive-target synchronization (MPI 3.1 §11.5.4): only
// inside a lock or lock_all epoch (as MPICH: a lock of any rank).
int check_flush(const char *call, MPI_Win w) {
    if (passive_epoch(w)) return MPI_SUCCESS;
    return raise(w->comm, MPI_ERR_RMA_SYNC, call,
                 "no passive-target epoch (MPI_Win_lock or MPI_Win_lock_all) is open on %s", comm_label(w->comm));
}

// Sends `kind` to every other live member, then waits until each has sent
// its own (`arrived` says whether member r's has come). Its operations to
// this process are then all applied here. False when the window was revoked
// meanwhile and `interruptible`.
template <typename Arrived>
bool exchange(MPI_Win w, Kind kind, const std::vector<char> &payload, Arrived arrived, bool interruptible) {
    for (int r = 0; r < w->comm->size; ++r)
        if (r != w->comm->rank && !member_failed(w, r)) rma::send(w, r, kind, payload);
    return wait_until(
        w,
        [&] {
            for (int r = 0; r < w->comm->size; ++r)
                if (r != w->comm->rank && !member_failed(w, r) && !arrived(w->sources[static_cast<std::size_t>(r)]))
                    return false;
            return true;
        },
        interruptible);
}

// The fences: FENCE `seq` from every live member.
bool exchange_fence(MPI_Win w) {
    const std::uint64_t seq = ++w->fence_seq;
    std::vector<char> payload(sizeof seq);
    std::memcpy(payload.data(), &seq, sizeof seq);
    return exchange(
        w, Kind::fence, payload, [seq](const rma::Source &s) { return s.fence >= seq; }, true);
}

// Failures among the members not yet reported by a fence.
bool new_member_failures(MPI_Win w) {
    std::size_t n = 0;
    for (int r = 0; r < w->comm->size; ++r) n += member_failed(w, r) ? 1 : 0;
    const bool fresh = n > w->failures_reported;
    w->failures_reported = n;
    return fresh;
}

// Takes the lock of `type` at `rank` (MPI_Win_lock, each target of
// MPI_Win_lock_all): a LOCK request, then its GRANT. With MPI_MODE_NOCHECK no
// message: the user promises no conflicting lock.
int acquire(const char *call, MPI_Win w, int rank, int type, bool nocheck) {
    Target &t = w->targets[static_cast<std::size_t>(rank)];
    if (!nocheck) {
        t.answer = 0;
        std::vector<char> payload(sizeof(std::int32_t));
        const std::int32_t ty = type;
        std::memcpy(payload.data(), &ty, sizeof ty);
        if (member_failed(w, rank) || !rma::send(w, rank, Kind::lock, std::move(payload))) t.answer = -1;
        runtime::test_kill_point("rma.lock");  // tests: a death with its lock request out, not yet granted
        // A lock of oneself is granted inside the send: progress once all
        // the same, so a loop of them serves the other processes (complete()).
        if (t.answer != 0) progress();
        if (!wait_until(w, [&] { return t.answer != 0; })) return revoked_error(call, w);
        if (t.answer < 0)
            return raise(w->comm, MPI_ERR_PROC_FAILED, call,
                         member_failed(w, rank) ? "rank %d of %s failed"
                                                : "the lock at rank %d of %s is lost: a process that held it failed",
                         rank, comm_label(w->comm));
    }
    t.lock = type;
    t.nocheck = nocheck;
    return MPI_SUCCESS;
}

int lock_call(const char *call, int type, int rank, int assert, MPI_Win w) {
    FTMPI_TRY(check_live(call, w));
    MPI_Comm c = w->comm;
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return raise(c, MPI_ERR_LOCKTYPE, call, "invalid lock_type %d (MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE)", type);
    FTMPI_CHECK(check_target(call, w, rank, "rank"));
    FTMPI_CHECK(check_assert(call, w, assert, MPI_MODE_NOCHECK));
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    FTMPI_TRY(begin_access(call, w, rank));
    if (member_failed(w, rank))
        return raise(c, MPI_ERR_PROC_FAILED, call, "rank %d of %s is failed (argument rank)", rank, comm_label(c));
    return acquire(call, w, rank, type, (assert &MPI_MODE_NOCHECK) != 0);
}

// Ends the lock epoch toward `rank` (its operations completed first).
int unlock_target(MPI_Win w, int rank) {
    Target &t = w->targets[static_cast<std::size_t>(rank)];
    int err = complete(w, [rank](int r) { return r == rank; });
    if (err == MPI_ERR_REVOKED) return err;
    if (!t.nocheck && !member_failed(w, rank)) rma::send(w, rank, Kind::unlock, {});
    if (member_failed(w, rank)) err = MPI_ERR_PROC_FAILED;
    t.lock = 0;
    t.nocheck = false;
    return err;
}

// The flushes (local completion is remote completion here: the origin
// buffer is copied at the call, so both mean the target has the data). The
// operations toward `rank` (none for MPI_PROC_NULL), or toward every
// target, complete at the target.
int flush_one(const char *call, MPI_Win w, int rank) {
    FTMPI_TRY(check_live(call, w));
    FTMPI_CHECK(check_target(call, w, rank, "rank"));
    FTMPI_CHECK(check_flush(call, w));
    if (rank == MPI_PROC_NULL) {
        progress();
        return MPI_SUCCESS;
    }
    runtime::test_kill_point("rma.flush");  // tests: a death with operations of the epoch not yet complete
    const int err = complete(
        w, [rank](int r) { return r == rank; }, true);
    if (err == MPI_ERR_REVOKED || err == MPI_ERR_RMA_RANGE) return sync_error(call, w, err);
    if (err != MPI_SUCCESS)
        return raise(w->comm, MPI_ERR_PROC_FAILED, call, "rank %d of %s failed before its operations completed", rank,
                     comm_label(w->comm));
    return MPI_SUCCESS;
}

int flush_all(const char *call, MPI_Win w) {
    FTMPI_TRY(check_live(call, w));
    FTMPI_CHECK(check_flush(call, w));
    runtime::test_kill_point("rma.flush");
    const int err = complete_all(w, true);
    if (err == MPI_ERR_REVOKED || err == MPI_ERR_RMA_RANGE) return sync_error(call, w, err);
    if (err != MPI_SUCCESS)
        return raise(w->comm, MPI_ERR_PROC_FAILED, call, "rank %d of %s failed before its operations completed",
                     first_failed_target(w), comm_label(w->comm));
    return MPI_SUCCESS;
}

// The window ranks of `group`'s processes.
int window_ranks(const char *call, MPI_Win w, MPI_Group group, std::vector<int> *out) {
    if (group == MPI_GROUP_NULL || group->magic != Magic::group)
        return raise(w->comm, MPI_ERR_GROUP, call, "invalid group (argument group)");
    out->clear();
    for (int p : group->procs) {
        auto it = std::find(w->comm->procs.begin(), w->comm->procs.end(), p);
        if (it == w->comm->procs.end())
            return raise(w->comm, MPI_ERR_GROUP, call, "group holds process %d, which is not in %s", p,
                         comm_label(w->comm));
        out->push_back(static_cast<int>(it - w->comm->procs.begin()));
    }
    return MPI_SUCCESS;
}

// Whether every live origin of the exposure epoch has sent its COMPLETE; if
// so the epoch ends (with MPI_ERR_PROC_FAILED when an origin failed during it).
int exposure_test(const char *call, MPI_Win w, int *flag) {
    for (int o : w->exposure_group) {
        const rma::Source &s = w->sources[static_cast<std::size_t>(o)];
        if (!member_failed(w, o) && s.completes <= s.completes_used) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    int failed = -1;
    for (int o : w->exposure_group) {
        rma::Source &s = w->sources[static_cast<std::size_t>(o)];
        if (s.completes > s.completes_used) ++s.completes_used;
        else if (std::find(w->exposure_failed.begin(), w->exposure_failed.end(), o) == w->exposure_failed.end())
            failed = o;
    }
    w->exposure_open = false;
    w->exposure_group.clear();
    *flag = 1;
    if (failed >= 0)
        return raise(w->comm, MPI_ERR_PROC_FAILED, call,
                     "rank %d of %s failed during the exposure epoch; it is completed with the others", failed,
                     comm_label(w->comm));
    return MPI_SUCCESS;
}

}  // namespace

namespace rma {

// Whether a passive-target epoch (a lock or lock_all) is open.
bool passive_epoch(MPI_Win w) {
    if (w->lock_all) return true;
    for (const Target &t : w->targets)
        if (t.lock != 0) return true;
    return false;
}

int complete_all(MPI_Win w, bool flush) {
    return complete(
        w, [](int) { return true; }, flush);
}

// MPI_Win_free: FREE from every live member, even on a revoked window.
void exchange_free(MPI_Win w) {
    exchange(
        w, Kind::free, {}, [](const rma::Source &s) { return s.freed; }, false);
}

}  // namespace rma
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

// PSCW (MPI 3.1 §11.5.2; spec 000 §17.11.2): failed processes known when an
// epoch begins are left out of it; a failure during the epoch is reported
// by MPI_Win_complete (targets) and MPI_Win_wait/test (origins), which still
// end the epoch with the live ones.
int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_post", win));
    FTMPI_CHECK(check_assert("MPI_Win_post", win, assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT));
    if (win->exposure_open)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_post", "an exposure epoch is already open on %s",
                     comm_label(win->comm));
    FTMPI_TRY(window_ranks("MPI_Win_post", win, group, &win->exposure_group));
    win->exposure_failed.clear();
    for (int o : win->exposure_group) {
        if (member_failed(win, o)) win->exposure_failed.push_back(o);
        else rma::send(win, o, Kind::post, {});
    }
    win->exposure_open = true;
    return MPI_SUCCESS;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_start", win));
    FTMPI_CHECK(check_assert("MPI_Win_start", win, assert, MPI_MODE_NOCHECK));
    std::vector<int> targets;
    FTMPI_TRY(window_ranks("MPI_Win_start", win, group, &targets));
    FTMPI_TRY(begin_access("MPI_Win_start", win, -1));
    // Each target's matching POST (the k-th start toward it takes its k-th post).
    const bool posted = wait_until(win, [&] {
        for (int t : targets) {
            const rma::Source &s = win->sources[static_cast<std::size_t>(t)];
            if (!member_failed(win, t) && s.posts <= s.posts_used) return false;
        }
        return true;
    });
    if (!posted) return revoked_error("MPI_Win_start", win);
    win->access_group = targets;
    win->access_failed.clear();
    for (int t : targets) {
        rma::Source &s = win->sources[static_cast<std::size_t>(t)];
        if (s.posts > s.posts_used) ++s.posts_used;
        if (member_failed(win, t)) win->access_failed.push_back(t);
        win->targets[static_cast<std::size_t>(t)].pscw = true;
    }
    win->access_open = true;
    return MPI_SUCCESS;
}

int MPI_Win_complete(MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_complete", win));
    if (!win->access_open)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_complete", "no MPI_Win_start epoch is open on %s",
                     comm_label(win->comm));
    int err = complete(win, [win](int r) { return win->targets[static_cast<std::size_t>(r)].pscw; });
    if (err == MPI_ERR_REVOKED) return revoked_error("MPI_Win_complete", win);
    const int refused = err == MPI_ERR_RMA_RANGE ? err : MPI_SUCCESS;
    if (refused != MPI_SUCCESS) err = MPI_SUCCESS;
    int failed = -1;
    for (int t : win->access_group) {
        win->targets[static_cast<std::size_t>(t)].pscw = false;
        if (!member_failed(win, t)) {
            rma::send(win, t, Kind::complete, {});
        } else if (std::find(win->access_failed.begin(), win->access_failed.end(), t) == win->access_failed.end()) {
            failed = t;  // failed during the epoch
        }
    }
    win->access_open = false;
    win->access_group.clear();
    if (refused != MPI_SUCCESS && failed < 0) return sync_error("MPI_Win_complete", win, refused);
    if (err != MPI_SUCCESS || failed >= 0)
        return raise(win->comm, MPI_ERR_PROC_FAILED, "MPI_Win_complete",
                     "rank %d of %s failed during the epoch; it is completed with the others",
                     failed >= 0 ? failed : first_failed_target(win), comm_label(win->comm));
    return MPI_SUCCESS;
}

int MPI_Win_wait(MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_wait", win));
    if (!win->exposure_open)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_wait", "no MPI_Win_post epoch is open on %s",
                     comm_label(win->comm));
    int flag = 0, err = MPI_SUCCESS;
    const bool ended = wait_until(win, [&] {
        err = exposure_test("MPI_Win_wait", win, &flag);
        return err != MPI_SUCCESS || flag;
    });
    return ended ? err : revoked_error("MPI_Win_wait", win);
}

int MPI_Win_test(MPI_Win win, int *flag) {
    FTMPI_TRY(check_live("MPI_Win_test", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_test", win->comm, flag, "flag"));
    if (!win->exposure_open)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_test", "no MPI_Win_post epoch is open on %s",
                     comm_label(win->comm));
    progress();
    return exposure_test("MPI_Win_test", win, flag);
}

// Completes this process's operations, then waits for every live member's
// (spec 000 §17.11.2: the epoch completes among the live; a failure not yet
// reported by a fence is reported).
int MPI_Win_fence(int assert, MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_fence", win));
    FTMPI_CHECK(check_assert("MPI_Win_fence", win, assert, k_all_asserts & ~MPI_MODE_NOCHECK));
    // A fence's epochs are both access and exposure epochs: none other may be open.
    const char *open = passive_epoch(win)   ? "a passive-target epoch"
                       : win->access_open   ? "an MPI_Win_start epoch"
                       : win->exposure_open ? "an MPI_Win_post epoch"
                                            : nullptr;
    if (open != nullptr)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_fence", "%s is open on %s", open, comm_label(win->comm));
    int err = complete_all(win);
    ftmpi::runtime::test_kill_point(
        "rma.fence");  // tests: a death with its operations complete, before the fence's exchange
    if (err == MPI_ERR_REVOKED || !exchange_fence(win)) return revoked_error("MPI_Win_fence", win);
    win->fence_epoch = (assert &MPI_MODE_NOSUCCEED) == 0;
    win->fence_ops = false;
    if (err == MPI_ERR_RMA_RANGE) return sync_error("MPI_Win_fence", win, err);
    if (new_member_failures(win)) err = MPI_ERR_PROC_FAILED;
    if (err != MPI_SUCCESS) {
        const int r = first_failed_target(win);
        return raise(win->comm, err, "MPI_Win_fence", "rank %d of %s failed; the epoch completed among the others", r,
                     comm_label(win->comm));
    }
    return MPI_SUCCESS;
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    return lock_call("MPI_Win_lock", lock_type, rank, assert, win);
}

int MPI_Win_unlock(int rank, MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_unlock", win));
    FTMPI_CHECK(check_target("MPI_Win_unlock", win, rank, "rank"));
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (win->lock_all)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_unlock",
                     "rank %d of %s is locked by MPI_Win_lock_all: MPI_Win_unlock_all ends that epoch", rank,
                     comm_label(win->comm));
    if (win->targets[static_cast<std::size_t>(rank)].lock == 0)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_unlock", "rank %d is not locked on %s", rank,
                     comm_label(win->comm));
    const int err = unlock_target(win, rank);
    if (err == MPI_ERR_REVOKED || err == MPI_ERR_RMA_RANGE) return sync_error("MPI_Win_unlock", win, err);
    if (err != MPI_SUCCESS)
        return raise(win->comm, MPI_ERR_PROC_FAILED, "MPI_Win_unlock", "rank %d of %s failed; the epoch is completed",
                     rank, comm_label(win->comm));
    return MPI_SUCCESS;
}

// A shared lock at every member, in rank order (so two lock_alls never wait
// on each other); on a failed member, the locks taken are released.
int MPI_Win_lock_all(int assert, MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_lock_all", win));
    FTMPI_CHECK(check_assert("MPI_Win_lock_all", win, assert, MPI_MODE_NOCHECK));
    FTMPI_TRY(begin_access("MPI_Win_lock_all", win, -1));
    for (int r = 0; r < win->comm->size; ++r) {
        if (const int err = acquire("MPI_Win_lock_all", win, r, MPI_LOCK_SHARED, (assert &MPI_MODE_NOCHECK) != 0);
            err != MPI_SUCCESS) {
            if (err == MPI_ERR_PROC_FAILED)
                for (int q = 0; q < r; ++q) unlock_target(win, q);
            return err;
        }
    }
    win->lock_all = true;
    return MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_unlock_all", win));
    if (!win->lock_all)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", "no MPI_Win_lock_all epoch is open on %s",
                     comm_label(win->comm));
    int err = MPI_SUCCESS, failed = -1;
    for (int r = 0; r < win->comm->size; ++r)
        if (const int e = unlock_target(win, r); e == MPI_ERR_REVOKED) {
            return revoked_error("MPI_Win_unlock_all", win);
        } else if (e == MPI_ERR_RMA_RANGE) {
            if (err == MPI_SUCCESS) err = e;
        } else if (e != MPI_SUCCESS) {
            err = MPI_ERR_PROC_FAILED;
            if (failed < 0) failed = r;
        }
    win->lock_all = false;
    if (err == MPI_ERR_RMA_RANGE) return sync_error("MPI_Win_unlock_all", win, err);
    if (err != MPI_SUCCESS)
        return raise(win->comm, err, "MPI_Win_unlock_all", "rank %d of %s failed; the epoch is completed", failed,
                     comm_label(win->comm));
    return MPI_SUCCESS;
}

int MPI_Win_flush(int rank, MPI_Win win) { return flush_one("MPI_Win_flush", win, rank); }
int MPI_Win_flush_all(MPI_Win win) { return flush_all("MPI_Win_flush_all", win); }
int MPI_Win_flush_local(int rank, MPI_Win win) { return flush_one("MPI_Win_flush_local", win, rank); }
int MPI_Win_flush_local_all(MPI_Win win) { return flush_all("MPI_Win_flush_local_all", win); }

// The unified model: public and private copies are the same memory.
int MPI_Win_sync(MPI_Win win) {
    FTMPI_TRY(check_win("MPI_Win_sync", win));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    progress();
    return MPI_SUCCESS;
}

}  // extern "C"
