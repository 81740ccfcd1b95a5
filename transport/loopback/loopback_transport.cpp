#include "transport/loopback/loopback_transport.hpp"

#include <algorithm>
#include <cstring>

namespace ftmpi::transport {

LoopbackTransport::LoopbackTransport(Sink &sink, int size, std::uint32_t stride, std::size_t eager_limit)
    : sink_(sink), stride_(stride), eager_limit_(eager_limit), failed_(static_cast<std::size_t>(size), false) {}

LoopbackTransport::~LoopbackTransport() = default;

void LoopbackTransport::finish(Op *op, Err err, std::size_t bytes) {
    op->kind = Op::Kind::none;
    if (op->done) op->done(op, err, bytes);
}

Posted LoopbackTransport::send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag,
                               std::int32_t source_rank, const void *buf, std::size_t length, SendMode mode, Op *op) {
    const PeerId from = owner(context);
    if (peer >= failed_.size() || failed_[peer] || failed_[from]) return Posted::peer_failed;
    Message m;
    m.uid = uid;
    m.arrival = Arrival{at(peer, context), uid, tag, source_rank, from, length, nullptr, false, 0, RemoteBuffer{}};
    if (mode != SendMode::sync && length <= eager_limit_) {
        const auto *p = static_cast<const std::byte *>(buf);
        m.data.assign(p, p + length);
        queue_.push_back(std::move(m));
        return Posted::complete;
    }
    const std::uint64_t id = next_id_++;
    op->kind = Op::Kind::rndv_send;
    op->peer = peer;
    op->id = id;
    rndv_.push_back(Pending{id, from, peer, uid, context, buf, length, op});
    m.arrival.rendezvous = true;
    m.arrival.sender_id = id;
    queue_.push_back(std::move(m));
    return Posted::pending;
}

LoopbackTransport::Pending *LoopbackTransport::pending(std::uint64_t id) {
    auto it = std::find_if(rndv_.begin(), rndv_.end(), [id](const Pending &p) { return p.id == id; });
    return it == rndv_.end() ? nullptr : &*it;
}

Posted LoopbackTransport::accept(const Arrival &a, void *buf, std::size_t capacity, Op *op) {
    Pending *p = pending(a.sender_id);
    if (p == nullptr || p->gone == Err::peer_failed || failed_[a.source]) {
        if (p != nullptr) rndv_.erase(rndv_.begin() + (p - rndv_.data()));
        return Posted::peer_failed;
    }
    const Pending s = *p;
    rndv_.erase(rndv_.begin() + (p - rndv_.data()));
    if (s.gone != Err::ok) {  // the sender gave the send up: tell the receiver why
        finish(op, s.gone, 0);
        return Posted::pending;
    }
    const std::size_t n = std::min(s.length, capacity);
    if (n > 0) std::memcpy(buf, s.buf, n);
    finish(s.op, Err::ok, s.length);
    if (s.length > capacity) {
        finish(op, Err::truncated, n);
        return Posted::pending;
    }
    return Posted::complete;
}

int LoopbackTransport::poll() {
    int handled = 0;
    for (std::size_t n = queue_.size(); n > 0 && !queue_.empty(); --n) {
        Message m = std::move(queue_.front());
        queue_.pop_front();
        if (!m.arrival.rendezvous) m.arrival.eager_data = m.data.data();
        ++handled;
        (void)sink_.on_arrival(m.arrival);
    }
    return handled;
}

void LoopbackTransport::mark_failed(PeerId peer) {
    if (peer >= failed_.size() || failed_[peer]) return;
    failed_[peer] = true;
    // What was sent to it is lost; what it sent before it failed still arrives.
    std::erase_if(queue_, [&](const Message &m) { return owner(m.arrival.context) == peer; });
    for (std::size_t i = 0; i < rndv_.size();) {
        Pending &p = rndv_[i];
        if (p.to == peer && p.gone == Err::ok) {
            Op *op = p.op;
            rndv_.erase(rndv_.begin() + static_cast<std::ptrdiff_t>(i));
            finish(op, Err::peer_failed, 0);
            continue;
        }
        if (p.from == peer) p.gone = Err::peer_failed;
        ++i;
    }
}

bool LoopbackTransport::is_failed(PeerId peer) const { return peer >= failed_.size() || failed_[peer]; }

void LoopbackTransport::cancel_sends(std::uint64_t uid, std::uint32_t first, std::uint32_t last, Err why) {
    for (Pending &p : rndv_) {
        // [first, last] as the cancelling process numbers its contexts: its own sends only.
        if (p.uid != uid || p.context < first || p.context > last || p.gone != Err::ok) continue;
        p.gone = why;
        Op *op = p.op;
        p.op = nullptr;
        finish(op, why, 0);
    }
}

bool LoopbackTransport::busy() const { return !queue_.empty() || !rndv_.empty(); }

void LoopbackTransport::set_unreachable_hook(std::function<void(PeerId)> hook) { unreachable_ = std::move(hook); }

std::string LoopbackTransport::add_peers(runtime::ProcessManager &, const std::vector<int> &,
                                         const std::vector<int> &) {
    return "the loopback transport has no processes of other jobs";
}

std::string LoopbackTransport::provider_of(PeerId) const { return "loopback"; }

void LoopbackTransport::connect(runtime::ProcessManager &) {}

}  // namespace ftmpi::transport
