// libFuzzer target: the decoders of what reaches a data endpoint
// (transport/match_bits.hpp): an untagged message of a network endpoint
// (header, token, payload) and the protocol check both transports make
// before acting on a message.
//
// Input: a mode byte, then the message. Mode 0: the job's token is written
// over bytes 16..23 first (so that the fuzzer explores past the token check);
// mode 1: as it came. Checked: nothing crashes (ASan, UBSan; the message is
// an exact-size heap copy, so a read past it is caught); a message without
// the token is refused before anything else is read; what is accepted has a
// payload inside the message, at least as long as its protocol's fixed part,
// which is read as the transports read it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "transport/match_bits.hpp"

using namespace ftmpi::transport;

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

constexpr std::uint64_t k_token = 0x5eed5eed5eed5eedull;

// Reads the fixed part as the transports do (a copy of exactly its size).
void read_fixed(Proto proto, const char *payload, std::size_t len) {
    switch (proto) {
    case Proto::rts: {
        RtsPayload r;
        check(len >= sizeof r);
        std::memcpy(&r, payload, sizeof r);
        break;
    }
    case Proto::cts:
    case Proto::fin:
    case Proto::abort: {
        CtsPayload c;
        check(len >= sizeof c);
        std::memcpy(&c, payload, sizeof c);
        break;
    }
    case Proto::eager: {
        volatile char sum = 0;  // every byte of the user's data
        for (std::size_t i = 0; i < len; ++i) sum = static_cast<char>(sum + payload[i]);
        break;
    }
    case Proto::hello: break;
    case Proto::frag:
    case Proto::bulk: check(false);  // never accepted on a network endpoint
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 1) return 0;
    const int mode = data[0] % 2;
    const std::size_t len = size - 1;
    std::unique_ptr<char[]> msg(new char[len > 0 ? len : 1]);
    if (len > 0) std::memcpy(msg.get(), data + 1, len);
    if (mode == 0 && len >= k_untagged_header) std::memcpy(msg.get() + sizeof(Header), &k_token, sizeof k_token);
    Untagged out;
    const char *why = read_untagged(msg.get(), len, k_token, sizeof(RtsPayload), out);
    std::uint64_t theirs = 0;
    if (len >= k_untagged_header) std::memcpy(&theirs, msg.get() + sizeof(Header), sizeof theirs);
    if (len < k_untagged_header || theirs != k_token) {
        check(why != nullptr && out.payload == nullptr);
        return 0;
    }
    if (why != nullptr) {  // refused by its protocol: no untagged message of it, or too short
        const Proto p = unpack_match(out.header.match).proto;
        const long fixed = fixed_payload(p, sizeof(RtsPayload), 0);
        check(fixed < 0 || out.len < static_cast<std::size_t>(fixed));
        return 0;
    }
    check(out.payload == msg.get() + k_untagged_header && out.len == len - k_untagged_header);
    read_fixed(unpack_match(out.header.match).proto, out.payload, out.len);
    return 0;
}
