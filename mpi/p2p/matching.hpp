// Message matching: per communicator and context, the posted receives and the
// unexpected messages, each in MPI order (non-overtaking).
//
// The Engine is the transport's Sink: an arriving message either completes
// the first matching posted receive or is queued as unexpected (eager data
// copied, rendezvous data left at the sender until a receive accepts it).
//
// A message reaches only the queue of the communicator it was sent on: every
// message carries its communicator's uid (transport::Header), and a queue
// takes only its own uid. So a message of a revoked or freed communicator can
// never match on the next communicator that takes its context id, however late
// it arrives.
#pragma once

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "mpi/objects.hpp"
#include "mpi/p2p/internal_tag.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "transport/transport.hpp"

namespace ftmpi::mpi {

struct Unexpected {
    int source_rank;
    int tag;
    transport::PeerId source;
    std::size_t length;
    bool rendezvous;
    std::uint64_t sender_id;
    transport::RemoteBuffer remote;
    std::vector<char> data;  // eager payload

    transport::Arrival arrival() const {
        return {0, 0, tag, source_rank, source, length, data.data(), rendezvous, sender_id, remote};
    }
    static std::unique_ptr<Unexpected> of(const transport::Arrival &a);
};

inline bool matches(int want_source, int want_tag, int source, int tag) {
    return (want_source == MPI_ANY_SOURCE || want_source == source) && (want_tag == MPI_ANY_TAG || want_tag == tag);
}

// Collective traffic (the odd, internal contexts; tags: internal_tag.hpp): a
// sender that has seen a failure during the operation sets k_coll_poison on
// its remaining messages, so the error reaches every rank downstream of it
// (mpi/coll), and k_coll_error too when the error was not a process failure
// (a count that differs between members truncated a message, say). Matching
// ignores both there; the receiver reads them from the status.

// The tag that carries `err`, the sender's first error in the operation, on.
inline int poisoned_tag(int tag, int err) {
    if (err == MPI_SUCCESS) return tag;
    const bool failure = err == MPI_ERR_PROC_FAILED || err == MPIX_ERR_PROC_FAILED_PENDING || err == MPI_ERR_REVOKED;
    return tag | k_coll_poison | (failure ? 0 : k_coll_error);
}
// The error a received collective message carries (MPI_SUCCESS: none): a
// failure upstream, or another error there, never reported as a failure.
inline int poison_of(int tag) {
    if ((tag & k_coll_poison) == 0) return MPI_SUCCESS;
    return (tag & k_coll_error) != 0 ? MPI_ERR_OTHER : MPI_ERR_PROC_FAILED;
}
// k_cross_tag on a collective context: the leaders' exchange of
// MPI_Intercomm_create over peer_comm, not a collective of that communicator.

// Whether request r is collective traffic of its communicator (an internal
// collective context, not the leaders' exchange): the 2011 API's collective
// activity applies to it.
inline bool coll_gated(const ftmpi_request_s *r) {
    return (r->context & 1) != 0 && !is_ft_context(r->context) && (r->tag & k_cross_tag) == 0;
}

class MatchQueue {
public:
    explicit MatchQueue(std::int32_t ignored_tag_bits = 0, std::uint32_t context = 0, std::uint64_t uid = 0)
        : ignore_(ignored_tag_bits), context_(context), uid_(uid) {}
    std::uint32_t context() const { return context_; }
    std::uint64_t uid() const { return uid_; }
    // Closed: its communicator was freed; only its pending receives still match.
    bool closed() const { return closed_; }
    // First posted receive that matches (source, tag), removed from the queue.
    MPI_Request take_posted(int source, int tag);
    // First unexpected message that matches, removed (take) or left (peek).
    std::unique_ptr<Unexpected> take_unexpected(int source, int tag);
    const Unexpected *peek_unexpected(int source, int tag) const;
    // The message `u` (from peek_unexpected, the queue unchanged since),
    // removed: a matched probe takes exactly the message it found.
    std::unique_ptr<Unexpected> take_unexpected(const Unexpected *u);
    void post(MPI_Request r) { posted_.push_back(r); }
    bool remove_posted(MPI_Request r);
    void add_unexpected(std::unique_ptr<Unexpected> u) { unexpected_.push_back(std::move(u)); }
    std::deque<MPI_Request> &posted() { return posted_; }
    // Drops the unexpected messages whose tag satisfies `stale`.
    template <typename Pred>
    void drop_unexpected(Pred stale) {
        std::erase_if(unexpected_, [&](const auto &u) { return stale(u->tag); });
    }

private:
    friend class Engine;
    std::unique_ptr<Unexpected> take_at(std::deque<std::unique_ptr<Unexpected>>::iterator it);
    std::deque<MPI_Request> posted_;
    std::deque<std::unique_ptr<Unexpected>> unexpected_;
    // A queue with a handler (a window's, mpi/rma) matches nothing: every
    // message goes to the handler as it arrives.
    void (*handler_)(void *ctx, const transport::Arrival &a) = nullptr;
    void *handler_ctx_ = nullptr;
    std::int32_t ignore_;  // tag bits matching ignores (k_coll_poison on collective contexts)
    std::uint32_t context_;
    std::uint64_t uid_;  // the communicator's (ftmpi_comm_s::uid)
    bool closed_ = false;
};

class Engine final : public transport::Sink {
public:
    // The queue of `context` for the communicator `uid`, at its creation. The
    // messages that arrived for it before are its first unexpected ones;
    // whatever else arrived on that context is stale (another communicator's)
    // and dropped. A process has one communicator per context at a time, and
    // a member of a later communicator on this context can only have made it
    // after this process freed the earlier one: so while a queue is open, a
    // message on its context with another uid is always stale.
    MatchQueue *open(std::uint32_t context, std::uint64_t uid);
    // MPI_Comm_free: the context is free for the next communicator. The queue
    // drops its unexpected messages; its posted receives (requests the user
    // still holds) keep matching messages of its uid.
    void close(MatchQueue *q);
    // The communicator object is gone (no request refers to it).
    void destroy(MatchQueue *q);
    // Sends every message of q to `fn` from now on, first those already
    // unexpected there, in arrival order; null: back to matching.
    void set_handler(MatchQueue *q, void (*fn)(void *ctx, const transport::Arrival &a), void *ctx);
    // Every message on `context`, which never has a queue (a context the
    // library reserves for traffic between jobs, such as connection dials),
    // goes to `fn` (MPI_Init routes them).
    void route(std::uint32_t context, void (*fn)(const transport::Arrival &a));
    bool on_arrival(const transport::Arrival &a) override;
    // Every queue, open or closed.
    const std::vector<std::unique_ptr<MatchQueue>> &queues() const { return all_; }
    // Messages kept for a communicator not created here yet.
    std::size_t held() const { return held_.size(); }

private:
    bool on_other(const transport::Arrival &a);
    struct Held {
        std::uint32_t context;
        std::uint64_t uid;
        std::unique_ptr<Unexpected> msg;
    };
    std::vector<MatchQueue *> open_;         // by context
    std::vector<std::uint64_t> closed_uid_;  // by context: the uid of the last queue closed there
    std::vector<std::unique_ptr<MatchQueue>> all_;
    std::deque<Held> held_;
    std::vector<std::pair<std::uint32_t, void (*)(const transport::Arrival &)>> routes_;
};

// The queue a request of its communicator matches in (point-to-point or
// collective context).
inline MatchQueue &queue_of(MPI_Request r) {
    return *(r->context == r->comm->context ? r->comm->queue : r->comm->coll_queue);
}

// Hands a matched message to receive request `r` (copy or rendezvous pull).
void deliver(MPI_Request r, const transport::Arrival &a);

}  // namespace ftmpi::mpi
