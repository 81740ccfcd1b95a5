// One-sided communication: the MPI calls (windows, operations,
// synchronization). The protocol is in mpi/rma/protocol.cpp; see
// mpi/rma/window.hpp for the design.
#include "mpi/rma/window.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "mpi/comm/attributes.hpp"
#include "mpi/checks.hpp"
#include "mpi/coll/ops.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/info.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/rma/protocol.hpp"
#include "runtime/config.hpp"
#include "runtime/shm_segment.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {

bool valid_win(MPI_Win w) { return w != MPI_WIN_NULL && w->magic == Magic::win; }

// Checks that `win` is a window; errors on an invalid one go to MPI_COMM_WORLD's handler.
int check_win(const char *call, MPI_Win w) {
    FTMPI_TRY(check_init(call));
    if (valid_win(w)) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_WIN, call, "invalid window (argument win is %s)",
                 w == MPI_WIN_NULL ? "MPI_WIN_NULL" : "not a window");
}

namespace {

using rma::Kind;
using rma::Target;
using rma::member_failed;

constexpr int k_all_asserts = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;

// A non-local call on a revoked window (MPIX_Win_revoke) fails at once.
int check_live(const char *call, MPI_Win w) {
    FTMPI_TRY(check_win(call, w));
    if (!w->comm->revoked) return MPI_SUCCESS;
    return raise(w->comm, MPI_ERR_REVOKED, call, "%s was revoked", comm_label(w->comm));
}

int revoked_error(const char *call, MPI_Win w) {
    return raise(w->comm, MPI_ERR_REVOKED, call, "%s was revoked while this call waited", comm_label(w->comm));
}

int check_assert(const char *call, MPI_Win w, int assert, int allowed) {
    if ((assert & ~allowed) == 0) return MPI_SUCCESS;
    return raise(w->comm, MPI_ERR_ASSERT, call, "invalid assert 0x%x (argument assert; allowed bits 0x%x)", assert,
                 allowed);
}

int check_target(const char *call, MPI_Win w, int rank, const char *arg = "target_rank") {
    return check_dest(call, w->comm, rank, arg);
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
// and unlocks, and they would wait for it forever.
template <typename Pred>
int complete(MPI_Win w, Pred pred) {
    bool waited = false;
    const bool done = wait_until(w, [&] {
        bool waiting = false;
        for (int r = 0; r < w->comm->size && !waiting; ++r)
            waiting = pred(r) && w->targets[static_cast<std::size_t>(r)].pending > 0;
        waited = waited || waiting;
        return !waiting;
    });
    if (!done) return MPI_ERR_REVOKED;
    if (!waited) progress();
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

int complete_all(MPI_Win w) {
    return complete(w, [](int) { return true; });
}

int first_failed_target(MPI_Win w) {
    for (int r = 0; r < w->comm->size; ++r)
        if (member_failed(w, r)) return r;
    return -1;
}

// Whether an access epoch toward `rank` is open.
bool in_epoch(MPI_Win w, int rank) {
    const Target &t = w->targets[static_cast<std::size_t>(rank)];
    return w->fence_epoch || w->lock_all || t.lock != 0 || t.pscw;
}

// Whether a passive-target epoch (a lock or lock_all) is open.
bool passive_epoch(MPI_Win w) {
    if (w->lock_all) return true;
    for (const Target &t : w->targets)
        if (t.lock != 0) return true;
    return false;
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
    return raise(w->comm, MPI_ERR_RMA_SYNC, call, "no passive-target epoch (MPI_Win_lock or MPI_Win_lock_all) is open on %s",
                 comm_label(w->comm));
}

// Target-side bounds of `count` elements of `type` at `disp`.
bool in_range(MPI_Win w, int rank, MPI_Aint disp, int count, MPI_Datatype type) {
    if (count == 0 || w->flavor == MPI_WIN_FLAVOR_DYNAMIC) return true;  // a dynamic window: checked at the target
    const Target &t = w->targets[static_cast<std::size_t>(rank)];
    // A contiguous predefined type's data is [0, size): no layout lookup on the common path.
    const bool plain = type->predefined && type->contiguous;
    const MPI_Aint lo = plain ? 0 : type_layout(type).true_lb;
    const MPI_Aint hi = plain ? static_cast<MPI_Aint>(type->size) : type_layout(type).true_ub;
    const MPI_Aint start = disp * t.disp_unit;
    return disp >= 0 && start + lo >= 0 && start + static_cast<MPI_Aint>(count - 1) * type->extent + hi <= t.size;
}

struct Access {
    const void *origin;
    int origin_count;
    MPI_Datatype origin_type;
    int target;
    MPI_Aint disp;
    int target_count;
    MPI_Datatype target_type;
    bool origin_used = true;  // false: MPI_NO_OP (the origin buffer is ignored)
};

// The checks every operation shares; MPI_SUCCESS and *skip when the target
// is MPI_PROC_NULL.
int check_access(const char *call, MPI_Win w, const Access &a, bool *skip) {
    FTMPI_TRY(check_live(call, w));
    MPI_Comm c = w->comm;
    FTMPI_CHECK(check_count(call, c, a.origin_count, "origin_count"));
    FTMPI_CHECK(check_type(call, c, a.origin_type, "origin_datatype"));
    FTMPI_CHECK(check_count(call, c, a.target_count, "target_count"));
    FTMPI_CHECK(check_type(call, c, a.target_type, "target_datatype"));
    FTMPI_CHECK(check_target(call, w, a.target));
    *skip = a.target == MPI_PROC_NULL;
    if (*skip) return MPI_SUCCESS;
    if (!a.origin_type->committed || !a.target_type->committed)
        return raise(c, MPI_ERR_TYPE, call, "datatype not committed (argument %s)",
                     a.origin_type->committed ? "target_datatype" : "origin_datatype");
    if (a.origin_used) FTMPI_CHECK(check_typed_buffer(call, c, a.origin, a.origin_count, a.origin_type, "origin_addr"));
    if (a.origin_type->size * static_cast<std::size_t>(a.origin_count) !=
        a.target_type->size * static_cast<std::size_t>(a.target_count))
        return raise(c, MPI_ERR_TYPE, call,
                     "origin (%d elements, %zu bytes) and target (%d elements, %zu bytes) do not match",
                     a.origin_count, a.origin_type->size * static_cast<std::size_t>(a.origin_count), a.target_count,
                     a.target_type->size * static_cast<std::size_t>(a.target_count));
    if (!in_epoch(w, a.target))
        return raise(c, MPI_ERR_RMA_SYNC, call, "no access epoch toward rank %d is open on %s (fence, lock or lock_all first)",
                     a.target, comm_label(c));
    if (!in_range(w, a.target, a.disp, a.target_count, a.target_type))
        return raise(c, MPI_ERR_RMA_RANGE, call,
                     "target_disp %ld with %d elements is outside rank %d's window of %ld bytes (disp_unit %d)",
                     static_cast<long>(a.disp), a.target_count, a.target, static_cast<long>(w->targets[static_cast<std::size_t>(a.target)].size),
                     w->targets[static_cast<std::size_t>(a.target)].disp_unit);
    if (member_failed(w, a.target))
        return raise(c, MPI_ERR_PROC_FAILED, call, "rank %d of %s is failed (argument target_rank)", a.target,
                     comm_label(c));
    w->fence_ops = w->fence_ops || w->fence_epoch;  // a fence's epoch has begun
    return MPI_SUCCESS;
}

// Sends one operation whose payload is ready; counts it pending. A fetching
// one (`fetch` not 0) is forgotten if it cannot be sent.
int issue(const char *call, MPI_Win w, int target, Kind kind, std::vector<char> payload, std::uint64_t fetch = 0) {
    Target &t = w->targets[static_cast<std::size_t>(target)];
    ++t.pending;
    if (!rma::send(w, target, kind, std::move(payload))) {
        --t.pending;
        if (auto it = w->fetches.find(fetch); fetch != 0 && it != w->fetches.end()) {
            dt_release(it->second.type);
            if (it->second.request != nullptr) release_request(it->second.request);
            w->fetches.erase(it);
        }
        return raise(w->comm, MPI_ERR_PROC_FAILED, call, "rank %d of %s is failed (argument target_rank)", target,
                     comm_label(w->comm));
    }
    return MPI_SUCCESS;
}

void append_packed(std::vector<char> &out, const void *buf, int count, MPI_Datatype type) {
    const std::size_t bytes = type->size * static_cast<std::size_t>(count);
    const std::size_t at = out.size();
    out.resize(at + bytes);
    if (bytes != 0) pack(buf, static_cast<std::size_t>(count), type, out.data() + at);
}

// Accumulate's op: predefined, and defined on the target type.
int check_rma_op(const char *call, MPI_Win w, MPI_Op op, MPI_Datatype type) {
    FTMPI_CHECK(check_op(call, w->comm, op));
    if (!op->predefined)
        return raise(w->comm, MPI_ERR_OP, call, "one-sided accumulates take predefined ops only (argument op)");
    if (op->id == op_replace || op->id == op_no_op) return MPI_SUCCESS;
    return check_op_type(call, w->comm, op, type);
}

// The fetching operations: registers where the REPLY goes.
std::uint64_t expect_reply(MPI_Win w, void *buf, int count, MPI_Datatype type, int target, MPI_Request request) {
    const std::uint64_t id = w->next_fetch++;
    dt_acquire(type);
    w->fetches[id] = {buf, count, type, target, request};
    return id;
}

// The request-based calls: only in a passive-target epoch (MPI 3.1 §11.3.5).
int check_request_epoch(const char *call, MPI_Win w, int target, MPI_Request *request) {
    FTMPI_TRY(check_win(call, w));
    FTMPI_CHECK(check_nonnull(call, w->comm, request, "request"));
    if (target == MPI_PROC_NULL || target < 0 || target >= w->comm->size) return MPI_SUCCESS;
    if (w->lock_all || w->targets[static_cast<std::size_t>(target)].lock != 0) return MPI_SUCCESS;
    return raise(w->comm, MPI_ERR_RMA_SYNC, call, "request-based operations need a passive-target epoch toward rank %d",
                 target);
}

// A request that completes with the REPLY of the operation about to be issued.
MPI_Request fetch_request(MPI_Win w) {
    return new_request(ftmpi_request_s::Kind::coll, w->comm, nullptr, 0, nullptr, 0, 0, 0);
}

// Puts and gets to a member whose window memory is mapped here: the copy is
// done now (complete at once, nothing to wait for). False: no mapping.
bool direct_copy(MPI_Win w, const Access &a, bool put) {
    char *mem = w->direct[static_cast<std::size_t>(a.target)];
    if (mem == nullptr) return false;
    char *at = mem + a.disp * w->targets[static_cast<std::size_t>(a.target)].disp_unit;
    auto *origin = static_cast<char *>(const_cast<void *>(a.origin));
    const std::size_t bytes = a.origin_type->size * static_cast<std::size_t>(a.origin_count);
    if (bytes == 0) return true;
    if (a.origin_type->contiguous && a.target_type->contiguous) {
        if (put) std::memcpy(at, origin, bytes);
        else std::memcpy(origin, at, bytes);
        return true;
    }
    std::vector<char> packed(bytes);
    if (put) {
        pack(origin, static_cast<std::size_t>(a.origin_count), a.origin_type, packed.data());
        unpack(packed.data(), bytes, at, a.target_type);
    } else {
        pack(at, static_cast<std::size_t>(a.target_count), a.target_type, packed.data());
        unpack(packed.data(), bytes, origin, a.origin_type);
    }
    return true;
}

int put_or_acc(const char *call, Kind kind, const Access &a, MPI_Op op, MPI_Win w) {
    bool skip = false;
    FTMPI_TRY(check_access(call, w, a, &skip));
    if (kind == Kind::acc) FTMPI_CHECK(check_rma_op(call, w, op, a.target_type));
    if (skip) return MPI_SUCCESS;
    if (kind == Kind::put && direct_copy(w, a, true)) return MPI_SUCCESS;
    const int id = kind == Kind::acc ? op->id : static_cast<int>(op_replace);
    std::vector<char> msg = rma::operation(a.disp, a.target_count, a.target_type, id,
                                           a.origin_type->size * static_cast<std::size_t>(a.origin_count), 0);
    append_packed(msg, a.origin, a.origin_count, a.origin_type);
    const int err = issue(call, w, a.target, kind, std::move(msg));
    if (kind == Kind::acc) runtime::test_kill_point("rma.acc");  // tests: a death with an accumulate out
    return err;
}

int get_acc(const char *call, const Access &a, void *result, int result_count, MPI_Datatype result_type, MPI_Op op,
            MPI_Win w, MPI_Request *request = nullptr) {
    bool skip = false;
    FTMPI_TRY(check_access(call, w, a, &skip));
    MPI_Comm c = w->comm;
    FTMPI_CHECK(check_count(call, c, result_count, "result_count"));
    FTMPI_CHECK(check_type(call, c, result_type, "result_datatype"));
    FTMPI_CHECK(check_rma_op(call, w, op, a.target_type));
    if (skip) return MPI_SUCCESS;
    if (result_type->size * static_cast<std::size_t>(result_count) !=
        a.target_type->size * static_cast<std::size_t>(a.target_count))
        return raise(c, MPI_ERR_TYPE, call, "result (%d elements) and target (%d elements) do not match",
                     result_count, a.target_count);
    const bool fetch_only = op->id == op_no_op;
    const std::size_t bytes = fetch_only ? 0 : a.origin_type->size * static_cast<std::size_t>(a.origin_count);
    MPI_Request req = request != nullptr ? fetch_request(w) : nullptr;
    const std::uint64_t id = expect_reply(w, result, result_count, result_type, a.target, req);
    std::vector<char> msg = rma::operation(a.disp, a.target_count, a.target_type, op->id, bytes, id);
    if (!fetch_only) append_packed(msg, a.origin, a.origin_count, a.origin_type);
    FTMPI_TRY(issue(call, w, a.target, Kind::get_acc, std::move(msg), id));
    if (request != nullptr) *request = req;
    return MPI_SUCCESS;
}

bool on_this_node(int job_rank) {
    const auto &local = g.pm->job().local_peers;
    return std::find(local.begin(), local.end(), job_rank) != local.end();
}

// Creation over `comm`, at every member alike (spec 000 §17.11): the hidden
// communicator, then an agreement on every member's outcome, so the window
// exists everywhere or nowhere.
//
// MPI_Win_allocate puts each member's memory in a shared-memory segment,
// which the members on its node map: their puts and gets to it are plain
// copies (the rest, and every other member, use messages).
// MPI_Win_allocate_shared makes one segment for all (members on one node),
// rank after rank, contiguous. `base` is MPI_Win_create's memory, else null.
int create(const char *call, MPI_Comm comm, void *base, MPI_Aint size, int disp_unit, int flavor, MPI_Info info,
           MPI_Win *win, void *baseptr) {
    MPI_Comm hidden = MPI_COMM_NULL;
    int err = make_hidden_comm(comm, &hidden);
    struct Shape {
        std::int64_t size;
        std::int32_t disp_unit;
        std::int32_t ok;
        char segment[48];
    };
    runtime::Segment seg;
    const bool mapped = flavor == MPI_WIN_FLAVOR_ALLOCATE && runtime::config().RMA_SHM != 0;
    void *private_mem = nullptr;  // MPI_Win_allocate without shared memory
    if (mapped) seg = runtime::create_segment(static_cast<std::size_t>(size));
    else if (flavor == MPI_WIN_FLAVOR_ALLOCATE) private_mem = std::calloc(size > 0 ? static_cast<std::size_t>(size) : 1, 1);
    std::vector<Shape> shapes(static_cast<std::size_t>(comm->size));
    Shape mine{size, disp_unit, flavor != MPI_WIN_FLAVOR_ALLOCATE || seg.addr != nullptr || private_mem != nullptr ? 1 : 0, {}};
    std::snprintf(mine.segment, sizeof mine.segment, "%s", seg.name.c_str());
    if (hidden != MPI_COMM_NULL) err = team_allgather(hidden, &mine, sizeof mine, shapes.data());
    // The shared flavor: the lowest rank makes the one segment, the others map it.
    std::size_t total = 0;
    for (const Shape &sh : shapes) total += static_cast<std::size_t>(sh.size);
    std::vector<std::pair<void *, std::size_t>> mappings;
    char *shared = nullptr;
    if (flavor == MPI_WIN_FLAVOR_SHARED && err == MPI_SUCCESS) {
        char name[48] = {};
        if (comm->rank == 0) {
            seg = runtime::create_segment(total);
            std::snprintf(name, sizeof name, "%s", seg.addr != nullptr ? seg.name.c_str() : "");
            shared = static_cast<char *>(seg.addr);
        }
        err = team_bcast(hidden, 0, name, sizeof name);
        if (err == MPI_SUCCESS && comm->rank != 0 && name[0] != '\0') {
            shared = static_cast<char *>(runtime::map_segment(name, total));
            if (shared != nullptr) mappings.emplace_back(shared, total);
        }
    }
    int ok = err == MPI_SUCCESS ? 1 : 0;
    for (const Shape &sh : shapes) ok = ok && sh.ok;
    if (flavor == MPI_WIN_FLAVOR_SHARED) ok = ok && shared != nullptr;
    agree_internal(comm, &ok, nullptr, true);
    if (!ok) {
        if (hidden != MPI_COMM_NULL) discard_comm(hidden);
        for (auto [addr, len] : mappings) runtime::unmap_segment(addr, len);
        if (seg.addr != nullptr) {
            runtime::unmap_segment(seg.addr, seg.size);
            runtime::unlink_segment(seg.name);
        }
        std::free(private_mem);
        if (err == MPI_SUCCESS && mine.ok == 0)
            return raise(comm, MPI_ERR_NO_MEM, call, "cannot allocate %ld bytes of shared memory for the window",
                         static_cast<long>(size));
        return raise(comm, err != MPI_SUCCESS ? err : MPI_ERR_PROC_FAILED, call,
                     "window creation over %s failed at some member", comm_label(comm));
    }
    auto w = new ftmpi_win_s;
    w->comm = hidden;
    hidden->win = w;
    hidden->handler_of = ftmpi_comm_s::HandlerOf::win;
    hidden->name[0] = '\0';
    errhandler_release(hidden->errhandler);  // the parent's: a window starts with MPI_ERRORS_ARE_FATAL
    hidden->errhandler = MPI_ERRORS_ARE_FATAL;
    errhandler_retain(MPI_ERRORS_ARE_FATAL);
    w->size = size;
    w->disp_unit = disp_unit;
    w->flavor = flavor;
    merge_hints(w->info, info, HintKind::win);
    const std::size_t n = static_cast<std::size_t>(comm->size);
    w->targets.resize(n);
    w->sources.resize(n);
    w->direct.assign(n, nullptr);
    for (std::size_t r = 0; r < n; ++r) {
        w->targets[r].size = shapes[r].size;
        w->targets[r].disp_unit = shapes[r].disp_unit;
    }
    if (seg.addr != nullptr) {
        w->segment = seg.name;
        mappings.emplace_back(seg.addr, seg.size);
    }
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        w->base = base;
    } else if (!mapped && flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        w->base = private_mem;
        w->private_memory = private_mem;
    } else if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        w->base = seg.addr;
        w->direct[static_cast<std::size_t>(comm->rank)] = static_cast<char *>(seg.addr);
        for (std::size_t r = 0; r < n; ++r) {
            if (static_cast<int>(r) == comm->rank || shapes[r].size == 0 || !on_this_node(comm->procs[r])) continue;
            void *p = runtime::map_segment(shapes[r].segment, static_cast<std::size_t>(shapes[r].size));
            if (p == nullptr) continue;  // messages, then
            w->direct[r] = static_cast<char *>(p);
            mappings.emplace_back(p, static_cast<std::size_t>(shapes[r].size));
        }
    } else {  // shared
        std::size_t off = 0;
        for (std::size_t r = 0; r < n; ++r) {
            w->direct[r] = shared + off;
            off += static_cast<std::size_t>(shapes[r].size);
        }
        w->base = w->direct[static_cast<std::size_t>(comm->rank)];
    }
    w->mappings = std::move(mappings);
    rma::open_window(w);
    *win = w;
    if (baseptr != nullptr) *static_cast<void **>(baseptr) = w->base;
    return MPI_SUCCESS;
}

int check_create(const char *call, MPI_Comm comm, MPI_Aint size, int disp_unit, MPI_Info info, const void *win) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, win, "win"));
    if (comm->inter) return raise(comm, MPI_ERR_COMM, call, "windows are created over intra-communicators only");
    if (size < 0) return raise(comm, MPI_ERR_SIZE, call, "negative size %ld", static_cast<long>(size));
    if (disp_unit <= 0) return raise(comm, MPI_ERR_DISP, call, "invalid disp_unit %d (must be positive)", disp_unit);
    if (info != MPI_INFO_NULL && info->magic != Magic::info)
        return raise(comm, MPI_ERR_INFO, call, "invalid info (argument info)");
    return MPI_SUCCESS;
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
    return exchange(w, Kind::fence, payload, [seq](const rma::Source &s) { return s.fence >= seq; }, true);
}

