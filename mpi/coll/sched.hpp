// Collective schedules: rounds of internal point-to-point operations on the
// communicator's collective context (comm->context + 1), with local steps
// (copies, reductions) run at the start of each round.
//
// Every collective, blocking or not, is built as a Sched. A round starts when
// every transfer of the previous round has completed; the schedule advances
// from the on_complete callbacks of its internal requests, so a nonblocking
// collective progresses whenever anything drives progress (Wait, Test, any
// blocking call). After an internal error the remaining rounds still run (the
// data is then meaningless), so no live peer ever waits forever on this
// process; the first error class is what the collective reports.
//
// Tags: one sequence number per collective call (comm->coll_seq, shared with
// MPI_Barrier), shifted left 5 bits (MPI_Barrier's layout). Every transfer of
// one call uses that tag: round numbers differ between ranks (a tree's leaf
// and its root), and a pair's messages match in posting order because
// matching is non-overtaking. Two
// collectives on one communicator therefore never match each other's traffic,
// and user traffic lives on another context.
//
// Inter-communicators (MPI-3.1 §5.2.2): a schedule over an
// inter-communicator works in its local group, on the hidden intra-communicator
// comm->local (size(), rank() and add_send/add_recv are local), and reaches the
// remote group with add_cross_send/add_cross_recv (remote ranks, on the
// inter-communicator's collective context, a tag of its own sequence). The
// error poisoning covers both: after an error, cross sends carry it on too,
// so a failure in one group reaches the other through any later message.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "mpi/dt/derived.hpp"
#include "mpi/objects.hpp"

namespace ftmpi::mpi {

struct Xfer {
    bool send;
    bool cross;      // to / from the remote group of an inter-communicator
    bool read_next;  // a receive whose data is read next (transport::Op::read_next)
    void *buf;
    int count;
    MPI_Datatype type;
    int peer;
    const void *operand = nullptr;  // a combining receive's (add_combine_recv)
    // A send's mode: collective (add_send), standard (add_pulled_send) or
    // spread (add_pulled_send of one of many).
    transport::SendMode mode = transport::SendMode::collective;
};

// A scratch buffer of a schedule (its size kept for the cache of sched.cpp).
struct ScratchBlock {
    std::unique_ptr<std::byte[]> mem;
    std::size_t size = 0;
};

// A local step: a lambda of a few trivially copyable captures (pointers,
// counts), held in place: no allocation per step, as std::function makes
// for more than two pointers' worth.
class LocalStep {
public:
    template <class F>
    explicit LocalStep(F f) : call_([](const void *p) { (*static_cast<const F *>(p))(); }) {
        static_assert(sizeof(F) <= sizeof(store_) && alignof(F) <= alignof(std::max_align_t) &&
                          std::is_trivially_copyable_v<F> && std::is_trivially_destructible_v<F>,
                      "a local step captures at most 48 bytes of plain values");
        ::new (static_cast<void *>(store_)) F(f);
    }
    void operator()() const { call_(store_); }

private:
    void (*call_)(const void *);
    alignas(std::max_align_t) unsigned char store_[48];
};

struct Round {
    std::vector<LocalStep> local;  // run in order before the transfers start
    std::vector<Xfer> xfers;
    std::vector<LocalStep> after;  // run once the transfers are posted
};

class Sched {
public:
    // `comm` is the communicator of the call (intra or inter); errors are
    // reported on it and a nonblocking request refers to it.
    explicit Sched(MPI_Comm comm);
    // Transfers on comm's collective context under `tag` (next_team_tag of
    // whichever communicator numbers the operation, e.g. an
    // inter-communicator's for a schedule over its fault-tolerance view).
    Sched(MPI_Comm comm, int tag);
    ~Sched();
    // Nonblocking and persistent schedules are allocated, and their memory
    // reused (sched.cpp).
    static void *operator new(std::size_t bytes);
    static void operator delete(void *p);
    Sched(const Sched &) = delete;
    Sched &operator=(const Sched &) = delete;

