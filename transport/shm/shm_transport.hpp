// The shared-memory fast path: ftmpi's own transport between processes of
// one node, with libfabric (loaded only when needed) for peers on other nodes.
//
// Every pair of processes on a node shares one segment in /dev/shm:
//   two rings (transport/shm/ring.hpp), one per direction, that carry eager
//   messages and the protocol's control records, and
//   two tables of transfer descriptors, one per direction, for large
//   messages: the sender posts its buffer's address in a descriptor, the RTS
//   names it, and once the receiver claims it both processes copy the data
//   (process_vm_readv at the receiver, process_vm_writev at the sender),
//   taking 64 KiB chunks from a shared counter until every byte is done. A
//   sender busy elsewhere leaves every chunk to the receiver, and so does
//   one that copies data of its own receives (traffic both ways: each
//   process then writes only into its own buffers, and no cache line of a
//   receive buffer moves between the two cores). A receiver with large
//   sends of its own in flight takes the whole message as one chunk.
// Where the kernel refuses single copy (ptrace rules, another user), the
// receiver declines the descriptor and asks for the data (CTS); the sender
// then streams it through the ring in fragments.
//
// Failures: a ring has one writer and one reader, and a record is published
// by a stamp written last, so a process that dies in the middle of writing
// leaves nothing its peer could misread (ring.hpp). A transfer whose peer
// died ends when the peer is marked failed (mark_failed), like every other
// operation with it; nothing here ever waits on one peer.
//
// The wire protocol over a pair's rings (records carry the usual match bits):
//   eager:  EAGER(ctx, tag) with the data; len <= the pair's eager limit.
//   RTS:    RTS(ctx, tag) ShmRts{length, sender id, descriptor + 1 (0: none),
//           its generation}. With a descriptor the receiver claims it
//           (posted -> claiming -> claimed) and both sides copy chunks;
//           without one, or when the receiver declines it (no single copy),
//           the receiver answers CTS{sender id, transfer id, length} and the
//           sender streams FRAG{transfer id, offset} pieces through its ring.
//   ABORT:  a CTS for a send given up (cancel_sends) is answered
//           ABORT{sender id, transfer id, reason}: the receive ends with it.
//   HELLO:  the higher id has mapped the pair's segment: the lower id, which
//           names it, unlinks it.
// A sender withdraws a posted descriptor (revoke) with one compare-and-swap;
// once the receiver claimed it, the data moves and the send ends normally.
//
// The transport's objects, shared by shm_transport.cpp (set-up, peers,
// failures), shm_send.cpp and shm_receive.cpp (the two sides of a transfer,
// and polling). Internal to transport/: the rest of the library opens
// transports through transport/open.hpp.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/test_hooks.hpp"
#include "transport/copy.hpp"
#include "transport/shm/ring.hpp"
#include "transport/transport.hpp"

