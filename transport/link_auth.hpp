// The handshake that opens a liveness link (transport/liveness.hpp): both
// ends prove they hold the universe's secret (runtime/auth.hpp) with an HMAC
// over two fresh nonces, so the secret never crosses the wire and a recorded
// handshake proves nothing later.
//
//   watcher  -> listener  'H' | watcher rank u32 | listener rank u32 | nonce_w[16]
//   listener -> watcher   'P' | nonce_l[16] | HMAC(K, "ftmpi link listener" | ranks | nonce_w | nonce_l)
//   watcher  -> listener  'W' | HMAC(K, "ftmpi link watcher" | ranks | nonce_w | nonce_l)
//   listener -> watcher   'B'   (goodbye: it leaves normally), only after its 'P'
//
// Ranks are little-endian. A pure state machine over bytes (no sockets), so
// that it can be unit-tested and fuzzed (tests/fuzz/fuzz_link.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ftmpi::transport {

class LinkAuth {
public:
    enum class Role : std::uint8_t { watcher, listener };
    enum class State : std::uint8_t {
        pending,  // handshake under way
        proven,   // the other end holds the secret (listener: and the watcher knows it does too)
        goodbye,  // watcher: the proven listener said goodbye
        refused,  // the other end failed the handshake or broke the protocol: why()
    };
    static constexpr std::size_t k_nonce = 16, k_mac = 32;
    static constexpr std::size_t k_hello = 1 + 4 + 4 + k_nonce, k_proof = 1 + k_nonce + k_mac, k_reply = 1 + k_mac;

    // `peer`: the watcher's listener's rank (for a listener: ignored, read
    // from the hello; ranks at or above `ranks` are refused).
    // `nonce`: this end's fresh random bytes (k_nonce).
    LinkAuth(Role role, const std::string &secret, std::uint32_t self, std::uint32_t peer, std::uint32_t ranks,
             const std::uint8_t *nonce);

    // Takes in what arrived; returns the state after it. Bytes past a
    // refusal or a goodbye are ignored.
    State feed(const void *data, std::size_t len);
    // What this end must send now (the watcher's hello right away); empties it.
    std::string take_output();
    State state() const { return state_; }
    // The listener has sent its proof: a goodbye may follow it.
    bool may_say_goodbye() const { return role_ == Role::listener && proof_sent_; }
    // Part of a message came, and the handshake is not over.
    bool partial() const { return state_ == State::pending && !in_.empty(); }
    std::uint32_t peer() const { return peer_; }
    const std::string &why() const { return why_; }

private:
    std::array<std::uint8_t, k_mac> mac(const char *label) const;
    void refuse(const char *why);
    bool step();  // one message from in_, if whole: whether it consumed one

    Role role_;
    State state_ = State::pending;
    std::string secret_;
    std::uint32_t self_, peer_, ranks_;
    std::array<std::uint8_t, k_nonce> nonce_w_{}, nonce_l_{};
    bool hello_done_ = false, proof_sent_ = false;
    std::string in_, out_, why_;
};

}  // namespace ftmpi::transport
