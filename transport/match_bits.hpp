// Wire format of every tagged message: the 64 match bits and the 64 bits of CQ data.
//
//   match bits, user messages:  | proto:4 | context:29 | tag:31 |
//   match bits, bulk data:      | proto:4 | transfer id:60      |
//   CQ data:                    | source process:32 | source rank in the communicator:32 |
//
// Bulk messages carry their match bits as the libfabric tag (the receive is always
// posted before the sender may send). Eager and control messages are untagged and
// carry a 16-byte Header: the same 64 match bits, then the 64-bit uid of the
// communicator they belong to. libfabric 1.17's shm provider loses tagged
// messages that arrive before a matching receive is posted (see
// docs/transport.md). The top bit of `proto` marks bulk messages.
//
// The uid makes a message of one communicator unable to match on another that
// reuses its context id (a revoked or freed one's late traffic): the receiver
// routes by context and accepts only the uid of the communicator it has there.
// Every mask below is derived from its field width; nothing is written out by hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ftmpi::transport {

enum class Proto : std::uint8_t {
    eager = 0,  // payload is the user's data
    rts = 1,    // request to send: RtsPayload
    cts = 2,    // clear to send: CtsPayload
    fin = 3,    // rendezvous data received (shm links): CtsPayload naming the sender id
    abort = 4,  // the sender will never send the data a CTS asked for: CtsPayload naming the transfer id
    hello = 5,  // no payload: connects a pair at init (OfiTransport::preconnect; shm: the pair's segment is mapped)
    frag = 6,   // shm streaming rendezvous: FragHeader, then a piece of the data
    bulk = 8,   // rendezvous payload, matched by transfer id
};

namespace bits {
inline constexpr unsigned tag_width = 31;
inline constexpr unsigned ctx_width = 29;
inline constexpr unsigned proto_width = 4;
inline constexpr unsigned id_width = tag_width + ctx_width;
inline constexpr unsigned tag_shift = 0;
inline constexpr unsigned ctx_shift = tag_shift + tag_width;
inline constexpr unsigned proto_shift = ctx_shift + ctx_width;
static_assert(proto_shift + proto_width == 64, "match bits must fill exactly 64 bits");

constexpr std::uint64_t field_mask(unsigned width) { return (std::uint64_t{1} << width) - 1; }
inline constexpr std::uint64_t tag_mask = field_mask(tag_width) << tag_shift;
inline constexpr std::uint64_t ctx_mask = field_mask(ctx_width) << ctx_shift;
inline constexpr std::uint64_t proto_mask = field_mask(proto_width) << proto_shift;
inline constexpr std::uint64_t id_mask = field_mask(id_width);
// Set in every bulk message and in no other.
inline constexpr std::uint64_t bulk_bit = std::uint64_t{1} << (proto_shift + proto_width - 1);
static_assert((tag_mask | ctx_mask | proto_mask) == ~std::uint64_t{0});
static_assert((tag_mask & ctx_mask) == 0 && (ctx_mask & proto_mask) == 0);
static_assert((static_cast<std::uint64_t>(Proto::bulk) << proto_shift) & bulk_bit);
static_assert(!((static_cast<std::uint64_t>(Proto::cts) << proto_shift) & bulk_bit));
}  // namespace bits

// The first bytes of every untagged (eager and control) message.
struct Header {
    std::uint64_t match;  // pack_match(...)
    std::uint64_t uid;    // the communicator's uid (0 on CTS, FIN and ABORT)
};
static_assert(sizeof(Header) == 16);

// Largest user tag that fits (MPI_TAG_UB).
inline constexpr std::int32_t max_tag = static_cast<std::int32_t>(bits::field_mask(bits::tag_width));
// Largest context id.
inline constexpr std::uint32_t max_context = static_cast<std::uint32_t>(bits::field_mask(bits::ctx_width));

struct Match {
    Proto proto;
    std::uint32_t context;
    std::int32_t tag;
};

constexpr std::uint64_t pack_match(Proto proto, std::uint32_t context, std::int32_t tag) {
    return (static_cast<std::uint64_t>(proto) << bits::proto_shift) |
           ((static_cast<std::uint64_t>(context) << bits::ctx_shift) & bits::ctx_mask) |
           ((static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag)) << bits::tag_shift) & bits::tag_mask);
}

