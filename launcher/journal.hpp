// End-to-end delivery between ftmpirun's head and its daemons, across a
// tree whose vertices may be lost (ftmpirun across nodes).
//
// Links deliver in order or break, but what was on its way through a daemon
// that dies is gone. So the frames the head sends (to a daemon, or flooded
// to all) and the frames each daemon sends the head carry, first in their
// payload, a u64 sequence number of their sender (0: not numbered: the
// tree frame, acknowledgements), and the sender keeps them (a Journal)
// until the other end acknowledges them (wire::Type::ack: "every frame of
// yours up to N came"). A daemon that reattaches to the head after its
// parent was lost says the last of the head's numbers it saw; the head
// sends it (and through it its subtree) what came after, and the daemon
// sends again what the head has not acknowledged. Each end drops a frame
// whose number it has seen (fresh()). No I/O; unit-tested.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "wire.hpp"

namespace ftmpi::launcher {

class Journal {
public:
    struct Entry {
        std::uint64_t seq;
        std::uint32_t dst;  // a vertex, or wire::kFlood
        wire::Type type;
        std::vector<std::uint8_t> payload;  // numbered
    };
    // The payload of `w`, numbered with the next number, and kept.
    const std::vector<std::uint8_t> &stamp(std::uint32_t dst, wire::Type type, const wire::Writer &w);
    // Every entry numbered up to `seq` is acknowledged: dropped.
    void acked(std::uint64_t seq);
    const std::deque<Entry> &entries() const { return kept_; }
    std::uint64_t last() const { return next_ - 1; }

    // `w`'s payload numbered 0: not kept, never deduplicated.
    static std::vector<std::uint8_t> unnumbered(const wire::Writer &w);
    // Reads the number in front of a payload; false when the frame was
    // seen already (a number at or below `seen`), else `seen` moves up.
    static bool fresh(wire::Reader &r, std::uint64_t &seen);

private:
    std::deque<Entry> kept_;
    std::uint64_t next_ = 1;
};

}  // namespace ftmpi::launcher