namespace ftmpi::transport::shm {

// Bytes a side copies per claim: a quarter of the message, within [64 KiB,
// 256 KiB]. Each claim is a system call: a medium message is one or two
// claims, since with traffic both ways (exchanges, allgathers, osu_bibw)
// both processes are busy with their own copies and smaller claims only add
// calls (16 KiB claims: 64 KiB osu_bibw at 9-10.6 GB/s; 64 KiB claims:
// 17.4-18.7, Open MPI 15-16); a large message costs few.
inline std::uint64_t chunk_for(std::uint64_t length) {
    return std::clamp<std::uint64_t>((length / 4 + 4095) & ~std::uint64_t{4095}, 64 * 1024, 256 * 1024);
}
// A receive whose data is read next (Op::read_next) takes up to this many
// bytes in one claim: what the sender would copy lands in its own core's
// cache, and the receiver's next pass over the data (a reduction's combine)
// then pulls it across. 2 ranks, osu_reduce (root combines right after):
// one claim 11.3 us at 128 KiB, 16.0 at 256 KiB, 32 at 512 KiB; shared
// claims 13.2-14.2, 18.7-23.3, 35-37. At 1 MiB shared claims win (76 us
// against 94): the sender's half of the copy saves more than it costs.
constexpr std::uint64_t k_read_next_whole = 512 * 1024;
constexpr std::uint32_t k_descs = 256;     // transfer descriptors per direction of a pair
constexpr std::size_t k_frag = 32 * 1024;  // largest streamed piece
constexpr std::size_t k_given_up_kept = 4096;
inline constexpr const char *k_key = "ftmpi.shm";

// Descriptor states; the generation of the posting is in the upper 56 bits.
enum St : std::uint64_t {
    st_free = 0,
    st_posted = 1,     // the sender offers its buffer
    st_claiming = 2,   // the receiver took it and is filling in its side
    st_claimed = 3,    // both sides copy
    st_withdrawn = 4,  // the sender gave the send up before a claim (reason in `reason`)
    st_declined = 5,   // the receiver will ask for the data by CTS instead
    st_released = 6,   // the receiver is done with it
};
constexpr std::uint64_t state_of(std::uint64_t gen, St s) { return gen << 8 | s; }
constexpr St st(std::uint64_t state) { return static_cast<St>(state & 0xff); }

struct alignas(k_line) Desc {
    std::atomic<std::uint64_t> state;
    std::atomic<std::uint64_t> next;  // next byte offset to claim
    std::atomic<std::uint64_t> done;  // bytes copied
    std::uint64_t length;             // bytes that move (the receiver's choice)
    std::uint64_t src;                // the sender's buffer, in its address space
    std::uint64_t dst;                // the receiver's buffer, in its address space
    std::uint32_t reason;             // st_withdrawn: the Err
    // A side gave the transfer up (its peer was marked failed, or a copy was
    // refused): the other stops waiting for bytes that will not come.
    std::atomic<std::uint32_t> abandoned;
};
static_assert(sizeof(Desc) == k_line);

// Where a process learns of peers that mapped a pair with it after init
// (MPI_Comm_spawn, connect): each one writes `id + 1 | base << 32` into a
// free slot with one compare-and-swap, then bumps `pending`; the owner, which
// polls `pending`, maps the pairs and clears the slots. A writer that dies
// leaves at most a whole slot, never half of one.
struct Announcements {
    alignas(k_line) std::atomic<std::uint64_t> pending;
    alignas(k_line) std::atomic<std::uint64_t> slot[504];
};
static_assert(sizeof(Announcements) == 4096);

inline std::string announce_name(std::uint64_t pid) { return "ftmpi-" + std::to_string(pid) + "-announce"; }

struct ShmRts {
    std::uint64_t length;
    std::uint64_t sender_id;
    std::uint64_t desc;  // descriptor index + 1; 0: none (stream on CTS)
    std::uint64_t gen;
};

// What every process publishes (k_key): enough for a peer to find the pair's
// segment and to tell whether it shares this node.
struct Published {
    std::uint64_t pid;
    std::uint64_t ring_bytes;
    char node[112];
};


struct Pending {
    enum class What : std::uint8_t { send, control, stream } what;
    Op *op = nullptr;                                       // send, stream
    std::uint64_t match = 0;                                // control
    std::size_t length = 0;                                 // control
    std::uint64_t transfer = 0;                             // stream: the receiver's transfer id
    std::uint64_t offset = 0;                               // stream: bytes already sent
    alignas(8) std::array<char, sizeof(ShmRts)> payload{};  // control
};

// Whether a send of `length` bytes in `mode` goes eagerly, given the limits
// of a standard and of a collective send (a sync send never does).
inline bool goes_eager(SendMode mode, std::size_t length, std::size_t standard, std::size_t collective) {
    switch (mode) {
    case SendMode::sync: return false;
    case SendMode::collective: return length <= collective;
    case SendMode::spread: return length <= std::min(standard, k_spread_eager);
    case SendMode::standard: break;
    }
    return length <= standard;
}

struct Peer {
    enum class Cma : std::uint8_t { unknown, yes, no };
    bool mapped = false;
    bool failed = false;
    bool corrupt_told = false;  // its ring was found corrupt (and refused)
    bool lo = false;            // this process has the lower id: it unlinks the name
    bool hello = false;         // the higher id mapped the segment
    pid_t pid = 0;
    void *seg = nullptr;
    std::size_t seg_size = 0;
    std::string name;
    std::size_t eager = 0;       // largest eager payload to this peer (SendMode::standard)
    std::size_t eager_coll = 0;  // the same for SendMode::collective
    RingWriter out;
    RingReader in;
    Desc *out_desc = nullptr;  // this process's sends to the peer
    Desc *in_desc = nullptr;   // the peer's sends to this process
    std::vector<std::uint32_t> free_desc;
    std::vector<std::uint32_t> held_desc;  // finished sends whose receiver may still look
    std::vector<std::uint64_t> gen;
    Cma cma = Cma::unknown;
    std::deque<Pending> backlog;
};

class ShmTransport final : public Transport {
public:
    ShmTransport(runtime::ProcessManager &pm, Sink &sink);
    ~ShmTransport() override;

