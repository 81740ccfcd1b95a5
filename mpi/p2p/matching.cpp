#include "mpi/p2p/matching.hpp"

#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/recovery.hpp"

namespace ftmpi::mpi {

MPI_Request MatchQueue::take_posted(int source, int tag) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
        MPI_Request r = *it;
        if (matches(r->peer, r->tag, source, tag & ~ignore_)) {
            if (it == posted_.begin()) posted_.pop_front();  // the usual case, and cheaper
            else posted_.erase(it);
            r->posted = false;
            return r;
        }
    }
    return nullptr;
}

std::unique_ptr<Unexpected> MatchQueue::take_unexpected(int source, int tag) {
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it)
        if (matches(source, tag, (*it)->source_rank, (*it)->tag & ~ignore_)) return take_at(it);
    return nullptr;
}

std::unique_ptr<Unexpected> MatchQueue::take_unexpected(const Unexpected *u) {
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it)
        if (it->get() == u) return take_at(it);
    return nullptr;
}

std::unique_ptr<Unexpected> MatchQueue::take_at(std::deque<std::unique_ptr<Unexpected>>::iterator it) {
    auto u = std::move(*it);
    if (it == unexpected_.begin()) unexpected_.pop_front();
    else unexpected_.erase(it);
    return u;
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

std::unique_ptr<Unexpected> Unexpected::of(const transport::Arrival &a) {
    auto u = std::make_unique<Unexpected>();
    u->source_rank = a.source_rank;
    u->tag = a.tag;
    u->source = a.source;
    u->length = a.length;
    u->rendezvous = a.rendezvous;
    u->sender_id = a.sender_id;
    u->remote = a.remote;
    if (!a.rendezvous && a.length > 0) {
        auto p = static_cast<const char *>(a.eager_data);
        u->data.assign(p, p + a.length);
    }
    return u;
}

MatchQueue *Engine::open(std::uint32_t context, std::uint64_t uid) {
    if (context >= open_.size()) {
        open_.resize(context + 1, nullptr);
        closed_uid_.resize(context + 1, 0);
    }
    auto q = std::make_unique<MatchQueue>((context & 1) ? k_coll_poison | k_coll_error : 0, context, uid);
    for (auto it = held_.begin(); it != held_.end();) {
        if (it->context != context) {
            ++it;
            continue;
        }
        if (it->uid == uid) q->add_unexpected(std::move(it->msg));  // in arrival order
        it = held_.erase(it);
    }
    open_[context] = q.get();
    all_.push_back(std::move(q));
    return open_[context];
}

void Engine::close(MatchQueue *q) {
    if (q->closed_) return;
    q->closed_ = true;
    q->unexpected_.clear();
    if (open_[q->context_] == q) {
        open_[q->context_] = nullptr;
        closed_uid_[q->context_] = q->uid_;
    }
}

void Engine::destroy(MatchQueue *q) {
    close(q);
    std::erase_if(all_, [q](const auto &p) { return p.get() == q; });
}

bool Engine::on_arrival(const transport::Arrival &a) {
    if (is_ft_context(a.context)) {  // revoke and agreement traffic (mpi/ulfm/ft_channel.cpp)
        on_ft_message(a);
        return false;
    }
    MatchQueue *q = a.context < open_.size() ? open_[a.context] : nullptr;
    if (q == nullptr || q->uid_ != a.uid) return on_other(a);
    if (q->handler_ != nullptr) {
        q->handler_(q->handler_ctx_, a);
        return false;
    }
    if (MPI_Request r = q->take_posted(a.source_rank, a.tag)) {
        deliver(r, a);
        return true;
    }
    q->add_unexpected(Unexpected::of(a));
    return false;
}

void Engine::set_handler(MatchQueue *q, void (*fn)(void *ctx, const transport::Arrival &a), void *ctx) {
    q->handler_ = fn;
    q->handler_ctx_ = ctx;
    if (fn == nullptr) return;
    std::deque<std::unique_ptr<Unexpected>> early;
    early.swap(q->unexpected_);
    for (const auto &u : early) {
        transport::Arrival a = u->arrival();
        a.context = q->context_;
        a.uid = q->uid_;
        fn(ctx, a);
    }
}

// A message for no open queue of its uid: for a freed communicator's pending
// receive, stale, or early (for a communicator not created here yet).
void Engine::route(std::uint32_t context, void (*fn)(const transport::Arrival &a)) {
    routes_.emplace_back(context, fn);
}

bool Engine::on_other(const transport::Arrival &a) {
    for (const auto &[context, fn] : routes_)
        if (a.context == context) {  // never has a queue
            fn(a);
            return false;
        }
    for (const auto &q : all_) {
        if (!q->closed_ || q->context_ != a.context || q->uid_ != a.uid) continue;
        MPI_Request r = q->take_posted(a.source_rank, a.tag);
        if (r == nullptr) return false;  // nobody can receive it any more
        deliver(r, a);
        return true;
    }
    if (a.context < open_.size() && (open_[a.context] != nullptr || closed_uid_[a.context] == a.uid)) return false;
    held_.push_back({a.context, a.uid, Unexpected::of(a)});
    return false;
}

}  // namespace ftmpi::mpi
