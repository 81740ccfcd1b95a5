#include "iofwd.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace ftmpi::launcher {
namespace {
void set_nonblocking(int fd) {
    int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0) ::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}
}  // namespace

void write_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = ::write(fd, data, len);
        if (n > 0) {
            data += n;
            len -= static_cast<size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            // Someone made our stdout non-blocking: wait until it drains.
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, -1);
        } else {
            return;  // EPIPE or a closed descriptor: the output has nowhere to go
        }
    }
}

bool open_raw_pty(int &master, int &slave) {
    int m = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0) return false;
    char name[128];
    int s = -1;
    if (::grantpt(m) == 0 && ::unlockpt(m) == 0 && ::ptsname_r(m, name, sizeof name) == 0)
        s = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    termios t;
    if (s >= 0 && ::tcgetattr(s, &t) == 0) {
        ::cfmakeraw(&t);  // no output processing, no echo, no line discipline
        if (::tcsetattr(s, TCSANOW, &t) == 0) {
            master = m;
            slave = s;
            return true;
        }
    }
    const int saved = errno;
    if (s >= 0) ::close(s);
    ::close(m);
    errno = saved;
    return false;
}

LineForwarder::LineForwarder(int src, int dest, std::string prefix)
    : src_(src), dest_(dest), prefix_(std::move(prefix)) {
    set_nonblocking(src_);
}

LineForwarder::LineForwarder(int src, std::function<void(std::string_view)> sink) : src_(src), sink_(std::move(sink)) {
    set_nonblocking(src_);
}

LineForwarder::~LineForwarder() { close_src(); }

LineForwarder::LineForwarder(LineForwarder &&o) noexcept
    : src_(std::exchange(o.src_, -1)), dest_(o.dest_), prefix_(std::move(o.prefix_)), partial_(std::move(o.partial_)),
      sink_(std::move(o.sink_)) {}

LineForwarder &LineForwarder::operator=(LineForwarder &&o) noexcept {
    if (this != &o) {
        close_src();
        src_ = std::exchange(o.src_, -1);
        dest_ = o.dest_;
        prefix_ = std::move(o.prefix_);
        partial_ = std::move(o.partial_);
        sink_ = std::move(o.sink_);
    }
    return *this;
}

void LineForwarder::close_src() {
    if (src_ >= 0) ::close(src_);
    src_ = -1;
}

void LineForwarder::emit(const char *line, size_t len, bool add_newline) {
    if (sink_) {
        if (!add_newline) return sink_(std::string_view(line, len));
        return sink_(std::string(line, len) + '\n');
    }
    std::string out;
    out.reserve(prefix_.size() + len + 1);
    out += prefix_;
    out.append(line, len);
    if (add_newline) out += '\n';
    write_all(dest_, out);
}

void LineForwarder::on_readable() {
    char buf[16384];
    while (src_ >= 0) {
        ssize_t n = ::read(src_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) {  // EOF, EIO from a pty master whose slaves are all closed, or an error
            if (!partial_.empty()) emit(partial_.data(), partial_.size(), true);
            partial_.clear();
            close_src();
            return;
        }
        partial_.append(buf, static_cast<size_t>(n));
        size_t start = 0;
        for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1)
            emit(partial_.data() + start, nl - start + 1, false);
        partial_.erase(0, start);
        if (partial_.size() >= kMaxLine) {
            emit(partial_.data(), partial_.size(), true);
            partial_.clear();
        }
    }
}

void LineForwarder::drain_and_close() {
    on_readable();  // reads until EAGAIN or EOF
    if (!partial_.empty()) emit(partial_.data(), partial_.size(), true);
    partial_.clear();
    close_src();
}

StdinForwarder::StdinForwarder(int src, int pipe_wr) : src_(src), dst_(pipe_wr) { set_nonblocking(dst_); }

StdinForwarder::StdinForwarder(int pipe_wr) : dst_(pipe_wr), fed_(true) { set_nonblocking(dst_); }

StdinForwarder::~StdinForwarder() { stop(); }

void StdinForwarder::feed(const std::uint8_t *data, size_t n) {
    if (n == 0) eof_ = true;
    if (dst_ >= 0) buf_.append(reinterpret_cast<const char *>(data), n);
    finish_if_done();
}

void StdinForwarder::stop() {
    if (dst_ >= 0) ::close(dst_);
    dst_ = -1;
    src_ = -1;
    buf_.clear();
}

void StdinForwarder::finish_if_done() {
    if ((fed_ ? eof_ : src_ < 0) && buf_.empty() && dst_ >= 0) {
        ::close(dst_);  // propagate EOF to rank 0
        dst_ = -1;
    }
}

void StdinForwarder::on_src_readable() {
    if (src_ < 0) return;
    char buf[16384];
    size_t room = kMaxBuffered - buf_.size();
    ssize_t n = ::read(src_, buf, room < sizeof buf ? room : sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
        src_ = -1;  // EOF (or an unreadable stdin): rank 0 sees EOF after the buffer
    } else {
        buf_.append(buf, static_cast<size_t>(n));
    }
    if (dst_ < 0) buf_.clear();
    finish_if_done();
}

void StdinForwarder::on_dst_writable() {
    while (dst_ >= 0 && !buf_.empty()) {
        ssize_t n = ::write(dst_, buf_.data(), buf_.size());
        if (n > 0) {
            buf_.erase(0, static_cast<size_t>(n));
            written_ += static_cast<size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            return;
        } else {
            // EPIPE: rank 0 closed its stdin or exited. Stop reading ours.
            ::close(dst_);
            dst_ = -1;
            src_ = -1;
            buf_.clear();
            return;
        }
    }
    finish_if_done();
}

}  // namespace ftmpi::launcher
