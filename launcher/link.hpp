// One connection between two vertices of the daemons' tree (tree.hpp):
// a non-blocking TCP socket that carries sealed frames (wire.hpp).
//
// Handshake: each side first sends 8 bytes of magic and a fresh 16-byte
// nonce; the link's key is HMAC(launch key, "ftmpi link key" | the
// connecting side's nonce | the accepting side's nonce). Every frame after
// is sealed with that key and the sequence number of its direction, so a
// frame of another link, another job or an earlier connection never opens
// here: only holders of the launch key can talk on a link, and what they
// say arrives whole, once and in order, or the link is dropped.
//
// Frames queued before the handshake ends go out after it. Main thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wire.hpp"

namespace ftmpi::launcher {

class Link {
public:
    using Clock = std::chrono::steady_clock;
    struct Received {
        wire::Header header;
        std::vector<std::uint8_t> payload;
    };

    // Takes `fd` (a connected TCP socket; made non-blocking, TCP_NODELAY).
    // `initiator`: this side connected. Sends its half of the handshake.
    Link(int fd, const std::string &launch_key, bool initiator);
    ~Link();
    Link(const Link &) = delete;
    Link &operator=(const Link &) = delete;

    int fd() const { return fd_; }
    // What to poll for: POLLIN, and POLLOUT while bytes wait to be sent.
    short events() const;
    // Reads and writes what the socket takes; frames that arrived whole go
    // to `out`. False when the link is broken (closed, an error, a bad
    // handshake or frame): why() says which.
    bool on_ready(short revents, std::vector<Received> &out);
    // Queues a frame (sent once the handshake is done).
    void send(const wire::Header &h, std::span<const std::uint8_t> payload);
    bool broken() const { return fd_ < 0; }
    const std::string &why() const { return why_; }
    // Drops the link (closes the socket).
    void close(const std::string &why);
    // Bytes queued and not yet sent.
    std::size_t backlog() const { return out_.size() - out_at_; }

    Clock::time_point last_heard() const { return heard_; }
    Clock::time_point last_sent() const { return sent_; }
    int peer = -1;  // the vertex at the other end, once known (the owner's to set)

private:
    bool read_some(std::vector<Received> &out);
    bool write_some();
    bool handshake();
    void seal_pending();

    int fd_ = -1;
    std::string launch_key_;
    bool initiator_;
    std::string key_;  // the link's key, empty until the handshake is done
    std::string my_nonce_;
    std::uint64_t send_seq_ = 0, recv_seq_ = 0;
    std::vector<std::uint8_t> in_, out_;
    std::size_t out_at_ = 0;
    std::vector<std::pair<wire::Header, std::vector<std::uint8_t>>> pending_;  // before the handshake
    Clock::time_point heard_ = Clock::now(), sent_ = Clock::now();
    std::string why_;
};

}  // namespace ftmpi::launcher