    // Building. A new round is opened by next_round(); add_* append to the
    // current (last) round.
    Round &round() { return rounds_[nrounds_ - 1]; }
    void next_round() {
        // Rounds are kept, emptied, from the schedule this one's storage came
        // from (sched.cpp): their vectors' room too.
        if (nrounds_ == rounds_.size()) rounds_.emplace_back();
        ++nrounds_;
    }
    template <class F>
    void add_local(F f) {
        round().local.emplace_back(f);
    }
    void add_send(const void *buf, int count, MPI_Datatype t, int peer) {
        round().xfers.push_back({true, false, false, const_cast<void *>(buf), count, t, peer});
    }
    // A send of a pattern whose receivers each take from one sender (bcast,
    // scatter, allgather, alltoall): eager up to the point-to-point limit,
    // then a single copy the receiver pulls, where add_send's steps stay
    // eager up to the collective limit, so that a sender is done without
    // its receiver. Toward a root that takes from many (gather, reduce)
    // eager wins; here it made every size from the point-to-point limit up
    // to the collective one slower on 2 ranks (16 KiB: osu_bcast 2.50
    // against 2.02 us, osu_alltoall 3.47 against 2.97).
    // `spread`: one of a sender's many blocks (a scatter's root), which its
    // receivers pull from a smaller size on (transport::SendMode::spread).
    void add_pulled_send(const void *buf, int count, MPI_Datatype t, int peer, bool spread = false) {
        round().xfers.push_back({true, false, false, const_cast<void *>(buf), count, t, peer, nullptr,
                                 spread ? transport::SendMode::spread : transport::SendMode::standard});
    }
    void add_recv(void *buf, int count, MPI_Datatype t, int peer) {
        round().xfers.push_back({false, false, false, buf, count, t, peer});
    }
    // A receive of an operand: the next round's local step combines it.
    void add_operand_recv(void *buf, int count, MPI_Datatype t, int peer) {
        round().xfers.push_back({false, false, true, buf, count, t, peer});
    }
    // A receive that combines as it completes: buf = operand op (the data),
    // `operand` holding the lower ranks' values (op_combine), unless the
    // schedule failed. Eager data is combined straight from where it
    // arrived, in one pass; buf and operand must not overlap.
    void add_combine_recv(void *buf, const void *operand, int count, MPI_Datatype t, int peer) {
        round().xfers.push_back({false, false, true, buf, count, t, peer, operand});
    }
    // Inter-communicators only: a transfer with rank `peer` of the remote group.
    void add_cross_send(const void *buf, int count, MPI_Datatype t, int peer) {
        round().xfers.push_back({true, true, false, const_cast<void *>(buf), count, t, peer});
    }
    void add_cross_recv(void *buf, int count, MPI_Datatype t, int peer) {
        round().xfers.push_back({false, true, false, buf, count, t, peer});
    }
    // The size of the remote group (inter-communicators only).
    int remote_size() const { return inter_->size; }
    // The communicator local transfers go on (an inter-communicator's local group's).
    MPI_Comm local_comm() const { return comm_; }
    // Copies count elements (src, st) -> (dst, dt) in the current round:
    // memcpy for contiguous types, a self send/receive otherwise (the
    // point-to-point path packs derived types). Signatures must match.
    void add_copy(const void *src, int scount, MPI_Datatype st, void *dst, int dcount, MPI_Datatype dt) {
        copy_step(src, scount, st, dst, dcount, dt, round().local);
    }
    // The same for a copy the round's transfers neither feed nor touch (a
    // rank's own block): it runs once they are posted, so that the peers'
    // side of them starts first.
    void add_own_copy(const void *src, int scount, MPI_Datatype st, void *dst, int dcount, MPI_Datatype dt) {
        copy_step(src, scount, st, dst, dcount, dt, round().after);
    }
    // A scratch buffer of `count` elements of `t` owned by the schedule; the
    // returned pointer is where element 0 goes (lower bound accounted for).
    void *scratch(int count, MPI_Datatype t);
    void *scratch_bytes(std::size_t n);
    // A type the caller built for the call: the schedule takes over its
    // reference (released with the schedule). Returns t. (A nonblocking or
    // persistent schedule also holds the types of its transfers: the user
    // may free them once the call returns.)
    MPI_Datatype adopt(MPI_Datatype t) {
        if (t != MPI_DATATYPE_NULL) held_.push_back(t);
        return t;
    }
    ftmpi_op_s op;  // copy of the reduction op (user may free the handle early)

