// A link between two vertices of the daemons' tree (link.hpp).
#include "link.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/auth.hpp"

namespace ftmpi::launcher {
namespace {

namespace auth = ftmpi::runtime::auth;

constexpr char kMagic[8] = {'F', 'T', 'M', 'P', 'I', 'L', '1', '\0'};
constexpr std::size_t kNonce = 16;
constexpr std::size_t kHello = sizeof kMagic + kNonce;

}  // namespace

Link::Link(int fd, const std::string &launch_key, bool initiator)
    : fd_(fd), launch_key_(launch_key), initiator_(initiator) {
    const int fl = ::fcntl(fd_, F_GETFL);
    if (fl >= 0) ::fcntl(fd_, F_SETFL, fl | O_NONBLOCK);
    int on = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    my_nonce_.resize(kNonce);
    auth::random_bytes(my_nonce_.data(), kNonce);
    out_.insert(out_.end(), kMagic, kMagic + sizeof kMagic);
    out_.insert(out_.end(), my_nonce_.begin(), my_nonce_.end());
}

Link::~Link() { close(""); }

void Link::close(const std::string &why) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (why_.empty()) why_ = why;
}

short Link::events() const { return static_cast<short>(POLLIN | (backlog() > 0 ? POLLOUT : 0)); }

void Link::send(const wire::Header &h, std::span<const std::uint8_t> payload) {
    if (fd_ < 0) return;
    if (key_.empty()) {
        pending_.emplace_back(h, std::vector<std::uint8_t>(payload.begin(), payload.end()));
        return;
    }
    const auto f = wire::seal(key_, send_seq_++, h, payload);
    if (out_at_ > 0 && out_at_ == out_.size()) out_.clear(), out_at_ = 0;
    out_.insert(out_.end(), f.begin(), f.end());
    sent_ = Clock::now();
    write_some();
}

void Link::seal_pending() {
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto &[h, p] : pending) send(h, p);
}

// The peer's half of the handshake, once its bytes are in: the link's key.
bool Link::handshake() {
    if (in_.size() < kHello) return true;
    if (std::memcmp(in_.data(), kMagic, sizeof kMagic) != 0) {
        close("not an ftmpirun link");
        return false;
    }
    const std::string theirs(in_.begin() + sizeof kMagic, in_.begin() + kHello);
    in_.erase(in_.begin(), in_.begin() + kHello);
    const std::string &first = initiator_ ? my_nonce_ : theirs, &second = initiator_ ? theirs : my_nonce_;
    const auth::Digest d = auth::hmac(auth::bytes(launch_key_),
                                      {auth::bytes("ftmpi link key", 14), auth::bytes(first), auth::bytes(second)});
    key_.assign(d.begin(), d.end());
    seal_pending();
    return true;
}

bool Link::read_some(std::vector<Received> &out) {
    std::uint8_t buf[65536];
    while (fd_ >= 0) {
        const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n <= 0) {
            close(n == 0 ? "closed by the other end" : std::string("read: ") + std::strerror(errno));
            return false;
        }
        heard_ = Clock::now();
        in_.insert(in_.end(), buf, buf + n);
        if (key_.empty() && !handshake()) return false;
        if (key_.empty()) continue;
        std::size_t at = 0;
        while (true) {
            wire::Frame f;
            const auto st = wire::open(key_, recv_seq_, std::span(in_).subspan(at), f);
            if (st == wire::Opened::incomplete) break;
            if (st == wire::Opened::bad) {
                close("a frame that does not prove the job's key, or malformed");
                return false;
            }
            ++recv_seq_;
            out.push_back({f.header, std::vector<std::uint8_t>(f.payload.begin(), f.payload.end())});
            at += f.size;
        }
        in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(at));
    }
    return fd_ >= 0;
}

bool Link::write_some() {
    while (fd_ >= 0 && backlog() > 0) {
        const ssize_t n = ::send(fd_, out_.data() + out_at_, backlog(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n < 0) {
            close(std::string("write: ") + std::strerror(errno));
            return false;
        }
        out_at_ += static_cast<std::size_t>(n);
    }
    if (out_at_ == out_.size()) out_.clear(), out_at_ = 0;
    return fd_ >= 0;
}

bool Link::on_ready(short revents, std::vector<Received> &out) {
    if (fd_ < 0) return false;
    if (revents & (POLLIN | POLLHUP | POLLERR))
        if (!read_some(out)) return false;
    if (revents & POLLOUT) return write_some();
    return fd_ >= 0;
}

}  // namespace ftmpi::launcher
