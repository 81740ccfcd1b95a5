// A vertex of the daemons' tree on the network (net.hpp).
#include "net.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "error.hpp"
#include "runtime/config.hpp"
#include "runtime/sockets.hpp"

namespace ftmpi::launcher {
namespace {

// "a.b.c.d:port" as a socket address; false when malformed.
bool parse_addr(const std::string &s, sockaddr_in &out) {
    const std::size_t colon = s.rfind(':');
    if (colon == std::string::npos) return false;
    out = {};
    out.sin_family = AF_INET;
    char *end = nullptr;
    const long port = std::strtol(s.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535) return false;
    out.sin_port = htons(static_cast<std::uint16_t>(port));
    return ::inet_pton(AF_INET, s.substr(0, colon).c_str(), &out.sin_addr) == 1;
}

// A blocking-with-deadline connect; the socket (non-blocking) or -1 with `why`.
int connect_one(const sockaddr_in &to, std::chrono::milliseconds timeout, std::string &why) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        why = std::string("socket: ") + std::strerror(errno);
        return -1;
    }
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&to), sizeof to) == 0) return fd;
    if (errno != EINPROGRESS) {
        why = std::strerror(errno);
        ::close(fd);
        return -1;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    const int n = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (n == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) return fd;
    why = n == 0 ? "no answer in " + std::to_string(timeout.count()) + " ms" : std::strerror(err ? err : errno);
    ::close(fd);
    return -1;
}

const ftmpi::runtime::Config &knobs() {
    static const ftmpi::runtime::Config c = ftmpi::runtime::config_from_environment();
    return c;
}

}  // namespace

std::chrono::milliseconds launch_period() { return std::chrono::milliseconds(std::max(10, knobs().LAUNCH_PERIOD_MS)); }
std::chrono::milliseconds launch_silence() {
    return std::chrono::milliseconds(std::max(100, knobs().LAUNCH_TIMEOUT_MS));
}

Net::Net(std::string launch_key, int self, Tree tree) : key_(std::move(launch_key)), self_(self), tree_(tree) {}

void Net::assign(int self, Tree tree) {
    self_ = self;
    tree_ = std::move(tree);
}

Net::~Net() {
    if (listen_fd_ >= 0) ::close(listen_fd_);
}

void Net::listen() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) throw LauncherError(std::string("socket: ") + std::strerror(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(listen_fd_, 1024) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr *>(&a), &len) != 0)
        throw LauncherError(std::string("listening for ftmpirun's daemons: ") + std::strerror(errno));
    port_ = ntohs(a.sin_port);
}

std::vector<std::string> Net::addresses(const std::string &toward) const {
    std::vector<std::string> out;
    std::vector<in_addr_t> ips = ftmpi::runtime::node_addresses();
    // The address of the interface this node reaches `toward` by comes first
    // (a daemon tries them in turn, each for a while).
    addrinfo hints{}, *found = nullptr;
    hints.ai_family = AF_INET;
    if (!toward.empty() && ::getaddrinfo(toward.c_str(), nullptr, &hints, &found) == 0 && found != nullptr) {
        const in_addr_t peer = reinterpret_cast<const sockaddr_in *>(found->ai_addr)->sin_addr.s_addr;
        ::freeaddrinfo(found);
        const std::string iface = ftmpi::runtime::iface_towards(peer);
        ifaddrs *list = nullptr;
        if (!iface.empty() && ::getifaddrs(&list) == 0) {
            for (ifaddrs *i = list; i != nullptr; i = i->ifa_next)
                if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET && iface == i->ifa_name) {
                    const in_addr_t mine = reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr.s_addr;
                    ips.erase(std::remove(ips.begin(), ips.end(), mine), ips.end());
                    ips.insert(ips.begin(), mine);
                    break;
                }
            ::freeifaddrs(list);
        }
    }
    ips.push_back(htonl(INADDR_LOOPBACK));
    for (in_addr_t ip : ips) {
        char buf[INET_ADDRSTRLEN];
        in_addr ia{ip};
        if (::inet_ntop(AF_INET, &ia, buf, sizeof buf)) out.push_back(std::string(buf) + ":" + std::to_string(port_));
    }
    return out;
}

