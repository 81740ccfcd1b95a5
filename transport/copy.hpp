// Copies of eager payloads. Most are a few bytes (an 8-byte ping-pong, a
// collective's counts), where a call to libc's memcpy, chosen at run time
// by size and CPU, costs more than the copy itself: up to 16 bytes are moved
// inline here, as two overlapping words (or bytes below 8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ftmpi::transport {

inline void copy_payload(void *dst, const void *src, std::size_t n) {
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    if (n >= 8 && n <= 16) {
        std::uint64_t a, b;
        std::memcpy(&a, s, 8);
        std::memcpy(&b, s + n - 8, 8);
        std::memcpy(d, &a, 8);
        std::memcpy(d + n - 8, &b, 8);
    } else if (n < 8) {
        for (std::size_t i = 0; i < n; ++i) d[i] = s[i];
    } else {
        std::memcpy(d, s, n);
    }
}

}  // namespace ftmpi::transport
