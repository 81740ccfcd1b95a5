#include <catch2/catch.hpp>

#include <cstdlib>
#include <thread>
#include <vector>

#include "transport/shm/ring.hpp"

using namespace ftmpi::transport::shm;

namespace {

// A ring in ordinary memory (zero-filled, as a fresh shared segment is).
struct Mem {
    explicit Mem(std::size_t capacity) : capacity(capacity) {
        base = std::aligned_alloc(k_line, ring_footprint(capacity));
        std::memset(base, 0, ring_footprint(capacity));
    }
    ~Mem() { std::free(base); }
    std::size_t capacity;
    void *base;
};

}  // namespace

TEST_CASE("a record carries its fields and payload", "[shm][ring]") {
    Mem m(4096);
    RingWriter w(m.base, m.capacity);
    RingReader r(m.base, m.capacity);
    CHECK(r.take() == nullptr);
    const char text[] = "hello, ring";
    REQUIRE(w.write(0x1234, 77, 5, text, sizeof text));
    const RecordHeader *h = r.take();
    REQUIRE(h != nullptr);
    CHECK(h->match == 0x1234);
    CHECK(h->uid == 77);
    CHECK(h->rank == 5);
    CHECK(h->length == sizeof text);
    CHECK(std::memcmp(RingReader::payload(h), text, sizeof text) == 0);
    CHECK(r.take() == nullptr);
    r.release();
}

TEST_CASE("a full ring refuses until the reader releases, and pads at the end", "[shm][ring]") {
    Mem m(4096);
    RingWriter w(m.base, m.capacity);
    RingReader r(m.base, m.capacity);
    std::vector<char> data(1000, 'x');  // 1032 bytes: 17 lines (1088)
    int written = 0;
    while (w.write(1, 0, 0, data.data(), data.size())) ++written;
    CHECK(written == 3);  // 3 * 1088 = 3264; a 4th would cross the end
    CHECK_FALSE(w.fits(data.size()));
    // Taken but not released: still full.
    REQUIRE(r.take() != nullptr);
    CHECK_FALSE(w.write(1, 0, 0, data.data(), data.size()));
    r.release();
    // 1088 free at the start, 832 at the end: the record goes after a pad.
    REQUIRE(w.write(2, 0, 0, data.data(), data.size()));
    int read = 0;
    while (const RecordHeader *h = r.take()) {
        ++read;
        if (read == 3) CHECK(h->match == 2);  // the pad was skipped
    }
    CHECK(read == 3);
    r.release();
    CHECK(w.fits(max_payload(m.capacity)));
}

TEST_CASE("a record half written by a writer that died is never seen", "[shm][ring]") {
    Mem m(4096);
    {
        RingWriter w(m.base, m.capacity);
        REQUIRE(w.write(1, 0, 0, "a", 1));
        char *p = w.reserve(100);  // the writer dies here: payload written, no stamp
        REQUIRE(p != nullptr);
        std::memset(p, 'z', 100);
    }
    RingReader r(m.base, m.capacity);
    const RecordHeader *h = r.take();
    REQUIRE(h != nullptr);
    CHECK(h->match == 1);
    CHECK(r.take() == nullptr);  // and stays so: nothing else writes this ring
    CHECK(r.take() == nullptr);
}

TEST_CASE("a stale record of an earlier lap is not taken for a new one", "[shm][ring]") {
    Mem m(4096);
    RingWriter w(m.base, m.capacity);
    RingReader r(m.base, m.capacity);
    // Fill one lap with 64-byte records and read them all.
    for (int i = 0; i < 64; ++i) REQUIRE(w.write(static_cast<std::uint64_t>(i), 0, 0, nullptr, 0));
    for (int i = 0; i < 64; ++i) REQUIRE(r.take() != nullptr);
    r.release();
    // The next lap's first record is reserved but unpublished: the old record
    // at that place (stamp of lap 0) must not be taken again.
    REQUIRE(w.reserve(0) != nullptr);
    CHECK(r.take() == nullptr);
}

