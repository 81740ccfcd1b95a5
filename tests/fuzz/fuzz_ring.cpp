// libFuzzer target: the shared-memory ring's reader (transport/shm/ring.hpp)
// and the record check of the shm transport, fed a ring whose bytes another
// process wrote.
//
// Input: a mode byte, then bytes. Mode 0: the bytes are the ring's data area
// (1 KiB, zero-filled past the input) with every line published, as a
// writer that wrote anything at all would leave it; the reader takes records
// until it stops. Checked: nothing crashes (ASan, UBSan: the ring is an
// exact-size heap block); every record taken lies inside the ring; records
// the protocol check accepts are read as the transport reads them; a reader
// that found the ring corrupt stays stopped. Mode 1: the bytes are a script
// of writes (a length byte each, with a match byte) and reads against a
// real writer: every record read is the one written, in order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "transport/match_bits.hpp"
#include "transport/shm/ring.hpp"

using namespace ftmpi::transport;
using namespace ftmpi::transport::shm;

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

constexpr std::size_t k_capacity = 1024;
constexpr std::size_t k_rts = 32;  // the shm transport's RTS payload

void read_record(const RecordHeader *h, const char *ring_begin, const char *ring_end) {
    const char *payload = RingReader::payload(h);
    check(reinterpret_cast<const char *>(h) >= ring_begin && payload + h->length <= ring_end);
    if (malformed(h->match, h->length, k_rts, sizeof(FragHeader)) != nullptr) return;
    volatile char sum = 0;
    for (std::uint32_t i = 0; i < h->length; ++i) sum = static_cast<char>(sum + payload[i]);
    if (unpack_match(h->match).proto == Proto::frag) {
        FragHeader f;
        std::memcpy(&f, payload, sizeof f);
        check(h->length - sizeof f <= h->length);
    }
}

void corrupt_image(const std::uint8_t *data, std::size_t size) {
    const std::size_t bytes = ring_footprint(k_capacity);
    std::unique_ptr<char[]> mem(new char[bytes]);
    std::memset(mem.get(), 0, bytes);
    char *area = mem.get() + sizeof(RingControl);
    std::memcpy(area, data, size < k_capacity ? size : k_capacity);
    for (std::size_t line = 0; line < k_capacity; line += k_line) {
        RecordHeader *h = reinterpret_cast<RecordHeader *>(area + line);
        h->stamp.store(line + 1, std::memory_order_relaxed);
    }
    new (mem.get()) RingControl;
    RingReader reader(mem.get(), k_capacity);
    std::size_t taken = 0;
    while (const RecordHeader *h = reader.take()) {
        read_record(h, area, area + k_capacity);
        check(++taken <= k_capacity / k_line);
    }
    if (reader.corrupt()) check(reader.take() == nullptr);
    reader.release();
}

void roundtrip(const std::uint8_t *data, std::size_t size) {
    const std::size_t bytes = ring_footprint(k_capacity);
    std::unique_ptr<char[]> mem(new char[bytes]);
    std::memset(mem.get(), 0, bytes);
    new (mem.get()) RingControl;
    RingWriter writer(mem.get(), k_capacity);
    RingReader reader(mem.get(), k_capacity);
    struct Sent {
        std::uint64_t match;
        std::vector<char> bytes;
    };
    std::deque<Sent> sent;
    std::uint32_t counter = 0;
    for (std::size_t i = 0; i + 1 < size; i += 2) {
        const std::size_t len = data[i] % (max_payload(k_capacity) + 1);
        if (data[i + 1] & 1) {  // write
            Sent s{pack_match(Proto::eager, data[i + 1], static_cast<std::int32_t>(counter)), std::vector<char>(len)};
            for (std::size_t k = 0; k < len; ++k) s.bytes[k] = static_cast<char>(counter + k);
            if (writer.write(s.match, 7, 3, s.bytes.data(), len)) sent.push_back(std::move(s));
            ++counter;
        } else {  // read up to data[i] % 4 records, then give the space back
            for (int k = data[i] % 4; k > 0; --k) {
                const RecordHeader *h = reader.take();
                if (h == nullptr) {
                    check(sent.empty() && !reader.corrupt());
                    break;
                }
                check(!sent.empty());
                const Sent &s = sent.front();
                check(h->match == s.match && h->uid == 7 && h->rank == 3 && h->length == s.bytes.size());
                check(std::memcmp(RingReader::payload(h), s.bytes.data(), s.bytes.size()) == 0);
                sent.pop_front();
            }
            reader.release();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 1) return 0;
    if (data[0] % 2 == 0) corrupt_image(data + 1, size - 1);
    else roundtrip(data + 1, size - 1);
    return 0;
}
