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
#include <array>
#include <chrono>
#include <optional>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/auth.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/service_thread.hpp"
#include "transport/link_auth.hpp"
#include "transport/refused.hpp"

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
// A connection to the listener that has not proven itself by then is refused.
constexpr auto k_handshake_limit = std::chrono::seconds(10);

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

// Sends what the handshake has to say; false when the socket will not take it
// whole (its messages are a few dozen bytes: a socket that cannot take them
// is broken).
bool send_all(int fd, const std::string &bytes) {
    return bytes.empty() || ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

// Closes with a reset: the other end sees no orderly end it could take for evidence.
void reset_close(int fd) {
    const linger hard{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    ::close(fd);
}

std::array<std::uint8_t, LinkAuth::k_nonce> fresh_nonce() {
    std::array<std::uint8_t, LinkAuth::k_nonce> n;
    runtime::auth::random_bytes(n.data(), n.size());
    return n;
}

std::string peer_name(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    char ip[INET_ADDRSTRLEN] = "?";
    if (::getpeername(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0)
        ::inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
    return std::string(ip) + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace

struct LivenessLinks::Impl {
    using Clock = std::chrono::steady_clock;
    // A connection to this process's listener: a watcher, once proven.
    struct Watcher {
        int fd;
        LinkAuth auth;
        Clock::time_point deadline;
    };

    int listener = -1;
    int event = -1;  // wakes the thread: a new peer to watch, or stop
    std::string secret;
    std::uint32_t self = 0;
    std::vector<LivenessPublished> peers;
    std::function<void(PeerId, bool)> on_lost;
    std::thread thread;
    std::atomic<bool> stopping{false};

    std::mutex mu;  // guards wanted, watchers and left
    int wanted = -1;
    std::vector<Watcher> watchers;  // connections to the listener
    bool left = false;              // leaving() ran: watchers get a goodbye once the listener's proof is out

    // Thread-owned. `attempted`: the last peer a link was tried to; a link that
    // could not be made or has ended is not tried again until another peer
    // is wanted in between.
    int attempted = -1, watched = -1, fd = -1;
    bool connecting = false;
    std::optional<LinkAuth> auth;  // the watched link's handshake

    ~Impl() {
        stopping.store(true);
        kick();
        if (thread.joinable()) thread.join();
        for (const Watcher &w : watchers) ::close(w.fd);
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
        auth.reset();
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
        const auto nonce = fresh_nonce();
        auth.emplace(LinkAuth::Role::watcher, secret, self, static_cast<std::uint32_t>(peer),
                     static_cast<std::uint32_t>(peers.size()), nonce.data());
        if (::connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to) == 0) {
            link_open();
            return;
        }
        if (errno == EINPROGRESS) {
            connecting = true;
            return;
        }
        connect_failed(errno);
    }

    void link_open() {
        if (!send_all(fd, auth->take_output())) connect_failed(errno);
    }

    // No link to the watched peer. Refused: its listener is gone, so its
    // process ended (dead, or leaving normally): as uncertain as a reset.
    // Anything else (unreachable, time-out) is no evidence: the heartbeat's.
    void connect_failed(int err) {
        const int peer = watched;
        drop_link();
        if (err == ECONNREFUSED && on_lost) on_lost(static_cast<PeerId>(peer), false);
    }

    // The watched link has something: the end of the connect, the
    // handshake, a goodbye, or its end.
    void on_link() {
        if (connecting) {
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            connecting = false;
            if (err != 0) connect_failed(err);
            else link_open();
            return;
        }
        char buf[128];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        const int peer = watched;
        if (n > 0) {
            const bool was_proven = auth->state() == LinkAuth::State::proven;
            switch (auth->feed(buf, static_cast<std::size_t>(n))) {
            case LinkAuth::State::pending: return;
            case LinkAuth::State::proven:
                if (!was_proven && !send_all(fd, auth->take_output())) break;  // the listener reads our proof
                return;
            case LinkAuth::State::goodbye: drop_link(); return;  // left normally
            case LinkAuth::State::refused:
                refuse("liveness", "the listener of rank %d (%s) failed the handshake: %s", peer, peer_name(fd).c_str(),
                       auth->why().c_str());
                drop_link();  // no evidence either way: the heartbeat's
                return;
            }
        }
        // Certain evidence of a death is an orderly close (FIN) without a
        // goodbye from a listener that proved itself: the kernel closes a
        // dead process's accepted links that way (they carry no data towards
        // it). A reset is what a link still in the listen backlog gets when
        // its process ends, dead or leaving; an end before the proof may be
        // either too.
        const bool certain = n == 0 && auth->state() == LinkAuth::State::proven;
        drop_link();
        FTMPI_DEBUG("liveness: the link to rank %d %s", peer, n == 0 ? "closed" : "was reset");
        if (on_lost) on_lost(static_cast<PeerId>(peer), certain);
    }

    // With mu held: sends what a watcher's handshake has to say, and the
    // goodbye once this process leaves. False: refused, or its socket broke.
    bool answer(Watcher &w) {
        std::string out = w.auth.take_output();
        if (left && w.auth.may_say_goodbye()) out.push_back(k_goodbye);
        return send_all(w.fd, out);
    }

    void accept_all() {  // with mu held
        for (;;) {
            const int a = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (a < 0) return;
            const auto nonce = fresh_nonce();
            watchers.push_back(Watcher{a,
                                       LinkAuth(LinkAuth::Role::listener, secret, self, 0,
                                                static_cast<std::uint32_t>(peers.size()), nonce.data()),
                                       Clock::now() + k_handshake_limit});
        }
    }

    // With mu held: what watcher `i` sent. False: its connection is to go.
    bool on_watcher(Watcher &w) {
        char buf[128];
        const ssize_t n = ::recv(w.fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
        if (n <= 0) {  // a watcher went (died, left, or moved on): let its link go
            if (w.auth.partial())
                refuse("liveness", "a connection from %s ended in the middle of the handshake",
                       peer_name(w.fd).c_str());
            return false;
        }
        const bool said = w.auth.may_say_goodbye();
        if (w.auth.feed(buf, static_cast<std::size_t>(n)) == LinkAuth::State::refused) {
            refuse("liveness", "a connection from %s failed the handshake: %s", peer_name(w.fd).c_str(),
                   w.auth.why().c_str());
            reset_close(w.fd);
            w.fd = -1;
            return false;
        }
        if (w.auth.state() == LinkAuth::State::proven) w.deadline = Clock::time_point::max();
        return said ? true : answer(w);
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
            const std::size_t first_watcher = fds.size();
            int timeout = -1;
            {
                std::lock_guard<std::mutex> lock(mu);
                const auto now = Clock::now();
                for (const Watcher &w : watchers) {
                    fds.push_back({w.fd, POLLIN, 0});
                    if (w.deadline != Clock::time_point::max()) {
                        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(w.deadline - now).count();
                        const int t = static_cast<int>(std::clamp<long long>(ms + 1, 0, 60000));
                        timeout = timeout < 0 ? t : std::min(timeout, t);
                    }
                }
            }
            if (::poll(fds.data(), fds.size(), timeout) < 0) {
                if (errno == EINTR) continue;
                FTMPI_WARN("liveness: poll failed: %s", std::strerror(errno));
                return;
            }
            if (fds[0].revents) {
                std::uint64_t v;
                if (::read(event, &v, sizeof v) < 0) FTMPI_DEBUG("liveness: eventfd read failed");
            }
            if (fd >= 0 && fds[2].revents) on_link();
            std::lock_guard<std::mutex> lock(mu);
            // Only this thread removes watchers: those polled are still the first ones, in order.
            const auto now = Clock::now();
            std::vector<Watcher> kept;
            for (std::size_t i = 0; i < watchers.size(); ++i) {
                Watcher &w = watchers[i];
                const std::size_t at = first_watcher + i;
                bool keep = at >= fds.size() || !fds[at].revents || on_watcher(w);
                if (keep && now >= w.deadline) {
                    refuse("liveness", "a connection from %s sent no proof within %lld s", peer_name(w.fd).c_str(),
                           static_cast<long long>(k_handshake_limit.count()));
                    reset_close(w.fd);
                    w.fd = -1;
                    keep = false;
                }
                if (keep) kept.push_back(std::move(w));
                else if (w.fd >= 0) ::close(w.fd);
            }
            watchers = std::move(kept);
            if (fds[1].revents) accept_all();
        }
    }
};

LivenessLinks::LivenessLinks(runtime::ProcessManager &pm, const std::string &address)
    : impl_(std::make_unique<Impl>()) {
    Impl &m = *impl_;
    m.listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    m.event = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m.listener < 0 || m.event < 0)
        throw std::runtime_error(std::string("liveness socket: ") + std::strerror(errno));
    // The listener is bound to one address only: loopback when the whole job
    // is on this node, else the interface the job's control endpoint uses
    // (or, without one, this host's first non-loopback address).
    sockaddr_in here{};
    here.sin_family = AF_INET;
    in_addr ip{};
    if (pm.job().one_node()) here.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (!address.empty() && ::inet_pton(AF_INET, address.c_str(), &ip) == 1 && ip.s_addr != 0) here.sin_addr = ip;
    else here.sin_addr.s_addr = first_host_address();
    if (here.sin_addr.s_addr == 0) throw std::runtime_error("liveness listener: no address of this host to bind");
    socklen_t len = sizeof here;
    if (::bind(m.listener, reinterpret_cast<sockaddr *>(&here), sizeof here) != 0 || ::listen(m.listener, 64) != 0 ||
        ::getsockname(m.listener, reinterpret_cast<sockaddr *>(&here), &len) != 0)
        throw std::runtime_error(std::string("liveness listener: ") + std::strerror(errno));
    m.self = static_cast<std::uint32_t>(pm.job().rank);
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
    m.secret = pm.job().secret;  // under any launcher, known once the exchange is over
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
    // Every watcher whose handshake got as far as this process's proof gets
    // a goodbye now; the others with their proof, when their hello comes.
    m.accept_all();
    for (auto &w : m.watchers) {
        if (w.auth.may_say_goodbye()) {
            if (::send(w.fd, &k_goodbye, 1, MSG_NOSIGNAL) < 0) FTMPI_DEBUG("liveness: goodbye not sent");
        } else {
            char buf[128];  // a hello already here is answered at once, goodbye included
            const ssize_t n = ::recv(w.fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n > 0 && w.auth.feed(buf, static_cast<std::size_t>(n)) != LinkAuth::State::refused) m.answer(w);
            else if (n > 0) w.deadline = Impl::Clock::time_point::min();  // refused: the thread drops it
        }
    }
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
