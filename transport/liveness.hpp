// Liveness links: a TCP connection from each process to the one it observes
// in the failure detector's ring. The kernel closes it the moment the
// observed process dies, SIGKILL included, so the observer learns of the
// death within microseconds, with no launcher and no heartbeat timeout. A
// process that leaves normally writes a goodbye byte on every link to it
// before it closes, so its watchers never take its exit for a failure.
// A stopped process, or one on a node that dropped off the network, keeps
// its links open: the heartbeat finds those.
//
// Threading: one thread of its own (poll on the sockets and an eventfd); the
// public calls are thread-safe. on_lost runs on that thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "transport/control.hpp"
#include "transport/transport.hpp"

namespace ftmpi::runtime {
class ProcessManager;
}

namespace ftmpi::transport {

class LivenessLinks {
public:
    // Listens on an ephemeral TCP port and publishes it (pm.put) with
    // `address`, the IPv4 address peers on other nodes reach this process at
    // (empty: this host's first non-loopback IPv4 address). Peers on this node
    // connect over loopback. Throws std::runtime_error when no socket can be had.
    LivenessLinks(runtime::ProcessManager &pm, const std::string &address);
    ~LivenessLinks();
    LivenessLinks(const LivenessLinks &) = delete;
    LivenessLinks &operator=(const LivenessLinks &) = delete;

    // After the process manager's exchange: reads the peers' addresses and
    // starts the thread. `on_lost(peer, certain)`: the link to the watched
    // peer broke without a goodbye. certain: closed in order, as the kernel
    // closes a dead process's links; otherwise reset, as a link not yet
    // accepted is when its process ends, whether it died or left normally.
    void connect(runtime::ProcessManager &pm, std::function<void(PeerId, bool certain)> on_lost);
    // Follows `peer` from now on (the previous one is let go); -1: none. A peer
    // that cannot be reached is left to the heartbeat.
    void watch(int peer);
    // This process leaves normally: everyone watching it reads a goodbye.
    void leaving();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The liveness half every control channel shares: the links follow the
// watched peer, and the deaths they see wait in take_lost().
class ChannelWithLinks : public ControlChannel {
public:
    void watch(int peer) override {
        if (live_) live_->watch(peer);
    }
    std::vector<Lost> take_lost() override {
        std::lock_guard<std::mutex> lock(lost_mu_);
        return std::exchange(lost_, {});
    }
    void leaving() override {
        if (live_) live_->leaving();
    }

protected:
    // Before the exchange (FTMPI_FT_LINKS): listens and publishes; without a
    // socket the heartbeat alone finds deaths (logged).
    void open_links(runtime::ProcessManager &pm, const std::string &address);
    // After the exchange: `signal` wakes the channel's wait() when a death is seen.
    void start_links(runtime::ProcessManager &pm, std::function<void()> signal);
    // The derived channel's destructor calls it first: the links' thread
    // signals the channel until it is gone.
    void stop_links() { live_.reset(); }

private:
    std::mutex lost_mu_;
    std::vector<Lost> lost_;  // from the links' thread
    std::unique_ptr<LivenessLinks> live_;
};

}  // namespace ftmpi::transport
