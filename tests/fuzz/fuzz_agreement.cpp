// libFuzzer target: the agreement's message codec and state machine
// (ft/agreement.cpp), fed what reaches a member in an agreement message.
//
// Input: a group size byte, this member's rank byte, a byte of failed
// members (bit r: member r, r < 8), then messages, each a sender byte, a
// length byte and that many bytes. Checked: nothing crashes (ASan, UBSan);
// a message that decodes encodes back to the same bytes (the codec accepts
// one form of each message only); every message the agreement sends goes to
// a member of the group other than itself, names only members as failed,
// and encodes and decodes back; a decision names only members as failed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ft/agreement.hpp"
#include "ft/sim/sim.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

void check_sends(const ftmpi::ft::AgreeEffects &out, const ftmpi::ft::sim::View &v) {
    for (const auto &s : out.sends) {
        check(s.to >= 0 && s.to < v.size() && s.to != v.self());
        for (int f : s.msg.body.failed) check(f >= 0 && f < v.size());
        const std::vector<char> bytes = ftmpi::ft::encode(s.msg);
        ftmpi::ft::AgreeMsg back;
        check(ftmpi::ft::decode(bytes.data(), bytes.size(), back));
        check(ftmpi::ft::encode(back) == bytes);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 3) return 0;
    const int n = 2 + data[0] % 31;
    ftmpi::ft::sim::View v(n, data[1] % n);
    for (int r = 0; r < 8 && r < n; ++r)  // the low bits of data[2]: failed members
        if (r != v.self() && ((data[2] >> r) & 1) != 0) v.add(r);
    ftmpi::ft::Agreements agreement;
    ftmpi::ft::AgreeEffects out;
    agreement.enter(v, 1, {0x0123456789abcdefULL, 42}, 7, true, (data[2] & 0x80) != 0, out);
    check_sends(out, v);
    std::size_t i = 3;
    while (i + 2 <= size) {
        const int from = data[i] % n;
        const std::size_t want = data[i + 1];
        i += 2;
        const std::size_t len = want < size - i ? want : size - i;
        ftmpi::ft::AgreeMsg m;
        if (ftmpi::ft::decode(data + i, len, m)) {
            const std::vector<char> again = ftmpi::ft::encode(m);
            check(again.size() == len && std::memcmp(again.data(), data + i, len) == 0);
            if (from != v.self()) {
                out = {};
                agreement.on_message(v, from, m, out);
                check_sends(out, v);
            }
        }
        i += len;
    }
    out = {};
    agreement.on_failures(v, out);
    check_sends(out, v);
    if (const auto *inst = agreement.find(1); inst != nullptr && inst->decided)
        for (int f : inst->decision.failed) check(f >= 0 && f < v.size());
    return 0;
}
