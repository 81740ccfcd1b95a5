// ControlChannel over a Unix datagram socket in the abstract namespace: the
// detector's channel when the whole job is on one node, so that such a job
// never loads libfabric. Datagrams on a Unix socket are reliable and ordered;
// a full receiver makes send() refuse (EAGAIN), never drop. wait() polls the
// socket and an eventfd (wake(), and deaths seen by the liveness links).
//
// Any process in the network namespace can send to an abstract name, so
// every datagram comes with its sender's credentials, which the kernel
// fills in (SO_PASSCRED): one is taken only from a process of the job
// (a pid its ranks published) running as this process's user; the rest are
// refused (transport/refused.hpp) and never reach the detector.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "transport/control.hpp"
#include "transport/liveness.hpp"
#include "transport/refused.hpp"

namespace ftmpi::transport {
namespace {

constexpr std::size_t k_max_message = 128;
const char *const k_ctl_key = "ftmpi.ctl.unix";

class UnixControl final : public ChannelWithLinks {
public:
    explicit UnixControl(runtime::ProcessManager &pm) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd_ < 0) throw std::runtime_error(std::string("socket(AF_UNIX): ") + std::strerror(errno));
        const int on = 1;
        if (::setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
            const int e = errno;
            ::close(fd_);
            throw std::runtime_error(std::string("SO_PASSCRED on the control socket: ") + std::strerror(e));
        }
        // Autobind: the kernel picks a unique abstract name.
        sockaddr_un self{};
        self.sun_family = AF_UNIX;
        socklen_t len = sizeof(sa_family_t);
        if (::bind(fd_, reinterpret_cast<sockaddr *>(&self), len) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr *>(&self), &(len = sizeof self)) != 0) {
            const int e = errno;
            ::close(fd_);
            throw std::runtime_error(std::string("binding the control socket: ") + std::strerror(e));
        }
        wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (wake_fd_ < 0) {
            const int e = errno;
            ::close(fd_);
            throw std::runtime_error(std::string("eventfd: ") + std::strerror(e));
        }
        Published me{};
        me.pid = static_cast<std::uint64_t>(::getpid());
        me.len = len;
        me.addr = self;
        pm.put(k_ctl_key, &me, sizeof me);
        FTMPI_INFO("control endpoint open: Unix datagram socket");
        open_links(pm, "");
    }
    ~UnixControl() override {
        stop_links();
        ::close(wake_fd_);
        ::close(fd_);
    }

    void connect(runtime::ProcessManager &pm) override {
        const int n = pm.job().size;
        peers_.assign(static_cast<std::size_t>(n), Address{});
        for (int r = 0; r < n; ++r) {
            const auto blob = pm.get(r, k_ctl_key);
            Published p{};
            if (blob.size() != sizeof p)
                throw std::runtime_error("rank " + std::to_string(r) + " published no control socket");
            std::memcpy(&p, blob.data(), sizeof p);
            if (p.len > sizeof p.addr)
                throw std::runtime_error("rank " + std::to_string(r) + " published a bad control socket");
            Address &a = peers_[static_cast<std::size_t>(r)];
            a.addr = p.addr;
            a.len = static_cast<socklen_t>(p.len);
            a.pid = static_cast<int>(p.pid);
            job_pids_.push_back(a.pid);
        }
        std::sort(job_pids_.begin(), job_pids_.end());
        start_links(pm, [this] { wake(); });
    }

    std::size_t max_message() const override { return k_max_message; }

    bool send(PeerId peer, const void *msg, std::size_t len) override {
        if (peer >= peers_.size() || len > k_max_message) return false;
        const Address &a = peers_[peer];
        const ssize_t n =
            ::sendto(fd_, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, reinterpret_cast<const sockaddr *>(&a.addr), a.len);
        if (n < 0 && errno != EAGAIN && errno != ECONNREFUSED)
            FTMPI_DEBUG("control send to %u: %s", peer, std::strerror(errno));
        return n == static_cast<ssize_t>(len);
    }

    int wait(int timeout_ms, const std::function<void(const void *, std::size_t)> &on_message) override {
        int delivered = receive(on_message);
        if (delivered > 0) return delivered;
        pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
        if (::poll(fds, 2, timeout_ms < 0 ? 0 : timeout_ms) > 0 && (fds[1].revents & POLLIN)) {
            std::uint64_t v;
            (void)!::read(wake_fd_, &v, sizeof v);
        }
        return receive(on_message);
    }

    void wake() override {
        const std::uint64_t one = 1;
        (void)!::write(wake_fd_, &one, sizeof one);
    }

    // Every peer is on this node: the socket's namespace is the node's.
    int pid_of(PeerId peer) const override { return peer < peers_.size() ? peers_[peer].pid : 0; }

private:
    int receive(const std::function<void(const void *, std::size_t)> &on_message) {
        int delivered = 0;
        std::array<char, k_max_message> buf;
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
        for (;;) {
            iovec iov{buf.data(), buf.size()};
            msghdr m{};
            m.msg_iov = &iov;
            m.msg_iovlen = 1;
            m.msg_control = control;
            m.msg_controllen = sizeof control;
            const ssize_t n = ::recvmsg(fd_, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
            if (n < 0) return delivered;
            if (!from_the_job(m, static_cast<std::size_t>(n))) continue;
            on_message(buf.data(), static_cast<std::size_t>(n));
            ++delivered;
        }
    }

    // The sender's credentials (the kernel's, not the sender's word): a
    // process of the job, as this process's user. Refused otherwise.
    bool from_the_job(msghdr &m, std::size_t len) const {
        const ucred *cred = nullptr;
        for (cmsghdr *c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                c->cmsg_len >= CMSG_LEN(sizeof(ucred)))
                cred = reinterpret_cast<const ucred *>(CMSG_DATA(c));
        if (cred == nullptr) {
            refuse("detector", "a %zu-byte datagram without its sender's credentials", len);
            return false;
        }
        if (cred->uid != ::geteuid()) {
            refuse("detector", "a %zu-byte datagram from pid %d of user %u, not this job's user %u", len,
                   static_cast<int>(cred->pid), static_cast<unsigned>(cred->uid), static_cast<unsigned>(::geteuid()));
            return false;
        }
        if (!std::binary_search(job_pids_.begin(), job_pids_.end(), static_cast<int>(cred->pid))) {
            refuse("detector", "a %zu-byte datagram from pid %d, not a process of this job", len,
                   static_cast<int>(cred->pid));
            return false;
        }
        return true;
    }

    // What each process publishes (k_ctl_key).
    struct Published {
        std::uint64_t pid;
        std::uint32_t len;  // of addr's used part
        std::uint32_t reserved;
        sockaddr_un addr;
    };
    struct Address {
        sockaddr_un addr{};
        socklen_t len = 0;
        int pid = 0;
    };
    int fd_ = -1;
    int wake_fd_ = -1;
    std::vector<Address> peers_;
    std::vector<int> job_pids_;  // sorted: the senders taken
};

}  // namespace

std::unique_ptr<ControlChannel> open_control(runtime::ProcessManager &pm) {
    const auto &job = pm.job();
    const auto &cfg = runtime::config();
    const bool one_node = job.one_node();
    if (cfg.set.FT_PROVIDER ? cfg.FT_PROVIDER == "unix" : one_node) return std::make_unique<UnixControl>(pm);
    return open_ofi_control(pm);
}

}  // namespace ftmpi::transport