    void set_net(std::unique_ptr<Transport> net) {
        net_ = std::move(net);
        if (net_ && unreachable_) net_->set_unreachable_hook(unreachable_);
    }
    void connect(runtime::ProcessManager &pm) override;
    std::vector<PeerId> preconnect() override { return net_ ? net_->preconnect() : std::vector<PeerId>{}; }
    Posted send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                const void *buf, std::size_t length, SendMode mode, Op *op) override;
    bool inject(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                const void *buf, std::size_t length) override {
        if (peer == self_) return false;
        if (!local(peer)) return net_ && net_->inject(peer, context, uid, tag, source_rank, buf, length);
        Peer &p = *peers_[peer];
        return !p.failed && length <= p.eager &&
               write_eager(p, pack_match(Proto::eager, context, tag), uid, source_rank, buf, length);
    }
    Posted accept(const Arrival &a, void *buf, std::size_t capacity, Op *op) override;
    int poll() override;
    [[gnu::noinline]] int poll_rest();
    void mark_failed(PeerId peer) override;
    bool is_failed(PeerId peer) const override {
        if (peer < peers_.size() && peers_[peer] && peers_[peer]->failed) return true;
        return net_ && net_->is_failed(peer);
    }
    void cancel_sends(std::uint64_t uid, std::uint32_t first, std::uint32_t last, Err why) override;
    bool busy() const override;
    void set_unreachable_hook(std::function<void(PeerId)> hook) override {
        unreachable_ = std::move(hook);
        if (net_) net_->set_unreachable_hook(unreachable_);
    }
    std::string add_peers(runtime::ProcessManager &pm, const std::vector<int> &ids,
                          const std::vector<int> &bases) override;
    std::string provider_of(PeerId peer) const override {
        if (peer == self_) return "self";
        if (local(peer)) return "ftmpi-shm";
        return net_ ? net_->provider_of(peer) : "none";
    }

private:
    bool local(PeerId peer) const { return peer < peers_.size() && peers_[peer] && peers_[peer]->mapped; }
    Peer &peer_state(PeerId id) {
        if (id >= peers_.size()) peers_.resize(static_cast<std::size_t>(id) + 1);
        if (!peers_[id]) peers_[id] = std::make_unique<Peer>();
        return *peers_[id];
    }
    std::string map_pair(PeerId id, const Published &info);
    void finish(Op *op, Err err, std::size_t bytes) {
        op->kind = Op::Kind::none;
        if (op->done != nullptr) op->done(op, err, bytes);
    }
    void lost(PeerId peer) {
        if (unreachable_ && !peers_[peer]->failed) unreachable_(peer);
    }
    void send_control(PeerId peer, Proto proto, const void *payload, std::size_t length);
    bool write_eager(Peer &p, Op *op) {
        return p.out.write(op->header.match, op->header.uid, source_rank(op->data), op->send_buf, op->length);
    }
    bool stream_some(Peer &p, Pending &s);
    // What waits for ring space, in order, behind what already waits.
    void queue(PeerId peer, Peer &p, const Pending &d) {
        if (p.backlog.empty()) stalled_.push_back(peer);
        p.backlog.push_back(d);
    }
    void drain_backlog(PeerId peer);
    int drain_ring(PeerId src);
    // Returns true when the record completed or started a receive (the
    // drain stops there).
    bool handle(PeerId src, Peer &p, const RecordHeader &h);
    Posted stream_receive(PeerId src, std::uint64_t sender_id, std::size_t bytes, Op *op);
    Posted claim(const Arrival &a, Peer &p, void *buf, std::size_t bytes, Op *op);
    bool copy_chunks(Desc &d, pid_t pid, bool reader, char *local, std::uint64_t chunk);
    void progress_sends();
    void progress_pulls();
    std::uint32_t take_desc(Peer &p);
    void give_up(std::uint64_t sender_id, Err why);
    Posted send_to_self(Op *op, std::size_t length, SendMode mode);
    // An eager record to `p` written at once: false, with nothing done, when
    // older messages wait for room or the ring has none.
    bool write_eager(Peer &p, std::uint64_t match, std::uint64_t uid, std::int32_t source_rank, const void *buf,
                     std::size_t length);
    void announce_to(const Peer &p, PeerId id_base);
    void take_announcements();

