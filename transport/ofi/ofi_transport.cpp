// The libfabric transport: eager and rendezvous protocols over tagged RDM
// endpoints, one endpoint per provider in use, messages to self short-cut.
//
// Wire protocol (see match_bits.hpp):
//   eager:      EAGER(ctx, tag) carrying the data; len <= FTMPI_EAGER_LIMIT.
//   rendezvous: RTS(ctx, tag){length, sender id} -> the receiver matches it,
//               posts a bulk receive for a fresh transfer id and answers
//               CTS{sender id, transfer id, length}; the sender then sends the
//               data as BULK(transfer id). Ssend always uses rendezvous.
//               Over shm the receiver then answers FIN{sender id}, and the
//               send completes on whichever comes first, FIN or its own
//               completion: libfabric's shm reports a sender's completions in
//               order, and one owed by a peer that died never comes, which
//               would hold up every later send completion of the process.
//   abort:      a CTS for a send that was given up (a revoke canceled it while
//               it waited for the CTS) is answered ABORT{transfer id}, and the
//               receiver withdraws its bulk receive: once a CTS is out, the
//               bulk receive ends with the data or with the ABORT, never waits.
// Eager and control messages are untagged messages with a 16-byte Header (match
// bits, communicator uid); they land in pre-posted receive buffers. Bulk data
// is tagged with the receiver's transfer id and goes straight into the user's
// buffer.
#include <rdma/fi_errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "runtime/auth.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/test_hooks.hpp"
#include "transport/match_bits.hpp"
#include "transport/ofi/endpoint.hpp"
#include "transport/ofi/errors.hpp"
#include "transport/ofi/providers.hpp"
#include "transport/refused.hpp"
#include "transport/transport.hpp"

namespace ftmpi::transport::ofi {
namespace {

// An Op's address is the context libfabric is given (transport.hpp).
static_assert(sizeof(Op::fabric_context) >= sizeof(fi_context2) && offsetof(Op, fabric_context) == 0);

constexpr std::size_t k_cq_batch = 16;

struct RxBuffer {
    Op op;
    Endpoint *ep = nullptr;
    std::vector<char> data;
};

// A post that libfabric refused with -FI_EAGAIN, retried in order by poll().
struct Deferred {
    // gate: holds the queue until the peer's hello came (add_peers).
    enum class What : std::uint8_t { op_send, op_recv, control, gate } what;
    PeerId peer;
    Op *op;                  // op_send, op_recv
    Header header{};          // control
    std::uint64_t data = 0;   // control
    std::size_t length = 0;   // control
    alignas(8) char payload[std::max(sizeof(CtsPayload), sizeof(RtsPayload))] = {};
};

struct PeerState {
    Endpoint *ep = nullptr;
    fi_addr_t addr = FI_ADDR_NOTAVAIL;
    bool failed = false;
    bool fin = false;  // rendezvous sends complete on the receiver's FIN (shm)
    bool cma = false;  // rendezvous data is read straight from the sender (shm, SHM_CMA)
    // Posts to this peer waiting behind an -FI_EAGAIN, in order. One peer that
    // stops draining its queue never holds up traffic to the others.
    std::deque<Deferred> backlog;
};

class OfiTransport;

// A bulk send to a FIN peer goes to libfabric as this proxy, not as the
// owner's Op: the send may be over (FIN) long before libfabric gives the
// proxy back, if ever, and the owner's Op must be free for reuse meanwhile
// (a persistent send restarts, a request returns to its pool).
struct FinProxy {
    Op op;  // first member: what libfabric holds
    Op *target = nullptr;  // the owner's operation, until it is finished
    OfiTransport *owner = nullptr;
};

class OfiTransport final : public Transport {
public:
    // Opens the endpoints and publishes their addresses (pm.put); connect()
    // reads the peers' after the exchange. remote_only: only peers on other
    // nodes (the shared-memory fast path serves this node's).
    OfiTransport(runtime::ProcessManager &pm, Sink &sink, bool remote_only);
    void connect(runtime::ProcessManager &pm) override;
    // Endpoints first (libfabric lets go of everything), then the proxies
    // whose completion never came.
    ~OfiTransport() override {
        endpoints_.clear();
        for (FinProxy *px : proxies_) delete px;
    }

