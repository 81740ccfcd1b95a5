// Frames between ftmpirun's head and its daemons (ftmpirun across nodes).
//
// A frame is a 16-byte header, a payload and a 16-byte tag:
//   u32 len (of the whole frame) | u8 type | u8 flags | u16 0 | u32 dst | u32 src | payload | tag
// little-endian, dst and src tree vertices (tree.hpp; kFlood: every vertex).
// The tag is the first 16 bytes of HMAC(session key, "ftmpi launcher frame"
// | sequence number | header | payload), the sequence numbers counted per
// direction of a link and never sent: a frame injected, replayed, reordered
// or altered is refused, as the ranks' own channels refuse what does not
// prove the job's secret (docs/security.md). Payloads are written and read
// field by field (Writer, Reader); a reader that runs past the end or finds
// a bad length fails, and the link that sent it is dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ftmpi::launcher::wire {

enum class Type : std::uint8_t {
    hello = 1,
    tree,
    attach,
    launch,
    started,
    io,
    io_pause,
    io_resume,
    stdin_data,
    stdin_credit,
    proc_state,
    proc_exit,
    proc_failed,
    kill,
    abort,
    job_ctrl,
    fence_up,
    fence_down,
    dmodex_req,
    dmodex_rep,
    name_req,
    name_rep,
    spawn_req,
    ns_add,
    spawn_rep,
    log,
    idle,
    heartbeat,
    node_lost,
    exit,
};
inline constexpr std::uint8_t kLastType = static_cast<std::uint8_t>(Type::exit);

inline constexpr std::uint32_t kHead = 0;
inline constexpr std::uint32_t kFlood = 0xFFFFFFFFu;
inline constexpr std::size_t kHeaderSize = 16;
inline constexpr std::size_t kTagSize = 16;
inline constexpr std::size_t kMaxFrame = std::size_t{64} << 20;  // fence blobs of large jobs

struct Header {
    Type type;
    std::uint8_t flags = 0;
    std::uint32_t dst = kHead;
    std::uint32_t src = kHead;
};

// A payload, field by field.
class Writer {
public:
    Writer &u8(std::uint8_t v);
    Writer &u16(std::uint16_t v);
    Writer &u32(std::uint32_t v);
    Writer &u64(std::uint64_t v);
    Writer &bytes(std::span<const std::uint8_t> b);  // u32 length, then the bytes
    Writer &str(const std::string &s);
    const std::vector<std::uint8_t> &data() const { return buf_; }

private:
    std::vector<std::uint8_t> buf_;
};

// Reads what a Writer wrote; after a read past the end every read gives 0
// or empty and ok() is false.
class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> payload) : p_(payload) {}
    std::uint8_t u8();
    std::uint16_t u16();
    std::uint32_t u32();
    std::uint64_t u64();
    std::vector<std::uint8_t> bytes();
    std::string str();
    bool ok() const { return ok_; }
    bool done() const { return ok_ && at_ == p_.size(); }  // every byte read

private:
    bool take(std::size_t n);
    std::span<const std::uint8_t> p_;
    std::size_t at_ = 0;
    bool ok_ = true;
};

// The frame of `payload`, sealed with the link's key and sequence number.
std::vector<std::uint8_t> seal(const std::string &key, std::uint64_t seq, const Header &h,
                               std::span<const std::uint8_t> payload);

// The first frame of `in` (a link's received bytes, from the start of a frame):
// incomplete (wait for more), ok (header, payload and the bytes it took), or
// bad (malformed, too large, an unknown type or a wrong tag: drop the link).
enum class Opened { incomplete, ok, bad };
struct Frame {
    Header header{};
    std::span<const std::uint8_t> payload;
    std::size_t size = 0;
};
Opened open(const std::string &key, std::uint64_t seq, std::span<const std::uint8_t> in, Frame &out);

}  // namespace ftmpi::launcher::wire
