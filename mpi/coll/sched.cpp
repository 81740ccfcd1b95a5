#include "mpi/coll/sched.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "mpi/checks.hpp"
#include "mpi/coll/ops.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/p2p/matching.hpp"
#include "runtime/test_hooks.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/ulfm.hpp"

namespace ftmpi::mpi {
namespace {

// Large scratch buffers outlive their schedules here, for the next call: a
// fresh buffer of a megabyte is a fresh mapping, whose 256 page faults cost
// more than the collective's data movement (a 1 MiB MPI_Reduce at 2 ranks
// took 10 times the time of its transfer). Buffers are not zeroed: every
// builder writes its scratch space before it reads it.
constexpr std::size_t k_cache_min = std::size_t{64} << 10, k_cache_max = std::size_t{64} << 20;

struct ScratchCache {
    std::mutex m;
    std::vector<ScratchBlock> free;
    std::size_t bytes = 0;
};

ScratchCache &cache() {
    static auto *c = new ScratchCache;  // never destroyed: schedules may outlive static destruction
    return *c;
}

// A block of at least n bytes: a cached one of at most twice that, else new.
ScratchBlock take_block(std::size_t n) {
    if (n >= k_cache_min) {
        ScratchCache &c = cache();
        const std::lock_guard lock(c.m);
        auto best = c.free.end();
        for (auto it = c.free.begin(); it != c.free.end(); ++it)
            if (it->size >= n && it->size <= 2 * n && (best == c.free.end() || it->size < best->size)) best = it;
        if (best != c.free.end()) {
            ScratchBlock b = std::move(*best);
            c.free.erase(best);
            c.bytes -= b.size;
            return b;
        }
    }
    return {std::make_unique_for_overwrite<std::byte[]>(n), n};
}

// Keeps a large block for later (the oldest go first beyond k_cache_max).
void give_back(ScratchBlock &&b) {
    if (b.size < k_cache_min || b.size > k_cache_max) return;
    ScratchCache &c = cache();
    const std::lock_guard lock(c.m);
    while (c.bytes + b.size > k_cache_max && !c.free.empty()) {
        c.bytes -= c.free.front().size;
        c.free.erase(c.free.begin());
    }
    c.bytes += b.size;
    c.free.push_back(std::move(b));
}

// What a finished schedule leaves for the next: its memory and its rounds,
// emptied, with their vectors' room. A nonblocking collective of a few
// members then allocates nothing (it made a dozen allocations, a third of
// a 2-rank MPI_Ialltoall's time). Guarded as the request pool is: by the
// library lock under MPI_THREAD_MULTIPLE, else by the one thread.
constexpr std::size_t k_spare_max = 16;

struct Spare {
    std::vector<void *> blocks;
    std::vector<std::vector<Round>> rounds;
};

Spare &spare() {
    static auto *s = new Spare;  // never destroyed, as the cache
    return *s;
}

}  // namespace

void *Sched::operator new(std::size_t bytes) {
    Spare &s = spare();
    if (s.blocks.empty()) return ::operator new(bytes);
    void *p = s.blocks.back();
    s.blocks.pop_back();
    return p;
}

void Sched::operator delete(void *p) {
    Spare &s = spare();
    if (s.blocks.size() < k_spare_max) s.blocks.push_back(p);
    else ::operator delete(p);
}

Sched::Sched(MPI_Comm comm) : Sched(comm, next_team_tag(comm->inter ? comm->local : comm)) {}

Sched::Sched(MPI_Comm comm, int tag)
    : op{}, call_comm_(comm), comm_(comm->inter ? comm->local : comm), inter_(comm->inter ? comm : nullptr),
      n_(comm_->size), me_(comm_->rank), ctx_(comm_->context + 1), tag_base_(tag) {
    if (Spare &sp = spare(); !sp.rounds.empty()) {
        rounds_ = std::move(sp.rounds.back());
        sp.rounds.pop_back();
    }
    next_round();
    if (inter_ != nullptr) cross_tag_ = next_team_tag(inter_);
    start_error();
    if (ft::failures().epoch() == 0) return;  // nothing ever failed: one load
    if (!comm_->coll_ranks.empty()) {         // (validate runs on intra-communicators only)
        map_ = comm_->coll_ranks;
        n_ = static_cast<int>(map_.size());
        me_ = static_cast<int>(std::find(map_.begin(), map_.end(), comm_->rank) - map_.begin());
    }
}

Sched::~Sched() {
    for (MPI_Datatype t : held_) dt_release(t);
    for (ScratchBlock &b : bufs_) give_back(std::move(b));
    if (Spare &sp = spare(); sp.rounds.size() < k_spare_max) {
        for (std::size_t i = 0; i < nrounds_; ++i) {
            rounds_[i].local.clear();
            rounds_[i].xfers.clear();
            rounds_[i].after.clear();
        }
        sp.rounds.push_back(std::move(rounds_));
    }
}

void Sched::hold(MPI_Datatype t) {
    if (t == nullptr || t->derived == nullptr) return;  // predefined
    dt_acquire(t);
    held_.push_back(t);
}

void Sched::hold_xfer_types() {
    for (std::size_t i = 0; i < nrounds_; ++i)
        for (const Xfer &x : rounds_[i].xfers) hold(x.type);
}

// The error a start finds (at the call, or at each MPI_Start of a
// persistent one). A revoked communicator (ULFM): the call fails, a
// one-member communicator's (no transfer to refuse) too, and an
// inter-communicator member's with no transfer to make; its transfers are
// refused at once (start_send / start_recv). After a validate, a failure it
// did not recognize makes the communicator collectively inactive (spec 000
// §17.7): the same.
void Sched::start_error() {
    if (call_comm_->revoked) err_ = MPI_ERR_REVOKED;
    if (ft::failures().epoch() == 0) return;  // nothing ever failed: one load
    if (err_ == MPI_SUCCESS && collectively_inactive(call_comm_)) err_ = MPI_ERR_PROC_FAILED;
}

int Sched::root(int comm_rank) {
    if (map_.empty()) return comm_rank;
    const auto it = std::find(map_.begin(), map_.end(), comm_rank);
    if (it != map_.end()) return static_cast<int>(it - map_.begin());
    if (err_ == MPI_SUCCESS) err_ = MPI_ERR_PROC_FAILED;
    return -1;
}

bool overlapping(const void *a, const void *b, int count, MPI_Datatype t) {
    const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
    const std::size_t reach = span_bytes(count, t) + static_cast<std::size_t>(std::abs(t->extent)) +
                              static_cast<std::size_t>(std::abs(t->lb));
    return (x > y ? x - y : y - x) < reach;
}

void copy_typed(void *dst, const void *src, int count, MPI_Datatype t) {
    if (count <= 0 || dst == src) return;
    if (t->contiguous) {
        std::memmove(dst, src, static_cast<std::size_t>(count) * t->size);
        return;
    }
    const Layout &l = type_layout(t);  // a derived type, or a pair type with padding
    for (int e = 0; e < count; ++e)
        for_each_block(l, [&](MPI_Aint block_off, std::size_t len) {
            const MPI_Aint off = static_cast<MPI_Aint>(e) * l.extent() + block_off;
            std::memmove(byte_at(dst, off), byte_at(src, off), len);
        });
}

void Sched::copy_step(const void *src, int scount, MPI_Datatype st, void *dst, int dcount, MPI_Datatype dt,
                      std::vector<LocalStep> &steps) {
    if (src == dst && st == dt) return;
    if (st == dt && scount == dcount) {
        steps.emplace_back([=] { copy_typed(dst, src, dcount, dt); });
        return;
    }
    if (st->contiguous && dt->contiguous) {
        const std::size_t n =
            std::min(static_cast<std::size_t>(scount) * st->size, static_cast<std::size_t>(dcount) * dt->size);
        if (n == 0) return;
        steps.emplace_back([=] { std::memmove(dst, src, n); });
        return;
    }
    add_recv(dst, dcount, dt, me_);
    add_send(src, scount, st, me_);
}

void *Sched::scratch_bytes(std::size_t n) {
    bufs_.push_back(take_block(n == 0 ? 1 : n));
    return bufs_.back().mem.get();
}

// Room for count elements from lb, plus whatever data of a resized type lies
// below lb or beyond the last element's ub.
void *Sched::scratch(int count, MPI_Datatype t) {
    MPI_Aint below = 0, above = 0;
    if (t->derived != nullptr && t->size > 0) {  // a predefined type's data lies within its bounds
        const Layout &l = t->derived->layout;
        below = std::max<MPI_Aint>(0, l.lb - l.true_lb);
        above = std::max<MPI_Aint>(0, l.true_ub - l.ub);
    }
    char *p = static_cast<char *>(scratch_bytes(span_bytes(count, t) + static_cast<std::size_t>(below + above)));
    return byte_at(p, below - t->lb);  // t->lb may be an absolute address (MPI_BOTTOM)
}

// A combining receive's eager data: combined from where it arrived (the
// ring), without a copy into the buffer first, when it is whole and
// unpoisoned and the schedule has no error (else the usual path).
bool Sched::take_eager(MPI_Request r, const void *data) {
    const auto *s = static_cast<const Sched *>(r->owner);
    if (s->err_ != MPI_SUCCESS || r->msg_length != r->capacity || !r->datatype->contiguous ||
        poison_of(r->status.MPI_TAG) != MPI_SUCCESS)
        return false;
    op_combine(s->op, r->operand, data, r->buf, r->count, r->datatype);
    r->operand = nullptr;
    return true;
}

void Sched::on_xfer_done(MPI_Request r) {
    auto *s = static_cast<Sched *>(r->owner);
    if (r->status.MPI_ERROR != MPI_SUCCESS && s->err_ == MPI_SUCCESS) s->err_ = r->status.MPI_ERROR;
    // A peer upstream saw a failure: so does this rank (and everyone after it).
    if (r->kind == ftmpi_request_s::Kind::recv && s->err_ == MPI_SUCCESS) s->err_ = poison_of(r->status.MPI_TAG);
    // A shorter message than the buffer: the members' counts differ, as on
    // the direct path. The rest was never written (scratch space is not
    // zeroed), so nothing may be combined from it.
    if (r->kind == ftmpi_request_s::Kind::recv && s->err_ == MPI_SUCCESS && r->status.ftmpi_count < r->capacity)
        s->err_ = MPI_ERR_OTHER;
    // A combining receive whose data did not come eagerly combines now.
    if (r->operand != nullptr && s->err_ == MPI_SUCCESS) op_apply(s->op, r->operand, r->buf, r->count, r->datatype);
    --s->pending_;
    s->advance();
}

// State in: pending_ transfers of round cur_-1 outstanding. State out: either
// more transfers posted, or the schedule finished (and, when nonblocking and
// this is the outermost call, deleted).
void Sched::advance() {
    if (advancing_) return;  // re-entered from a transfer that completed at once
    advancing_ = true;
    while (!done_ && pending_ == 0) {
        if (cur_ == nrounds_) {
            finish();
            break;
        }
        runtime::test_kill_point("coll.round");
        Round &rd = rounds_[cur_];
        // One tag for the whole collective: rounds differ between ranks, and
        // a pair's messages match in order (non-overtaking).
        // After a failure the sends carry it on (k_coll_poison); receives match either way.
        ++cur_;
        for (auto &f : rd.local) f();
        for (const Xfer &x : rd.xfers) {
            MPI_Comm c = comm_;
            int peer = x.peer, tag = tag_base_;
            std::uint32_t ctx = ctx_;
            if (x.cross) {
                if (x.peer >= inter_->size) {  // a shrink left no remote group: no leader there
                    if (err_ == MPI_SUCCESS) err_ = MPI_ERR_PROC_FAILED;
                    continue;
                }
                c = inter_, tag = cross_tag_, ctx = inter_->context + 1;
            } else {
                peer = real(x.peer);
            }
            if (x.send) tag = poisoned_tag(tag, err_);
            // Room in the ring: written now, nothing to wait for.
            if (x.send &&
                (x.mode != transport::SendMode::spread ||
                 static_cast<std::size_t>(x.count) * x.type->size <= transport::k_spread_eager) &&
                inject_coll(c, ctx, x.buf, x.count, x.type, peer, tag))
                continue;
            ++pending_;
            MPI_Request r = new_request(x.send ? ftmpi_request_s::Kind::send : ftmpi_request_s::Kind::recv, c, x.buf,
                                        x.count, x.type, peer, tag, ctx);
            r->on_complete = &Sched::on_xfer_done;
            r->owner = this;
            r->user_freed = true;  // released by complete_request after on_complete
            if (x.send) {
                r->mode = x.mode;
                start_send(r);
            } else {
                r->op.read_next = x.read_next;
                if (x.operand != nullptr) r->operand = x.operand, r->take_eager = &Sched::take_eager;
                start_recv(r);
            }
        }
        for (auto &f : rd.after) f();
    }
    advancing_ = false;
    if (done_ && user_ != MPI_REQUEST_NULL && (!persistent_ || orphaned_)) delete this;
}

void Sched::finish() {
    done_ = true;
    if (then_ != nullptr) then_(then_ctx_, err_);
    if (user_ == MPI_REQUEST_NULL) return;
    user_->status.MPI_SOURCE = MPI_ANY_SOURCE;
    user_->status.MPI_TAG = MPI_ANY_TAG;
    if (!persistent_) user_->owner = nullptr;
    complete_request(user_, err_, 0);
}

int Sched::run() {
    advance();
    while (!done_) progress_wait();
    return err_;
}

MPI_Request Sched::start_nonblocking() {
    MPI_Request r = new_request(ftmpi_request_s::Kind::coll, call_comm_, nullptr, 0, nullptr, 0, 0, 0);
    r->complete = false;
    r->owner = this;
    user_ = r;
    hold_xfer_types();
    advance();  // may finish (and delete this) at once
    return r;
}

MPI_Request Sched::make_persistent() {
    MPI_Request r = new_request(ftmpi_request_s::Kind::coll, call_comm_, nullptr, 0, nullptr, 0, 0, 0);
    r->persistent = true;
    r->complete = true;  // inactive until started
    r->owner = this;
    static constexpr ftmpi_persist_ops ops{&Sched::on_start, &Sched::on_release};
    r->persist = &ops;
    user_ = r;
    persistent_ = true;
    hold_xfer_types();
    plan_err_ = err_;
    return r;
}

// MPI_Start: the planned rounds from the first, with the call's error state
// as it is now (a revoke or failure since the last start).
void Sched::on_start(MPI_Request r) {
    auto *s = static_cast<Sched *>(r->owner);
    r->complete = false;
    r->status = MPI_Status{};
    s->cur_ = 0;
    s->pending_ = 0;
    s->done_ = false;
    s->err_ = s->plan_err_;
    s->start_error();
    s->advance();
}

// The request is released: the schedule goes with it, at once when idle,
// else when the running start ends (its last completion released the
// request, inside advance()).
void Sched::on_release(MPI_Request r) {
    auto *s = static_cast<Sched *>(r->owner);
    r->owner = nullptr;
    if (s->advancing_) s->orphaned_ = true;
    else delete s;
}

int coll_result(const char *call, MPI_Comm comm, int err) {
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    if (err == MPI_ERR_TRUNCATE)
        return raise(comm, err, call,
                     "a message of this collective was longer than this member expected: counts or datatypes "
                     "differ between the members of %s",
                     comm_label(comm));
    if (err == MPI_ERR_OTHER)
        return raise(comm, err, call,
                     "this collective failed on %s with an error that is not a process failure: a message shorter "
                     "than this member expected, or another member's error (counts or datatypes that differ "
                     "between the members)",
                     comm_label(comm));
    return raise(comm, err, call, "an internal transfer failed on %s (%s)", comm_label(comm), error_class_name(err));
}

}  // namespace ftmpi::mpi