    Posted send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                const void *buf, std::size_t length, SendMode mode, Op *op) override;
    Posted accept(const Arrival &a, void *buf, std::size_t capacity, Op *op) override;
    int poll() override;
    void mark_failed(PeerId peer) override;
    bool is_failed(PeerId peer) const override { return peer < peers_.size() && peers_[peer].failed; }
    void cancel_sends(std::uint64_t uid, std::uint32_t first, std::uint32_t last, Err why) override;
    bool busy() const override {
        for (PeerId peer : stalled_) {  // a gate alone (add_peers) is nothing to send
            const auto &q = peers_[peer].backlog;
            if (q.size() > 1 || (!q.empty() && q.front().what != Deferred::What::gate)) return true;
        }
        for (const Op *op = inflight_.next; op != &inflight_; op = op->next)
            if (op->kind != Op::Kind::none && !peers_[op->peer].failed) return true;
        for (const auto &[id, op] : waiting_cts_)
            if (!peers_[op->peer].failed) return true;
        return false;
    }
    void set_unreachable_hook(std::function<void(PeerId)> hook) override { unreachable_ = std::move(hook); }
    std::string add_peers(runtime::ProcessManager &pm, const std::vector<int> &ids,
                          const std::vector<int> &bases) override;
    std::string provider_of(PeerId peer) const override {
        if (peer == self_) return "self";
        return peers_[peer].ep ? peers_[peer].ep->provider() : "none";
    }

private:
    Endpoint &endpoint_for(const std::string &fi_name, std::size_t av_size);
    void post_rx(RxBuffer &rx);
    // Posts op's send (Kind::send or bulk_send) now, or queues it behind the backlog.
    void post_send(Op *op);
    void post_recv(Op *op);
    ssize_t post_send_now(Op *op);
    void send_control(PeerId peer, const Header &header, std::uint64_t data, const void *payload,
                      std::size_t length);
    void abort_bulk_recv(PeerId peer, std::uint64_t transfer_id, Err why);
    bool pull(const Arrival &a, void *buf, std::size_t bytes);
    void preconnect();
    std::size_t hellos_ = 0;  // hellos received (preconnect)
    std::vector<bool> said_hello_;  // by process id: its hello arrived
    Endpoint *dynamic_ep_ = nullptr;  // the endpoint other jobs' processes reach (add_peers)
    bool try_deferred(Deferred &d);
    void drain_backlog();
    void defer(const Deferred &d);
    void handle_completion(const fi_cq_tagged_entry &e);
    void handle_error(Endpoint &ep);
    void handle_rx(RxBuffer &rx, const fi_cq_tagged_entry &e);
    void finish(Op *op, Err err, std::size_t bytes);
    void lost(PeerId peer);
    void hand_to_fabric(Op *op);
    void back_from_fabric(Op *op);
    Posted send_to_self(std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                        const void *buf, std::size_t length, SendMode mode, Op *op);