// MPI_Win_free: FREE from every live member, even on a revoked window.
void exchange_free(MPI_Win w) {
    exchange(w, Kind::free, {}, [](const rma::Source &s) { return s.freed; }, false);
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
    return acquire(call, w, rank, type, (assert & MPI_MODE_NOCHECK) != 0);
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
    const int err = complete(w, [rank](int r) { return r == rank; });
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
    const int err = complete_all(w);
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
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
    FTMPI_TRY(check_init("MPI_Alloc_mem"));
    FTMPI_CHECK(check_nonnull("MPI_Alloc_mem", MPI_COMM_NULL, baseptr, "baseptr"));
    if (size < 0) return raise(MPI_COMM_NULL, MPI_ERR_SIZE, "MPI_Alloc_mem", "negative size %ld", static_cast<long>(size));
    if (info != MPI_INFO_NULL && info->magic != Magic::info)
        return raise(MPI_COMM_NULL, MPI_ERR_INFO, "MPI_Alloc_mem", "invalid info (argument info)");
    void *p = nullptr;
    if (posix_memalign(&p, 64, size > 0 ? static_cast<std::size_t>(size) : 1) != 0)
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes", static_cast<long>(size));
    *static_cast<void **>(baseptr) = p;
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base) {
    FTMPI_TRY(check_init("MPI_Free_mem"));
    std::free(base);
    return MPI_SUCCESS;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    FTMPI_TRY(check_create("MPI_Win_create", comm, size, disp_unit, info, win));
    if (base == nullptr && size > 0)
        return raise(comm, MPI_ERR_BASE, "MPI_Win_create", "base is NULL with size %ld", static_cast<long>(size));
    return create("MPI_Win_create", comm, base, size, disp_unit, MPI_WIN_FLAVOR_CREATE, info, win, nullptr);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    FTMPI_TRY(check_create("MPI_Win_allocate", comm, size, disp_unit, info, win));
    FTMPI_CHECK(check_nonnull("MPI_Win_allocate", comm, baseptr, "baseptr"));
    return create("MPI_Win_allocate", comm, nullptr, size, disp_unit, MPI_WIN_FLAVOR_ALLOCATE, info, win, baseptr);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    FTMPI_TRY(check_create("MPI_Win_allocate_shared", comm, size, disp_unit, info, win));
    FTMPI_CHECK(check_nonnull("MPI_Win_allocate_shared", comm, baseptr, "baseptr"));
    // Every member sees the same answer: the processes of comm are all on one node or not.
    for (int p : comm->procs)
        if (!on_this_node(p))
            return raise(comm, MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared",
                         "%s spans several nodes (job rank %d is on another); split it with "
                         "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) first",
                         comm_label(comm), p);
    return create("MPI_Win_allocate_shared", comm, nullptr, size, disp_unit, MPI_WIN_FLAVOR_SHARED, info, win, baseptr);
}

