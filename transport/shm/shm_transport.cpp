// The shared-memory fast path (see shm_transport.hpp for the design).
//
// Wire protocol over a pair's rings (records carry the usual match bits):
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
#include "transport/shm/shm_transport.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <unordered_map>

#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/test_hooks.hpp"
#include "transport/copy.hpp"
#include "transport/refused.hpp"
#include "transport/shm/ring.hpp"

namespace ftmpi::transport {
namespace shm {
namespace {

// Bytes a side copies per claim: a quarter of the message, within [16 KiB,
// 256 KiB], so that both sides take a share of a medium message and a large
// one costs few system calls (measured: 1/2 to 1/16 are within noise of
// each other, and all beat a fixed 64 KiB below 128 KiB and above 512 KiB).
std::uint64_t chunk_for(std::uint64_t length) {
    return std::clamp<std::uint64_t>((length / 4 + 4095) & ~std::uint64_t{4095}, 16 * 1024, 256 * 1024);
}
constexpr std::uint32_t k_descs = 256;       // transfer descriptors per direction of a pair
constexpr std::size_t k_frag = 32 * 1024;    // largest streamed piece
constexpr std::size_t k_given_up_kept = 4096;
const char *const k_key = "ftmpi.shm";

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

std::string announce_name(std::uint64_t pid) { return "ftmpi-" + std::to_string(pid) + "-announce"; }

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

std::string node_key() {
    char host[64] = {};
    ::gethostname(host, sizeof host - 1);
    struct stat ns {};
    ::stat("/proc/self/ns/net", &ns);  // emulated nodes are network namespaces
    return std::string(host) + ":" + std::to_string(ns.st_ino);
}

// Ring bytes per direction for n processes on the node: 256 KiB, less when
// the pairs (n^2 / 2 segments) would take more than 256 MiB in all.
std::size_t ring_bytes_for(std::size_t n) {
    if (const std::size_t forced = runtime::config().SHM_RING; forced != 0) {
        std::size_t r = 4096;
        while (r < forced) r <<= 1;
        return r;
    }
    const std::size_t pairs = std::max<std::size_t>(n * (n - 1), 1);
    std::size_t r = 256 * 1024;
    while (r > 16 * 1024 && r * pairs > (std::size_t{256} << 20)) r >>= 1;
    return r;
}

struct Pending {
    enum class What : std::uint8_t { send, control, stream } what;
    Op *op = nullptr;              // send, stream
    std::uint64_t match = 0;       // control
    std::size_t length = 0;        // control
    std::uint64_t transfer = 0;    // stream: the receiver's transfer id
    std::uint64_t offset = 0;      // stream: bytes already sent
    alignas(8) std::array<char, sizeof(ShmRts)> payload{};  // control
};

struct Peer {
    enum class Cma : std::uint8_t { unknown, yes, no };
    bool mapped = false;
    bool failed = false;
    bool corrupt_told = false;  // its ring was found corrupt (and refused)
    bool lo = false;     // this process has the lower id: it unlinks the name
    bool hello = false;  // the higher id mapped the segment
    pid_t pid = 0;
    void *seg = nullptr;
    std::size_t seg_size = 0;
    std::string name;
    std::size_t eager = 0;  // largest eager payload to this peer
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
    Posted send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                const void *buf, std::size_t length, SendMode mode, Op *op) override;
    bool inject(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                const void *buf, std::size_t length) override {
        if (!local(peer) || peer == self_) return false;
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
    bool copy_chunks(Desc &d, pid_t pid, bool reader, char *local);
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
    std::size_t ring_bytes_;
    bool cma_enabled_;
    std::string node_;
    std::vector<std::unique_ptr<Peer>> peers_;
    std::vector<PeerId> polled_;   // mapped peers not failed: their rings are read
    std::vector<PeerId> stalled_;  // peers whose backlog is not empty
    std::vector<Op *> sends_;      // rendezvous sends not finished (waiting or copying)
    std::vector<Op *> pulls_;      // claimed receives whose sender still copies
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

ShmTransport::ShmTransport(runtime::ProcessManager &pm, Sink &sink)
    : sink_(sink),
      self_(static_cast<PeerId>(pm.job().id())),
      eager_limit_(runtime::config().EAGER_LIMIT),
      ring_bytes_(ring_bytes_for(pm.job().local_peers.size())),
      cma_enabled_(runtime::config().SHM_CMA != 0),
      node_(node_key()) {
    Published me{};
    me.pid = static_cast<std::uint64_t>(pid_);
    me.ring_bytes = ring_bytes_;
    std::snprintf(me.node, sizeof me.node, "%s", node_.c_str());
    pm.put(k_key, &me, sizeof me);
    peers_.resize(static_cast<std::size_t>(pm.job().id_base + pm.job().size));
    id_base_ = static_cast<PeerId>(pm.job().id_base);
    if (pm.why_no_spawn().empty()) {
        pm_ = &pm;
        const std::string name = announce_name(static_cast<std::uint64_t>(pid_));
        const int fd = ::shm_open(("/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0 && ::ftruncate(fd, sizeof(Announcements)) == 0) {
            void *a = ::mmap(nullptr, sizeof(Announcements), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (a != MAP_FAILED) announce_ = static_cast<Announcements *>(a);
        }
        if (fd >= 0) ::close(fd);
        if (announce_ == nullptr)
            FTMPI_WARN("no shared-memory announcements (%s): processes spawned later cannot reach this one",
                       std::strerror(errno));
    }
}

ShmTransport::~ShmTransport() {
    if (announce_ != nullptr) {
        ::munmap(announce_, sizeof(Announcements));
        ::shm_unlink(("/" + announce_name(static_cast<std::uint64_t>(pid_))).c_str());
    }
    for (auto &p : peers_) {
        if (!p || !p->mapped) continue;
        if (p->lo && !p->hello) ::shm_unlink(("/" + p->name).c_str());
        ::munmap(p->seg, p->seg_size);
    }
}

void ShmTransport::connect(runtime::ProcessManager &pm) {
    const auto &job = pm.job();
    for (int r : job.local_peers) {
        if (r == job.rank) continue;
        const auto blob = pm.get(r, k_key);
        if (blob.size() != sizeof(Published))
            throw std::runtime_error("rank " + std::to_string(r) + " published no shared-memory address");
        Published info;
        std::memcpy(&info, blob.data(), sizeof info);
        if (std::string why = map_pair(static_cast<PeerId>(job.id_base + r), info); !why.empty())
            throw std::runtime_error(why);
    }
    if (net_) net_->connect(pm);
    FTMPI_INFO("shared-memory fast path: %zu peers on this node, %zu KiB rings%s", polled_.size(), ring_bytes_ / 1024,
               net_ ? ", libfabric for the others" : "");
}

// Maps the segment of the pair (this process, id). Both ends open it with
// O_CREAT: whichever comes first creates it, zero-filled, which is an empty
// pair. Its name has the lower id's pid, so the launcher removes it with that
// process; the lower id also unlinks it once the higher one said hello.
std::string ShmTransport::map_pair(PeerId id, const Published &info) {
    Peer &p = peer_state(id);
    if (p.mapped) return "";
    p.lo = self_ < id;
    p.pid = static_cast<pid_t>(info.pid);
    const std::uint64_t pid_lo = p.lo ? static_cast<std::uint64_t>(pid_) : info.pid;
    const std::uint64_t pid_hi = p.lo ? info.pid : static_cast<std::uint64_t>(pid_);
    const std::size_t ring = p.lo ? ring_bytes_ : info.ring_bytes;
    p.name = "ftmpi-" + std::to_string(pid_lo) + "-pair" + std::to_string(std::min(self_, id)) + "-" +
             std::to_string(pid_hi);
    p.seg_size = 2 * ring_footprint(ring) + 2 * k_descs * sizeof(Desc);
    const int fd = ::shm_open(("/" + p.name).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return "cannot open shared memory " + p.name + ": " + std::strerror(errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || (static_cast<std::size_t>(st.st_size) < p.seg_size &&
                                  ::ftruncate(fd, static_cast<off_t>(p.seg_size)) != 0)) {
        const int e = errno;
        ::close(fd);
        return "cannot size shared memory " + p.name + ": " + std::strerror(e);
    }
    void *seg = ::mmap(nullptr, p.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int e = errno;
    ::close(fd);
    if (seg == MAP_FAILED) return "cannot map shared memory " + p.name + ": " + std::strerror(e);
    p.seg = seg;
    char *base = static_cast<char *>(seg);
    char *lo_to_hi = base, *hi_to_lo = base + ring_footprint(ring);
    auto *descs = reinterpret_cast<Desc *>(base + 2 * ring_footprint(ring));
    p.out = RingWriter(p.lo ? lo_to_hi : hi_to_lo, ring);
    p.in = RingReader(p.lo ? hi_to_lo : lo_to_hi, ring);
    p.out_desc = p.lo ? descs : descs + k_descs;
    p.in_desc = p.lo ? descs + k_descs : descs;
    p.gen.assign(k_descs, 0);
    p.free_desc.clear();
    for (std::uint32_t i = k_descs; i-- > 0;) p.free_desc.push_back(i);
    p.eager = std::min(eager_limit_, max_payload(ring));
    if (!cma_enabled_) p.cma = Peer::Cma::no;
    p.mapped = true;
    if (!p.failed) polled_.push_back(id);
    if (!p.lo) send_control(id, Proto::hello, nullptr, 0);
    return "";
}

// Tells the process behind `p` that this one (of the job from `id_base`)
// mapped their pair, so that it reads the ring before it hears of this
// process any other way.
void ShmTransport::announce_to(const Peer &p, PeerId id_base) {
    const int fd = ::shm_open(("/" + announce_name(static_cast<std::uint64_t>(p.pid))).c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) return;  // it takes no announcements (it will add this process itself)
    void *m = ::mmap(nullptr, sizeof(Announcements), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) return;
    auto *a = static_cast<Announcements *>(m);
    const std::uint64_t entry = (std::uint64_t{self_} + 1) | std::uint64_t{id_base} << 32;
    for (auto &slot : a->slot) {
        std::uint64_t empty = 0;
        if (slot.compare_exchange_strong(empty, entry, std::memory_order_acq_rel)) {
            a->pending.fetch_add(1, std::memory_order_release);
            break;
        }
    }
    ::munmap(m, sizeof(Announcements));
}

// Maps the pairs that processes announced (poll, when `pending` moved).
void ShmTransport::take_announcements() {
    announce_seen_ = announce_->pending.load(std::memory_order_acquire);
    for (auto &slot : announce_->slot) {
        const std::uint64_t entry = slot.load(std::memory_order_acquire);
        if (entry == 0) continue;
        slot.store(0, std::memory_order_release);
        const int id = static_cast<int>((entry & 0xffffffffu) - 1), base = static_cast<int>(entry >> 32);
        if (local(static_cast<PeerId>(id))) continue;
        const auto blob = pm_->get_remote(id, base, k_key);
        Published info{};
        if (blob.size() != sizeof info) continue;
        std::memcpy(&info, blob.data(), sizeof info);
        if (std::string why = map_pair(static_cast<PeerId>(id), info); !why.empty())
            FTMPI_WARN("process %d announced itself, but %s", id, why.c_str());
    }
}

std::string ShmTransport::add_peers(runtime::ProcessManager &pm, const std::vector<int> &ids,
                                    const std::vector<int> &bases) {
    std::vector<int> remote_ids, remote_bases;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto id = static_cast<PeerId>(ids[i]);
        if (id == self_ || local(id)) continue;
        const auto blob = pm.get_remote(ids[i], bases[i], k_key);
        Published info{};
        if (blob.size() == sizeof info) std::memcpy(&info, blob.data(), sizeof info);
        info.node[sizeof info.node - 1] = '\0';
        if (blob.size() == sizeof info && node_ == info.node) {
            if (std::string why = map_pair(id, info); !why.empty()) return why;
            announce_to(*peers_[id], id_base_);  // it may not know of this process yet
            continue;
        }
        remote_ids.push_back(ids[i]);
        remote_bases.push_back(bases[i]);
    }
    if (remote_ids.empty()) return "";
    if (!net_) return "process " + std::to_string(remote_ids.front()) + " is on another node, and this job has no " +
                      "network endpoint";
    return net_->add_peers(pm, remote_ids, remote_bases);
}

void ShmTransport::send_control(PeerId peer, Proto proto, const void *payload, std::size_t length) {
    Peer &p = *peers_[peer];
    const std::uint64_t match = pack_match(proto, 0, 0);
    if (p.backlog.empty() && p.out.write(match, 0, 0, payload, length)) return;
    Pending d{Pending::What::control};
    d.match = match;
    d.length = length;
    if (length > 0) std::memcpy(d.payload.data(), payload, length);
    queue(peer, p, d);
}

Posted ShmTransport::send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag,
                          std::int32_t source_rank, const void *buf, std::size_t length, SendMode mode, Op *op) {
    op->peer = peer;
    op->send_buf = buf;
    op->length = length;
    op->data = pack_source(self_, source_rank);
    if (peer == self_) {
        op->header = Header{pack_match(Proto::eager, context, tag), uid};
        return send_to_self(op, length, mode);
    }
    if (!local(peer)) {
        if (net_) return net_->send(peer, context, uid, tag, source_rank, buf, length, mode, op);
        return Posted::peer_failed;
    }
    Peer &p = *peers_[peer];
    if (p.failed) return Posted::peer_failed;
    if (mode == SendMode::standard && length <= p.eager) {
        op->header = Header{pack_match(Proto::eager, context, tag), uid};
        if (write_eager(p, op->header.match, uid, source_rank, buf, length)) return Posted::complete;
        op->kind = Op::Kind::send;
        queue(peer, p, Pending{Pending::What::send, op});
        return Posted::pending;
    }
    op->kind = Op::Kind::rndv_send;
    op->header = Header{pack_match(Proto::rts, context, tag), uid};
    op->id = next_id_++;
    op->ticket = 0;
    ShmRts rts{length, op->id, 0, 0};
    if (p.cma != Peer::Cma::no && length > 0) {
        const std::uint32_t i = take_desc(p);
        if (i != k_descs) {
            Desc &d = p.out_desc[i];
            d.src = reinterpret_cast<std::uintptr_t>(buf);
            d.next.store(0, std::memory_order_relaxed);
            d.done.store(0, std::memory_order_relaxed);
            d.abandoned.store(0, std::memory_order_relaxed);
            const std::uint64_t gen = ++p.gen[i];
            d.state.store(state_of(gen, st_posted), std::memory_order_release);
            op->ticket = i + 1;
            rts.desc = i + 1;
            rts.gen = gen;
        }
    }
    sends_.push_back(op);
    if (p.backlog.empty() && p.out.write(op->header.match, uid, source_rank, &rts, sizeof rts)) return Posted::pending;
    Pending d{Pending::What::control};
    d.match = op->header.match;
    d.length = sizeof rts;
    std::memcpy(d.payload.data(), &rts, sizeof rts);
    // A queued RTS keeps its communicator's uid and the rank in the record.
    d.offset = uid;
    d.transfer = static_cast<std::uint32_t>(source_rank);
    queue(peer, p, d);
    return Posted::pending;
}

bool ShmTransport::write_eager(Peer &p, std::uint64_t match, std::uint64_t uid, std::int32_t source_rank,
                               const void *buf, std::size_t length) {
    if (!p.backlog.empty()) return false;  // behind what waits for room
    char *slot = p.out.reserve(length);
    if (slot == nullptr) return false;
    copy_payload(slot, buf, length);
    runtime::test_kill_point("shm.record");  // tests: a death with a record written, not published
    p.out.publish(match, uid, source_rank, length);
    return true;
}

Posted ShmTransport::send_to_self(Op *op, std::size_t length, SendMode mode) {
    const Match m = unpack_match(op->header.match);
    Arrival a{m.context, op->header.uid, m.tag, source_rank(op->data), self_, length, op->send_buf, false, 0, {}};
    if (mode == SendMode::standard && length <= eager_limit_) {
        sink_.on_arrival(a);
        return Posted::complete;
    }
    op->kind = Op::Kind::rndv_send;
    op->header.match = pack_match(Proto::rts, m.context, m.tag);
    op->id = next_id_++;
    op->ticket = 0;
    sends_.push_back(op);
    a.eager_data = nullptr;
    a.rendezvous = true;
    a.sender_id = op->id;
    sink_.on_arrival(a);  // may accept at once, completing op before we return
    return Posted::pending;
}

std::uint32_t ShmTransport::take_desc(Peer &p) {
    if (p.free_desc.empty()) {
        for (std::size_t i = 0; i < p.held_desc.size();) {
            if (st(p.out_desc[p.held_desc[i]].state.load(std::memory_order_acquire)) == st_released) {
                p.free_desc.push_back(p.held_desc[i]);
                p.held_desc[i] = p.held_desc.back();
                p.held_desc.pop_back();
            } else {
                ++i;
            }
        }
    }
    if (p.free_desc.empty()) return k_descs;
    const std::uint32_t i = p.free_desc.back();
    p.free_desc.pop_back();
    return i;
}

Posted ShmTransport::accept(const Arrival &a, void *buf, std::size_t capacity, Op *op) {
    const std::size_t bytes = std::min(a.length, capacity);
    if (a.source == self_) {
        auto it = std::find_if(sends_.begin(), sends_.end(),
                               [&](Op *s) { return s->peer == self_ && s->id == a.sender_id; });
        if (it == sends_.end()) return Posted::peer_failed;
        Op *sender = *it;
        sends_.erase(it);
        if (bytes > 0) std::memcpy(buf, sender->send_buf, bytes);
        finish(sender, Err::ok, bytes);
        return Posted::complete;
    }
    if (!local(a.source)) {
        if (net_) return net_->accept(a, buf, capacity, op);
        return Posted::peer_failed;
    }
    Peer &p = *peers_[a.source];
    if (p.failed) return Posted::peer_failed;
    op->peer = a.source;
    op->recv_buf = buf;
    op->length = bytes;
    if (a.remote.address != 0) return claim(a, p, buf, bytes, op);
    return stream_receive(a.source, a.sender_id, bytes, op);
}

// The receiver's side of a descriptor: claims it and copies what it can.
Posted ShmTransport::claim(const Arrival &a, Peer &p, void *buf, std::size_t bytes, Op *op) {
    const std::uint32_t i = static_cast<std::uint32_t>(a.remote.address - 1);
    const std::uint64_t gen = a.remote.ticket_address;
    Desc &d = p.in_desc[i];
    std::uint64_t expect = state_of(gen, st_posted);
    if (!d.state.compare_exchange_strong(expect, state_of(gen, st_claiming), std::memory_order_acq_rel)) {
        // Withdrawn: the sender gave the send up, and says why.
        const Err why = d.reason == static_cast<std::uint32_t>(Err::revoked) ? Err::revoked : Err::canceled;
        finish(op, why, 0);
        return Posted::pending;
    }
    if (p.cma == Peer::Cma::unknown && bytes > 0) {
        char probe;
        iovec l{&probe, 1}, r{reinterpret_cast<void *>(d.src), 1};
        if (::process_vm_readv(p.pid, &l, 1, &r, 1, 0) != 1 && (errno == EPERM || errno == ENOSYS)) {
            FTMPI_INFO("single-copy reads from process %u refused (%s): its data comes through the ring", a.source,
                       std::strerror(errno));
            p.cma = Peer::Cma::no;
        } else {
            p.cma = Peer::Cma::yes;
        }
    }
    if (p.cma == Peer::Cma::no) {
        d.state.store(state_of(gen, st_declined), std::memory_order_release);
        return stream_receive(a.source, a.sender_id, bytes, op);
    }
    d.dst = reinterpret_cast<std::uintptr_t>(buf);
    d.length = bytes;
    d.state.store(state_of(gen, st_claimed), std::memory_order_release);
    op->kind = Op::Kind::bulk_recv;
    op->id = i;
    op->ticket = i + 1;
    op->data = gen;
    const bool ok = copy_chunks(d, p.pid, true, static_cast<char *>(buf));
    runtime::test_kill_point("shm.pull");  // tests: the receiver copied its part, the transfer not over
    if (!ok) {
        d.abandoned.store(1, std::memory_order_release);
        finish(op, Err::other, 0);
        return Posted::pending;
    }
    if (d.done.load(std::memory_order_acquire) == bytes) {
        d.state.store(state_of(gen, st_released), std::memory_order_release);
        op->kind = Op::Kind::none;
        return Posted::complete;
    }
    pulls_.push_back(op);
    return Posted::pending;
}

// Copies chunks of `d` until none is left to claim: a reader pulls from the
// sender into `local`, a writer pushes from `local` to the receiver. False
// when the kernel refused a copy for another reason than the peer's death
// (which mark_failed deals with).
bool ShmTransport::copy_chunks(Desc &d, pid_t pid, bool reader, char *local) {
    const std::uint64_t remote = reader ? d.src : d.dst;
    const std::uint64_t length = d.length, chunk = chunk_for(length);
    for (;;) {
        const std::uint64_t off = d.next.fetch_add(chunk, std::memory_order_relaxed);
        if (off >= length) return true;
        if (!reader) runtime::test_kill_point("shm.push");  // tests: a sender dies with a chunk claimed, not copied
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, length - off));
        iovec l{local + off, n}, r{reinterpret_cast<void *>(remote + off), n};
        const ssize_t got = reader ? ::process_vm_readv(pid, &l, 1, &r, 1, 0) : ::process_vm_writev(pid, &l, 1, &r, 1, 0);
        if (got != static_cast<ssize_t>(n)) {
            if (got < 0 && errno == ESRCH) return true;  // the peer is gone: its failure ends the transfer
            FTMPI_WARN("single-copy %s of %zu bytes at offset %llu from process %d failed: %s",
                       reader ? "read" : "write", n, static_cast<unsigned long long>(off), static_cast<int>(pid),
                       got < 0 ? std::strerror(errno) : "short copy");
            return false;
        }
        d.done.fetch_add(n, std::memory_order_release);
        if (d.abandoned.load(std::memory_order_relaxed) != 0) return true;
    }
}

// The receiver asks for the data (CTS); it comes as FRAG records into op->recv_buf.
Posted ShmTransport::stream_receive(PeerId src, std::uint64_t sender_id, std::size_t bytes, Op *op) {
    CtsPayload cts{sender_id, 0, bytes};
    Posted result = Posted::complete;
    if (bytes > 0) {
        op->kind = Op::Kind::bulk_recv;
        op->id = next_id_++;
        op->ticket = 0;
        op->data = 0;  // bytes received
        streams_[op->id] = op;
        cts.transfer_id = op->id;
        result = Posted::pending;
    }
    send_control(src, Proto::cts, &cts, sizeof cts);
    return result;
}

void ShmTransport::give_up(std::uint64_t sender_id, Err why) {
    given_up_[sender_id] = why;
    given_up_order_.push_back(sender_id);
    while (given_up_order_.size() > k_given_up_kept) {
        given_up_.erase(given_up_order_.front());
        given_up_order_.pop_front();
    }
}

void ShmTransport::cancel_sends(std::uint64_t uid, std::uint32_t first, std::uint32_t last, Err why) {
    if (net_) net_->cancel_sends(uid, first, last, why);
    std::vector<Op *> dead;
    for (std::size_t k = 0; k < sends_.size();) {
        Op *op = sends_[k];
        const std::uint32_t ctx = unpack_match(op->header.match).context;
        bool cancel = op->kind == Op::Kind::rndv_send && op->header.uid == uid && ctx >= first && ctx <= last;
        if (cancel && op->ticket != 0) {
            Peer &p = *peers_[op->peer];
            Desc &d = p.out_desc[op->ticket - 1];
            const std::uint64_t gen = p.gen[op->ticket - 1];
            d.reason = static_cast<std::uint32_t>(why);
            std::uint64_t expect = state_of(gen, st_posted);
            if (d.state.compare_exchange_strong(expect, state_of(gen, st_withdrawn), std::memory_order_acq_rel)) {
                p.free_desc.push_back(op->ticket - 1);
                op->ticket = 0;
            } else if (st(expect) == st_declined) {
                p.free_desc.push_back(op->ticket - 1);
                op->ticket = 0;
                give_up(op->id, why);  // its CTS is on the way: answered ABORT
            } else {
                cancel = false;  // claimed: the data moves, the send ends normally
            }
        } else if (cancel) {
            give_up(op->id, why);
        }
        if (cancel) {
            dead.push_back(op);
            sends_[k] = sends_.back();
            sends_.pop_back();
        } else {
            ++k;
        }
    }
    for (Op *op : dead) finish(op, why, 0);
}

void ShmTransport::mark_failed(PeerId peer) {
    if (net_) net_->mark_failed(peer);
    Peer &p = peer_state(peer);
    if (p.failed) return;
    // What the peer published before it died is whole (a record counts only
    // once its stamp is written): deliver it before failing anything, so
    // that its last messages (say, a collective's step it finished before
    // dying) still match, and nothing from it comes after its failure
    // fails a receive.
    if (p.mapped) drain_ring(peer);
    p.failed = true;
    polled_.erase(std::remove(polled_.begin(), polled_.end(), peer), polled_.end());
    std::vector<Op *> dead;
    auto take = [&](std::vector<Op *> &ops, bool sender) {
        for (std::size_t k = 0; k < ops.size();) {
            Op *op = ops[k];
            if (op->peer != peer) {
                ++k;
                continue;
            }
            if (op->ticket != 0) {  // nobody copies for a failed peer any more
                Desc *table = sender ? p.out_desc : p.in_desc;
                table[op->ticket - 1].abandoned.store(1, std::memory_order_release);
            }
            dead.push_back(op);
            ops[k] = ops.back();
            ops.pop_back();
        }
    };
    take(sends_, true);
    take(pulls_, false);
    for (auto it = streams_.begin(); it != streams_.end();) {
        if (it->second->peer == peer) {
            dead.push_back(it->second);
            it = streams_.erase(it);
        } else {
            ++it;
        }
    }
    for (const Pending &d : p.backlog)
        if (d.op != nullptr && d.what == Pending::What::send) dead.push_back(d.op);
    p.backlog.clear();
    stalled_.erase(std::remove(stalled_.begin(), stalled_.end(), peer), stalled_.end());
    for (Op *op : dead) finish(op, Err::peer_failed, 0);
}

bool ShmTransport::busy() const {
    for (PeerId peer : stalled_)
        if (!peers_[peer]->failed) return true;
    for (const Op *op : sends_)
        if (op->peer != self_ && !peers_[op->peer]->failed) return true;
    return net_ && net_->busy();
}

// Sends what waited for ring space, in order; a stream's pieces go as space allows.
void ShmTransport::drain_backlog(PeerId peer) {
    Peer &p = *peers_[peer];
    while (!p.backlog.empty()) {
        Pending &d = p.backlog.front();
        if (d.what == Pending::What::send) {
            if (!write_eager(p, d.op)) return;
            Op *op = d.op;
            p.backlog.pop_front();
            finish(op, Err::ok, op->length);
        } else if (d.what == Pending::What::control) {
            const bool rts = unpack_match(d.match).proto == Proto::rts;
            if (!p.out.write(d.match, rts ? d.offset : 0, rts ? static_cast<std::int32_t>(d.transfer) : 0,
                             d.payload.data(), d.length))
                return;
            p.backlog.pop_front();
        } else {
            if (!stream_some(p, d)) return;
            Op *op = d.op;
            p.backlog.pop_front();
            finish(op, Err::ok, op->length);
        }
    }
}

// Writes pieces of a streamed send while the ring has room; true when all went.
bool ShmTransport::stream_some(Peer &p, Pending &s) {
    const std::size_t piece_max = std::min(k_frag, p.eager > sizeof(FragHeader) ? p.eager - sizeof(FragHeader) : 1);
    while (s.offset < s.op->length) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(piece_max, s.op->length - s.offset));
        char *dst = p.out.reserve(sizeof(FragHeader) + n);
        if (dst == nullptr) return false;
        const FragHeader f{s.transfer, s.offset};
        std::memcpy(dst, &f, sizeof f);
        std::memcpy(dst + sizeof f, static_cast<const char *>(s.op->send_buf) + s.offset, n);
        p.out.publish(pack_match(Proto::frag, 0, 0), 0, 0, sizeof f + n);
        s.offset += n;
    }
    return true;
}

// The sender's side of descriptors: copies once claimed, finishes once done.
void ShmTransport::progress_sends() {
    for (std::size_t k = 0; k < sends_.size();) {
        Op *op = sends_[k];
        if (op->ticket == 0 || op->peer == self_) {
            ++k;
            continue;
        }
        Peer &p = *peers_[op->peer];
        const std::uint32_t i = static_cast<std::uint32_t>(op->ticket - 1);
        Desc &d = p.out_desc[i];
        const std::uint64_t state = d.state.load(std::memory_order_acquire);
        if (st(state) == st_declined) {  // a CTS follows: stream then
            p.free_desc.push_back(i);
            op->ticket = 0;
            ++k;
            continue;
        }
        if (st(state) != st_claimed && st(state) != st_released) {  // released: the receiver did it all
            ++k;
            continue;
        }
        op->kind = Op::Kind::bulk_send;
        bool ok = true;
        if (d.next.load(std::memory_order_relaxed) < d.length)
            ok = copy_chunks(d, p.pid, false, const_cast<char *>(static_cast<const char *>(op->send_buf)));
        const bool broken = !ok || d.abandoned.load(std::memory_order_acquire) != 0;
        if (!ok) d.abandoned.store(1, std::memory_order_release);
        if (!broken && d.done.load(std::memory_order_acquire) < d.length) {
            ++k;
            continue;
        }
        sends_[k] = sends_.back();
        sends_.pop_back();
        p.held_desc.push_back(i);
        op->ticket = 0;
        finish(op, broken ? Err::other : Err::ok, broken ? 0 : d.length);
    }
}

// Claimed receives whose sender still copies a part.
void ShmTransport::progress_pulls() {
    for (std::size_t k = 0; k < pulls_.size();) {
        Op *op = pulls_[k];
        Peer &p = *peers_[op->peer];
        Desc &d = p.in_desc[op->id];
        const bool broken = d.abandoned.load(std::memory_order_acquire) != 0;
        if (!broken && d.done.load(std::memory_order_acquire) < d.length) {
            ++k;
            continue;
        }
        pulls_[k] = pulls_.back();
        pulls_.pop_back();
        d.state.store(state_of(op->data, st_released), std::memory_order_release);
        finish(op, broken ? Err::other : Err::ok, broken ? 0 : op->length);
    }
}

int ShmTransport::drain_ring(PeerId src) {
    Peer &p = *peers_[src];
    int n = 0;
    ++depth_;
    // Up to the first record a posted receive took: its waiter returns at
    // once, and a message that came right behind is read at the next poll,
    // when the waiter has likely posted its receive (a back-to-back exchange,
    // as in MPI_Sendrecv loops and 2-rank collectives), not queued as
    // unexpected first.
    while (!p.failed) {
        const RecordHeader *h = p.in.take();
        if (h == nullptr) {
            if (p.in.corrupt() && !p.corrupt_told) {
                // Only a broken process writes such a record: it is lost to the job.
                p.corrupt_told = true;
                refuse("shm", "a record from process %u that does not fit its ring: the ring is no longer read", src);
                if (unreachable_) unreachable_(src);
            }
            break;
        }
        ++n;
        if (const char *why = malformed(h->match, h->length, sizeof(ShmRts), sizeof(FragHeader))) {
            refuse("shm", "a %u-byte record from process %u: %s", h->length, src, why);
            continue;
        }
        if (handle(src, p, *h)) break;
    }
    // A reader nested in a handler (a callback that polls) leaves the space
    // to the outermost one, which may still be reading a payload.
    if (--depth_ == 0) p.in.release();
    return n;
}

bool ShmTransport::handle(PeerId src, Peer &p, const RecordHeader &h) {
    const Match m = unpack_match(h.match);
    const char *payload = RingReader::payload(&h);
    switch (m.proto) {
    case Proto::eager:
        return sink_.on_arrival(Arrival{m.context, h.uid, m.tag, h.rank, src, h.length, payload, false, 0, {}});
    case Proto::rts: {
        ShmRts rts;
        std::memcpy(&rts, payload, sizeof rts);
        return sink_.on_arrival(Arrival{m.context, h.uid, m.tag, h.rank, src, rts.length, nullptr, true,
                                        rts.sender_id,
                                        RemoteBuffer{rts.desc, rts.gen, static_cast<std::uint64_t>(p.pid)}});
    }
    case Proto::cts: {
        CtsPayload cts;
        std::memcpy(&cts, payload, sizeof cts);
        auto it = std::find_if(sends_.begin(), sends_.end(),
                               [&](Op *s) { return s->peer == src && s->id == cts.sender_id; });
        if (it == sends_.end()) {  // given up: the receiver must not wait for the data
            Err why = Err::canceled;
            if (auto g = given_up_.find(cts.sender_id); g != given_up_.end()) {
                why = g->second;
                given_up_.erase(g);
            }
            CtsPayload ab{cts.sender_id, cts.transfer_id, static_cast<std::uint64_t>(why)};
            if (cts.length > 0) send_control(src, Proto::abort, &ab, sizeof ab);
            return false;
        }
        Op *op = *it;
        sends_.erase(it);
        if (op->ticket != 0) {  // declined: the descriptor is free again
            p.free_desc.push_back(static_cast<std::uint32_t>(op->ticket - 1));
            op->ticket = 0;
        }
        if (cts.length == 0) {
            finish(op, Err::ok, 0);
            return false;
        }
        op->kind = Op::Kind::bulk_send;
        op->length = cts.length;
        Pending s{Pending::What::stream, op};
        s.transfer = cts.transfer_id;
        if (p.backlog.empty() && stream_some(p, s)) {
            finish(op, Err::ok, op->length);
            return false;
        }
        queue(src, p, s);
        return false;
    }
    case Proto::frag: {
        FragHeader f;
        std::memcpy(&f, payload, sizeof f);
        auto it = streams_.find(f.transfer_id);
        if (it == streams_.end()) return false;
        Op *op = it->second;
        const std::size_t n = h.length - sizeof f;
        if (f.offset + n <= op->length) std::memcpy(static_cast<char *>(op->recv_buf) + f.offset, payload + sizeof f, n);
        op->data += n;
        if (op->data >= op->length) {
            streams_.erase(it);
            finish(op, Err::ok, op->length);
            return true;
        }
        return false;
    }
    case Proto::abort: {
        CtsPayload ab;
        std::memcpy(&ab, payload, sizeof ab);
        auto it = streams_.find(ab.transfer_id);
        if (it == streams_.end()) return false;
        Op *op = it->second;
        streams_.erase(it);
        finish(op, ab.length == static_cast<std::uint64_t>(Err::revoked) ? Err::revoked : Err::canceled, 0);
        return false;
    }
    case Proto::hello:
        if (p.lo && !p.hello) ::shm_unlink(("/" + p.name).c_str());
        p.hello = true;
        return false;
    case Proto::fin:
    case Proto::bulk:
        FTMPI_WARN("unexpected record (protocol %d) from process %u", static_cast<int>(m.proto), src);
        return false;
    }
    return false;
}

// The rings first, in a loop small enough that a wait spinning here comes
// back to them every few nanoseconds; whatever else there is to drive
// (announcements, transfers, backlogs, the network) in poll_rest().
int ShmTransport::poll() {
    int handled = 0;
    for (std::size_t k = 0; k < polled_.size(); ++k) handled += drain_ring(polled_[k]);
    if ((announce_ != nullptr && announce_->pending.load(std::memory_order_relaxed) != announce_seen_) ||
        !sends_.empty() || !pulls_.empty() || !stalled_.empty() || net_)
        handled += poll_rest();
    return handled;
}

int ShmTransport::poll_rest() {
    int handled = 0;
    if (announce_ != nullptr && announce_->pending.load(std::memory_order_relaxed) != announce_seen_)
        take_announcements();
    if (!sends_.empty()) progress_sends();
    if (!pulls_.empty()) progress_pulls();
    if (!stalled_.empty()) {
        for (std::size_t k = 0; k < stalled_.size();) {
            const PeerId peer = stalled_[k];
            drain_backlog(peer);
            if (peers_[peer]->backlog.empty()) {
                stalled_[k] = stalled_.back();
                stalled_.pop_back();
            } else {
                ++k;
            }
        }
    }
    if (net_) handled += net_->poll();
    return handled;
}

}  // namespace
}  // namespace shm

bool shm_fast_path() {
    const auto &cfg = runtime::config();
    return cfg.SHM_FASTPATH != 0 && (cfg.PROVIDER.empty() || cfg.PROVIDER == "shm");
}

std::unique_ptr<Transport> open_transport(runtime::ProcessManager &pm, Sink &sink) {
    const auto &job = pm.job();
    if (!shm_fast_path()) {
        auto t = open_ofi_transport(pm, sink, false);
        pm.exchange();
        t->connect(pm);
        return t;
    }
    auto t = std::make_unique<shm::ShmTransport>(pm, sink);
    if (job.local_peers.size() < static_cast<std::size_t>(job.size)) t->set_net(open_ofi_transport(pm, sink, true));
    pm.exchange();
    t->connect(pm);
    return t;
}

}  // namespace ftmpi::transport