    Sink &sink_;
    PeerId self_;
    std::size_t eager_limit_;
    pid_t pid_ = ::getpid();
    std::vector<std::unique_ptr<Endpoint>> endpoints_;
    std::vector<PeerState> peers_;
    std::vector<std::unique_ptr<RxBuffer>> rx_;
    std::unordered_map<std::uint64_t, Op *> waiting_cts_;  // sender id -> rendezvous send
    std::unordered_map<std::uint64_t, FinProxy *> waiting_fin_;  // sender id -> bulk send to a FIN peer
    std::unordered_set<FinProxy *> proxies_;                      // every live proxy
    // Why recent sends were given up (cancel_sends), by sender id, for the
    // ABORT that answers a CTS that comes after all; the oldest are forgotten
    // past k_given_up_kept (their ABORT then says Err::canceled).
    static constexpr std::size_t k_given_up_kept = 4096;
    std::unordered_map<std::uint64_t, Err> given_up_;
    std::deque<std::uint64_t> given_up_order_;
    static void proxy_done(Op *op, Err err, std::size_t bytes);
    void release_if_proxy(Op *op);
    Op inflight_;  // sentinel of the list of sends and bulk receives libfabric holds
    // Transfer ids (the tags of bulk data) start at a random point: a process
    // outside the job cannot guess a posted bulk receive's tag.
    std::uint64_t next_id_ = 1;
    std::uint64_t token_ = 0;  // the universe's data token (runtime/auth.hpp), once known
    std::deque<Deferred> rx_backlog_;  // receive buffers to post again
    std::vector<PeerId> stalled_;      // peers whose backlog is not empty
    std::function<void(PeerId)> unreachable_;
};

OfiTransport::OfiTransport(runtime::ProcessManager &pm, Sink &sink, bool remote_only)
    : sink_(sink),
      self_(static_cast<PeerId>(pm.job().id())),
      eager_limit_(runtime::config().EAGER_LIMIT) {
    inflight_.prev = inflight_.next = &inflight_;
    const auto &job = pm.job();
    const auto &cfg = runtime::config();
    runtime::auth::random_bytes(&next_id_, sizeof next_id_);
    next_id_ = (next_id_ & (bits::id_mask >> 1)) | 1;  // room to count up without wrapping, never 0
    // peers_ is indexed by process id; this job's ranks are ids base + r.
    const std::size_t n = static_cast<std::size_t>(job.size), base = static_cast<std::size_t>(job.id_base);
    const PeerId self_rank = static_cast<PeerId>(job.rank);
    peers_.resize(base + n);
    auto is_local = [&](int r) {
        return std::binary_search(job.local_peers.begin(), job.local_peers.end(), r);
    };
    const bool one_node = job.local_peers.size() == n;
    const ProviderInfo forced = cfg.PROVIDER.empty() ? ProviderInfo{} : lookup_provider(cfg.PROVIDER);
    // FI_PROVIDER (the user's libfabric filter) is respected: shm within a
    // node only if it allows shm, and the network provider it allows.
    const ProviderInfo net = network_provider();
    const ProviderInfo local = allowed_by_user("shm") || net.fi_name.empty() ? lookup_provider("shm") : net;

    // Every pair chooses the same provider from both ends: shm when both are on
    // one node (locality from the process manager), the network provider otherwise.
    std::vector<std::string> names(n);
    bool tcp_iface = false;
    for (std::size_t r = 0; r < n; ++r) {
        if (r == self_rank || (remote_only && is_local(static_cast<int>(r)))) continue;
        const ProviderInfo &p = !forced.fi_name.empty() ? forced : is_local(static_cast<int>(r)) ? local : net;
        if (p.fi_name.empty())
            throw std::runtime_error("FI_PROVIDER=" + std::string(std::getenv("FI_PROVIDER")) +
                                     " allows no provider that reaches rank " + std::to_string(r) +
                                     " on another node");
        names[r] = p.fi_name;
        tcp_iface = tcp_iface || p.uses_tcp_iface;
    }
    if (tcp_iface) select_tcp_iface(one_node);
    for (std::size_t r = 0; r < n; ++r)
        if (!names[r].empty()) {
            PeerState &p = peers_[base + r];
            p.ep = &endpoint_for(names[r], n);
            p.fin = names[r] == "shm";
            p.cma = p.fin && cfg.SHM_CMA != 0;
        }

    // Under a launcher that can start processes for the job, the endpoint
    // that spawned ones reach (all on this node: ftmpirun) exists even
    // without peers yet.
    const ProviderInfo &dyn = !forced.fi_name.empty() ? forced : local;
    if (!remote_only && pm.why_no_spawn().empty() && !dyn.fi_name.empty()) {
        if (dyn.uses_tcp_iface && !tcp_iface) select_tcp_iface(true);
        dynamic_ep_ = &endpoint_for(dyn.fi_name, n);
    }
    for (auto &ep : endpoints_) {
        auto addr = ep->address();
        pm.put("ftmpi.addr." + ep->provider(), addr.data(), addr.size());
    }
}

void OfiTransport::connect(runtime::ProcessManager &pm) {
    const auto &job = pm.job();
    // Known after the exchange under any launcher; nothing arrives before this.
    token_ = runtime::auth::derive64(job.secret, "ftmpi data token");
    for (auto &ep : endpoints_) ep->set_token(token_);
    const auto &cfg = runtime::config();
    const std::size_t n = static_cast<std::size_t>(job.size), base = static_cast<std::size_t>(job.id_base);
    for (std::size_t r = 0; r < n; ++r) {
        PeerState &p = peers_[base + r];
        if (p.ep == nullptr) continue;
        auto addr = pm.get(static_cast<int>(r), "ftmpi.addr." + p.ep->provider());
        p.addr = p.ep->insert(addr);
        if (p.addr == FI_ADDR_NOTAVAIL)
            throw std::runtime_error("cannot insert the " + peers_[r].ep->provider() + " address of rank " +
                                     std::to_string(r) + " into the address vector");
    }

    const std::size_t rx_size =
        k_wire_header + std::max({eager_limit_, sizeof(CtsPayload), sizeof(RtsPayload)});
    for (auto &ep : endpoints_) {
        for (std::size_t i = 0; i < std::max<std::size_t>(cfg.RX_BUFFERS, 2); ++i) {
            auto rx = std::make_unique<RxBuffer>();
            rx->ep = ep.get();
            rx->data.resize(rx_size);
            rx->op.kind = Op::Kind::rx_buffer;
            post_rx(*rx);
            rx_.push_back(std::move(rx));
        }
    }
    for (auto &ep : endpoints_) FTMPI_INFO("endpoint open: provider %s", ep->provider().c_str());
    if (cfg.NET_PRECONNECT != 0) preconnect();
}

// libfabric 1.17's net provider (xnet) replaces its connection to a peer when
// that peer connects again, and fails what was queued on the old one (FI_SHUTDOWN,
// then connection errors): two processes that first talk to each other at the
// same moment from both sides could then take a live peer for a dead one. So
// every pair on a network provider connects once, here: each process sends a
// hello to every lower-ranked network peer and waits until those are delivered
// and every higher-ranked network peer's hello has arrived. Bounded: a peer
// that died during MPI_Init is left to the failure detector.
void OfiTransport::preconnect() {
    struct Hello {
        Op op;  // first member
        int *left;
    };
    std::size_t expected = 0;
    int sends_left = 0;
    std::vector<std::unique_ptr<Hello>> hellos;
    for (PeerId r = 0; r < peers_.size(); ++r) {
        if (r == self_ || peers_[r].ep == nullptr || !lookup_provider(peers_[r].ep->provider()).network) continue;
        if (r > self_) {
            ++expected;
            continue;
        }
        auto h = std::make_unique<Hello>();
        h->left = &sends_left;
        h->op.done = [](Op *op, Err, std::size_t) { --*reinterpret_cast<Hello *>(op)->left; };
        h->op.kind = Op::Kind::send;
        h->op.peer = r;
        h->op.header = Header{pack_match(Proto::hello, 0, 0), 0};
        h->op.data = pack_source(self_, 0);
        ++sends_left;
        post_send(&h->op);
        hellos.push_back(std::move(h));
    }
    if (expected == 0 && sends_left == 0) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((sends_left > 0 || hellos_ < expected) && std::chrono::steady_clock::now() < deadline) poll();
    if (sends_left > 0 || hellos_ < expected)
        FTMPI_WARN("connecting at init: %d hello(s) undelivered, %zu of %zu received after 30 s", sends_left, hellos_,
                   expected);
    // A hello libfabric still holds (a peer that never answered) must outlive this frame.
    for (auto &h : hellos)
        if (h->op.in_fabric) {
            h->op.done = nullptr;
            h->op.kind = Op::Kind::none;
            (void)h.release();  // owned by libfabric until finalize; tiny, and only after a failure at init
        }
}

// The in-flight list costs two pointer writes per posted operation; it lets a
// peer's failure finish operations libfabric may never complete (a shm send to a
// dead process). Receive buffers are not on it.
void OfiTransport::hand_to_fabric(Op *op) {
    op->in_fabric = true;
    op->next = &inflight_;
    op->prev = inflight_.prev;
    inflight_.prev->next = op;
    inflight_.prev = op;
}

void OfiTransport::back_from_fabric(Op *op) {
    op->in_fabric = false;
    if (op->prev == nullptr) return;
    op->prev->next = op->next;
    op->next->prev = op->prev;
    op->prev = op->next = nullptr;
}

Endpoint &OfiTransport::endpoint_for(const std::string &fi_name, std::size_t av_size) {
    for (auto &ep : endpoints_)
        if (ep->provider() == fi_name) return *ep;
    endpoints_.push_back(std::make_unique<Endpoint>(fi_name, av_size));
    endpoints_.back()->set_token(token_);
    return *endpoints_.back();
}

void OfiTransport::post_rx(RxBuffer &rx) {
    ssize_t rc = rx.ep->recv_msg(rx.data.data(), rx.data.size(), &rx.op);
    if (rc == 0) {
        rx.op.in_fabric = true;
    } else {
        if (rc != -FI_EAGAIN) FTMPI_WARN("posting a receive buffer failed: %s", fi_strerror(static_cast<int>(-rc)));
        // Out of receive slots for now: retried on a later poll through the backlog.
        rx_backlog_.push_back(Deferred{Deferred::What::op_recv, 0, &rx.op});
    }
}

Posted OfiTransport::send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag,
                          std::int32_t source_rank, const void *buf, std::size_t length, SendMode mode, Op *op) {
    if (peer == self_) return send_to_self(context, uid, tag, source_rank, buf, length, mode, op);
    PeerState &p = peers_[peer];
    if (p.failed) return Posted::peer_failed;
    const std::uint64_t data = pack_source(self_, source_rank);
    // Over shm only what libfabric injects goes eagerly: its larger sends
    // complete in order through one response queue, and a response a dead
    // peer owes holds back every later completion of this process for ever.
    if (mode == SendMode::standard && length <= eager_limit_ &&
        (!p.fin || length + k_wire_header <= p.ep->inject_size())) {
        const Header header{pack_match(Proto::eager, context, tag), uid};
        if (length + k_wire_header <= std::min(p.ep->inject_size(), k_inject_stage) && p.backlog.empty()) {
            ssize_t rc = p.ep->inject_msg(header, buf, length, p.addr, data);
            if (rc == 0) return Posted::complete;
            if (rc != -FI_EAGAIN && map_fi_error(static_cast<int>(-rc)) == Err::peer_failed) {
                lost(peer);
                return Posted::peer_failed;
            }
        }
        op->kind = Op::Kind::send;
        op->peer = peer;
        op->send_buf = buf;
        op->length = length;
        op->header = header;
        op->data = data;
        post_send(op);
        return Posted::pending;
    }
    op->kind = Op::Kind::rndv_send;
    op->peer = peer;
    op->send_buf = buf;
    op->length = length;
    op->data = data;
    op->header = Header{pack_match(Proto::rts, context, tag), uid};
    op->id = next_id_++;
    waiting_cts_[op->id] = op;
    RtsPayload rts{length, op->id, 0, 0, 0};
    if (p.cma) {
        op->ticket = op->id;
        rts.address = reinterpret_cast<std::uintptr_t>(buf);
        rts.ticket_address = reinterpret_cast<std::uintptr_t>(&op->ticket);
        rts.pid = static_cast<std::uint64_t>(pid_);
    }
    FTMPI_DEBUG("RTS to %u: %zu bytes, sender id %llu", peer, length, static_cast<unsigned long long>(op->id));
    send_control(peer, op->header, data, &rts, sizeof rts);
    return Posted::pending;
}

