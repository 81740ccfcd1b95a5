// The active-message protocol of one-sided communication (mpi/rma/window.hpp):
// the wire format, the target's handler, the lock manager, and the origin's
// waits.
#include "mpi/rma/protocol.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "mpi/coll/ops.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/dt/predefined.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/state.hpp"

namespace ftmpi::mpi::rma {
namespace {

std::set<MPI_Win> g_windows;

// What precedes an operation's data on the wire.
struct Header {
    std::int64_t disp;         // target displacement (in the target's disp_unit)
    std::uint64_t fetch;       // GET-type: the origin's Fetch id, echoed in the REPLY
    std::int32_t count;        // target count
    std::int32_t op;           // accumulate: predefined op id (OpId)
    std::int32_t basic;        // predefined_index of the target type's basic type (accumulate)
    std::int64_t extent;       // of the target type
    std::uint32_t nblocks;     // the target type's data blocks, after the header
    std::uint32_t data_bytes;  // packed origin data after the blocks (CAS: value then compare)
};

struct WireBlock {
    std::int64_t off;
    std::uint64_t len;
};

// Sends that own their payload until the transport is done with it.
struct SendBox : transport::Op {
    std::vector<char> buf;
};

void send_done(transport::Op *op, transport::Err, std::size_t) { delete static_cast<SendBox *>(op); }

// Rendezvous receives of messages too large to come eagerly.
struct RecvBox : transport::Op {
    MPI_Win win;
    int source;
    int tag;
    std::vector<char> buf;
};


template <typename T>
void append(std::vector<char> &out, const T &v) {
    const auto *p = reinterpret_cast<const char *>(&v);
    out.insert(out.end(), p, p + sizeof v);
}

template <typename T>
T read_at(const char *p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// The target type's blocks: one for most predefined types (two for a pair
// type with padding).
std::vector<WireBlock> blocks_of(MPI_Datatype t) {
    std::vector<WireBlock> out;
    for (const Block &b : flat_blocks(type_layout(t))) out.push_back({b.off, b.len});
    return out;
}

MPI_Datatype basic_of(MPI_Datatype t) { return t->predefined ? t : t->derived->layout.basic(); }

// Applies `data` (count elements of the target type, packed) to the window
// memory at `at`, with op (op_replace: a put).
void apply(const Header &h, const WireBlock *blocks, const char *data, char *at) {
    const ftmpi_op_s op{Magic::op, h.op, nullptr, true, true, nullptr};
    const MPI_Datatype basic = predefined_at(h.basic);
    if (basic != MPI_DATATYPE_NULL && !basic->contiguous && h.op != op_replace) {
        // A pair type with padding: its members arrive packed (no padding),
        // so each element is unpacked before the op combines it.
        if (h.op == op_no_op) return;
        Layout l;
        for (std::uint32_t i = 0; i < h.nblocks; ++i) l.blocks.push_back({blocks[i].off, blocks[i].len});
        l.ub = h.extent;
        alignas(16) char element[64];
        static_assert(sizeof(ValueIndex<long double>) <= sizeof element);
        for_each_basic(l, static_cast<std::size_t>(h.count), basic, [&](MPI_Aint off, std::size_t packed) {
            unpack(data + packed, basic->size, element, basic);
            op_apply(op, element, at + off, 1, basic);
        });
        return;
    }
    for (std::int32_t e = 0; e < h.count; ++e) {
        for (std::uint32_t i = 0; i < h.nblocks; ++i) {
            char *dst = at + static_cast<std::int64_t>(e) * h.extent + blocks[i].off;
            if (h.op == op_replace || basic == MPI_DATATYPE_NULL) std::memcpy(dst, data, blocks[i].len);
            else if (h.op != op_no_op) op_apply(op, data, dst, static_cast<int>(blocks[i].len / basic->size), basic);
            data += blocks[i].len;
        }
    }
}

// Packs count elements of the target type at `at` (the order they are sent in).
void gather(const Header &h, const WireBlock *blocks, const char *at, std::vector<char> &out) {
    for (std::int32_t e = 0; e < h.count; ++e)
        for (std::uint32_t i = 0; i < h.nblocks; ++i) {
            const char *src = at + static_cast<std::int64_t>(e) * h.extent + blocks[i].off;
            out.insert(out.end(), src, src + blocks[i].len);
        }
}

// An operation as operation() encodes it: its header, its target type's
// blocks, then its data. False: shorter than its header and blocks say.
struct Operation {
    Header h;
    std::vector<WireBlock> blocks;
    const char *data;
};

bool decode(const char *p, std::size_t len, Operation &o) {
    if (len < sizeof(Header)) return false;
    o.h = read_at<Header>(p);
    const std::size_t head = sizeof(Header) + std::size_t{o.h.nblocks} * sizeof(WireBlock);
    if (len < head) return false;
    o.blocks.resize(o.h.nblocks);
    std::memcpy(o.blocks.data(), p + sizeof(Header), o.h.nblocks * sizeof(WireBlock));
    o.data = p + head;
    return true;
}

// A get, get-accumulate or compare-and-swap: appends what it reads to
// `out`, then applies its data.
void fetching(Kind kind, const Header &h, const WireBlock *blocks, const char *data, char *at, std::vector<char> &out) {
    gather(h, blocks, at, out);
    if (kind == Kind::get_acc) {
        apply(h, blocks, data, at);
    } else if (kind == Kind::cas) {
        const std::size_t n = blocks[0].len;  // one element of a predefined type
        if (std::memcmp(at, data + n, n) == 0) std::memcpy(at, data, n);
    }
}

void lock_grant_queued(MPI_Win w);

// Whether the bytes an operation touches at `addr` are all window memory
// here (a dynamic window: attached regions, which may lie end to end).
bool accessible(MPI_Win w, const Header &h, const std::vector<WireBlock> &blocks, std::uintptr_t addr) {
    if (h.count <= 0 || blocks.empty()) return true;
    std::int64_t lo = blocks[0].off, hi = blocks[0].off + static_cast<std::int64_t>(blocks[0].len);
    for (const WireBlock &b : blocks) {
        lo = std::min(lo, b.off);
        hi = std::max(hi, b.off + static_cast<std::int64_t>(b.len));
    }
    const std::int64_t span = (h.count - 1) * h.extent;
    lo += std::min<std::int64_t>(0, span);
    hi += std::max<std::int64_t>(0, span);
    const std::uintptr_t first = addr + static_cast<std::uintptr_t>(lo), end = addr + static_cast<std::uintptr_t>(hi);
    if (end < first) return false;  // wrapped around the address space
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        const auto b = reinterpret_cast<std::uintptr_t>(w->base);
        return first >= b && end <= b + static_cast<std::uintptr_t>(w->size);
    }
    // The region holding `first`, then the ones that continue it.
    auto it = w->attached.upper_bound(first);
    if (it == w->attached.begin()) return false;
    --it;
    for (std::uintptr_t at = first;;) {
        const std::uintptr_t region_end = it->first + it->second;
        if (it->first > at || region_end < at || (region_end == at && at < end)) return false;
        if (region_end >= end) return true;
        at = region_end;
        if (++it == w->attached.end()) return false;
    }
}

// Handles one message of `source` (its tag is the kind).
void process(MPI_Win w, int source, int tag, const char *p, std::size_t len) {
    switch (static_cast<Kind>(tag)) {
    case Kind::put:
    case Kind::acc:
    case Kind::get:
    case Kind::get_acc:
    case Kind::cas: {
        Operation o;
        if (!decode(p, len, o)) return;
        const Header &h = o.h;
        const std::vector<WireBlock> &blocks = o.blocks;
        const char *data = o.data;
        const auto addr =
            reinterpret_cast<std::uintptr_t>(w->base) + static_cast<std::uintptr_t>(h.disp * w->disp_unit);
        char *at = reinterpret_cast<char *>(addr);
        const auto kind = static_cast<Kind>(tag);
        // The origin checked the range where it could; a dynamic window's
        // is only known here. Nothing outside the memory is touched.
        const std::int32_t status = accessible(w, h, blocks, addr) ? MPI_SUCCESS : MPI_ERR_RMA_RANGE;
        // Accumulates under the memory's lock where members of this node map
        // it and run theirs at once (shm_atomic.cpp).
        AccLock *lock =
            kind == Kind::put || kind == Kind::get ? nullptr : w->acc_locks[static_cast<std::size_t>(w->comm->rank)];
        if (kind == Kind::put || kind == Kind::acc) {
            if (status == MPI_SUCCESS) {
                const LockGuard guard(w, lock);
                apply(h, blocks.data(), data, at);
            }
            std::vector<char> ack;
            if (status != MPI_SUCCESS) append(ack, status);
            send(w, source, Kind::ack, std::move(ack));
            return;
        }
        std::vector<char> reply;
        append(reply, h.fetch);
        append(reply, status);
        if (status != MPI_SUCCESS) {
            send(w, source, Kind::reply, std::move(reply));
            return;
        }
        {
            const LockGuard guard(w, lock);
            fetching(kind, h, blocks.data(), data, at, reply);
        }
        send(w, source, Kind::reply, std::move(reply));
        return;
    }
    case Kind::ack: {
        Target &t = w->targets[static_cast<std::size_t>(source)];
        if (t.pending > 0) --t.pending;
        if (len >= sizeof(std::int32_t) && t.error == MPI_SUCCESS) t.error = read_at<std::int32_t>(p);
        return;
    }
    case Kind::reply: {
        constexpr std::size_t head = sizeof(std::uint64_t) + sizeof(std::int32_t);
        if (len < head) return;
        auto it = w->fetches.find(read_at<std::uint64_t>(p));
        if (it == w->fetches.end()) return;  // its target was declared failed meanwhile
        const Fetch f = it->second;
        w->fetches.erase(it);
        const auto status = read_at<std::int32_t>(p + sizeof(std::uint64_t));
        if (status == MPI_SUCCESS) unpack(p + head, len - head, f.buf, f.type);
        dt_release(f.type);
        if (f.request != nullptr) complete_request(f.request, status, len - head);
        Target &t = w->targets[static_cast<std::size_t>(source)];
        if (t.pending > 0) --t.pending;
        if (status != MPI_SUCCESS && t.error == MPI_SUCCESS) t.error = status;
        return;
    }
    case Kind::lock: {
        if (len < sizeof(std::int32_t)) return;
        w->lock_queue.push_back({source, read_at<std::int32_t>(p)});
        lock_grant_queued(w);
        return;
    }
    case Kind::unlock: {
        if (w->exclusive_holder == source) w->exclusive_holder = -1;
        else if (auto it = std::find(w->shared_holders.begin(), w->shared_holders.end(), source);
                 it != w->shared_holders.end())
            w->shared_holders.erase(it);
        lock_grant_queued(w);
        return;
    }
    case Kind::grant:
    case Kind::deny: {
        Target &t = w->targets[static_cast<std::size_t>(source)];
        if (t.answer == 0) t.answer = static_cast<Kind>(tag) == Kind::grant ? 1 : -1;
        return;
    }
    case Kind::post: ++w->sources[static_cast<std::size_t>(source)].posts; return;
    case Kind::free: w->sources[static_cast<std::size_t>(source)].freed = true; return;
    case Kind::complete: ++w->sources[static_cast<std::size_t>(source)].completes; return;
    case Kind::fence: {
        if (len < sizeof(std::uint64_t)) return;
        Source &s = w->sources[static_cast<std::size_t>(source)];
        s.fence = std::max(s.fence, read_at<std::uint64_t>(p));
        return;
    }
    }
}

void recv_done(transport::Op *op, transport::Err err, std::size_t bytes);

// Takes in the message `a` of `source` now: a rendezvous transfer starts
// (and holds back the origin's later messages until it is done).
void take(MPI_Win w, int source, const transport::Arrival &a) {
    if (!a.rendezvous) {
        process(w, source, a.tag, static_cast<const char *>(a.eager_data), a.length);
        return;
    }
    auto *box = new RecvBox;
    box->done = recv_done;
    box->win = w;
    box->source = source;
    box->tag = a.tag;
    box->buf.resize(a.length);
    w->sources[static_cast<std::size_t>(source)].receiving = true;
    const auto posted = g.transport->accept(a, box->buf.data(), box->buf.size(), box);
    if (posted == transport::Posted::complete) recv_done(box, transport::Err::ok, a.length);
    else if (posted == transport::Posted::peer_failed) recv_done(box, transport::Err::peer_failed, 0);
}

// Messages of `source` held back behind a rendezvous transfer, in order.
void drain(MPI_Win w, int source) {
    Source &s = w->sources[static_cast<std::size_t>(source)];
    while (!s.receiving && !s.deferred.empty()) {
        Deferred d = std::move(s.deferred.front());
        s.deferred.pop_front();
        d.arrival.eager_data = d.data.data();
        take(w, source, d.arrival);
    }
}

void recv_done(transport::Op *op, transport::Err err, std::size_t bytes) {
    auto *box = static_cast<RecvBox *>(op);
    MPI_Win w = box->win;
    if (g_windows.count(w) != 0) {
        w->sources[static_cast<std::size_t>(box->source)].receiving = false;
        if (err == transport::Err::ok) process(w, box->source, box->tag, box->buf.data(), bytes);
        drain(w, box->source);
    }
    delete box;
}

// The handler of a window's queue (Engine::on_arrival).
void on_message(void *ctx, const transport::Arrival &a) {
    auto w = static_cast<MPI_Win>(ctx);
    const int source = a.source_rank;
    if (source < 0 || source >= w->comm->size) return;
    Source &s = w->sources[static_cast<std::size_t>(source)];
    if (!s.receiving) {
        take(w, source, a);
        return;
    }
    Deferred d{a, {}};
    if (!a.rendezvous) {
        const auto *p = static_cast<const char *>(a.eager_data);
        d.data.assign(p, p + a.length);
    }
    d.arrival.eager_data = nullptr;
    s.deferred.push_back(std::move(d));
}

bool grantable(MPI_Win w, int type) {
    if (w->exclusive_holder >= 0) return false;
    return type == MPI_LOCK_SHARED || w->shared_holders.empty();
}

void lock_grant_queued(MPI_Win w) {
    while (!w->lock_queue.empty()) {
        const LockRequest r = w->lock_queue.front();
        if (w->lock_poisoned_by >= 0) {
            w->lock_queue.pop_front();
            send(w, r.rank, Kind::deny, {});
            continue;
        }
        if (!grantable(w, r.type)) return;
        w->lock_queue.pop_front();
        if (r.type == MPI_LOCK_EXCLUSIVE) w->exclusive_holder = r.rank;
        else w->shared_holders.push_back(r.rank);
        send(w, r.rank, Kind::grant, {});
    }
}

}  // namespace

bool send(MPI_Win w, int rank, Kind kind, std::vector<char> payload) {
    auto *box = new SendBox;
    box->done = send_done;
    box->buf = std::move(payload);
    const auto posted =
        g.transport->send(static_cast<transport::PeerId>(w->comm->procs[static_cast<std::size_t>(rank)]),
                          w->comm->context, w->comm->uid, static_cast<std::int32_t>(kind), w->comm->rank,
                          box->buf.data(), box->buf.size(), transport::SendMode::standard, box);
    if (posted != transport::Posted::pending) delete box;
    return posted != transport::Posted::peer_failed;
}

void run_mapped(MPI_Win w, int target, Kind kind, const std::vector<char> &msg, std::vector<char> &fetched) {
    Operation o;
    if (!decode(msg.data(), msg.size(), o)) return;  // built here: never
    const auto t = static_cast<std::size_t>(target);
    char *at = w->direct[t] + o.h.disp * w->targets[t].disp_unit;
    const LockGuard guard(w, w->acc_locks[t]);
    if (kind == Kind::acc) apply(o.h, o.blocks.data(), o.data, at);
    else fetching(kind, o.h, o.blocks.data(), o.data, at, fetched);
}

std::vector<char> operation(MPI_Aint disp, int count, MPI_Datatype type, int op, std::size_t data_bytes,
                            std::uint64_t fetch) {
    std::vector<WireBlock> blocks = blocks_of(type);
    MPI_Aint extent = type->extent;
    // Contiguous elements travel as one block: the target copies (or
    // reduces) them in one go.
    if (type->contiguous && count > 1) {
        blocks = {{0, type->size * static_cast<std::size_t>(count)}};
        extent *= count;
        count = 1;
    }
    const MPI_Datatype basic = basic_of(type);
    Header h{static_cast<std::int64_t>(disp),
             fetch,
             count,
             op,
             basic == MPI_DATATYPE_NULL ? -1 : predefined_index(basic),
             static_cast<std::int64_t>(extent),
             static_cast<std::uint32_t>(blocks.size()),
             static_cast<std::uint32_t>(data_bytes)};
    std::vector<char> out;
    out.reserve(sizeof h + blocks.size() * sizeof(WireBlock) + data_bytes);
    append(out, h);
    for (const WireBlock &b : blocks) append(out, b);
    return out;
}

void open_window(MPI_Win w) {
    g_windows.insert(w);
    g.engine->set_handler(w->comm->queue, on_message, w);
}

void close_window(MPI_Win w) {
    g.engine->set_handler(w->comm->queue, nullptr, nullptr);
    for (auto &[id, f] : w->fetches) {
        dt_release(f.type);
        if (f.request != nullptr) complete_request(f.request, MPI_ERR_PROC_FAILED, 0);
    }
    w->fetches.clear();
    g_windows.erase(w);
}

void on_failures() {
    for (MPI_Win w : g_windows) {
        for (int r = 0; r < w->comm->size; ++r) {
            if (!member_failed(w, r)) continue;
            Target &t = w->targets[static_cast<std::size_t>(r)];
            if (t.pending > 0) {
                t.pending = 0;
                t.failed = true;
            }
            if (t.answer == 0) t.answer = -1;
            for (auto it = w->fetches.begin(); it != w->fetches.end();) {
                if (it->second.target == r) {
                    dt_release(it->second.type);
                    if (it->second.request != nullptr) complete_request(it->second.request, MPI_ERR_PROC_FAILED, 0);
                    it = w->fetches.erase(it);
                } else {
                    ++it;
                }
            }
            Source &s = w->sources[static_cast<std::size_t>(r)];
            s.deferred.clear();
            // The lock manager: a failed holder poisons the lock; a failed
            // requester's request is dropped.
            auto held = std::find(w->shared_holders.begin(), w->shared_holders.end(), r);
            if (w->exclusive_holder == r || held != w->shared_holders.end()) {
                if (w->lock_poisoned_by < 0) w->lock_poisoned_by = r;
                if (held != w->shared_holders.end()) w->shared_holders.erase(held);
                if (w->exclusive_holder == r) w->exclusive_holder = -1;
            }
            std::erase_if(w->lock_queue, [&](const LockRequest &q) { return q.rank == r; });
        }
        lock_grant_queued(w);
    }
}

}  // namespace ftmpi::mpi::rma

namespace ftmpi::mpi {
void rma_on_failures() { rma::on_failures(); }
}  // namespace ftmpi::mpi
