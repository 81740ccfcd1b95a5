#include "mpi/p2p/matching.hpp"

#include "mpi/p2p/requests.hpp"
#include "mpi/recovery.hpp"

namespace ftmpi::mpi {

MPI_Request MatchQueue::take_posted(int source, int tag) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
        MPI_Request r = *it;
        if (matches(r->peer, r->tag, source, tag & ~ignore_)) {
            posted_.erase(it);
            r->posted = false;
            return r;
        }
    }
    return nullptr;
}

std::unique_ptr<Unexpected> MatchQueue::take_unexpected(int source, int tag) {
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
        if (matches(source, tag, (*it)->source_rank, (*it)->tag & ~ignore_)) {
            auto u = std::move(*it);
            unexpected_.erase(it);
            return u;
        }
    }
    return nullptr;
}

const Unexpected *MatchQueue::peek_unexpected(int source, int tag) const {
    for (const auto &u : unexpected_)
        if (matches(source, tag, u->source_rank, u->tag & ~ignore_)) return u.get();
    return nullptr;
}

bool MatchQueue::remove_posted(MPI_Request r) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
        if (*it == r) {
            posted_.erase(it);
            r->posted = false;
            return true;
        }
    }
    return false;
}

void Engine::on_arrival(const transport::Arrival &a) {
    if (is_ft_context(a.context)) {  // revoke and agreement traffic (mpi/recovery.cpp)
        on_ft_message(a);
        return;
    }
    MatchQueue &q = queue(a.context);
    if (MPI_Request r = q.take_posted(a.source_rank, a.tag)) {
        deliver(r, a);
        return;
    }
    auto u = std::make_unique<Unexpected>();
    u->source_rank = a.source_rank;
    u->tag = a.tag;
    u->source = a.source;
    u->length = a.length;
    u->rendezvous = a.rendezvous;
    u->sender_id = a.sender_id;
    if (!a.rendezvous && a.length > 0) {
        auto p = static_cast<const char *>(a.eager_data);
        u->data.assign(p, p + a.length);
    }
    q.add_unexpected(std::move(u));
}

}  // namespace ftmpi::mpi