    Sink &sink_;
    PeerId self_;
    pid_t pid_ = ::getpid();
    std::size_t eager_limit_;
    std::size_t coll_eager_limit_;  // at least eager_limit_
    std::size_t ring_bytes_;
    std::size_t prefault_bytes_;  // of each ring, mapped in at init (prefault_bytes_for)
    std::string node_;
    std::vector<std::unique_ptr<Peer>> peers_;
    std::vector<PeerId> polled_;   // mapped peers not failed: their rings are read
    std::vector<PeerId> stalled_;  // peers whose backlog is not empty
    std::vector<Op *> sends_;      // rendezvous sends not finished (waiting or copying)
    std::vector<Op *> pulls_;      // claimed receives whose sender still copies
    // This process copied data of its own receives since its last poll: the
    // receivers of its sends then copy alone (progress_sends).
    bool pulled_ = false;
    std::unordered_map<std::uint64_t, Op *> streams_;  // transfer id -> streamed receive
    std::unordered_map<std::uint64_t, Err> given_up_;
    std::deque<std::uint64_t> given_up_order_;
    std::uint64_t next_id_ = 1;
    int depth_ = 0;  // nesting of drain_ring (a ring's space is released at depth 0)
    // Under a launcher that starts processes: this process's announcements
    // (peers that came after init), and what it needs to read theirs.
    Announcements *announce_ = nullptr;
    std::uint64_t announce_seen_ = 0;
    PeerId id_base_ = 0;
    runtime::ProcessManager *pm_ = nullptr;
    std::unique_ptr<Transport> net_;
    std::function<void(PeerId)> unreachable_;
};

inline bool ShmTransport::write_eager(Peer &p, std::uint64_t match, std::uint64_t uid, std::int32_t source_rank,
                                      const void *buf, std::size_t length) {
    if (!p.backlog.empty()) return false;  // behind what waits for room
    char *slot = p.out.reserve(length);
    if (slot == nullptr) return false;
    copy_payload(slot, buf, length);
    runtime::test_kill_point("shm.record");  // tests: a death with a record written, not published
    p.out.publish(match, uid, source_rank, length);
    return true;
}

}  // namespace ftmpi::transport::shm
