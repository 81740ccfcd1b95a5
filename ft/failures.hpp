// The process-wide record of failed peers (spec 004's set F at process level).
//
// Sources: the process manager's events (runtime/events.hpp) and the transport's
// unreachable-peer reports. A peer never leaves the record. Each new failure
// bumps the epoch, so a wait loop notices a change with one relaxed load.
//
// Threading: every call runs on the progress thread.
#pragma once

#include <cstdint>
#include <vector>

namespace ftmpi::transport {
class Transport;
}

namespace ftmpi::ft {

class Failures {
public:
    void attach(transport::Transport *t, int job_size);
    // Ingests pending process-manager events. Cheap when there are none.
    void poll() {
        if (events_waiting()) ingest_events();
    }
    // Records `peer` as failed (idempotent) and fails the transport's operations with it.
    void declare_failed(int peer);
    bool is_failed(int peer) const { return peer >= 0 && peer < static_cast<int>(failed_.size()) && failed_[peer]; }
    std::uint64_t epoch() const { return epoch_; }
    // Peers in the order their failure became known here.
    const std::vector<int> &in_order() const { return order_; }

private:
    static bool events_waiting();
    void ingest_events();

    transport::Transport *transport_ = nullptr;
    std::vector<bool> failed_;
    std::vector<int> order_;
    std::uint64_t epoch_ = 0;
};

Failures &failures();

}  // namespace ftmpi::ft
