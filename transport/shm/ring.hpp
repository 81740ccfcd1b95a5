// A single-producer, single-consumer message ring in shared memory: the
// queue that carries one process's messages to one other process of its node
// (transport/shm/shm_transport.cpp keeps one per direction of every pair).
//
// Layout (all zero is an empty ring, so a fresh segment needs no setup):
//   RingControl (one cache line: the consumer's position, written by it alone)
//   `capacity` bytes of records, each starting on a 64-byte boundary:
//     RecordHeader (32 bytes), then the payload; a record never wraps: one
//     that would cross the end is preceded by a pad record to the end.
//
// Generation stamps, not indices, publish a record: the producer writes the
// payload and the header, then the stamp (release), which is the record's
// position plus one. The consumer takes a record only when the stamp at its
// position is exactly that, so a producer that dies halfway through a record
// leaves a stamp from an earlier lap (or zero) and the consumer sees an empty
// ring: a dead writer never corrupts the reader or makes it wait, and nothing
// else shares the ring. 64-bit positions never repeat a stamp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ftmpi::transport::shm {

inline constexpr std::size_t k_line = 64;

struct alignas(k_line) RingControl {
    std::atomic<std::uint64_t> head{0};  // bytes consumed (the consumer's position)
};
static_assert(sizeof(RingControl) == k_line);

struct RecordHeader {
    std::atomic<std::uint64_t> stamp;  // position + 1 once published
    std::uint64_t match;               // transport match bits (proto, context, tag)
    std::uint64_t uid;                 // communicator uid
    std::int32_t rank;                 // sender's rank in the communicator
    std::uint32_t length;              // payload bytes; k_pad: skip to the end of the ring
};
static_assert(sizeof(RecordHeader) == 32);
inline constexpr std::uint32_t k_pad = ~std::uint32_t{0};

constexpr std::size_t record_bytes(std::size_t payload) {
    return (sizeof(RecordHeader) + payload + k_line - 1) & ~(k_line - 1);
}

// Bytes of shared memory a ring of `capacity` bytes takes.
constexpr std::size_t ring_footprint(std::size_t capacity) { return sizeof(RingControl) + capacity; }

// Largest payload that always fits in a ring of `capacity` bytes (with room
// for the pad record that may precede it).
constexpr std::size_t max_payload(std::size_t capacity) { return capacity / 2 - sizeof(RecordHeader); }

// Where a ring is: `base` is its shared memory (ring_footprint bytes);
// capacity is a power of two, a multiple of 64.
class RingView {
protected:
    RingView() = default;
    RingView(void *base, std::size_t capacity)
        : ctl_(static_cast<RingControl *>(base)), data_(static_cast<char *>(base) + sizeof(RingControl)),
          mask_(capacity - 1) {}
    RecordHeader *at(std::uint64_t pos) const { return reinterpret_cast<RecordHeader *>(data_ + (pos & mask_)); }
    RingControl *ctl_ = nullptr;
    char *data_ = nullptr;
    std::size_t mask_ = 0;
};

// The producer's end.
class RingWriter : private RingView {
public:
    RingWriter() = default;
    RingWriter(void *base, std::size_t capacity) : RingView(base, capacity) {}

