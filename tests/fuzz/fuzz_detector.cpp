// libFuzzer target: the failure detector's decoder and state machine
// (ft/detector_core.cpp), fed what reaches a rank's detector channel.
//
// Input: a ring size byte and a rank byte, then messages, each a length byte
// and that many bytes (the last one takes what is left), with a clock byte
// between them (milliseconds to advance, so that ticks, timeouts and
// anti-entropy all run). Checked: nothing crashes (ASan, UBSan), every
// message the detector sends fits the channel, names a rank of the ring
// other than its own, and the failed set only ever holds processes of the
// job.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "ft/detector_core.hpp"

using ftmpi::ft::DetectorCore;

namespace {

constexpr std::size_t k_max_message = 128;  // the Unix channel's

void check(bool ok) {
    if (!ok) std::abort();
}

void check_effects(const DetectorCore::Effects &out, int n, int rank, const ftmpi::ft::FailedSet &set) {
    for (const auto &s : out.sends) {
        check(s.msg.size() <= k_max_message);
        check(s.peer >= 0 && s.peer < n && s.peer != rank);
    }
    for (std::size_t i = 0; i < set.size(); ++i) check(set.at(i) >= 0 && set.at(i) < n);
    check(out.watch >= -2 && out.watch < n);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 2) return 0;
    const int n = 2 + data[0] % 63;
    const int rank = data[1] % n;
    ftmpi::ft::FailedSet set;
    set.reset(n);
    DetectorCore core(set, rank, n, 0, DetectorCore::Ms(100), DetectorCore::Ms(1000), k_max_message);
    DetectorCore::Time now{};
    DetectorCore::Effects out;
    core.start(now, out);
    check_effects(out, n, rank, set);
    std::size_t i = 2;
    while (i < size) {
        const std::size_t want = data[i++];
        const std::size_t len = want < size - i ? want : size - i;
        out = {};
        core.on_message(data + i, len, now, out);
        check_effects(out, n, rank, set);
        i += len;
        if (i < size) now += DetectorCore::Ms(data[i++] * 8);
        out = {};
        while (core.tick(now, out)) check_effects(out, n, rank, set);
        check_effects(out, n, rank, set);
    }
    return 0;
}