Posted OfiTransport::send_to_self(std::uint32_t context, std::uint64_t uid, std::int32_t tag,
                                  std::int32_t source_rank, const void *buf, std::size_t length, SendMode mode,
                                  Op *op) {
    Arrival a{context, uid, tag, source_rank, self_, length, buf, false, 0, {}};
    if (mode == SendMode::standard && length <= eager_limit_) {
        sink_.on_arrival(a);
        return Posted::complete;
    }
    op->kind = Op::Kind::rndv_send;
    op->peer = self_;
    op->send_buf = buf;
    op->length = length;
    op->header = Header{pack_match(Proto::rts, context, tag), uid};
    op->id = next_id_++;
    waiting_cts_[op->id] = op;
    a.eager_data = nullptr;
    a.rendezvous = true;
    a.sender_id = op->id;
    sink_.on_arrival(a);  // may accept at once, completing op before we return
    return Posted::pending;
}

Posted OfiTransport::accept(const Arrival &a, void *buf, std::size_t capacity, Op *op) {
    const std::size_t bytes = std::min(a.length, capacity);
    if (a.source == self_) {
        auto it = waiting_cts_.find(a.sender_id);
        if (it == waiting_cts_.end()) return Posted::peer_failed;
        Op *sender = it->second;
        waiting_cts_.erase(it);
        if (bytes > 0) std::memcpy(buf, sender->send_buf, bytes);
        finish(sender, Err::ok, bytes);
        return Posted::complete;
    }
    if (peers_[a.source].failed) return Posted::peer_failed;
    if (bytes > 0 && a.remote.pid != 0 && peers_[a.source].cma && pull(a, buf, bytes)) {
        runtime::test_kill_point("shm.pull");  // tests: data read, the sender not told
        const CtsPayload fin{a.sender_id, 0, bytes};
        send_control(a.source, Header{pack_match(Proto::fin, 0, 0), 0}, pack_source(self_, 0), &fin, sizeof fin);
        return Posted::complete;
    }
    CtsPayload cts{a.sender_id, 0, bytes};
    Posted result = Posted::complete;
    if (bytes > 0) {
        op->kind = Op::Kind::bulk_recv;
        op->peer = a.source;
        op->recv_buf = buf;
        op->length = bytes;
        op->id = next_id_++;
        op->header.match = pack_bulk(op->id);
        op->data = a.sender_id;  // named by the FIN
        cts.transfer_id = op->id;
        post_recv(op);  // posted (or queued) before the CTS that lets the data come
        result = Posted::pending;
    }
    FTMPI_DEBUG("CTS to %u: sender id %llu, transfer id %llu, %zu bytes", a.source,
                static_cast<unsigned long long>(a.sender_id), static_cast<unsigned long long>(cts.transfer_id), bytes);
    send_control(a.source, Header{pack_match(Proto::cts, 0, 0), 0}, pack_source(self_, 0), &cts, sizeof cts);
    return result;
}