Link *Net::connect_first(const std::vector<std::string> &addrs, int peer, std::chrono::milliseconds timeout,
                         std::string &why) {
    for (const std::string &s : addrs) {
        sockaddr_in to;
        std::string err;
        if (!parse_addr(s, to)) {
            why += (why.empty() ? "" : "; ") + s + ": not an address";
            continue;
        }
        const int fd = connect_one(to, timeout, err);
        if (fd < 0) {
            why += (why.empty() ? "" : "; ") + s + ": " + err;
            continue;
        }
        auto l = std::make_unique<Link>(fd, key_, true);
        l->peer = peer;
        Link *raw = l.get();
        links_[peer] = std::move(l);
        return raw;
    }
    return nullptr;
}

void Net::accept_all() {
    while (listen_fd_ >= 0) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;  // EAGAIN, or an error the next poll shows again
        unknown_.push_back(std::make_unique<Link>(fd, key_, false));
    }
}

void Net::add_fds(std::vector<pollfd> &pfds) {
    dead_.clear();
    polled_.clear();
    first_ = pfds.size();
    if (listen_fd_ >= 0) pfds.push_back({listen_fd_, POLLIN, 0});
    for (auto &[v, l] : links_) {
        pfds.push_back({l->fd(), l->events(), 0});
        polled_.push_back(l.get());
    }
    for (auto &l : unknown_) {
        pfds.push_back({l->fd(), l->events(), 0});
        polled_.push_back(l.get());
    }
}

void Net::on_poll(const std::vector<pollfd> &pfds, std::vector<Delivery> &mine,
                  std::vector<std::pair<int, std::string>> &lost) {
    for (auto &d : late_) route(std::move(d), mine);
    late_.clear();
    std::size_t at = first_;
    if (listen_fd_ >= 0 && at < pfds.size()) {
        if (pfds[at].revents & POLLIN) accept_all();
        ++at;
    }
    for (std::size_t i = 0; i < polled_.size() && at + i < pfds.size(); ++i) {
        Link *l = polled_[i];
        const short rev = pfds[at + i].revents;
        if (!rev || l->broken()) continue;
        std::vector<Link::Received> got;
        const bool ok = l->on_ready(rev, got);
        for (auto &r : got) route({r.header, std::move(r.payload), l}, mine);
        if (!ok) drop(l, l->why());
    }
    take_lost(lost);
}

void Net::take_lost(std::vector<std::pair<int, std::string>> &lost) {
    for (auto &e : lost_) lost.push_back(std::move(e));
    lost_.clear();
}

void Net::route(Delivery &&d, std::vector<Delivery> &mine) {
    const wire::Header &h = d.header;
    if (h.type == wire::Type::heartbeat) return;  // heard_ is all it is for
    if (d.via->peer < 0) {                        // not identified yet: its hello or attach is for the owner to judge
        if (h.type == wire::Type::hello || h.type == wire::Type::attach) mine.push_back(std::move(d));
        else held_[d.via].push_back(std::move(d));  // what came behind it, until identify()
        return;
    }
    if (h.dst == wire::kFlood) {
        for (int n : tree_.flood_to(self_, d.via->peer)) forward(h, d.payload, n);
        mine.push_back(std::move(d));
        return;
    }
    if (h.dst == static_cast<std::uint32_t>(self_)) {
        mine.push_back(std::move(d));
        return;
    }
    const int hop = tree_.next_hop(self_, static_cast<int>(h.dst));
    if (hop >= 0 && hop != self_) forward(h, d.payload, hop);
}

void Net::forward(const wire::Header &h, const std::vector<std::uint8_t> &payload, int hop) {
    if (Link *l = link_to(hop)) l->send(h, payload);
}

