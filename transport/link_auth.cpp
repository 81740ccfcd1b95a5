#include "transport/link_auth.hpp"

#include <cstring>
#include <utility>

#include "runtime/auth.hpp"

namespace ftmpi::transport {
namespace {

void put_u32(std::string &out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(const char *p) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(p[i])) << (8 * i);
    return v;
}

}  // namespace

LinkAuth::LinkAuth(Role role, const std::string &secret, std::uint32_t self, std::uint32_t peer, std::uint32_t ranks,
                   const std::uint8_t *nonce)
    : role_(role), secret_(secret), self_(self), peer_(peer), ranks_(ranks) {
    if (role_ == Role::watcher) {
        std::memcpy(nonce_w_.data(), nonce, k_nonce);
        out_.push_back('H');
        put_u32(out_, self_);
        put_u32(out_, peer_);
        out_.append(reinterpret_cast<const char *>(nonce_w_.data()), k_nonce);
    } else {
        std::memcpy(nonce_l_.data(), nonce, k_nonce);
    }
}

std::array<std::uint8_t, LinkAuth::k_mac> LinkAuth::mac(const char *label) const {
    const std::uint32_t watcher = role_ == Role::watcher ? self_ : peer_;
    const std::uint32_t listener = role_ == Role::watcher ? peer_ : self_;
    std::string ranks;
    put_u32(ranks, watcher);
    put_u32(ranks, listener);
    return runtime::auth::hmac(
        runtime::auth::bytes(secret_),
        {runtime::auth::bytes(label, std::strlen(label)), runtime::auth::bytes(ranks),
         runtime::auth::bytes(nonce_w_.data(), k_nonce), runtime::auth::bytes(nonce_l_.data(), k_nonce)});
}

void LinkAuth::refuse(const char *why) {
    state_ = State::refused;
    why_ = why;
    in_.clear();
}

LinkAuth::State LinkAuth::feed(const void *data, std::size_t len) {
    if (state_ == State::refused || state_ == State::goodbye) return state_;
    // Nothing legitimate is longer than a proof: a peer that streams bytes is refused, not buffered.
    in_.append(static_cast<const char *>(data), len);
    while (!in_.empty() && state_ != State::refused && state_ != State::goodbye && step()) {}
    if (in_.size() > k_proof && state_ == State::pending) refuse("more bytes than any handshake message");
    return state_;
}

bool LinkAuth::step() {
    const char type = in_[0];
    if (role_ == Role::listener) {
        if (!hello_done_) {
            if (type != 'H') return refuse("not a hello"), false;
            if (in_.size() < k_hello) return false;
            const std::uint32_t watcher = get_u32(in_.data() + 1), listener = get_u32(in_.data() + 5);
            if (listener != self_) return refuse("a hello for another rank"), false;
            if (watcher >= ranks_ || watcher == self_) return refuse("a hello from no rank of the job"), false;
            peer_ = watcher;
            std::memcpy(nonce_w_.data(), in_.data() + 9, k_nonce);
            in_.erase(0, k_hello);
            hello_done_ = true;
            const auto m = mac("ftmpi link listener");
            out_.push_back('P');
            out_.append(reinterpret_cast<const char *>(nonce_l_.data()), k_nonce);
            out_.append(reinterpret_cast<const char *>(m.data()), m.size());
            proof_sent_ = true;
            return true;
        }
        if (state_ == State::proven) {  // a proven watcher has nothing more to say
            in_.clear();
            return false;
        }
        if (type != 'W') return refuse("not the watcher's proof"), false;
        if (in_.size() < k_reply) return false;
        const auto m = mac("ftmpi link watcher");
        if (!runtime::auth::equal(m.data(), in_.data() + 1, k_mac)) return refuse("a wrong proof"), false;
        in_.erase(0, k_reply);
        state_ = State::proven;
        return true;
    }
    if (state_ == State::proven) {  // the listener's only word after its proof
        if (type != 'B') return refuse("neither a goodbye nor the end after the proof"), false;
        in_.clear();
        state_ = State::goodbye;
        return true;
    }
    if (type != 'P') return refuse("not the listener's proof"), false;
    if (in_.size() < k_proof) return false;
    std::memcpy(nonce_l_.data(), in_.data() + 1, k_nonce);
    const auto m = mac("ftmpi link listener");
    if (!runtime::auth::equal(m.data(), in_.data() + 1 + k_nonce, k_mac)) return refuse("a wrong proof"), false;
    in_.erase(0, k_proof);
    const auto mine = mac("ftmpi link watcher");
    out_.push_back('W');
    out_.append(reinterpret_cast<const char *>(mine.data()), mine.size());
    state_ = State::proven;
    return true;
}

std::string LinkAuth::take_output() { return std::exchange(out_, {}); }

}  // namespace ftmpi::transport
