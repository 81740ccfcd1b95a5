// Forwarding of the ranks' stdout/stderr (line by line) and of the
// launcher's stdin to rank 0. Event-loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace ftmpi::launcher {

// Writes all of `data` to `fd`, retrying on EINTR/EAGAIN. Output to a closed
// reader (EPIPE) is dropped silently.
void write_all(int fd, const char *data, size_t len);
inline void write_all(int fd, const std::string &s) { write_all(fd, s.data(), s.size()); }

// Opens a pseudo-terminal for a rank's stdout: the rank writes to `slave`
// (isatty() is true there, so C stdio line-buffers it and a line printed
// without fflush is out before the rank can die), the launcher reads `master`.
// Raw mode: bytes pass unchanged (no "\n" -> "\r\n"), nothing is echoed.
// Both descriptors are O_CLOEXEC, and the slave becomes nobody's controlling
// terminal. Returns false, with errno set and nothing left open, when no
// pseudo-terminal can be had (say, no /dev/pts in a container).
bool open_raw_pty(int &master, int &slave);

// Reads one rank's stdout (pty master or pipe) or stderr pipe and writes whole
// lines to `dest`, each with an optional prefix, in one write per line, so
// lines of different ranks never interleave. A line longer than kMaxLine is cut.
class LineForwarder {
public:
    static constexpr size_t kMaxLine = 64 * 1024;
    LineForwarder() = default;
    // Takes ownership of `src` (made non-blocking).
    LineForwarder(int src, int dest, std::string prefix);
    // Hands each line (with its newline) to `sink` instead.
    LineForwarder(int src, std::function<void(std::string_view)> sink);
    ~LineForwarder();
    LineForwarder(LineForwarder &&o) noexcept;
    LineForwarder &operator=(LineForwarder &&o) noexcept;

    int fd() const { return src_; }
    bool open() const { return src_ >= 0; }
    // Reads what is available. At EOF or a read error, flushes a trailing partial
    // line (adding '\n') and closes the source. A pty master reads as EIO once
    // every slave descriptor is closed and what was written to them has been
    // read (the kernel delivers pending output before EIO): that is its EOF.
    void on_readable();
    // Reads whatever is left without blocking, flushes and closes.
    void drain_and_close();

private:
    void emit(const char *line, size_t len, bool add_newline);
    void close_src();
    int src_ = -1;
    int dest_ = -1;
    std::string prefix_;
    std::string partial_;
    std::function<void(std::string_view)> sink_;
};

// Copies the launcher's stdin into rank 0's stdin pipe, bounded by a buffer:
// stdin is read only while the buffer has room. EOF on stdin closes the pipe
// once the buffer is flushed; EPIPE (rank 0 gone) stops forwarding.
class StdinForwarder {
public:
    static constexpr size_t kMaxBuffered = 64 * 1024;
    StdinForwarder() = default;
    // Takes ownership of `pipe_wr` (made non-blocking). `src` is not owned.
    StdinForwarder(int src, int pipe_wr);
    // Fed (ftmpirun across nodes: stdin arrives from the head): bytes come
    // through feed(), and an empty feed is the end of input.
    explicit StdinForwarder(int pipe_wr);
    ~StdinForwarder();
    StdinForwarder(const StdinForwarder &) = delete;
    StdinForwarder &operator=(const StdinForwarder &) = delete;

    int src_fd() const { return (src_ >= 0 && buf_.size() < kMaxBuffered) ? src_ : -1; }
    int dst_fd() const { return (dst_ >= 0 && !buf_.empty()) ? dst_ : -1; }
    void on_src_readable();
    void on_dst_writable();
    void stop();  // closes the pipe and stops reading stdin
    void feed(const std::uint8_t *data, size_t n);
    // Bytes written into the pipe since the last call (the head's credit).
    size_t take_written() { return std::exchange(written_, 0); }

private:
    void finish_if_done();
    int src_ = -1;
    int dst_ = -1;
    std::string buf_;
    bool fed_ = false, eof_ = false;
    size_t written_ = 0;
};

}  // namespace ftmpi::launcher