// Single copy: reads the first `bytes` of a rendezvous message straight from
// the sender's memory, then its ticket. True when the data is good: the ticket
// still named the send, so it was read before the sender gave the send up and
// handed the buffer back to its user (the sender clears the ticket first, and
// the kernel copies the two ranges in order: x86 keeps loads in order). False
// when the send was given up or the kernel refused (another user, ptrace
// rules, a peer in another pid namespace): then the CTS path runs, which
// also learns why a send was given up.
bool OfiTransport::pull(const Arrival &a, void *buf, std::size_t bytes) {
    std::uint64_t ticket = 0;
    iovec local[2] = {{buf, bytes}, {&ticket, sizeof ticket}};
    iovec remote[2] = {{reinterpret_cast<void *>(a.remote.address), bytes},
                       {reinterpret_cast<void *>(a.remote.ticket_address), sizeof ticket}};
    const auto pid = static_cast<pid_t>(a.remote.pid);
    errno = 0;  // a short read sets none
#if defined(__x86_64__) || defined(__i386__)
    const ssize_t got = ::process_vm_readv(pid, local, 2, remote, 2, 0);
    const bool read = got == static_cast<ssize_t>(bytes + sizeof ticket);
#else
    bool read = ::process_vm_readv(pid, local, 1, remote, 1, 0) == static_cast<ssize_t>(bytes);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    read = read && ::process_vm_readv(pid, local + 1, 1, remote + 1, 1, 0) == static_cast<ssize_t>(sizeof ticket);
#endif
    if (!read && (errno == EPERM || errno == ENOSYS)) {
        FTMPI_INFO("single-copy reads from rank %u refused (%s): libfabric shm moves its data", a.source,
                   std::strerror(errno));
        peers_[a.source].cma = false;
    }
    if (!(read && ticket == a.sender_id))
        FTMPI_DEBUG("single-copy read of sender id %llu from rank %u: %s", static_cast<unsigned long long>(a.sender_id),
                    a.source, read ? "the send was given up" : errno != 0 ? std::strerror(errno) : "short read");
    return read && ticket == a.sender_id;
}

void OfiTransport::defer(const Deferred &d) {
    PeerState &p = peers_[d.peer];
    if (p.backlog.empty()) stalled_.push_back(d.peer);
    p.backlog.push_back(d);
}

void OfiTransport::post_send(Op *op) {
    if (peers_[op->peer].backlog.empty()) {
        ssize_t rc = post_send_now(op);
        if (rc == 0) {
            hand_to_fabric(op);
            return;
        }
        if (rc != -FI_EAGAIN) {
            if (map_fi_error(static_cast<int>(-rc)) == Err::peer_failed) lost(op->peer);
            finish(op, map_fi_error(static_cast<int>(-rc)), 0);
            return;
        }
    }
    defer(Deferred{Deferred::What::op_send, op->peer, op});
}

ssize_t OfiTransport::post_send_now(Op *op) {
    PeerState &p = peers_[op->peer];
    if (op->kind == Op::Kind::bulk_send)
        return p.ep->send_bulk(op->send_buf, op->length, p.addr, op->header.match, op->data, op);
    return p.ep->send_msg(&op->header, op->send_buf, op->length, p.addr, op->data, op);
}

void OfiTransport::post_recv(Op *op) {
    if (peers_[op->peer].backlog.empty()) {
        ssize_t rc = peers_[op->peer].ep->recv_bulk(op->recv_buf, op->length, op->header.match, op);
        if (rc == 0) {
            hand_to_fabric(op);
            return;
        }
        if (rc != -FI_EAGAIN) {
            finish(op, map_fi_error(static_cast<int>(-rc)), 0);
            return;
        }
    }
    defer(Deferred{Deferred::What::op_recv, op->peer, op});
}

void OfiTransport::send_control(PeerId peer, const Header &header, std::uint64_t data, const void *payload,
                                std::size_t length) {
    PeerState &p = peers_[peer];
    if (p.backlog.empty()) {
        ssize_t rc = p.ep->inject_msg(header, payload, length, p.addr, data);
        if (rc == 0) return;
        if (rc != -FI_EAGAIN) {
            FTMPI_WARN("control message to rank %u failed: %s", peer, fi_strerror(static_cast<int>(-rc)));
            if (map_fi_error(static_cast<int>(-rc)) == Err::peer_failed) lost(peer);
            return;
        }
    }
    Deferred d{Deferred::What::control, peer, nullptr, header, data, length};
    std::memcpy(d.payload, payload, length);
    defer(d);
}

// Returns false while libfabric still answers -FI_EAGAIN.
bool OfiTransport::try_deferred(Deferred &d) {
    ssize_t rc = 0;
    switch (d.what) {
    case Deferred::What::gate:
        return d.peer < said_hello_.size() && said_hello_[d.peer];
    case Deferred::What::op_send:
        rc = post_send_now(d.op);
        break;
    case Deferred::What::op_recv:
        if (d.op->kind == Op::Kind::rx_buffer) {
            auto *rx = reinterpret_cast<RxBuffer *>(d.op);  // Op is RxBuffer's first member
            rc = rx->ep->recv_msg(rx->data.data(), rx->data.size(), d.op);
        } else {
            rc = peers_[d.peer].ep->recv_bulk(d.op->recv_buf, d.op->length, d.op->header.match, d.op);
        }
        break;
    case Deferred::What::control: {
        PeerState &p = peers_[d.peer];
        rc = p.ep->inject_msg(d.header, d.payload, d.length, p.addr, d.data);
        break;
    }
    }
    if (rc == -FI_EAGAIN) return false;
    if (d.op != nullptr) {
        if (rc == 0) {
            if (d.op->kind == Op::Kind::rx_buffer) d.op->in_fabric = true;
            else hand_to_fabric(d.op);
        } else {
            if (map_fi_error(static_cast<int>(-rc)) == Err::peer_failed) lost(d.peer);
            if (d.op->kind != Op::Kind::rx_buffer) finish(d.op, map_fi_error(static_cast<int>(-rc)), 0);
        }
    } else if (rc != 0 && map_fi_error(static_cast<int>(-rc)) == Err::peer_failed) {
        lost(d.peer);
    }
    return true;
}