constexpr Match unpack_match(std::uint64_t m) {
    return Match{static_cast<Proto>((m & bits::proto_mask) >> bits::proto_shift),
                 static_cast<std::uint32_t>((m & bits::ctx_mask) >> bits::ctx_shift),
                 static_cast<std::int32_t>((m & bits::tag_mask) >> bits::tag_shift)};
}

constexpr std::uint64_t pack_bulk(std::uint64_t transfer_id) {
    return (static_cast<std::uint64_t>(Proto::bulk) << bits::proto_shift) | (transfer_id & bits::id_mask);
}
constexpr std::uint64_t unpack_bulk(std::uint64_t m) { return m & bits::id_mask; }

constexpr std::uint64_t pack_source(std::uint32_t process, std::int32_t rank) {
    return (static_cast<std::uint64_t>(process) << 32) | static_cast<std::uint32_t>(rank);
}
constexpr std::uint32_t source_process(std::uint64_t data) { return static_cast<std::uint32_t>(data >> 32); }
constexpr std::int32_t source_rank(std::uint64_t data) { return static_cast<std::int32_t>(data & 0xffffffffu); }

// Payloads of the control messages.
struct RtsPayload {
    std::uint64_t length;     // bytes the sender has
    std::uint64_t sender_id;  // the sender's transfer id, echoed in the CTS
    // Single-copy over shm (all 0 otherwise): where the receiver may read the
    // data itself (process_vm_readv), and the word it reads right after it,
    // which holds sender_id while the send still stands (0 once given up).
    std::uint64_t address;
    std::uint64_t ticket_address;
    std::uint64_t pid;
};
// A piece of a rendezvous message streamed through a shm ring (where single
// copy is refused): the receiver's transfer id and where the piece goes.
struct FragHeader {
    std::uint64_t transfer_id;
    std::uint64_t offset;
};
struct CtsPayload {
    std::uint64_t sender_id;    // from the RTS
    std::uint64_t transfer_id;  // the receiver's id: the bulk message carries pack_bulk(transfer_id)
    std::uint64_t length;       // bytes the receiver takes (min of both sides)
};

// ---- Decoding, with every length checked (the only way received bytes are read) ----

// The fixed part an untagged message of protocol `p` starts its payload with
// (`rts_bytes`: the transport's RTS payload, `frag_bytes`: its fragment
// header, 0 where it has none); -1 for a protocol no untagged message
// carries (bulk, unknown values).
constexpr long fixed_payload(Proto p, std::size_t rts_bytes, std::size_t frag_bytes) {
    switch (p) {
    case Proto::eager:
    case Proto::hello: return 0;
    case Proto::rts: return static_cast<long>(rts_bytes);
    case Proto::cts:
    case Proto::fin:
    case Proto::abort: return static_cast<long>(sizeof(CtsPayload));
    case Proto::frag: return frag_bytes == 0 ? -1 : static_cast<long>(frag_bytes);
    case Proto::bulk: return -1;
    }
    return -1;
}

// Why an untagged message with these match bits and `len` bytes of payload
// cannot be acted on, or nullptr when it can.
constexpr const char *malformed(std::uint64_t match, std::size_t len, std::size_t rts_bytes, std::size_t frag_bytes) {
    const long fixed = fixed_payload(unpack_match(match).proto, rts_bytes, frag_bytes);
    if (fixed < 0) return "a protocol no untagged message carries";
    if (len < static_cast<std::size_t>(fixed)) return "a payload shorter than its protocol's fixed part";
    return nullptr;
}

// An untagged message of a network endpoint: Header, a 64-bit token, the payload.
struct Untagged {
    Header header{};
    const char *payload = nullptr;
    std::size_t len = 0;
};
inline constexpr std::size_t k_untagged_header = sizeof(Header) + sizeof(std::uint64_t);

// Reads `len` bytes that arrived into `out`; why they cannot be acted on, or
// nullptr. The token is compared before anything else is read.
inline const char *read_untagged(const char *bytes, std::size_t len, std::uint64_t token, std::size_t rts_bytes,
                                 Untagged &out) {
    if (len < k_untagged_header) return "shorter than the header";
    std::uint64_t theirs = 0;
    std::memcpy(&theirs, bytes + sizeof(Header), sizeof theirs);
    if (theirs != token) return "without the job's token";
    std::memcpy(&out.header, bytes, sizeof(Header));
    out.payload = bytes + k_untagged_header;
    out.len = len - k_untagged_header;
    return malformed(out.header.match, out.len, rts_bytes, 0);
}

}  // namespace ftmpi::transport
