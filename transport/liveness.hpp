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
#include <string>

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

}  // namespace ftmpi::transport
