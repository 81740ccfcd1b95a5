// One-sided communication operations: MPI_Put, MPI_Get, the accumulates,
// MPI_Compare_and_swap and their request-based forms, with the checks they share.
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/coll/ops.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/rma/protocol.hpp"
#include "mpi/rma/window.hpp"
#include "mpi/rma/window_internal.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {
namespace {

// Whether an access epoch toward `rank` is open.
[[gnu::always_inline]] inline bool in_epoch(MPI_Win w, int rank) {
    const Target &t = w->targets[static_cast<std::size_t>(rank)];
    return w->fence_epoch || w->lock_all || t.lock != 0 || t.pscw;
}

// Target-side bounds of `count` elements of `type` at `disp`.
[[gnu::always_inline]] inline bool in_range(MPI_Win w, int rank, MPI_Aint disp, int count, MPI_Datatype type) {
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

// The common case in one pass, with no message to prepare: the same
// predefined type and count on both sides, to a live member within its
// window in an open epoch. True only when every check of check_access
// passes; false sends the operation through them all.
[[gnu::always_inline]] inline bool plain_access(MPI_Win w, const Access &a) {
    const MPI_Datatype t = a.target_type;
    if (!g.initialized || g.finalized || !valid_win(w) || w->comm->revoked || a.origin_type != t ||
        a.origin_count != a.target_count || a.target_count < 0 || !valid_type(t) || !t->predefined || a.target < 0 ||
        a.target >= w->comm->size || (a.origin_used && a.origin == nullptr))
        return false;
    return in_epoch(w, a.target) && in_range(w, a.target, a.disp, a.target_count, t) && !member_failed(w, a.target);
}

// check_access past plain_access.
[[gnu::noinline]] int check_access_all(const char *call, MPI_Win w, const Access &a, bool *skip) {
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
                     "origin (%d elements, %zu bytes) and target (%d elements, %zu bytes) do not match", a.origin_count,
                     a.origin_type->size * static_cast<std::size_t>(a.origin_count), a.target_count,
                     a.target_type->size * static_cast<std::size_t>(a.target_count));
    if (!in_epoch(w, a.target))
        return raise(c, MPI_ERR_RMA_SYNC, call,
                     "no access epoch toward rank %d is open on %s (fence, lock or lock_all first)", a.target,
                     comm_label(c));
    if (!in_range(w, a.target, a.disp, a.target_count, a.target_type))
        return raise(c, MPI_ERR_RMA_RANGE, call,
                     "target_disp %ld with %d elements is outside rank %d's window of %ld bytes (disp_unit %d)",
                     static_cast<long>(a.disp), a.target_count, a.target,
                     static_cast<long>(w->targets[static_cast<std::size_t>(a.target)].size),
                     w->targets[static_cast<std::size_t>(a.target)].disp_unit);
    if (member_failed(w, a.target))
        return raise(c, MPI_ERR_PROC_FAILED, call, "rank %d of %s is failed (argument target_rank)", a.target,
                     comm_label(c));
    w->fence_ops = w->fence_ops || w->fence_epoch;  // a fence's epoch has begun
    return MPI_SUCCESS;
}

// The checks every operation shares; MPI_SUCCESS and *skip when the target
// is MPI_PROC_NULL.
[[gnu::always_inline]] inline int check_access(const char *call, MPI_Win w, const Access &a, bool *skip) {
    if (!plain_access(w, a)) [[unlikely]]
        return check_access_all(call, w, a, skip);
    *skip = false;
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

// direct_copy with a derived type on either side: through a packed copy.
[[gnu::noinline]] void direct_copy_packed(const Access &a, char *at, char *origin, std::size_t bytes, bool put) {
    std::vector<char> packed(bytes);
    if (put) {
        pack(origin, static_cast<std::size_t>(a.origin_count), a.origin_type, packed.data());
        unpack(packed.data(), bytes, at, a.target_type);
    } else {
        pack(at, static_cast<std::size_t>(a.target_count), a.target_type, packed.data());
        unpack(packed.data(), bytes, origin, a.origin_type);
    }
}

// Puts and gets to a member whose window memory is mapped here: the copy is
// done now (complete at once, nothing to wait for). False: no mapping.
[[gnu::always_inline]] inline bool direct_copy(MPI_Win w, const Access &a, bool put) {
    char *mem = w->direct[static_cast<std::size_t>(a.target)];
    if (mem == nullptr) return false;
    char *at = mem + a.disp * w->targets[static_cast<std::size_t>(a.target)].disp_unit;
    auto *origin = static_cast<char *>(const_cast<void *>(a.origin));
    const std::size_t bytes = a.origin_type->size * static_cast<std::size_t>(a.origin_count);
    if (bytes == 0) return true;
    if (!a.origin_type->contiguous || !a.target_type->contiguous) [[unlikely]] {
        direct_copy_packed(a, at, origin, bytes, put);
    } else if (put) {
        std::memcpy(at, origin, bytes);
    } else {
        std::memcpy(origin, at, bytes);
    }
    return true;
}

// Single copy to MPI_Win_create memory under an exclusive lock (types
// permitting): true when it was done, or failed with *err.
bool by_single_copy(const char *call, MPI_Win w, const Access &a, Kind kind, const ftmpi_op_s *op, void *result,
                    MPI_Datatype result_type, int *err) {
    const Target &t = w->targets[static_cast<std::size_t>(a.target)];
    if (t.pid == 0 || !a.target_type->contiguous || (a.origin_used && !a.origin_type->contiguous)) return false;
    const bool combines = kind == Kind::acc || kind == Kind::get_acc;
    if (combines && (!a.target_type->predefined || (a.origin_used && a.origin_type != a.target_type) ||
                     (result != nullptr && result_type != a.target_type)))
        return false;
    const std::size_t bytes = a.target_type->size * static_cast<std::size_t>(a.target_count);
    switch (rma::single_copy(w, a.target, a.disp, kind, a.origin, result, bytes, a.target_type, op)) {
    case rma::SingleCopy::no: return false;
    case rma::SingleCopy::done: *err = MPI_SUCCESS; return true;
    case rma::SingleCopy::target_gone: break;
    }
    ft::failures().note_failed(w->comm->procs[static_cast<std::size_t>(a.target)]);
    w->targets[static_cast<std::size_t>(a.target)].failed = true;  // the epoch's synchronization reports it too
    *err = raise(w->comm, MPI_ERR_PROC_FAILED, call, "rank %d of %s failed (argument target_rank)", a.target,
                 comm_label(w->comm));
    return true;
}

int put_or_acc(const char *call, Kind kind, const Access &a, MPI_Op op, MPI_Win w) {
    bool skip = false;
    FTMPI_TRY(check_access(call, w, a, &skip));
    if (kind == Kind::acc) FTMPI_CHECK(check_rma_op(call, w, op, a.target_type));
    if (skip) return MPI_SUCCESS;
    if (kind == Kind::put && direct_copy(w, a, true)) return MPI_SUCCESS;
    if (int err = MPI_SUCCESS; by_single_copy(call, w, a, kind, op, nullptr, nullptr, &err)) return err;
    // An accumulate to mapped memory runs here and now (shm_atomic.cpp).
    const bool mapped = kind == Kind::acc && w->direct[static_cast<std::size_t>(a.target)] != nullptr;
    if (mapped && a.origin_type == a.target_type &&
        rma::mapped_accumulate(w, a.target, a.disp, a.origin, a.origin_count, a.origin_type, *op, nullptr)) {
        runtime::test_kill_point("rma.acc");
        return MPI_SUCCESS;
    }
    const int id = kind == Kind::acc ? op->id : static_cast<int>(op_replace);
    std::vector<char> msg = rma::operation(a.disp, a.target_count, a.target_type, id,
                                           a.origin_type->size * static_cast<std::size_t>(a.origin_count), 0);
    append_packed(msg, a.origin, a.origin_count, a.origin_type);
    int err = MPI_SUCCESS;
    if (mapped) {
        std::vector<char> none;
        rma::run_mapped(w, a.target, Kind::acc, msg, none);
    } else {
        err = issue(call, w, a.target, kind, std::move(msg));
    }
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
        return raise(c, MPI_ERR_TYPE, call, "result (%d elements) and target (%d elements) do not match", result_count,
                     a.target_count);
    const bool fetch_only = op->id == op_no_op;
    const std::size_t bytes = fetch_only ? 0 : a.origin_type->size * static_cast<std::size_t>(a.origin_count);
    if (int err = MPI_SUCCESS; by_single_copy(call, w, a, Kind::get_acc, op, result, result_type, &err)) {
        if (request != nullptr && err == MPI_SUCCESS) *request = completed_request(c);
        return err;
    }
    if (w->direct[static_cast<std::size_t>(a.target)] != nullptr) {  // mapped: here and now
        const bool same = result_type == a.target_type && (fetch_only || a.origin_type == a.target_type);
        if (!same ||
            !rma::mapped_accumulate(w, a.target, a.disp, a.origin, a.target_count, a.target_type, *op, result)) {
            std::vector<char> msg = rma::operation(a.disp, a.target_count, a.target_type, op->id, bytes, 0);
            if (!fetch_only) append_packed(msg, a.origin, a.origin_count, a.origin_type);
            std::vector<char> fetched;
            rma::run_mapped(w, a.target, Kind::get_acc, msg, fetched);
            if (!fetched.empty()) unpack(fetched.data(), fetched.size(), result, result_type);
        }
        if (request != nullptr) *request = completed_request(c);
        return MPI_SUCCESS;
    }
    MPI_Request req = request != nullptr ? fetch_request(w) : nullptr;
    const std::uint64_t id = expect_reply(w, result, result_count, result_type, a.target, req);
    std::vector<char> msg = rma::operation(a.disp, a.target_count, a.target_type, op->id, bytes, id);
    if (!fetch_only) append_packed(msg, a.origin, a.origin_count, a.origin_type);
    FTMPI_TRY(issue(call, w, a.target, Kind::get_acc, std::move(msg), id));
    if (request != nullptr) *request = req;
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    return put_or_acc(
        "MPI_Put", Kind::put,
        {origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype},
        MPI_OP_NULL, win);
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    return put_or_acc(
        "MPI_Accumulate", Kind::acc,
        {origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype}, op, win);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    const Access a{origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype};
    bool skip = false;
    FTMPI_TRY(check_access("MPI_Get", win, a, &skip));
    if (skip || direct_copy(win, a, false)) return MPI_SUCCESS;
    if (int err = MPI_SUCCESS;
        by_single_copy("MPI_Get", win, a, Kind::get, nullptr, origin_addr, origin_datatype, &err))
        return err;
    const std::uint64_t id = expect_reply(win, origin_addr, origin_count, origin_datatype, target_rank, nullptr);
    return issue("MPI_Get", win, target_rank, Kind::get,
                 rma::operation(target_disp, target_count, target_datatype, op_no_op, 0, id), id);
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    // With MPI_NO_OP the origin buffer is ignored: its count and type may be anything.
    const bool no_op = op == MPI_NO_OP;
    const Access a{origin_addr,
                   no_op ? target_count : origin_count,
                   no_op ? target_datatype : origin_datatype,
                   target_rank,
                   target_disp,
                   target_count,
                   target_datatype,
                   !no_op};
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
    if (skip ||
        rma::mapped_compare_and_swap(win, target_rank, target_disp, origin_addr, compare_addr, result_addr, datatype))
        return MPI_SUCCESS;
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
    if (int err = MPI_SUCCESS;
        by_single_copy("MPI_Rget", win, a, Kind::get, nullptr, origin_addr, origin_datatype, &err)) {
        if (err == MPI_SUCCESS) *request = completed_request(win->comm);
        return err;
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
    const Access a{origin_addr,
                   no_op ? target_count : origin_count,
                   no_op ? target_datatype : origin_datatype,
                   target_rank,
                   target_disp,
                   target_count,
                   target_datatype,
                   !no_op};
    *request = MPI_REQUEST_NULL;
    FTMPI_TRY(get_acc("MPI_Rget_accumulate", a, result_addr, result_count, result_datatype, op, win, request));
    if (*request == MPI_REQUEST_NULL) *request = completed_request(win->comm);  // MPI_PROC_NULL
    return MPI_SUCCESS;
}

}  // extern "C"