void OfiTransport::drain_backlog() {
    while (!rx_backlog_.empty() && try_deferred(rx_backlog_.front())) rx_backlog_.pop_front();
    for (std::size_t i = 0; i < stalled_.size();) {
        auto &q = peers_[stalled_[i]].backlog;
        while (!q.empty() && try_deferred(q.front())) q.pop_front();
        if (q.empty()) {
            stalled_[i] = stalled_.back();
            stalled_.pop_back();
        } else {
            ++i;
        }
    }
}

int OfiTransport::poll() {
    int handled = 0;
    fi_cq_tagged_entry entries[k_cq_batch];
    for (auto &ep : endpoints_) {
        for (;;) {
            ssize_t n = ep->read(entries, k_cq_batch);
            if (n == -FI_EAVAIL) {
                handle_error(*ep);
                ++handled;
                continue;
            }
            if (n <= 0) break;
            for (ssize_t i = 0; i < n; ++i) handle_completion(entries[i]);
            handled += static_cast<int>(n);
            if (static_cast<std::size_t>(n) < k_cq_batch) break;
        }
    }
    if (!stalled_.empty() || !rx_backlog_.empty()) drain_backlog();
    return handled;
}

void OfiTransport::finish(Op *op, Err err, std::size_t bytes) {
    if (op->kind == Op::Kind::bulk_send && !waiting_fin_.empty()) waiting_fin_.erase(op->id);
    // No receiver takes the data from the user's buffer once it is back in
    // the user's hands (pull()).
    if (op->ticket != 0) std::atomic_ref<std::uint64_t>(op->ticket).store(0, std::memory_order_seq_cst);
    op->kind = Op::Kind::none;
    const bool proxy = op->done == &OfiTransport::proxy_done;  // `done` may free any other op
    if (op->done != nullptr) op->done(op, err, bytes);
    if (proxy) release_if_proxy(op);
}

// A proxy's end: its owner's operation ends with it, unless FIN ended it first.
void OfiTransport::proxy_done(Op *op, Err err, std::size_t bytes) {
    auto *px = reinterpret_cast<FinProxy *>(op);
    if (Op *t = px->target) {
        px->target = nullptr;
        px->owner->finish(t, err, bytes);
    }
}

// A finished proxy is deleted once libfabric no longer holds it.
void OfiTransport::release_if_proxy(Op *op) {
    if (op->done != &OfiTransport::proxy_done || op->in_fabric || op->kind != Op::Kind::none) return;
    auto *px = reinterpret_cast<FinProxy *>(op);
    proxies_.erase(px);
    delete px;
}

void OfiTransport::handle_completion(const fi_cq_tagged_entry &e) {
    Op *op = static_cast<Op *>(e.op_context);
    if (op == nullptr) return;
    if (op->kind == Op::Kind::rx_buffer) {
        op->in_fabric = false;
        handle_rx(*reinterpret_cast<RxBuffer *>(op), e);
        return;
    }
    back_from_fabric(op);
    switch (op->kind) {
    case Op::Kind::rx_buffer:
        return;
    case Op::Kind::send:
    case Op::Kind::bulk_send:
        finish(op, Err::ok, op->length);
        return;
    case Op::Kind::bulk_recv:
        if (peers_[op->peer].fin) {
            const CtsPayload fin{op->data, op->id, e.len};
            send_control(op->peer, Header{pack_match(Proto::fin, 0, 0), 0}, pack_source(self_, 0), &fin, sizeof fin);
        }
        finish(op, Err::ok, e.len);
        return;
    case Op::Kind::rndv_send:  // completes on CTS, never through the CQ
        return;
    case Op::Kind::none:  // already finished (failed peer, FIN): nothing left to do
        release_if_proxy(op);
        return;
    }
}