// MPI-4.0 §12.2.3: any window with memory of its own. A member's memory is
// returned where this process can load and store it: every member's of
// MPI_Win_allocate_shared; one's own; and, of MPI_Win_allocate, the members'
// on this node whose segments it mapped. Elsewhere (MPI_Win_create, or
// FTMPI_RMA_SHM=0) the memory is not shared: size 0 and NULL. MPI_PROC_NULL:
// the lowest member whose memory is returned and not empty.
int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr) {
    FTMPI_TRY(check_win("MPI_Win_shared_query", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_shared_query", win->comm, size, "size"));
    FTMPI_CHECK(check_nonnull("MPI_Win_shared_query", win->comm, disp_unit, "disp_unit"));
    FTMPI_CHECK(check_nonnull("MPI_Win_shared_query", win->comm, baseptr, "baseptr"));
    if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return raise(win->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query",
                     "a dynamic window has no memory of its own (attached memory is not shared)");
    if (rank != MPI_PROC_NULL) FTMPI_CHECK(check_target("MPI_Win_shared_query", win, rank, "rank"));
    auto reachable = [win](int r) -> void * {
        if (r == win->comm->rank) return win->base;
        return win->direct[static_cast<std::size_t>(r)];
    };
    int r = rank;
    if (r == MPI_PROC_NULL) {
        r = 0;
        while (r < win->comm->size - 1 &&
               (win->targets[static_cast<std::size_t>(r)].size == 0 || reachable(r) == nullptr))
            ++r;
    }
    const Target &t = win->targets[static_cast<std::size_t>(r)];
    void *base = reachable(r);
    *size = base != nullptr ? t.size : 0;
    *disp_unit = t.disp_unit;
    *static_cast<void **>(baseptr) = base;
    return MPI_SUCCESS;
}

// Displacements are addresses at the target (MPI_Get_address there); the
// target checks that an operation falls in memory it attached, and refuses
// it otherwise (MPI_ERR_RMA_RANGE at the origin's next synchronization).
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    FTMPI_TRY(check_create("MPI_Win_create_dynamic", comm, 0, 1, info, win));
    return create("MPI_Win_create_dynamic", comm, nullptr, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, info, win, nullptr);
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
    FTMPI_TRY(check_win("MPI_Win_attach", win));
    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return raise(win->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach", "the window was not made by MPI_Win_create_dynamic");
    if (size < 0) return raise(win->comm, MPI_ERR_SIZE, "MPI_Win_attach", "negative size %ld", static_cast<long>(size));
    if (base == nullptr && size > 0)
        return raise(win->comm, MPI_ERR_BASE, "MPI_Win_attach", "base is NULL with size %ld", static_cast<long>(size));
    // The neighbours in address order: the first region at or after base,
    // and the one before it.
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    const auto len = static_cast<std::size_t>(size);
    auto next = win->attached.lower_bound(b);
    const bool hits_next = next != win->attached.end() && (next->first == b || next->first < b + len);
    const bool hits_prev = next != win->attached.begin() && std::prev(next)->first + std::prev(next)->second > b;
    if (hits_next || hits_prev) {
        const auto &[other, other_len] = hits_next ? *next : *std::prev(next);
        return raise(win->comm, MPI_ERR_RMA_ATTACH, "MPI_Win_attach",
                     "memory at %p (%ld bytes) overlaps memory already attached at %p (%zu bytes)", base,
                     static_cast<long>(size), reinterpret_cast<void *>(other), other_len);
    }
    win->attached.emplace(b, len);
    return MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void *base) {
    FTMPI_TRY(check_win("MPI_Win_detach", win));
    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return raise(win->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach", "the window was not made by MPI_Win_create_dynamic");
    if (win->attached.erase(reinterpret_cast<std::uintptr_t>(base)) == 0)
        return raise(win->comm, MPI_ERR_RMA_ATTACH, "MPI_Win_detach", "no memory is attached at %p (argument base)", base);
    return MPI_SUCCESS;
}

// Completes at every survivor, whatever failed (spec 000 §17.11): this
// process's operations complete (or fail), then every live member's FENCE
// says its operations here are done, so none still targets the memory.
int MPI_Win_free(MPI_Win *win) {
    FTMPI_CHECK(check_nonnull("MPI_Win_free", MPI_COMM_NULL, win, "win"));
    FTMPI_TRY(check_win("MPI_Win_free", *win));
    MPI_Win w = *win;
    // On a revoked window the epochs cannot be closed any more: free ends them.
    if (!w->comm->revoked && (passive_epoch(w) || w->access_open || w->exposure_open))
        return raise(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_free", "an %s epoch is still open on %s (end it first)",
                     passive_epoch(w) ? "MPI_Win_lock or MPI_Win_lock_all"
                     : w->access_open ? "MPI_Win_start"
                                      : "MPI_Win_post",
                     comm_label(w->comm));
    if (const int rc = delete_attributes(w); rc != MPI_SUCCESS)
        return raise(w->comm, rc, "MPI_Win_free", "an attribute's delete callback failed");
    complete_all(w);
    exchange_free(w);
    rma::close_window(w);
    w->comm->win = nullptr;
    discard_comm(w->comm);
    for (auto [addr, len] : w->mappings) ftmpi::runtime::unmap_segment(addr, len);
    if (!w->segment.empty()) ftmpi::runtime::unlink_segment(w->segment);
    std::free(w->private_memory);
    w->magic = Magic::dead;
    delete w;
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag) {
    FTMPI_TRY(check_win("MPI_Win_get_attr", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_attr", win->comm, attribute_val, "attribute_val"));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_attr", win->comm, flag, "flag"));
    auto out = static_cast<void **>(attribute_val);
    *flag = 1;
    switch (keyval) {
    case MPI_WIN_BASE: *out = win->base; break;
    case MPI_WIN_SIZE: *out = &win->size; break;
    case MPI_WIN_DISP_UNIT: *out = &win->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: *out = &win->flavor; break;
    case MPI_WIN_MODEL: *out = &win->model; break;
    default: return get_user_attr("MPI_Win_get_attr", win, keyval, attribute_val, flag);
    }
    return MPI_SUCCESS;
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group) {
    FTMPI_TRY(check_win("MPI_Win_get_group", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_group", win->comm, group, "group"));
    *group = new_group(win->comm->procs);
    return MPI_SUCCESS;
}

int MPI_Win_set_name(MPI_Win win, const char *name) {
    FTMPI_TRY(check_win("MPI_Win_set_name", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_set_name", win->comm, name, "win_name"));
    std::snprintf(win->comm->name, sizeof win->comm->name, "%s", name);
    return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char *name, int *resultlen) {
    FTMPI_TRY(check_win("MPI_Win_get_name", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_name", win->comm, name, "win_name"));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_name", win->comm, resultlen, "resultlen"));
    std::strcpy(name, win->comm->name);  // set_name bounds it
    *resultlen = static_cast<int>(std::strlen(name));
    return MPI_SUCCESS;
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
    FTMPI_TRY(check_win("MPI_Win_set_info", win));
    if (info == MPI_INFO_NULL || info->magic != Magic::info)
        return raise(win->comm, MPI_ERR_INFO, "MPI_Win_set_info", "invalid info (argument info)");
    merge_hints(win->info, info, HintKind::win);
    return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used) {
    FTMPI_TRY(check_win("MPI_Win_get_info", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_info", win->comm, info_used, "info_used"));
    *info_used = info_of(win->info);
    return MPI_SUCCESS;
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler) {
    FTMPI_CHECK(check_nonnull("MPI_Win_create_errhandler", MPI_COMM_NULL, reinterpret_cast<void *>(fn), "win_errhandler_fn"));
    FTMPI_CHECK(check_nonnull("MPI_Win_create_errhandler", MPI_COMM_NULL, errhandler, "errhandler"));
    *errhandler = new ftmpi_errhandler_s{Magic::errhandler, ftmpi_errhandler_s::Kind::user,
                                         reinterpret_cast<MPI_Comm_errhandler_function *>(fn), false};
    return MPI_SUCCESS;
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
    FTMPI_TRY(check_win("MPI_Win_set_errhandler", win));
    if (errhandler == MPI_ERRHANDLER_NULL || errhandler->magic != Magic::errhandler)
        return raise(win->comm, MPI_ERR_ARG, "MPI_Win_set_errhandler", "invalid error handler (argument errhandler)");
    errhandler_retain(errhandler);
    errhandler_release(win->comm->errhandler);
    win->comm->errhandler = errhandler;
    return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler) {
    FTMPI_TRY(check_win("MPI_Win_get_errhandler", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_errhandler", win->comm, errhandler, "errhandler"));
    errhandler_retain(win->comm->errhandler);
    *errhandler = win->comm->errhandler;
    return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode) {
    FTMPI_TRY(check_win("MPI_Win_call_errhandler", win));
    raise(win->comm, errorcode, "MPI_Win_call_errhandler", "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    return put_or_acc("MPI_Put", Kind::put,
                      {origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype},
                      MPI_OP_NULL, win);
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    return put_or_acc("MPI_Accumulate", Kind::acc,
                      {origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype},
                      op, win);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    const Access a{origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype};
    bool skip = false;
    FTMPI_TRY(check_access("MPI_Get", win, a, &skip));
    if (skip || direct_copy(win, a, false)) return MPI_SUCCESS;
    const std::uint64_t id = expect_reply(win, origin_addr, origin_count, origin_datatype, target_rank, nullptr);
    return issue("MPI_Get", win, target_rank, Kind::get,
                 rma::operation(target_disp, target_count, target_datatype, op_no_op, 0, id), id);
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    // With MPI_NO_OP the origin buffer is ignored: its count and type may be anything.
    const bool no_op = op == MPI_NO_OP;
    const Access a{origin_addr, no_op ? target_count : origin_count, no_op ? target_datatype : origin_datatype,
                   target_rank, target_disp, target_count, target_datatype, !no_op};
    return get_acc("MPI_Get_accumulate", a, result_addr, result_count, result_datatype, op, win);
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    const Access a{origin_addr, 1, datatype, target_rank, target_disp, 1, datatype, op != MPI_NO_OP};
    if (valid_win(win) && valid_type(datatype) && !datatype->predefined)
        return raise(win->comm, MPI_ERR_TYPE, "MPI_Fetch_and_op", "datatype must be predefined");
    return get_acc("MPI_Fetch_and_op", a, result_addr, 1, datatype, op, win);
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win) {
    const Access a{origin_addr, 1, datatype, target_rank, target_disp, 1, datatype};
    bool skip = false;
    FTMPI_TRY(check_access("MPI_Compare_and_swap", win, a, &skip));
    FTMPI_CHECK(check_nonnull("MPI_Compare_and_swap", win->comm, compare_addr, "compare_addr"));
    FTMPI_CHECK(check_nonnull("MPI_Compare_and_swap", win->comm, result_addr, "result_addr"));
    if (!datatype->predefined)
        return raise(win->comm, MPI_ERR_TYPE, "MPI_Compare_and_swap", "datatype must be predefined");
    if (skip) return MPI_SUCCESS;
    const std::uint64_t id = expect_reply(win, result_addr, 1, datatype, target_rank, nullptr);
    std::vector<char> msg = rma::operation(target_disp, 1, datatype, op_replace, 2 * datatype->size, id);
    append_packed(msg, origin_addr, 1, datatype);
    append_packed(msg, compare_addr, 1, datatype);
    return issue("MPI_Compare_and_swap", win, target_rank, Kind::cas, std::move(msg), id);
}

// Rput and Raccumulate complete locally at once: the origin data is copied
// when the call returns. Rget and Rget_accumulate complete with the data.
int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) {
    FTMPI_TRY(check_request_epoch("MPI_Rput", win, target_rank, request));
    FTMPI_TRY(MPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win));
    *request = completed_request(win->comm);
    return MPI_SUCCESS;
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request *request) {
    FTMPI_TRY(check_request_epoch("MPI_Raccumulate", win, target_rank, request));
    FTMPI_TRY(MPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win));
    *request = completed_request(win->comm);
    return MPI_SUCCESS;
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) {
    FTMPI_TRY(check_request_epoch("MPI_Rget", win, target_rank, request));
    const Access a{origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype};
    bool skip = false;
    FTMPI_TRY(check_access("MPI_Rget", win, a, &skip));
    if (skip || direct_copy(win, a, false)) {
        *request = completed_request(win->comm);
        return MPI_SUCCESS;
    }
    MPI_Request req = fetch_request(win);
    const std::uint64_t id = expect_reply(win, origin_addr, origin_count, origin_datatype, target_rank, req);
    FTMPI_TRY(issue("MPI_Rget", win, target_rank, Kind::get,
                    rma::operation(target_disp, target_count, target_datatype, op_no_op, 0, id), id));
    *request = req;
    return MPI_SUCCESS;
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) {
    FTMPI_TRY(check_request_epoch("MPI_Rget_accumulate", win, target_rank, request));
    const bool no_op = op == MPI_NO_OP;
    const Access a{origin_addr, no_op ? target_count : origin_count, no_op ? target_datatype : origin_datatype,
                   target_rank, target_disp, target_count, target_datatype, !no_op};
    *request = MPI_REQUEST_NULL;
    FTMPI_TRY(get_acc("MPI_Rget_accumulate", a, result_addr, result_count, result_datatype, op, win, request));
    if (*request == MPI_REQUEST_NULL) *request = completed_request(win->comm);  // MPI_PROC_NULL
    return MPI_SUCCESS;
}

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

// Spec 001 §1.3.2 (MPI_Win_invalidate), Open MPI's MPIX name: every member's
// window is revoked (the hidden communicator's reliable revoke), and its
// calls blocked on the window return MPI_ERR_REVOKED.
int MPIX_Win_revoke(MPI_Win win) {
    FTMPI_TRY(check_win("MPIX_Win_revoke", win));
    return MPIX_Comm_revoke(win->comm);
}

int MPI_Win_invalidate(MPI_Win win) {
    FTMPI_TRY(check_win("MPI_Win_invalidate", win));
    return MPIX_Comm_revoke(win->comm);
}

int MPIX_Win_is_revoked(MPI_Win win, int *flag) {
    FTMPI_TRY(check_win("MPIX_Win_is_revoked", win));
    FTMPI_CHECK(check_nonnull("MPIX_Win_is_revoked", win->comm, flag, "flag"));
    progress();
    *flag = win->comm->revoked ? 1 : 0;
    return MPI_SUCCESS;
}

// Spec 000 §17.11.1: the same group of failed processes at every live
// member, or an error at every one (the validate agreement of the hidden
// communicator).
int MPI_Win_validate(MPI_Win win, MPI_Group *failed) {
    FTMPI_TRY(check_win("MPI_Win_validate", win));
    return MPI_Comm_validate(win->comm, failed);
}

int MPI_Iwin_validate(MPI_Win win, MPI_Group *failed, MPI_Request *request) {
    FTMPI_TRY(check_win("MPI_Iwin_validate", win));
    return MPI_Icomm_validate(win->comm, failed, request);
}

// Completes this process's operations, then waits for every live member's
// (spec 000 §17.11.2: the epoch completes among the live; a failure not yet
// reported by a fence is reported).
int MPI_Win_fence(int assert, MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_fence", win));
    FTMPI_CHECK(check_assert("MPI_Win_fence", win, assert, k_all_asserts & ~MPI_MODE_NOCHECK));
    // A fence's epochs are both access and exposure epochs: none other may be open.
    const char *open = passive_epoch(win) ? "a passive-target epoch"
                       : win->access_open ? "an MPI_Win_start epoch"
                       : win->exposure_open ? "an MPI_Win_post epoch"
                                            : nullptr;
    if (open != nullptr)
        return raise(win->comm, MPI_ERR_RMA_SYNC, "MPI_Win_fence", "%s is open on %s", open, comm_label(win->comm));
    int err = complete_all(win);
    ftmpi::runtime::test_kill_point("rma.fence");  // tests: a death with its operations complete, before the fence's exchange
    if (err == MPI_ERR_REVOKED || !exchange_fence(win)) return revoked_error("MPI_Win_fence", win);
    win->fence_epoch = (assert & MPI_MODE_NOSUCCEED) == 0;
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
        return raise(win->comm, MPI_ERR_PROC_FAILED, "MPI_Win_unlock",
                     "rank %d of %s failed; the epoch is completed", rank, comm_label(win->comm));
    return MPI_SUCCESS;
}

// A shared lock at every member, in rank order (so two lock_alls never wait
// on each other); on a failed member, the locks taken are released.
int MPI_Win_lock_all(int assert, MPI_Win win) {
    FTMPI_TRY(check_live("MPI_Win_lock_all", win));
    FTMPI_CHECK(check_assert("MPI_Win_lock_all", win, assert, MPI_MODE_NOCHECK));
    FTMPI_TRY(begin_access("MPI_Win_lock_all", win, -1));
    for (int r = 0; r < win->comm->size; ++r) {
        if (const int err = acquire("MPI_Win_lock_all", win, r, MPI_LOCK_SHARED, (assert & MPI_MODE_NOCHECK) != 0);
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

int MPI_Win_get_group_failed(MPI_Win win, MPI_Group *failed) {
    FTMPI_TRY(check_win("MPI_Win_get_group_failed", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_group_failed", win->comm, failed, "failed"));
    progress();
    std::vector<int> procs;
    for (int r = 0; r < win->comm->size; ++r)
        if (member_failed(win, r)) procs.push_back(win->comm->procs[static_cast<std::size_t>(r)]);
    *failed = group_or_empty(std::move(procs));
    return MPI_SUCCESS;
}

int MPI_Win_get_failed(MPI_Win win, MPI_Group *failed) { return MPI_Win_get_group_failed(win, failed); }
int MPIX_Win_get_failed(MPI_Win win, MPI_Group *failed) { return MPI_Win_get_group_failed(win, failed); }

}  // extern "C"
