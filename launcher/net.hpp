// A vertex of the daemons' tree on the network (ftmpirun across nodes): its
// listening socket, its links (link.hpp) to tree neighbours, and routing.
//
// Frames addressed to another vertex are passed on toward it by the tree
// (tree.hpp); floods (wire::kFlood) go to every tree neighbour but the one
// they came from, and are delivered here too. A link that arrives before
// it is known (accepted) delivers its hello or attach to the owner, and
// holds what comes behind it until the owner names its vertex (identify):
// then it is passed on or delivered as on any link. Every link is watched: a vertex sends
// a heartbeat on a link that has been quiet for a period, and a link silent
// for the timeout is dropped as lost. Main thread only; no blocking call
// but connect_first (start-up).
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "link.hpp"
#include "tree.hpp"
#include "wire.hpp"

namespace ftmpi::launcher {

// The tree's heartbeat period and silence timeout (FTMPI_LAUNCH_PERIOD_MS,
// FTMPI_LAUNCH_TIMEOUT_MS, read once).
std::chrono::milliseconds launch_period();
std::chrono::milliseconds launch_silence();

class Net {
public:
    using Clock = std::chrono::steady_clock;
    struct Delivery {
        wire::Header header;
        std::vector<std::uint8_t> payload;
        Link *via;  // the link it came on (valid until the next on_poll)
    };

    // `self`: this vertex (a daemon that does not know its vertex yet:
    // wire::kUnassigned as an int, then assign()).
    Net(std::string launch_key, int self, Tree tree);
    void assign(int self, Tree tree);
    ~Net();

    // Listens on every address (an ephemeral port). Throws LauncherError.
    void listen();
    // This node's "a.b.c.d:port": non-loopback IPv4 (first the one of the
    // interface toward the host `toward`, when it resolves), then 127.0.0.1.
    std::vector<std::string> addresses(const std::string &toward = "") const;
    // Connects to the first of `addrs` that answers within `timeout` each,
    // as a link to vertex `peer`; null (with `why`) when none does.
    Link *connect_first(const std::vector<std::string> &addrs, int peer, std::chrono::milliseconds timeout,
                        std::string &why);

    // Poll integration: add_fds appends the listener and every link; then
    // on_poll(the same vector) accepts, reads and writes, routes what passes
    // through, and returns what is for this vertex. Vertices whose links
    // broke (or went silent, see tick) go to `lost`, with why.
    void add_fds(std::vector<pollfd> &pfds);
    // Frames for this vertex wait (they came behind an attach): poll without blocking.
    bool ready() const { return !late_.empty(); }
    void on_poll(const std::vector<pollfd> &pfds, std::vector<Delivery> &mine,
                 std::vector<std::pair<int, std::string>> &lost);
    // Heartbeats and silence: sends one on links quiet for `period`, drops
    // links silent for `timeout` (into `lost`). Returns when to call again.
    Clock::time_point tick(Clock::time_point now, std::chrono::milliseconds period, std::chrono::milliseconds timeout,
                           std::vector<std::pair<int, std::string>> &lost);

    // Names the vertex at the other end of an accepted link (it replaces a
    // link that vertex had).
    void identify(Link *l, int vertex);
    // Drops a link; an identified one's vertex is reported lost (at the next on_poll or tick).
    void drop(Link *l, const std::string &why);
    Link *link_to(int vertex) const;
    // The interface of this node that the link to `vertex` goes out by ("": none).
    std::string iface_to(int vertex) const;

    // Sends to vertex `dst` along the tree; false when there is no way now.
    bool send(std::uint32_t dst, wire::Type t, std::span<const std::uint8_t> payload);
    bool send(std::uint32_t dst, wire::Type t, const wire::Writer &w) { return send(dst, t, w.data()); }
    // To every vertex (and not here).
    void flood(wire::Type t, std::span<const std::uint8_t> payload);
    void flood(wire::Type t, const wire::Writer &w) { flood(t, w.data()); }

    int self() const { return self_; }
    Tree &tree() { return tree_; }
    const Tree &tree() const { return tree_; }
    // Bytes waiting in every link's queue (for a bounded drain at the end).
    std::size_t backlog() const;
    // Writes what the links hold, for at most `limit` (the end of a job).
    void flush(std::chrono::milliseconds limit);

private:
    void route(Delivery &&d, std::vector<Delivery> &mine);
    void forward(const wire::Header &h, const std::vector<std::uint8_t> &payload, int hop);
    void accept_all();
    void take_lost(std::vector<std::pair<int, std::string>> &lost);

    std::string key_;
    int self_;
    Tree tree_;
    int listen_fd_ = -1;
    int port_ = 0;
    std::map<int, std::unique_ptr<Link>> links_;     // by vertex
    std::vector<std::unique_ptr<Link>> unknown_;     // accepted, not identified yet
    std::vector<std::unique_ptr<Link>> dead_;        // dropped during this on_poll, freed at the next
    std::vector<Link *> polled_;                     // add_fds's links, in order, after the listener
    std::size_t first_ = 0;                          // where add_fds put the first of ours
    std::vector<std::pair<int, std::string>> lost_;  // identified links dropped, not reported yet
    std::map<Link *, std::vector<Delivery>> held_;   // frames behind a hello or attach, before identify
    std::vector<Delivery> late_;                     // of those, ours: delivered by the next on_poll
};

}  // namespace ftmpi::launcher
