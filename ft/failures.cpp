#include "ft/failures.hpp"

#include "runtime/events.hpp"
#include "runtime/log.hpp"
#include "transport/transport.hpp"

namespace ftmpi::ft {

Failures &failures() {
    static Failures instance;
    return instance;
}

void Failures::attach(transport::Transport *t, int job_size) {
    transport_ = t;
    failed_.assign(static_cast<std::size_t>(job_size), false);
    order_.clear();
    if (t != nullptr)
        t->set_unreachable_hook([this](transport::PeerId peer) { declare_failed(static_cast<int>(peer)); });
}

bool Failures::events_waiting() { return runtime::events_pending(); }

void Failures::ingest_events() {
    std::vector<int> ranks;
    runtime::take_terminated(ranks);
    for (int r : ranks) declare_failed(r);
}

void Failures::declare_failed(int peer) {
    if (peer < 0 || peer >= static_cast<int>(failed_.size()) || failed_[peer]) return;
    failed_[peer] = true;
    order_.push_back(peer);
    ++epoch_;
    FTMPI_INFO("rank %d is failed", peer);
    if (transport_ != nullptr) transport_->mark_failed(static_cast<transport::PeerId>(peer));
}

}  // namespace ftmpi::ft