Net::Clock::time_point Net::tick(Clock::time_point now, std::chrono::milliseconds period,
                                 std::chrono::milliseconds timeout, std::vector<std::pair<int, std::string>> &lost) {
    Clock::time_point next = now + period;
    std::vector<Link *> silent;
    for (auto &[v, l] : links_) {
        if (now - l->last_heard() >= timeout) {
            silent.push_back(l.get());
            continue;
        }
        if (now - l->last_sent() >= period) {
            wire::Header h{wire::Type::heartbeat, 0, static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(self_)};
            l->send(h, {});
        }
        next = std::min({next, l->last_sent() + period, l->last_heard() + timeout});
    }
    for (Link *l : silent) drop(l, "silent for " + std::to_string(timeout.count()) + " ms");
    take_lost(lost);
    return std::max(next, now + std::chrono::milliseconds(1));
}

void Net::identify(Link *l, int vertex) {
    auto it = std::find_if(unknown_.begin(), unknown_.end(), [&](const auto &p) { return p.get() == l; });
    if (it == unknown_.end()) return;
    l->peer = vertex;
    if (auto old = links_.find(vertex); old != links_.end()) {
        old->second->peer = -1;  // not a loss: its vertex is still here
        old->second->close("replaced by a new link");
        dead_.push_back(std::move(old->second));
    }
    links_[vertex] = std::move(*it);
    unknown_.erase(it);
    // What came behind its hello or attach: passed on now, or ours at the next on_poll.
    if (auto h = held_.find(l); h != held_.end()) {
        for (auto &d : h->second) {
            if (d.header.dst == static_cast<std::uint32_t>(self_) || d.header.dst == wire::kFlood)
                late_.push_back(std::move(d));
            else forward(d.header, d.payload, tree_.next_hop(self_, static_cast<int>(d.header.dst)));
        }
        held_.erase(h);
    }
}

void Net::drop(Link *l, const std::string &why) {
    l->close(why);
    held_.erase(l);
    for (auto it = links_.begin(); it != links_.end(); ++it)
        if (it->second.get() == l) {
            lost_.emplace_back(it->first, l->why());
            dead_.push_back(std::move(it->second));
            links_.erase(it);
            return;
        }
    auto it = std::find_if(unknown_.begin(), unknown_.end(), [&](const auto &p) { return p.get() == l; });
    if (it != unknown_.end()) {
        dead_.push_back(std::move(*it));
        unknown_.erase(it);
    }
}

Link *Net::link_to(int vertex) const {
    auto it = links_.find(vertex);
    return it == links_.end() || it->second->broken() ? nullptr : it->second.get();
}

std::string Net::iface_to(int vertex) const {
    const Link *l = link_to(vertex);
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (!l || ::getpeername(l->fd(), reinterpret_cast<sockaddr *>(&peer), &len) != 0) return "";
    return ftmpi::runtime::iface_towards(peer.sin_addr.s_addr);
}

bool Net::send(std::uint32_t dst, wire::Type t, std::span<const std::uint8_t> payload) {
    const int hop = tree_.next_hop(self_, static_cast<int>(dst));
    Link *l = hop >= 0 && hop != self_ ? link_to(hop) : nullptr;
    if (!l) return false;
    l->send({t, 0, dst, static_cast<std::uint32_t>(self_)}, payload);
    return true;
}

void Net::flood(wire::Type t, std::span<const std::uint8_t> payload) {
    for (int n : tree_.flood_to(self_, -1))
        if (Link *l = link_to(n)) l->send({t, 0, wire::kFlood, static_cast<std::uint32_t>(self_)}, payload);
}

std::size_t Net::backlog() const {
    std::size_t n = 0;
    for (const auto &[v, l] : links_) n += l->backlog();
    return n;
}

void Net::flush(std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (backlog() > 0 && Clock::now() < until) {
        std::vector<pollfd> pfds;
        std::vector<Link *> ls;
        for (auto &[v, l] : links_)
            if (l->backlog() > 0) pfds.push_back({l->fd(), POLLOUT, 0}), ls.push_back(l.get());
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
        if (::poll(pfds.data(), pfds.size(), static_cast<int>(std::max<long>(left, 1))) <= 0) return;
        std::vector<Link::Received> ignored;
        for (std::size_t i = 0; i < pfds.size(); ++i)
            if (pfds[i].revents) ls[i]->on_ready(static_cast<short>(pfds[i].revents & POLLOUT), ignored);
    }
}

}  // namespace ftmpi::launcher
