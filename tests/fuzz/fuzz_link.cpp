// libFuzzer target: the liveness links' handshake (transport/link_auth.cpp),
// fed what reaches either end of a link from whoever connected.
//
// Input: a mode byte, then the bytes, cut into pieces by a length byte before
// each. Mode 0: a listener reads them; mode 1: a watcher reads them; mode 2:
// a real handshake runs first, then the watcher reads them after the
// listener's proof. Checked: nothing crashes (ASan, UBSan); without the
// secret no end ever takes the other for proven (modes 0 and 1); a listener
// answers with one proof at most, and only for a hello naming it and a rank
// of the job; after a proven handshake the watcher ends in a goodbye or a
// refusal, or still waits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "transport/link_auth.hpp"

using ftmpi::transport::LinkAuth;

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

const std::string k_secret(32, 's');
constexpr std::uint32_t k_ranks = 8, k_listener = 5, k_watcher = 2;
const std::uint8_t k_nonce_w[16] = {7}, k_nonce_l[16] = {9};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 1) return 0;
    const int mode = data[0] % 3;
    std::size_t at = 1;
    LinkAuth listener(LinkAuth::Role::listener, k_secret, k_listener, 0, k_ranks, k_nonce_l);
    LinkAuth watcher(LinkAuth::Role::watcher, k_secret, k_watcher, k_listener, k_ranks, k_nonce_w);
    if (mode == 2) {
        const std::string hello = watcher.take_output();
        listener.feed(hello.data(), hello.size());
        const std::string proof = listener.take_output();
        check(watcher.feed(proof.data(), proof.size()) == LinkAuth::State::proven);
        const std::string reply = watcher.take_output();
        check(listener.feed(reply.data(), reply.size()) == LinkAuth::State::proven);
    } else {
        (void)watcher.take_output();
    }
    LinkAuth &reader = mode == 0 ? listener : watcher;
    std::size_t proofs = 0;
    while (at < size) {
        const std::size_t n = std::min<std::size_t>(data[at], size - at - 1);
        ++at;
        const auto state = reader.feed(data + at, n);
        at += n;
        const std::string out = reader.take_output();
        if (mode == 0) {
            check(state != LinkAuth::State::proven && state != LinkAuth::State::goodbye);
            if (!out.empty()) {
                check(out.size() == LinkAuth::k_proof && out[0] == 'P' && ++proofs == 1);
                check(reader.peer() < k_ranks && reader.peer() != k_listener);
            }
        } else if (mode == 1) {
            check(state != LinkAuth::State::proven && state != LinkAuth::State::goodbye);
            check(out.empty());
        } else {
            check(out.empty());
            if (state == LinkAuth::State::refused) check(!reader.why().empty());
        }
    }
    return 0;
}