void OfiTransport::handle_rx(RxBuffer &rx, const fi_cq_tagged_entry &e) {
    Untagged msg;
    const PeerId src = source_process(e.data);
    const char *bad = read_untagged(rx.data.data(), e.len, rx.ep->token(), sizeof(RtsPayload), msg);
    if (bad != nullptr) {
        // Not from a process of this universe (runtime/auth.hpp), or not a
        // message ftmpi sends: dropped unread.
        refuse("data", "a %zu-byte %s message claiming to be from process %u: %s", e.len, rx.ep->provider().c_str(),
               src, bad);
        post_rx(rx);
        return;
    }
    const Header &header = msg.header;
    const char *payload = msg.payload;
    const std::size_t len = msg.len;
    const Match m = unpack_match(header.match);
    // Once a peer's failure is processed nothing more from it is delivered, so
    // a receive failed for want of its message is never followed by one that
    // matches an older message (spec 000 §17.6, advice to implementors).
    if (src < peers_.size() && peers_[src].failed && m.proto != Proto::cts) {
        post_rx(rx);
        return;
    }
    switch (m.proto) {
    case Proto::eager:
        sink_.on_arrival(Arrival{m.context, header.uid, m.tag, source_rank(e.data), src, len, payload, false, 0, {}});
        break;
    case Proto::rts: {
        RtsPayload rts;
        std::memcpy(&rts, payload, sizeof rts);
        sink_.on_arrival(Arrival{m.context, header.uid, m.tag, source_rank(e.data), src, rts.length, nullptr, true,
                                 rts.sender_id, RemoteBuffer{rts.address, rts.ticket_address, rts.pid}});
        break;
    }
    case Proto::cts: {
        CtsPayload cts;
        std::memcpy(&cts, payload, sizeof cts);
        auto it = waiting_cts_.find(cts.sender_id);
        if (it == waiting_cts_.end()) {
            // The send was given up (canceled by a revoke, or its peer marked
            // failed): the receiver's posted bulk receive must not wait for
            // data that will never come.
            FTMPI_DEBUG("CTS from %u for transfer %llu, which was given up", src,
                        static_cast<unsigned long long>(cts.sender_id));
            Err why = Err::canceled;
            if (auto g = given_up_.find(cts.sender_id); g != given_up_.end()) {
                why = g->second;
                given_up_.erase(g);
            }
            CtsPayload ab{cts.sender_id, cts.transfer_id, static_cast<std::uint64_t>(why)};
            if (cts.length > 0 && src < peers_.size() && !peers_[src].failed)
                send_control(src, Header{pack_match(Proto::abort, 0, 0), 0}, pack_source(self_, 0), &ab, sizeof ab);
            break;
        }
        Op *op = it->second;
        if (op->peer != src || cts.length > op->length) {  // a CTS that no receiver of this send could send
            refuse("data", "a CTS from process %u for %llu bytes of a send of %zu bytes to process %u", src,
                   static_cast<unsigned long long>(cts.length), op->length, op->peer);
            break;
        }
        waiting_cts_.erase(it);
        if (cts.length == 0) {
            finish(op, Err::ok, 0);
            break;
        }
        FTMPI_DEBUG("bulk to %u: transfer id %llu, %llu bytes", src, static_cast<unsigned long long>(cts.transfer_id),
                    static_cast<unsigned long long>(cts.length));
        op->kind = Op::Kind::bulk_send;
        op->length = cts.length;
        op->header.match = pack_bulk(cts.transfer_id);
        if (!peers_[src].fin) {
            post_send(op);
            break;
        }
        auto *px = new FinProxy;
        px->op.kind = Op::Kind::bulk_send;
        px->op.peer = op->peer;
        px->op.send_buf = op->send_buf;
        px->op.length = op->length;
        px->op.header = op->header;
        px->op.data = op->data;
        px->op.id = op->id;
        px->op.done = &OfiTransport::proxy_done;
        px->target = op;
        px->owner = this;
        proxies_.insert(px);
        waiting_fin_[op->id] = px;
        post_send(&px->op);
        break;
    }
    case Proto::fin: {  // the receiver has the data: the send is over
        CtsPayload fin;
        std::memcpy(&fin, payload, sizeof fin);
        if (fin.transfer_id == 0) {  // the receiver read the data itself (pull())
            if (auto w = waiting_cts_.find(fin.sender_id); w != waiting_cts_.end()) {
                Op *op = w->second;
                waiting_cts_.erase(w);
                finish(op, Err::ok, fin.length);
            }
            break;
        }
        auto it = waiting_fin_.find(fin.sender_id);
        if (it == waiting_fin_.end()) break;
        FinProxy *px = it->second;  // stays with libfabric until it gives it back
        waiting_fin_.erase(it);
        if (Op *t = px->target) {
            px->target = nullptr;
            finish(t, Err::ok, t->length);
        }
        break;
    }
    case Proto::abort: {  // the sender gave up a transfer this process asked for
        CtsPayload ab;
        std::memcpy(&ab, payload, sizeof ab);
        const Err why = ab.length == static_cast<std::uint64_t>(Err::revoked) ? Err::revoked : Err::canceled;
        abort_bulk_recv(src, ab.transfer_id, why);
        break;
    }
    case Proto::hello:
        ++hellos_;
        if (src >= said_hello_.size()) said_hello_.resize(static_cast<std::size_t>(src) + 1);
        said_hello_[src] = true;  // opens the gate of add_peers, if any
        break;
    case Proto::bulk:
    case Proto::frag:
        FTMPI_WARN("bulk message landed in a receive buffer (peer %u)", src);
        break;
    }
    post_rx(rx);
}

void OfiTransport::handle_error(Endpoint &ep) {
    fi_cq_err_entry entry;
    std::string text;
    if (!ep.read_error(entry, text)) return;
    Op *op = static_cast<Op *>(entry.op_context);
    const Err err = map_fi_error(entry.err);
    if (op == nullptr) {
        FTMPI_WARN("%s: completion error without context: %s", ep.provider().c_str(), text.c_str());
        return;
    }
    if (op->kind == Op::Kind::rx_buffer) {
        op->in_fabric = false;
        if (err != Err::canceled)
            FTMPI_WARN("%s: receive buffer error: %s", ep.provider().c_str(), text.c_str());
        post_rx(*reinterpret_cast<RxBuffer *>(op));
        return;
    }
    back_from_fabric(op);
    if (op->kind == Op::Kind::none) {  // finished earlier (canceled after a failure, FIN)
        release_if_proxy(op);
        return;
    }
    if (err == Err::peer_failed) lost(op->peer);
    else if (err != Err::canceled)
        FTMPI_WARN("%s: operation with rank %u failed: %s", ep.provider().c_str(), op->peer, text.c_str());
    finish(op, err, 0);
}

