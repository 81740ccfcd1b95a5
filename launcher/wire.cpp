// Frames between ftmpirun's head and its daemons (wire.hpp).
#include "wire.hpp"

#include <cstring>

#include "runtime/auth.hpp"

namespace ftmpi::launcher::wire {
namespace {

namespace auth = ftmpi::runtime::auth;

constexpr char kLabel[] = "ftmpi launcher frame";

template <typename T>
void put(std::vector<std::uint8_t> &b, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

template <typename T>
T get(const std::uint8_t *p) {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v | static_cast<T>(T(p[i]) << (8 * i)));
    return v;
}

auth::Digest mac(const std::string &key, std::uint64_t seq, std::span<const std::uint8_t> framed) {
    std::vector<std::uint8_t> s;
    put(s, seq);
    return auth::hmac(auth::bytes(key), {auth::bytes(kLabel, sizeof kLabel - 1), auth::Bytes(s), framed});
}

}  // namespace

Writer &Writer::u8(std::uint8_t v) { return put(buf_, v), *this; }
Writer &Writer::u16(std::uint16_t v) { return put(buf_, v), *this; }
Writer &Writer::u32(std::uint32_t v) { return put(buf_, v), *this; }
Writer &Writer::u64(std::uint64_t v) { return put(buf_, v), *this; }
Writer &Writer::bytes(std::span<const std::uint8_t> b) {
    put(buf_, static_cast<std::uint32_t>(b.size()));
    buf_.insert(buf_.end(), b.begin(), b.end());
    return *this;
}
Writer &Writer::str(const std::string &s) { return bytes(auth::bytes(s)); }

bool Reader::take(std::size_t n) {
    if (!ok_ || p_.size() - at_ < n) {
        ok_ = false;
        return false;
    }
    return true;
}

std::uint8_t Reader::u8() { return take(1) ? p_[at_++] : 0; }
std::uint16_t Reader::u16() {
    if (!take(2)) return 0;
    at_ += 2;
    return get<std::uint16_t>(p_.data() + at_ - 2);
}
std::uint32_t Reader::u32() {
    if (!take(4)) return 0;
    at_ += 4;
    return get<std::uint32_t>(p_.data() + at_ - 4);
}
std::uint64_t Reader::u64() {
    if (!take(8)) return 0;
    at_ += 8;
    return get<std::uint64_t>(p_.data() + at_ - 8);
}
std::vector<std::uint8_t> Reader::bytes() {
    const std::uint32_t n = u32();
    if (!take(n)) return {};
    at_ += n;
    return {p_.begin() + static_cast<std::ptrdiff_t>(at_ - n), p_.begin() + static_cast<std::ptrdiff_t>(at_)};
}
std::string Reader::str() {
    const std::vector<std::uint8_t> b = bytes();
    return {b.begin(), b.end()};
}

std::vector<std::uint8_t> seal(const std::string &key, std::uint64_t seq, const Header &h,
                               std::span<const std::uint8_t> payload) {
    std::vector<std::uint8_t> f;
    f.reserve(kHeaderSize + payload.size() + kTagSize);
    put(f, static_cast<std::uint32_t>(kHeaderSize + payload.size() + kTagSize));
    put(f, static_cast<std::uint8_t>(h.type));
    put(f, h.flags);
    put(f, std::uint16_t{0});
    put(f, h.dst);
    put(f, h.src);
    f.insert(f.end(), payload.begin(), payload.end());
    const auth::Digest d = mac(key, seq, f);
    f.insert(f.end(), d.begin(), d.begin() + kTagSize);
    return f;
}

Opened open(const std::string &key, std::uint64_t seq, std::span<const std::uint8_t> in, Frame &out) {
    if (in.size() < 4) return Opened::incomplete;
    const std::uint32_t len = get<std::uint32_t>(in.data());
    if (len < kHeaderSize + kTagSize || len > kMaxFrame) return Opened::bad;
    if (in.size() < len) return Opened::incomplete;
    const std::uint8_t type = in[4];
    if (type == 0 || type > kLastType || get<std::uint16_t>(in.data() + 6) != 0) return Opened::bad;
    const auth::Digest d = mac(key, seq, in.first(len - kTagSize));
    if (!auth::equal(d.data(), in.data() + len - kTagSize, kTagSize)) return Opened::bad;
    out.header = {static_cast<Type>(type), in[5], get<std::uint32_t>(in.data() + 8),
                  get<std::uint32_t>(in.data() + 12)};
    out.payload = in.subspan(kHeaderSize, len - kHeaderSize - kTagSize);
    out.size = len;
    return Opened::ok;
}

void put_ids(Writer &w, const std::vector<int> &ids) {
    w.u32(static_cast<std::uint32_t>(ids.size()));
    for (int id : ids) w.u32(static_cast<std::uint32_t>(id));
}

std::vector<int> get_ids(Reader &r) {
    const std::uint32_t n = r.u32();
    std::vector<int> out;
    if (n > (1u << 20)) r.fail();
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        const std::uint32_t id = r.u32();
        if (id > 0x7FFFFFFFu) r.fail();
        out.push_back(static_cast<int>(id));
    }
    if (!r.ok()) out.clear();
    return out;
}

}  // namespace ftmpi::launcher::wire
