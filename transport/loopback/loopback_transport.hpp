// A transport between processes that live in one address space: the job's
// `size` processes are simulated by one real process, for tests of what sits
// above the transport (matching, collective schedules, the ULFM adapters)
// without forking.
//
// The simulated processes share one Sink (one MPI engine), so their
// communicators must not share contexts: process p's copy of a communicator
// uses context `c + p * stride`, where c (< stride) is the context it would
// have in a real job. A send on context `c + p * stride` therefore comes from
// process p, and arrives at process q on context `c + q * stride`.
//
// Messages are delivered by poll(), one pass over what was queued before it
// started, in posting order (per pair: non-overtaking). Small standard-mode
// sends are eager (copied at the send); synchronous and large sends are
// rendezvous: the arrival is announced, and accept() copies straight from the
// sender's buffer and completes both sides. Failures follow the contract of
// transport.hpp: mark_failed completes every pending operation with the
// peer, and cancel_sends finishes the rendezvous sends not yet accepted.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "transport/transport.hpp"

namespace ftmpi::transport {

class LoopbackTransport final : public Transport {
public:
    // Sends of more than `eager_limit` bytes are rendezvous.
    LoopbackTransport(Sink &sink, int size, std::uint32_t stride, std::size_t eager_limit = 4096);
    ~LoopbackTransport() override;

    Posted send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag, std::int32_t source_rank,
                const void *buf, std::size_t length, SendMode mode, Op *op) override;
    Posted accept(const Arrival &a, void *buf, std::size_t capacity, Op *op) override;
    int poll() override;
    void mark_failed(PeerId peer) override;
    bool is_failed(PeerId peer) const override;
    void cancel_sends(std::uint64_t uid, std::uint32_t first, std::uint32_t last, Err why) override;
    bool busy() const override;
    void set_unreachable_hook(std::function<void(PeerId)> hook) override;
    std::string add_peers(runtime::ProcessManager &pm, const std::vector<int> &ids,
                          const std::vector<int> &bases) override;
    std::string provider_of(PeerId peer) const override;
    void connect(runtime::ProcessManager &pm) override;

    // The simulated process that owns `context`, and that context as
    // process `peer` has it.
    PeerId owner(std::uint32_t context) const { return context / stride_; }
    std::uint32_t at(PeerId peer, std::uint32_t context) const { return context % stride_ + peer * stride_; }
    // Messages sent and not yet delivered.
    std::size_t queued() const { return queue_.size(); }

private:
    struct Message {
        Arrival arrival;
        std::vector<std::byte> data;  // eager payload
        Op *send_op = nullptr;        // rendezvous: the sender's operation until accepted
        std::uint64_t uid = 0;
    };
    struct Pending {  // a rendezvous send announced and not yet accepted
        std::uint64_t id;
        PeerId from, to;
        std::uint64_t uid;
        std::uint32_t context;  // the sender's
        const void *buf;
        std::size_t length;
        Op *op;
        Err gone = Err::ok;  // set when the send was given up (cancel_sends, mark_failed)
    };
    Pending *pending(std::uint64_t id);
    void finish(Op *op, Err err, std::size_t bytes);

    Sink &sink_;
    std::uint32_t stride_;
    std::size_t eager_limit_;
    std::vector<bool> failed_;
    std::deque<Message> queue_;
    std::vector<Pending> rndv_;
    std::uint64_t next_id_ = 1;
    std::function<void(PeerId)> unreachable_;
};

}  // namespace ftmpi::transport