    // The ranks builders work with. After MPI_Comm_validate recognized
    // failures (spec 000 §17.7), a collective runs over the other members:
    // rank() and size() are then virtual (the first alive process is 0), and
    // transfers name virtual peers. Identity otherwise.
    int size() const { return n_; }
    int rank() const { return me_; }
    // The first error so far (MPI_SUCCESS: none), for local steps that must
    // not combine what a failed or poisoned receive left.
    int error() const { return err_; }
    int real(int v) const { return map_.empty() ? v : map_[static_cast<std::size_t>(v)]; }
    // A root argument (comm rank) as a virtual rank. A recognized failed root
    // fails the collective at every member (all know it) and yields -1: the
    // builder then adds no transfers.
    int root(int comm_rank);
    // A per-rank argument array (counts, displacements, types; indexed by
    // comm rank) indexed by virtual rank. Storage owned by the schedule.
    template <typename T>
    const T *per_rank(const T *a) {
        if (map_.empty() || a == nullptr) return a;
        auto *out = static_cast<T *>(scratch_bytes(sizeof(T) * map_.size()));
        for (std::size_t v = 0; v < map_.size(); ++v) out[v] = a[map_[v]];
        return out;
    }

    // Runs the schedule to completion (blocking collectives). Returns MPI_SUCCESS
    // or the first error class.
    int run();
    // Starts the schedule and returns the user's request, completed when the
    // schedule finishes. The request owns the schedule.
    MPI_Request start_nonblocking();
    // A persistent collective (MPI 4.0 §6.13): returns the user's inactive
    // persistent request, which owns the schedule; each MPI_Start runs the
    // same schedule again (same transfers, tags, scratch space and local
    // steps), and the request's release frees it.
    MPI_Request make_persistent();
    // Called with the schedule's error class when it finishes (before the
    // request completes); for internal users that chain steps.
    void on_finish(void (*f)(void *ctx, int err), void *ctx) {
        then_ = f;
        then_ctx_ = ctx;
    }

private:
    static void on_xfer_done(MPI_Request r);
    static bool take_eager(MPI_Request r, const void *data);
    static void on_start(MPI_Request r);
    static void on_release(MPI_Request r);
    void advance();
    void finish();
    void start_error();
    void hold(MPI_Datatype t);  // a reference on derived type t for the schedule's life
    void hold_xfer_types();
    void copy_step(const void *src, int scount, MPI_Datatype st, void *dst, int dcount, MPI_Datatype dt,
                   std::vector<LocalStep> &steps);

    MPI_Comm call_comm_;  // the call's communicator
    MPI_Comm comm_;       // where local transfers go: call_comm_, or its local group's hidden communicator
    MPI_Comm inter_;      // call_comm_ when it is an inter-communicator, else null
    int n_, me_;
    std::vector<int> map_;  // virtual rank -> comm rank (empty: identity)
    std::uint32_t ctx_;
    int tag_base_;
    int cross_tag_ = 0;          // inter-communicators: the tag of the cross transfers
    std::vector<Round> rounds_;  // [0, nrounds_) in use; the rest emptied, for reuse
    std::size_t nrounds_ = 0;
    std::size_t cur_ = 0;
    int pending_ = 0;
    int err_ = MPI_SUCCESS;
    bool advancing_ = false;
    bool done_ = false;
    bool persistent_ = false;
    bool orphaned_ = false;       // persistent: the request went while the schedule ran
    int plan_err_ = MPI_SUCCESS;  // persistent: what building found (a failed root)
    MPI_Request user_ = MPI_REQUEST_NULL;
    std::vector<ScratchBlock> bufs_;
    std::vector<MPI_Datatype> held_;
    void (*then_)(void *, int) = nullptr;
    void *then_ctx_ = nullptr;
};

// The bytes a buffer of `count` elements of `t` spans (count * extent).
inline std::size_t span_bytes(int count, MPI_Datatype t) {
    return count > 0 ? static_cast<std::size_t>(count) * static_cast<std::size_t>(t->extent) : 0;
}
inline char *at(const void *buf, std::size_t elems, MPI_Datatype t) {
    return byte_at(buf, static_cast<MPI_Aint>(elems) * t->extent);  // buf may be MPI_BOTTOM or a shifted scratch origin
}

// Whether count elements at a and at b may share bytes (conservatively: one
// extent of slack for types whose data lies outside their bounds).
bool overlapping(const void *a, const void *b, int count, MPI_Datatype t);

// Copies `count` elements of `t` from src to dst touching only the data bytes
// (never the holes of a derived type). Local; usable inside local steps.
void copy_typed(void *dst, const void *src, int count, MPI_Datatype t);

// Reports a collective's result: MPI_SUCCESS, or raise() naming the call.
int coll_result(const char *call, MPI_Comm comm, int err);

}  // namespace ftmpi::mpi
