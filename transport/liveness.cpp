#include "transport/liveness.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/service_thread.hpp"

namespace ftmpi::transport {

// What a process publishes: where its listener is. (Outside the anonymous
// namespace, since LivenessLinks::Impl holds a vector of it.)
struct LivenessPublished {
    std::uint32_t ip;    // network order; 0: none
    std::uint16_t port;  // network order
    std::uint16_t reserved;
};

namespace {

const char *const k_live_key = "ftmpi.live";
constexpr char k_goodbye = 'B';

// This host's first IPv4 address that is not loopback (network order), or 0.
std::uint32_t first_host_address() {
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return 0;
    std::uint32_t out = 0;
    for (ifaddrs *i = list; i != nullptr && out == 0; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
        const auto *in = reinterpret_cast<const sockaddr_in *>(i->ifa_addr);
        if ((ntohl(in->sin_addr.s_addr) >> 24) != 127) out = in->sin_addr.s_addr;
    }
    ::freeifaddrs(list);
    return out;
}

}  // namespace

struct LivenessLinks::Impl {
    int listener = -1;
    int event = -1;  // wakes the thread: a new peer to watch, or stop
    std::vector<LivenessPublished> peers;
    std::function<void(PeerId, bool)> on_lost;
    std::thread thread;
    std::atomic<bool> stopping{false};

    std::mutex mu;  // guards wanted, accepted and left
    int wanted = -1;
    std::vector<int> accepted;  // links of the processes watching this one
    bool left = false;          // leaving() ran: new watchers get a goodbye at once

    // Thread-owned. `attempted`: the last peer a link was tried to; a link that
    // could not be made or has ended is not tried again until another peer
    // is wanted in between.
    int attempted = -1, watched = -1, fd = -1;
    bool connecting = false;

    ~Impl() {
        stopping.store(true);
        kick();
        if (thread.joinable()) thread.join();
        for (int a : accepted) ::close(a);
        if (fd >= 0) ::close(fd);
        if (listener >= 0) ::close(listener);
        if (event >= 0) ::close(event);
    }

    void kick() {
        const std::uint64_t one = 1;
        if (event >= 0 && ::write(event, &one, sizeof one) < 0) FTMPI_DEBUG("liveness: eventfd write failed");
    }

    void drop_link() {
        if (fd >= 0) ::close(fd);
        fd = -1;
        watched = -1;
        connecting = false;
    }

    // Starts a non-blocking connect to `peer`, at the one address its
    // listener is bound to.
    void start_link(int peer) {
        const LivenessPublished &p = peers[static_cast<std::size_t>(peer)];
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = p.port;
        to.sin_addr.s_addr = p.ip;
        if (p.port == 0 || to.sin_addr.s_addr == 0) return;  // unreachable this way: the heartbeat's
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) return;
        watched = peer;
        if (::connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to) == 0) return;
        if (errno == EINPROGRESS) {
            connecting = true;
            return;
        }
        connect_failed(errno);
    }

    // No link to the watched peer. Refused: its listener is gone, so its
    // process ended (dead, or leaving normally): as uncertain as a reset.
    // Anything else (unreachable, time-out) is no evidence: the heartbeat's.
    void connect_failed(int err) {
        const int peer = watched;
        drop_link();
        if (err == ECONNREFUSED && on_lost) on_lost(static_cast<PeerId>(peer), false);
    }

    // The watched link has something: the end of the connect, a goodbye, or its end.
    void on_link() {
        if (connecting) {
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            connecting = false;
            if (err != 0) connect_failed(err);
            return;
        }
        char c = 0;
        const ssize_t n = ::recv(fd, &c, 1, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        const int peer = watched;
        drop_link();
        if (n == 1 && c == k_goodbye) return;  // left normally
        // Certain evidence of a death is an orderly close (FIN) without a
        // goodbye: the kernel closes a dead process's accepted links that way
        // (they carry no data towards it). A reset is what a link still in
        // the listen backlog gets when its process ends, dead or leaving.
        FTMPI_DEBUG("liveness: the link to rank %d %s", peer, n == 0 ? "closed" : "was reset");
        if (on_lost) on_lost(static_cast<PeerId>(peer), n == 0);
    }

    void accept_all() {  // with mu held
        for (;;) {
            const int a = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (a < 0) return;
            if (left && ::send(a, &k_goodbye, 1, MSG_NOSIGNAL) < 0) FTMPI_DEBUG("liveness: goodbye not sent");
            accepted.push_back(a);
        }
    }

    void run() {
        runtime::become_service_thread("ftmpi-liveness");
        while (!stopping.load()) {
            {
                std::lock_guard<std::mutex> lock(mu);
                if (wanted != attempted) {
                    drop_link();
                    attempted = wanted;
                    if (wanted >= 0) start_link(wanted);
                }
            }
            std::vector<pollfd> fds{{event, POLLIN, 0}, {listener, POLLIN, 0}};
            if (fd >= 0) fds.push_back({fd, static_cast<short>(connecting ? POLLOUT : POLLIN), 0});
            std::vector<int> links;
            {
                std::lock_guard<std::mutex> lock(mu);
                links = accepted;
            }
            for (int a : links) fds.push_back({a, POLLIN, 0});
            if (::poll(fds.data(), fds.size(), -1) < 0) {
                if (errno == EINTR) continue;
                FTMPI_WARN("liveness: poll failed: %s", std::strerror(errno));
                return;
            }
            if (fds[0].revents) {
                std::uint64_t v;
                if (::read(event, &v, sizeof v) < 0) FTMPI_DEBUG("liveness: eventfd read failed");
            }
            std::size_t at = 2;
            if (fd >= 0) {
                if (fds[at].revents) on_link();
                ++at;
            }
            std::lock_guard<std::mutex> lock(mu);
            if (fds[1].revents) accept_all();
            for (; at < fds.size(); ++at) {  // a watcher went (died, left, or moved on): let its link go
                if (!fds[at].revents) continue;
                char c;
                const ssize_t n = ::recv(fds[at].fd, &c, 1, MSG_DONTWAIT);
                if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) continue;
                ::close(fds[at].fd);
                accepted.erase(std::remove(accepted.begin(), accepted.end(), fds[at].fd), accepted.end());
            }
        }
    }
};

