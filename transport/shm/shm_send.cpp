// The shared-memory fast path, the sender's side: eager records, rendezvous
// descriptors and streams, backlogs, and sends given up.
#include "transport/shm/shm_transport.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/test_hooks.hpp"
#include "transport/refused.hpp"

namespace ftmpi::transport::shm {

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
    if (goes_eager(mode, length, p.eager, p.eager_coll)) {
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
    if (p.cma != Peer::Cma::no) {
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

Posted ShmTransport::send_to_self(Op *op, std::size_t length, SendMode mode) {
    const Match m = unpack_match(op->header.match);
    Arrival a{m.context, op->header.uid, m.tag, source_rank(op->data), self_, length, op->send_buf, false, 0, {}};
    if (goes_eager(mode, length, eager_limit_, coll_eager_limit_)) {
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
        if (!pulled_ && d.next.load(std::memory_order_relaxed) < d.length)
            ok = copy_chunks(d, p.pid, false, const_cast<char *>(static_cast<const char *>(op->send_buf)),
                             chunk_for(d.length));
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

}  // namespace ftmpi::transport::shm
