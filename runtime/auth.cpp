#include "runtime/auth.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ftmpi::runtime::auth {
namespace {

constexpr std::uint32_t k_sha256_round[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t sha256_rotr(std::uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

}  // namespace

Sha256::Sha256() : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const std::uint8_t *p) {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
        w[i] = static_cast<std::uint32_t>(p[4 * i]) << 24 | static_cast<std::uint32_t>(p[4 * i + 1]) << 16 |
               static_cast<std::uint32_t>(p[4 * i + 2]) << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
        const std::uint32_t s0 = sha256_rotr(w[i - 15], 7) ^ sha256_rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const std::uint32_t s1 = sha256_rotr(w[i - 2], 17) ^ sha256_rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
        const std::uint32_t t1 = h + (sha256_rotr(e, 6) ^ sha256_rotr(e, 11) ^ sha256_rotr(e, 25)) +
                                 ((e & f) ^ (~e & g)) + k_sha256_round[i] + w[i];
        const std::uint32_t t2 =
            (sha256_rotr(a, 2) ^ sha256_rotr(a, 13) ^ sha256_rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h_[0] += a;
    h_[1] += b;
    h_[2] += c;
    h_[3] += d;
    h_[4] += e;
    h_[5] += f;
    h_[6] += g;
    h_[7] += h;
}

void Sha256::update(const void *data, std::size_t len) {
    const auto *p = static_cast<const std::uint8_t *>(data);
    total_ += len;
    while (len > 0) {
        const std::size_t n = std::min(len, buf_.size() - fill_);
        std::memcpy(buf_.data() + fill_, p, n);
        fill_ += n;
        p += n;
        len -= n;
        if (fill_ == buf_.size()) {
            block(buf_.data());
            fill_ = 0;
        }
    }
}

Digest Sha256::finish() {
    const std::uint64_t bits = total_ * 8;
    const std::uint8_t one = 0x80, zero = 0;
    update(&one, 1);
    while (fill_ != 56) update(&zero, 1);
    std::uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
    update(len, 8);
    Digest out;
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j)
            out[static_cast<std::size_t>(4 * i + j)] =
                static_cast<std::uint8_t>(h_[static_cast<std::size_t>(i)] >> (24 - 8 * j));
    return out;
}

Digest hmac(Bytes key, std::initializer_list<Bytes> parts) {
    std::array<std::uint8_t, 64> k{};
    if (key.size() > k.size()) {
        Sha256 s;
        s.update(key.data(), key.size());
        const Digest d = s.finish();
        std::memcpy(k.data(), d.data(), d.size());
    } else if (!key.empty()) {
        std::memcpy(k.data(), key.data(), key.size());
    }
    std::array<std::uint8_t, 64> pad;
    for (std::size_t i = 0; i < pad.size(); ++i) pad[i] = k[i] ^ 0x36;
    Sha256 inner;
    inner.update(pad.data(), pad.size());
    for (const Bytes &p : parts) inner.update(p.data(), p.size());
    const Digest in = inner.finish();
    for (std::size_t i = 0; i < pad.size(); ++i) pad[i] = k[i] ^ 0x5c;
    Sha256 outer;
    outer.update(pad.data(), pad.size());
    outer.update(in.data(), in.size());
    return outer.finish();
}

bool equal(const void *a, const void *b, std::size_t n) {
    const auto *x = static_cast<const volatile std::uint8_t *>(a);
    const auto *y = static_cast<const volatile std::uint8_t *>(b);
    std::uint8_t diff = 0;
    for (std::size_t i = 0; i < n; ++i) diff = static_cast<std::uint8_t>(diff | (x[i] ^ y[i]));
    return diff == 0;
}

void random_bytes(void *out, std::size_t n) {
    auto *p = static_cast<std::uint8_t *>(out);
    while (n > 0) {
        const ssize_t got = ::getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
        }
        p += got;
        n -= static_cast<std::size_t>(got);
    }
}

std::array<std::uint8_t, k_tag_size> tag(const std::string &secret, const char *label, const void *data,
                                         std::size_t len) {
    const Digest d = hmac(bytes(secret), {bytes(label, std::strlen(label)), bytes(data, len)});
    std::array<std::uint8_t, k_tag_size> out;
    std::memcpy(out.data(), d.data(), out.size());
    return out;
}

std::uint64_t derive64(const std::string &secret, const char *label) {
    const Digest d = hmac(bytes(secret), {bytes(label, std::strlen(label))});
    std::uint64_t v;
    std::memcpy(&v, d.data(), sizeof v);
    return v;
}

}  // namespace ftmpi::runtime::auth
