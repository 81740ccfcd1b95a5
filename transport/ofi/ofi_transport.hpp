// The libfabric transport: eager and rendezvous protocols over tagged RDM
// endpoints, one endpoint per provider in use, messages to self short-cut.
//
// Wire protocol (see match_bits.hpp):
//   eager:      EAGER(ctx, tag) carrying the data; len <= FTMPI_NET_EAGER_LIMIT.
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
//
// The transport's objects, shared by ofi_transport.cpp (set-up, peers,
// failures), ofi_send.cpp and ofi_receive.cpp (the two sides of a transfer,
// and polling). Internal to transport/ofi/.
#pragma once

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
    Header header{};         // control
    std::uint64_t data = 0;  // control
    std::size_t length = 0;  // control
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
    Op op;                 // first member: what libfabric holds
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
    std::vector<PeerId> preconnect() override;
    // Endpoints first (libfabric lets go of everything), then the proxies
    // whose completion never came.
    ~OfiTransport() override {
        endpoints_.clear();
        for (FinProxy *px : proxies_) delete px;
    }

    Posted send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                const void *buf, std::size_t length, SendMode mode, Op *op) override;
    bool inject(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                const void *buf, std::size_t length) override;
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
    void send_control(PeerId peer, const Header &header, std::uint64_t data, const void *payload, std::size_t length);
    void abort_bulk_recv(PeerId peer, std::uint64_t transfer_id, Err why);
    bool pull(const Arrival &a, void *buf, std::size_t bytes);
    std::size_t hellos_ = 0;          // hellos received (preconnect)
    std::vector<bool> said_hello_;    // by process id: its hello arrived
    Endpoint *dynamic_ep_ = nullptr;  // the endpoint other jobs' processes reach (add_peers)
    bool try_deferred(Deferred &d);
    void drain_backlog();
    void defer(const Deferred &d);
    void handle_completion(const fi_cq_tagged_entry &e);
    void handle_error(Endpoint &ep);
    void handle_rx(RxBuffer &rx, const fi_cq_tagged_entry &e);
    void on_cts(PeerId src, const char *payload);
    void on_fin(const char *payload);
    void finish(Op *op, Err err, std::size_t bytes);
    void lost(PeerId peer);
    void hand_to_fabric(Op *op);
    void back_from_fabric(Op *op);
    // A message libfabric takes whole at once (fi_inject), with nothing queued before it to that peer.
    static bool injectable(const PeerState &p, std::size_t length) {
        return length <= p.ep->eager_limit() &&
               length + k_wire_header <= std::min(p.ep->inject_size(), k_inject_stage) && p.backlog.empty();
    }
    Posted send_to_self(std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                        const void *buf, std::size_t length, SendMode mode, Op *op);

    Sink &sink_;
    PeerId self_;
    std::size_t eager_limit_;
    pid_t pid_ = ::getpid();
    std::vector<std::unique_ptr<Endpoint>> endpoints_;
    std::vector<PeerState> peers_;
    std::vector<std::unique_ptr<RxBuffer>> rx_;
    std::unordered_map<std::uint64_t, Op *> waiting_cts_;        // sender id -> rendezvous send
    std::unordered_map<std::uint64_t, FinProxy *> waiting_fin_;  // sender id -> bulk send to a FIN peer
    std::unordered_set<FinProxy *> proxies_;                     // every live proxy
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
    std::uint64_t token_ = 0;          // the universe's data token (runtime/auth.hpp), once known
    std::deque<Deferred> rx_backlog_;  // receive buffers to post again
    // Receive buffers read by the last poll, posted again by the next one:
    // libfabric's post is then not between a message's arrival and the
    // return of the call that waited for it. A few at most (k_rx_spent_max).
    static constexpr std::size_t k_rx_spent_max = 8;
    std::vector<RxBuffer *> rx_spent_;
    std::vector<PeerId> stalled_;  // peers whose backlog is not empty
    std::function<void(PeerId)> unreachable_;
};

}  // namespace ftmpi::transport::ofi