    // Reserves a record for `payload` bytes; nullptr while the ring is full.
    // Fill the returned payload area, then publish().
    char *reserve(std::size_t payload) {
        rewind_if_empty();
        std::size_t pad = 0;
        const std::size_t need = room(payload, pad);
        if (need == 0) return nullptr;
        if (pad != 0) {
            RecordHeader *h = at(tail_);
            h->length = k_pad;
            h->stamp.store(tail_ + 1, std::memory_order_release);
            tail_ += pad;
        }
        pending_ = need;
        return reinterpret_cast<char *>(at(tail_)) + sizeof(RecordHeader);
    }
    // Publishes the record reserve() returned.
    void publish(std::uint64_t match, std::uint64_t uid, std::int32_t rank, std::size_t payload) {
        RecordHeader *h = at(tail_);
        h->match = match;
        h->uid = uid;
        h->rank = rank;
        h->length = static_cast<std::uint32_t>(payload);
        h->stamp.store(tail_ + 1, std::memory_order_release);
        tail_ += pending_;
    }
    // reserve + copy + publish; false while the ring is full.
    bool write(std::uint64_t match, std::uint64_t uid, std::int32_t rank, const void *payload, std::size_t length) {
        char *p = reserve(length);
        if (p == nullptr) return false;
        if (length > 0) std::memcpy(p, payload, length);
        publish(match, uid, rank, length);
        return true;
    }
    // A record of `payload` bytes fits now.
    bool fits(std::size_t payload) {
        std::size_t pad = 0;
        return room(payload, pad) != 0;
    }

private:
    // Every k_rewind bytes written, past the first k_rewind of the ring, a
    // look at the consumer's position: when it has taken everything, the next
    // record goes to the start of the ring (after a pad record to the end),
    // so that traffic that never fills the ring (ping-pong) keeps to a few
    // KiB of lines that stay in cache. Until the consumer takes the pad, the
    // writer has the `off` (>= k_rewind) bytes before it.
    static constexpr std::size_t k_rewind = 4096;
    void rewind_if_empty() {
        const std::size_t off = tail_ & mask_;
        if (off < k_rewind || tail_ - checked_ < k_rewind) return;
        checked_ = tail_;
        seen_head_ = ctl_->head.load(std::memory_order_acquire);
        if (seen_head_ != tail_) return;
        RecordHeader *h = at(tail_);
        h->length = k_pad;
        h->stamp.store(tail_ + 1, std::memory_order_release);
        tail_ += mask_ + 1 - off;
        checked_ = tail_;
    }
    // The bytes of a record of `payload` bytes if it fits now (the consumer's
    // position is read again only when the last one seen leaves no room),
    // else 0; `pad`: bytes to skip first, to the end of the ring.
    std::size_t room(std::size_t payload, std::size_t &pad) {
        const std::size_t need = record_bytes(payload);
        const std::size_t off = tail_ & mask_;
        pad = off + need > mask_ + 1 ? mask_ + 1 - off : 0;
        if (tail_ + pad + need - seen_head_ > mask_ + 1) {
            seen_head_ = ctl_->head.load(std::memory_order_acquire);
            if (tail_ + pad + need - seen_head_ > mask_ + 1) return 0;
        }
        return need;
    }

    std::uint64_t tail_ = 0;       // bytes produced
    std::uint64_t seen_head_ = 0;  // the consumer's position, as last read
    std::uint64_t checked_ = 0;    // where rewind_if_empty() last looked
    std::size_t pending_ = 0;      // size of the reserved record
};

// The consumer's end. Taking a record and giving its space back are apart:
// take() moves this end past the record at once (so a nested reader sees the
// next one), release() lets the producer reuse everything taken so far, once
// no payload is being read any more.
class RingReader : private RingView {
public:
    RingReader() = default;
    RingReader(void *base, std::size_t capacity) : RingView(base, capacity) {}

    // The next published record, taken; nullptr if none. Its payload stays
    // valid until release(). A record that does not fit in the ring where it
    // starts (no writer makes one) leaves the ring corrupt(): nothing more is
    // read from it, since where the next record starts is unknown.
    const RecordHeader *take() {
        for (;;) {
            if (corrupt_) return nullptr;
            RecordHeader *h = at(head_);
            if (h->stamp.load(std::memory_order_acquire) != head_ + 1) return nullptr;
            const std::size_t off = head_ & mask_;
            if (h->length == k_pad) {
                head_ += mask_ + 1 - off;
                continue;
            }
            if (h->length > mask_ || off + record_bytes(h->length) > mask_ + 1) {
                corrupt_ = true;
                return nullptr;
            }
            head_ += record_bytes(h->length);
            return h;
        }
    }
    bool corrupt() const { return corrupt_; }
    static const char *payload(const RecordHeader *h) { return reinterpret_cast<const char *>(h) + sizeof *h; }
    // Gives the producer the space of every record taken.
    void release() {
        if (released_ != head_) ctl_->head.store(released_ = head_, std::memory_order_release);
    }

private:
    std::uint64_t head_ = 0;      // bytes taken
    std::uint64_t released_ = 0;  // bytes given back
    bool corrupt_ = false;
};

}  // namespace ftmpi::transport::shm
