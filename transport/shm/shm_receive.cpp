// The shared-memory fast path, the receiver's side and polling: the rings,
// records, claims of descriptors, streamed receives.
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

Posted ShmTransport::accept(const Arrival &a, void *buf, std::size_t capacity, Op *op) {
    const std::size_t bytes = std::min(a.length, capacity);
    if (a.source == self_) {
        auto it =
            std::find_if(sends_.begin(), sends_.end(), [&](Op *s) { return s->peer == self_ && s->id == a.sender_id; });
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
    // With large sends of its own in flight, this process's peers are busy
    // copying what it sends them, and its sender will likely leave every
    // chunk here (progress_sends): one system call for the whole message.
    // So does a receive whose data is read next, up to k_read_next_whole.
    const bool whole = !sends_.empty() || (op->read_next && bytes <= k_read_next_whole);
    const std::uint64_t chunk = whole ? bytes : chunk_for(bytes);
    const bool ok = copy_chunks(d, p.pid, true, static_cast<char *>(buf), chunk);
    pulled_ = true;
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
bool ShmTransport::copy_chunks(Desc &d, pid_t pid, bool reader, char *local, std::uint64_t chunk) {
    const std::uint64_t remote = reader ? d.src : d.dst;
    const std::uint64_t length = d.length;
    for (;;) {
        const std::uint64_t off = d.next.fetch_add(chunk, std::memory_order_relaxed);
        if (off >= length) return true;
        if (!reader) runtime::test_kill_point("shm.push");  // tests: a sender dies with a chunk claimed, not copied
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, length - off));
        iovec l{local + off, n}, r{reinterpret_cast<void *>(remote + off), n};
        const ssize_t got =
            reader ? ::process_vm_readv(pid, &l, 1, &r, 1, 0) : ::process_vm_writev(pid, &l, 1, &r, 1, 0);
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
    runtime::test_kill_point("shm.cts");  // tests: a receiver dies with its sender streaming to it
    return result;
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
        return sink_.on_arrival(Arrival{m.context, h.uid, m.tag, h.rank, src, rts.length, nullptr, true, rts.sender_id,
                                        RemoteBuffer{rts.desc, rts.gen, static_cast<std::uint64_t>(p.pid)}});
    }
    case Proto::cts: {
        CtsPayload cts;
        std::memcpy(&cts, payload, sizeof cts);
        auto it =
            std::find_if(sends_.begin(), sends_.end(), [&](Op *s) { return s->peer == src && s->id == cts.sender_id; });
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
        if (f.offset + n <= op->length)
            std::memcpy(static_cast<char *>(op->recv_buf) + f.offset, payload + sizeof f, n);
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
    pulled_ = false;
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

}  // namespace ftmpi::transport::shm
