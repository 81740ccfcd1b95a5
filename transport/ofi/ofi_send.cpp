// The libfabric transport, the sender's side: eager and rendezvous sends,
// control messages, and posts that libfabric deferred (-FI_EAGAIN).
#include "transport/ofi/ofi_transport.hpp"

namespace ftmpi::transport::ofi {

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

Posted OfiTransport::send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag,
                          std::int32_t source_rank, const void *buf, std::size_t length, SendMode mode, Op *op) {
    if (peer == self_) return send_to_self(context, uid, tag, source_rank, buf, length, mode, op);
    PeerState &p = peers_[peer];
    if (p.failed) return Posted::peer_failed;
    const std::uint64_t data = pack_source(self_, source_rank);
    // Over shm only what libfabric injects goes eagerly: its larger sends
    // complete in order through one response queue, and a response a dead
    // peer owes holds back every later completion of this process for ever.
    if (mode != SendMode::sync && length <= p.ep->eager_limit() &&
        (!p.fin || length + k_wire_header <= p.ep->inject_size())) {
        const Header header{pack_match(Proto::eager, context, tag), uid};
        if (injectable(p, length)) {
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

bool OfiTransport::inject(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag,
                          std::int32_t source_rank, const void *buf, std::size_t length) {
    if (peer == self_ || peer >= peers_.size()) return false;
    const PeerState &p = peers_[peer];
    // Anything but a clean inject (a full queue, an error) goes through send(), which handles it.
    return !p.failed && p.ep != nullptr && injectable(p, length) &&
           p.ep->inject_msg(Header{pack_match(Proto::eager, context, tag), uid}, buf, length, p.addr,
                            pack_source(self_, source_rank)) == 0;
}

Posted OfiTransport::send_to_self(std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                                  const void *buf, std::size_t length, SendMode mode, Op *op) {
    Arrival a{context, uid, tag, source_rank, self_, length, buf, false, 0, {}};
    if (mode != SendMode::sync && length <= eager_limit_) {
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
    case Deferred::What::gate: return d.peer < said_hello_.size() && said_hello_[d.peer];
    case Deferred::What::op_send: rc = post_send_now(d.op); break;
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

}  // namespace ftmpi::transport::ofi