void OfiTransport::lost(PeerId peer) {
    if (peers_[peer].failed) return;
    if (unreachable_) unreachable_(peer);
}

// Nothing will come for the bulk receive `transfer_id` from `peer`: it is
// withdrawn from libfabric (or from the backlog) and finishes canceled.
void OfiTransport::abort_bulk_recv(PeerId peer, std::uint64_t transfer_id, Err why) {
    auto is_it = [&](const Op *op) {
        return op->kind == Op::Kind::bulk_recv && op->peer == peer && op->id == transfer_id;
    };
    for (Op *op = inflight_.next; op != &inflight_; op = op->next) {
        if (!is_it(op)) continue;
        peers_[peer].ep->cancel(op);  // its cancel completion only unlinks it
        finish(op, why, 0);
        return;
    }
    auto &q = peers_[peer].backlog;
    for (auto it = q.begin(); it != q.end(); ++it) {
        if (it->what != Deferred::What::op_recv || !is_it(it->op)) continue;
        Op *op = it->op;
        q.erase(it);
        if (q.empty()) stalled_.erase(std::remove(stalled_.begin(), stalled_.end(), peer), stalled_.end());
        finish(op, why, 0);
        return;
    }
}

void OfiTransport::cancel_sends(std::uint64_t uid, std::uint32_t first, std::uint32_t last, Err why) {
    std::vector<Op *> dead;
    for (auto it = waiting_cts_.begin(); it != waiting_cts_.end();) {
        const std::uint32_t ctx = unpack_match(it->second->header.match).context;
        if (it->second->header.uid == uid && ctx >= first && ctx <= last) {
            dead.push_back(it->second);
            given_up_[it->first] = why;
            given_up_order_.push_back(it->first);
            it = waiting_cts_.erase(it);
        } else {
            ++it;
        }
    }
    while (given_up_order_.size() > k_given_up_kept) {
        given_up_.erase(given_up_order_.front());
        given_up_order_.pop_front();
    }
    for (Op *op : dead) finish(op, why, 0);
}

void OfiTransport::mark_failed(PeerId peer) {
    // A process not yet a peer (another job's) stays failed if it becomes one.
    if (peer >= peers_.size()) peers_.resize(static_cast<std::size_t>(peer) + 1);
    if (peers_[peer].failed) return;
    peers_[peer].failed = true;
    std::vector<Op *> dead;
    for (auto it = waiting_cts_.begin(); it != waiting_cts_.end();) {
        if (it->second->peer == peer) {
            dead.push_back(it->second);
            it = waiting_cts_.erase(it);
        } else {
            ++it;
        }
    }
    // Operations libfabric holds stay on the list until it returns them (if ever);
    // they are finished now, so a late completion only unlinks them.
    for (Op *op = inflight_.next; op != &inflight_; op = op->next) {
        if (op->peer != peer || op->kind == Op::Kind::none) continue;
        if (op->kind == Op::Kind::bulk_recv) peers_[peer].ep->cancel(op);
        dead.push_back(op);
    }
    for (const Deferred &d : peers_[peer].backlog)
        if (d.op != nullptr && d.op->kind != Op::Kind::none) dead.push_back(d.op);
    peers_[peer].backlog.clear();
    stalled_.erase(std::remove(stalled_.begin(), stalled_.end(), peer), stalled_.end());
    for (Op *op : dead) finish(op, Err::peer_failed, 0);
}

std::string OfiTransport::add_peers(runtime::ProcessManager &pm, const std::vector<int> &ids,
                                    const std::vector<int> &bases) {
    Endpoint *ep = dynamic_ep_;
    if (ep == nullptr) return "this process has no endpoint that processes of other jobs can reach";
    const bool network = lookup_provider(ep->provider()).network;
    struct Hello {
        Op op;  // first member
    };
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const PeerId id = static_cast<PeerId>(ids[i]);
        if (id == self_ || (id < peers_.size() && peers_[id].ep != nullptr)) continue;
        if (id >= peers_.size()) peers_.resize(static_cast<std::size_t>(id) + 1);
        const auto addr = pm.get_remote(ids[i], bases[i], "ftmpi.addr." + ep->provider());
        if (addr.empty()) return "no " + ep->provider() + " address for process " + std::to_string(id);
        PeerState &p = peers_[id];
        p.addr = ep->insert(addr);
        if (p.addr == FI_ADDR_NOTAVAIL)
            return "cannot insert the " + ep->provider() + " address of process " + std::to_string(id);
        p.ep = ep;
        p.fin = ep->provider() == "shm";
        p.cma = p.fin && runtime::config().SHM_CMA != 0;
        if (!network || p.failed) continue;
        if (id < self_) {  // this process connects: its hello goes first
            auto *h = new Hello;
            h->op.done = [](Op *op, Err, std::size_t) { delete reinterpret_cast<Hello *>(op); };
            h->op.kind = Op::Kind::send;
            h->op.peer = id;
            h->op.header = Header{pack_match(Proto::hello, 0, 0), 0};
            h->op.data = pack_source(self_, 0);
            post_send(&h->op);
        } else if (!(id < said_hello_.size() && said_hello_[id])) {
            defer(Deferred{Deferred::What::gate, id, nullptr});  // everything waits for its hello
        }
    }
    return "";
}

}  // namespace

}  // namespace ftmpi::transport::ofi

namespace ftmpi::transport {
std::unique_ptr<Transport> open_ofi_transport(runtime::ProcessManager &pm, Sink &sink, bool remote_only) {
    return std::make_unique<ofi::OfiTransport>(pm, sink, remote_only);
}
}  // namespace ftmpi::transport
