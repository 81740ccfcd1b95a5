// The libfabric transport: set-up (endpoints, addresses, the pairs' hellos),
// peers of other jobs, failures and sends given up (ofi_transport.hpp for the
// protocol).
#include "transport/ofi/ofi_transport.hpp"

#include <algorithm>

namespace ftmpi::transport::ofi {
OfiTransport::OfiTransport(runtime::ProcessManager &pm, Sink &sink, bool remote_only)
    : sink_(sink), self_(static_cast<PeerId>(pm.job().id())), eager_limit_(runtime::config().NET_EAGER_LIMIT) {
    inflight_.prev = inflight_.next = &inflight_;
    const auto &job = pm.job();
    const auto &cfg = runtime::config();
    runtime::auth::random_bytes(&next_id_, sizeof next_id_);
    next_id_ = (next_id_ & (bits::id_mask >> 1)) | 1;  // room to count up without wrapping, never 0
    // peers_ is indexed by process id; this job's ranks are ids base + r.
    const std::size_t n = static_cast<std::size_t>(job.size), base = static_cast<std::size_t>(job.id_base);
    const PeerId self_rank = static_cast<PeerId>(job.rank);
    peers_.resize(base + n);
    auto is_local = [&](int r) { return std::binary_search(job.local_peers.begin(), job.local_peers.end(), r); };
    const bool one_node = job.one_node();
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
                                     " allows no provider that reaches rank " + std::to_string(r) + " on another node");
        names[r] = p.fi_name;
        tcp_iface = tcp_iface || p.uses_tcp_iface;
    }
    if (tcp_iface) select_tcp_iface(one_node);
    for (std::size_t r = 0; r < n; ++r)
        if (!names[r].empty()) {
            PeerState &p = peers_[base + r];
            p.ep = &endpoint_for(names[r], n);
            p.fin = names[r] == "shm";
            p.cma = p.fin && runtime::single_copy(cfg);
        }

    // Under a launcher that can start processes for the job, the endpoint
    // that spawned ones reach exists even without peers yet: on this node
    // (ftmpirun on one node), or the network provider's when the universe
    // spans nodes (ftmpirun across nodes: parents and children may be
    // elsewhere, even of a job all on one node).
    const ProviderInfo &dyn = !forced.fi_name.empty() ? forced : job.spans_nodes ? net : local;
    if ((!remote_only || job.spans_nodes) && pm.why_no_spawn().empty() && !dyn.fi_name.empty()) {
        if (dyn.uses_tcp_iface && !tcp_iface) select_tcp_iface(one_node);
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

    for (auto &ep : endpoints_) {
        const std::size_t rx_size =
            k_wire_header + std::max({ep->eager_limit(), sizeof(CtsPayload), sizeof(RtsPayload)});
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
}

// libfabric 1.17's net provider (xnet) replaces its connection to a peer when
// that peer connects again, and fails what was queued on the old one (FI_SHUTDOWN,
// then connection errors): two processes that first talk to each other at the
// same moment from both sides could then take a live peer for a dead one. So
// every pair on a network provider connects once, here: each process sends a
// hello to every lower-ranked network peer and waits until those are delivered
// and every higher-ranked network peer's hello has arrived. Bounded: a peer
// that died during MPI_Init is left to the failure detector.
std::vector<PeerId> OfiTransport::preconnect() {
    if (runtime::config().NET_PRECONNECT == 0) return {};
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
    if (expected == 0 && sends_left == 0) return {};
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
    std::vector<PeerId> greeted;
    for (PeerId r = 0; r < said_hello_.size(); ++r)
        if (said_hello_[r]) greeted.push_back(r);
    return greeted;
}

Endpoint &OfiTransport::endpoint_for(const std::string &fi_name, std::size_t av_size) {
    for (auto &ep : endpoints_)
        if (ep->provider() == fi_name) return *ep;
    endpoints_.push_back(std::make_unique<Endpoint>(fi_name, av_size));
    endpoints_.back()->set_token(token_);
    // ofi_rxm sends what exceeds its own eager buffers (16 KiB) by its own
    // protocols, which let a later small message overtake a 64 KiB one
    // despite FI_ORDER_SAS (libfabric 1.17 here): MPI's order needs ftmpi's
    // rendezvous above that size.
    const bool rxm = fi_name.find("ofi_rxm") != std::string::npos;
    endpoints_.back()->set_eager_limit(rxm ? std::min<std::size_t>(eager_limit_, 16384) : eager_limit_);
    return *endpoints_.back();
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
        p.cma = p.fin && runtime::single_copy(runtime::config());
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

}  // namespace ftmpi::transport::ofi

namespace ftmpi::transport {
std::unique_ptr<Transport> open_ofi_transport(runtime::ProcessManager &pm, Sink &sink, bool remote_only) {
    return std::make_unique<ofi::OfiTransport>(pm, sink, remote_only);
}
}  // namespace ftmpi::transport
