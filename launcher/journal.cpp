// End-to-end delivery between the head and the daemons (journal.hpp).
#include "journal.hpp"

namespace ftmpi::launcher {

namespace {
std::vector<std::uint8_t> numbered(std::uint64_t seq, const wire::Writer &w) {
    wire::Writer n;
    n.u64(seq);
    std::vector<std::uint8_t> out = n.data();
    out.insert(out.end(), w.data().begin(), w.data().end());
    return out;
}
}  // namespace

const std::vector<std::uint8_t> &Journal::stamp(std::uint32_t dst, wire::Type type, const wire::Writer &w) {
    const std::uint64_t seq = next_++;
    kept_.push_back({seq, dst, type, numbered(seq, w)});
    return kept_.back().payload;
}

void Journal::acked(std::uint64_t seq) {
    while (!kept_.empty() && kept_.front().seq <= seq) kept_.pop_front();
}

std::vector<std::uint8_t> Journal::unnumbered(const wire::Writer &w) { return numbered(0, w); }

bool Journal::fresh(wire::Reader &r, std::uint64_t &seen) {
    const std::uint64_t seq = r.u64();
    if (!r.ok()) return false;
    if (seq == 0) return true;
    if (seq <= seen) return false;
    seen = seq;
    return true;
}

}  // namespace ftmpi::launcher
