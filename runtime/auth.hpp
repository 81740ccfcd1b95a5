// Proof of membership: every process of a job's universe (the job and what
// it spawned) holds one 32-byte secret, and the channels between processes
// prove they hold it (docs/security.md).
//
// The secret comes from the launcher: ftmpirun draws it once and gives it to
// every namespace it registers (the job-level PMIx key "ftmpi.secret"). Under
// another PMIx server (Slurm's, prterun) every rank puts 32 random bytes in
// the wire-up exchange and the job uses rank 0's: the exchange is shared by
// the step's processes and no one else. A singleton draws its own.
//
// SHA-256 and HMAC-SHA-256 are written here from FIPS 180-4 and RFC 2104
// (tested against their published vectors), so that no crypto library is
// needed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace ftmpi::runtime::auth {

inline constexpr std::size_t k_secret_size = 32;
using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
public:
    Sha256();
    void update(const void *data, std::size_t len);
    Digest finish();

private:
    void block(const std::uint8_t *p);
    std::array<std::uint32_t, 8> h_;
    std::array<std::uint8_t, 64> buf_{};
    std::size_t fill_ = 0;
    std::uint64_t total_ = 0;
};

using Bytes = std::span<const std::uint8_t>;

inline Bytes bytes(const void *p, std::size_t n) { return {static_cast<const std::uint8_t *>(p), n}; }
inline Bytes bytes(const std::string &s) { return bytes(s.data(), s.size()); }

// HMAC-SHA-256 of the concatenation of `parts` under `key`.
Digest hmac(Bytes key, std::initializer_list<Bytes> parts);

// Equal in time independent of where they differ.
bool equal(const void *a, const void *b, std::size_t n);

// Bytes from the kernel's random source (getrandom). Throws std::runtime_error
// when it cannot be read.
void random_bytes(void *out, std::size_t n);

// A datagram's proof: the first k_tag_size bytes of HMAC(secret, label | data).
inline constexpr std::size_t k_tag_size = 16;
std::array<std::uint8_t, k_tag_size> tag(const std::string &secret, const char *label, const void *data,
                                         std::size_t len);

// 64 bits of HMAC(secret, label): a value only members can compute.
std::uint64_t derive64(const std::string &secret, const char *label);

}  // namespace ftmpi::runtime::auth
