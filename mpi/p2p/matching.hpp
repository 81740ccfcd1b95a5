// Message matching: per context, the posted receives and the unexpected
// messages, each in MPI order (non-overtaking).
//
// The Engine is the transport's Sink: an arriving message either completes
// the first matching posted receive or is queued as unexpected (eager data
// copied, rendezvous data left at the sender until a receive accepts it).
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "mpi/objects.hpp"
#include "mpi/recovery.hpp"
#include "transport/transport.hpp"

namespace ftmpi::mpi {

struct Unexpected {
    int source_rank;
    int tag;
    transport::PeerId source;
    std::size_t length;
    bool rendezvous;
    std::uint64_t sender_id;
    std::vector<char> data;  // eager payload

    transport::Arrival arrival() const {
        return {0, tag, source_rank, source, length, data.data(), rendezvous, sender_id};
    }
};

inline bool matches(int want_source, int want_tag, int source, int tag) {
    return (want_source == MPI_ANY_SOURCE || want_source == source) && (want_tag == MPI_ANY_TAG || want_tag == tag);
}

// Collective traffic (the odd, internal contexts): a sender that has seen a
// failure during the operation sets this tag bit on its remaining messages,
// so the error reaches every rank downstream of it (mpi/coll). Matching
// ignores the bit there; the receiver reads it from the status.
inline constexpr std::int32_t k_coll_poison = 1 << 30;
// Tags with this bit on a collective context carry the leaders' exchange of
// MPI_Intercomm_create over peer_comm, not a collective of that communicator.
inline constexpr std::int32_t k_cross_tag = 1 << 29;

// Whether request r is collective traffic of its communicator (an internal
// collective context, not the leaders' exchange): the 2011 API's collective
// activity applies to it.
inline bool coll_gated(const ftmpi_request_s *r) {
    return (r->context & 1) != 0 && !is_ft_context(r->context) && (r->tag & k_cross_tag) == 0;
}

class MatchQueue {
public:
    explicit MatchQueue(std::int32_t ignored_tag_bits = 0) : ignore_(ignored_tag_bits) {}
    // First posted receive that matches (source, tag), removed from the queue.
    MPI_Request take_posted(int source, int tag);
    // First unexpected message that matches, removed (take) or left (peek).
    std::unique_ptr<Unexpected> take_unexpected(int source, int tag);
    const Unexpected *peek_unexpected(int source, int tag) const;
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
    std::deque<MPI_Request> posted_;
    std::deque<std::unique_ptr<Unexpected>> unexpected_;
    std::int32_t ignore_;  // tag bits matching ignores (k_coll_poison on collective contexts)
};

class Engine final : public transport::Sink {
public:
    // The queue of a context; created on first use (a message may arrive for a
    // communicator this process has not created yet).
    MatchQueue &queue(std::uint32_t context) {
        if (context >= queues_.size()) queues_.resize(context + 1);
        if (!queues_[context]) queues_[context] = std::make_unique<MatchQueue>((context & 1) ? k_coll_poison : 0);
        return *queues_[context];
    }
    void on_arrival(const transport::Arrival &a) override;
    std::vector<std::unique_ptr<MatchQueue>> &queues() { return queues_; }

private:
    std::vector<std::unique_ptr<MatchQueue>> queues_;
};

// Hands a matched message to receive request `r` (copy or rendezvous pull).
void deliver(MPI_Request r, const transport::Arrival &a);

}  // namespace ftmpi::mpi