LivenessLinks::LivenessLinks(runtime::ProcessManager &pm, const std::string &address)
    : impl_(std::make_unique<Impl>()) {
    Impl &m = *impl_;
    m.listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    m.event = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m.listener < 0 || m.event < 0) throw std::runtime_error(std::string("liveness socket: ") + std::strerror(errno));
    // The listener is bound to one address only: loopback when the whole job
    // is on this node, else the interface the job's control endpoint uses
    // (or, without one, this host's first non-loopback address).
    sockaddr_in here{};
    here.sin_family = AF_INET;
    in_addr ip{};
    if (pm.job().local_peers.size() == static_cast<std::size_t>(pm.job().size)) here.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (!address.empty() && ::inet_pton(AF_INET, address.c_str(), &ip) == 1 && ip.s_addr != 0) here.sin_addr = ip;
    else here.sin_addr.s_addr = first_host_address();
    if (here.sin_addr.s_addr == 0) throw std::runtime_error("liveness listener: no address of this host to bind");
    socklen_t len = sizeof here;
    if (::bind(m.listener, reinterpret_cast<sockaddr *>(&here), sizeof here) != 0 || ::listen(m.listener, 64) != 0 ||
        ::getsockname(m.listener, reinterpret_cast<sockaddr *>(&here), &len) != 0)
        throw std::runtime_error(std::string("liveness listener: ") + std::strerror(errno));
    const LivenessPublished me{here.sin_addr.s_addr, here.sin_port, 0};
    pm.put(k_live_key, &me, sizeof me);
}

LivenessLinks::~LivenessLinks() = default;

void LivenessLinks::connect(runtime::ProcessManager &pm, std::function<void(PeerId, bool)> on_lost) {
    Impl &m = *impl_;
    const int n = pm.job().size;
    m.peers.assign(static_cast<std::size_t>(n), LivenessPublished{0, 0, 0});
    for (int r = 0; r < n; ++r) {
        const auto blob = pm.get(r, k_live_key);
        if (blob.size() == sizeof(LivenessPublished))
            std::memcpy(&m.peers[static_cast<std::size_t>(r)], blob.data(), blob.size());
    }
    m.on_lost = std::move(on_lost);
    m.thread = std::thread([&m] { m.run(); });
}

void LivenessLinks::watch(int peer) {
    {
        std::lock_guard<std::mutex> lock(impl_->mu);
        impl_->wanted = peer;
    }
    impl_->kick();
}

void LivenessLinks::leaving() {
    Impl &m = *impl_;
    std::lock_guard<std::mutex> lock(m.mu);
    m.left = true;
    m.accept_all();  // connections still in the backlog get theirs too
    for (int a : m.accepted)
        if (::send(a, &k_goodbye, 1, MSG_NOSIGNAL) < 0) FTMPI_DEBUG("liveness: goodbye not sent");
}

void ChannelWithLinks::open_links(runtime::ProcessManager &pm, const std::string &address) {
    if (runtime::config().FT_LINKS == 0) return;
    try {
        live_ = std::make_unique<LivenessLinks>(pm, address);
    } catch (const std::exception &e) {
        FTMPI_WARN("no liveness links (deaths are found by the heartbeat only): %s", e.what());
    }
}

void ChannelWithLinks::start_links(runtime::ProcessManager &pm, std::function<void()> signal) {
    if (!live_) return;
    live_->connect(pm, [this, signal = std::move(signal)](PeerId peer, bool certain) {
        {
            std::lock_guard<std::mutex> lock(lost_mu_);
            lost_.push_back({peer, certain});
        }
        signal();
    });
}

}  // namespace ftmpi::transport