TEST_CASE("two threads pass 200000 records in order through a small ring", "[shm][ring]") {
    Mem m(16384);
    RingWriter w(m.base, m.capacity);
    RingReader r(m.base, m.capacity);
    constexpr std::uint64_t n = 200000;
    std::thread producer([&] {
        std::vector<char> buf(3000);
        for (std::uint64_t i = 0; i < n; ++i) {
            const std::size_t len = (i * 7919) % buf.size();
            std::memset(buf.data(), static_cast<int>(i & 0xff), len);
            while (!w.write(i, i * 3, 0, buf.data(), len)) std::this_thread::yield();
        }
    });
    std::uint64_t next = 0, bad = 0;
    while (next < n) {
        const RecordHeader *h = r.take();
        if (h == nullptr) {
            r.release();
            std::this_thread::yield();
            continue;
        }
        const std::size_t len = (next * 7919) % 3000;
        if (h->match != next || h->uid != next * 3 || h->length != len) ++bad;
        const char *p = RingReader::payload(h);
        for (std::size_t k = 0; k < len; k += 97)
            if (static_cast<unsigned char>(p[k]) != (next & 0xff)) ++bad;
        ++next;
        if ((next & 3) == 0) r.release();
    }
    r.release();
    producer.join();
    CHECK(bad == 0);
}

TEST_CASE("a writer that finds the ring empty starts over at its beginning", "[shm][ring]") {
    Mem m(65536);
    RingWriter w(m.base, m.capacity);
    RingReader r(m.base, m.capacity);
    char *const first = static_cast<char *>(m.base) + sizeof(RingControl) + sizeof(RecordHeader);
    std::vector<char> data(1000, 'y');
    // Ping-pong: each record is taken before the next is written.
    for (int i = 0; i < 200; ++i) {
        char *p = w.reserve(data.size());
        REQUIRE(p != nullptr);
        // Never further than k_rewind (4 KiB) plus one record from the start.
        CHECK(p - first < 4096 + 1088);
        std::memcpy(p, data.data(), data.size());
        w.publish(static_cast<std::uint64_t>(i), 0, 0, data.size());
        const RecordHeader *h = r.take();
        REQUIRE(h != nullptr);
        CHECK(h->match == static_cast<std::uint64_t>(i));
        r.release();
    }
    // A burst: the writer waits for the reader at most for the pad, and
    // nothing is lost or reordered.
    int taken = 0, refused = 0;
    for (int i = 0; i < 40; ++i) {
        while (!w.write(static_cast<std::uint64_t>(1000 + i), 0, 0, data.data(), data.size())) {
            ++refused;
            REQUIRE(refused < 100);
            while (const RecordHeader *h = r.take()) CHECK(h->match == static_cast<std::uint64_t>(1000 + taken++));
            r.release();
        }
    }
    while (const RecordHeader *h = r.take()) CHECK(h->match == static_cast<std::uint64_t>(1000 + taken++));
    CHECK(taken == 40);
    CHECK(refused <= 1);
}

TEST_CASE("a record that does not fit the ring leaves it corrupt, and nothing more is read", "[shm][ring]") {
    Mem m(4096);
    RingWriter w(m.base, 4096);
    RingReader r(m.base, 4096);
    REQUIRE(w.write(1, 0, 0, "ok", 2));
    // A second record whose length runs past the end of the ring (no writer
    // makes one: a broken or hostile process of the job).
    char *p = w.reserve(8);
    REQUIRE(p != nullptr);
    w.publish(2, 0, 0, 8);
    auto *h = reinterpret_cast<RecordHeader *>(p - sizeof(RecordHeader));
    h->length = 4096;
    const RecordHeader *first = r.take();
    REQUIRE(first != nullptr);
    CHECK(first->match == 1);
    CHECK(r.take() == nullptr);
    CHECK(r.corrupt());
    REQUIRE(w.write(3, 0, 0, "later", 5));
    CHECK(r.take() == nullptr);  // stays stopped
}
