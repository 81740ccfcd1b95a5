// The libfabric transport, the receiver's side and polling: receive buffers,
// accepting rendezvous data (pulled or by CTS), completions and errors.
#include "transport/ofi/ofi_transport.hpp"

namespace ftmpi::transport::ofi {

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
                    a.source,
                    read         ? "the send was given up"
                    : errno != 0 ? std::strerror(errno)
                                 : "short read");
    return read && ticket == a.sender_id;
}

int OfiTransport::poll() {
    int handled = 0;
    for (RxBuffer *rx : rx_spent_) post_rx(*rx);
    rx_spent_.clear();
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
    case Op::Kind::rx_buffer: return;
    case Op::Kind::send:
    case Op::Kind::bulk_send: finish(op, Err::ok, op->length); return;
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

// A receiver's CTS: the rendezvous send's data goes (or, for a send given
// up, an ABORT answers it).
void OfiTransport::on_cts(PeerId src, const char *payload) {
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
        return;
    }
    Op *op = it->second;
    if (op->peer != src || cts.length > op->length) {  // a CTS that no receiver of this send could send
        refuse("data", "a CTS from process %u for %llu bytes of a send of %zu bytes to process %u", src,
               static_cast<unsigned long long>(cts.length), op->length, op->peer);
        return;
    }
    waiting_cts_.erase(it);
    if (cts.length == 0) {
        finish(op, Err::ok, 0);
        return;
    }
    FTMPI_DEBUG("bulk to %u: transfer id %llu, %llu bytes", src, static_cast<unsigned long long>(cts.transfer_id),
                static_cast<unsigned long long>(cts.length));
    op->kind = Op::Kind::bulk_send;
    op->length = cts.length;
    op->header.match = pack_bulk(cts.transfer_id);
    if (!peers_[src].fin) {
        post_send(op);
        return;
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
}

// The receiver has the data (FIN): the send is over.
void OfiTransport::on_fin(const char *payload) {
    CtsPayload fin;
    std::memcpy(&fin, payload, sizeof fin);
    if (fin.transfer_id == 0) {  // the receiver read the data itself (pull())
        if (auto w = waiting_cts_.find(fin.sender_id); w != waiting_cts_.end()) {
            Op *op = w->second;
            waiting_cts_.erase(w);
            finish(op, Err::ok, fin.length);
        }
        return;
    }
    auto it = waiting_fin_.find(fin.sender_id);
    if (it == waiting_fin_.end()) return;
    FinProxy *px = it->second;  // stays with libfabric until it gives it back
    waiting_fin_.erase(it);
    if (Op *t = px->target) {
        px->target = nullptr;
        finish(t, Err::ok, t->length);
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
    case Proto::cts: on_cts(src, payload); break;
    case Proto::fin: on_fin(payload); break;
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
    case Proto::frag: FTMPI_WARN("bulk message landed in a receive buffer (peer %u)", src); break;
    }
    if (rx_spent_.size() < k_rx_spent_max) rx_spent_.push_back(&rx);
    else post_rx(rx);
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
        if (err != Err::canceled) FTMPI_WARN("%s: receive buffer error: %s", ep.provider().c_str(), text.c_str());
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

}  // namespace ftmpi::transport::ofi
