// Frames between ftmpirun's head and its daemons (ftmpirun across nodes).
//
// A frame is a 16-byte header, a payload and a 16-byte tag:
//   u32 len (of the whole frame) | u8 type | u8 flags | u16 0 | u32 dst | u32 src | payload | tag
// little-endian, dst and src tree vertices (tree.hpp; kFlood: every vertex).
// The tag is the first 16 bytes of HMAC(launch key, "ftmpi launcher frame"
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

// The frames, and their payloads (field by field; "ids" is a u32 count
// then that many u32 process ids; h: the head, d: a daemon). Every frame
// from the head, and every frame to it, starts with a u64 sequence number
// (journal.hpp), but hello and attach; the payloads below come after it.
enum class Type : std::uint8_t {
    hello = 1,     // d -> h, on a new link: str node name, u32 pid, u32 n, n x str address (for children)
    tree,          // h -> d: u32 vertex, u32 nodes, u32 fanout, u32 n, n x str parent's address (none: the head)
    attach,        // d -> its parent (answered in kind): u32 vertex, u64 the last of the head's frames it saw
    ready,         // d -> h: attached to its parent (empty)
    launch,        // h flood: JobSettings, NamespaceSpec (job_spec.hpp)
    started,       // d -> h: u32 base, u32 n, n x (u32 id, u32 pid): the namespace's processes it started
    io,            // d -> h: u32 id, u8 stream (1 stdout, 2 stderr), bytes (whole lines)
    stdin_data,    // h -> d of process 0: bytes (empty: end of input)
    stdin_credit,  // d -> h: u32 bytes written to process 0's stdin
    proc_state,    // d -> h: u32 id, u8 (1 connected to PMIx, 2 finalized, 3 stopped, 4 running again)
    proc_exit,     // d -> h: u32 id, u32 wait status, u8 flags (1 connected, 2 finalized, 4 killed by ftmpirun)
    proc_failed,   // h flood: u32 n, n x (u32 id, u32 exit code): tell every local client
    kill,          // -> d: u32 signal, u8 teardown, ids (none: every process of that daemon)
    abort,         // d -> h: u32 id, u32 status, str message, u8 all, ids
    fence_up,      // d -> h: u64 signature, ids (participants), bytes (this node's contribution)
    fence_down,    // h -> d: u64 signature, u32 status, bytes (every node's contributions)
    dmodex_req,    // d -> d of the process: u64 tag, u32 id
    dmodex_rep,    // d -> d that asked: u64 tag, u32 status, bytes
    spawn_req,  // d -> h: u64 tag, u32 requester id, u32 n, n x (str cmd, argv, env, str cwd, u32 maxprocs, str host)
    ns_add,     // h flood: NamespaceSpec of a spawned namespace
    spawn_rep,  // h -> d: u64 tag, u32 status, u32 base
    node_lost,  // h flood: u32 vertex (Tree::lose); d -> h: u32 vertex (a child), str why
    reparent,   // h flood: u32 vertex, u32 new parent (Tree::reparent)
    heartbeat,  // either way on a quiet link (empty)
    exit,       // h flood: the job is over
    ack,        // either way: u64 the last of the other end's numbered frames that came (journal.hpp)
    name_req,   // d -> h: u64 tag, u8 op (name_service::Op), u32 n, n x (str key, str value)
    name_rep,   // h -> d: u64 tag, u32 status, u32 n, n x (str key, str value) (what a lookup found)
};
inline constexpr std::uint8_t kLastType = static_cast<std::uint8_t>(Type::name_rep);

inline constexpr std::uint32_t kHead = 0;
inline constexpr std::uint32_t kFlood = 0xFFFFFFFFu;
inline constexpr std::uint32_t kUnassigned = 0xFFFFFFFEu;  // a daemon's src before its tree frame

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
    void fail() { ok_ = false; }                           // a value out of range

private:
    bool take(std::size_t n);
    std::span<const std::uint8_t> p_;
    std::size_t at_ = 0;
    bool ok_ = true;
};

// ids: a u32 count, then the ids (each below 2^31, at most 2^20 of them;
// otherwise the reader fails).
void put_ids(Writer &w, const std::vector<int> &ids);
std::vector<int> get_ids(Reader &r);

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
