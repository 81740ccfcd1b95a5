#include "ft/agreement.hpp"

#include <algorithm>
#include <cstring>

#include "ft/topology.hpp"

namespace ftmpi::ft {
namespace {

struct Wire {
    std::uint8_t type, abortable, reported, reserved;
    std::int32_t round, report_tag;
    std::uint32_t nwords, nfailed;
    std::uint32_t reserved2;
    std::uint64_t seq, nonce;
};
static_assert(sizeof(Wire) == 40);

// The AND of `from` into `acc`; a word missing on either side counts as 0.
void and_into(std::vector<std::uint64_t> &acc, const std::vector<std::uint64_t> &from) {
    if (from.size() < acc.size()) std::fill(acc.begin() + static_cast<std::ptrdiff_t>(from.size()), acc.end(), 0);
    for (std::size_t i = 0; i < std::min(acc.size(), from.size()); ++i) acc[i] &= from[i];
    acc.resize(std::max(acc.size(), from.size()), 0);
}

// `b` merged into the ascending `a`.
void unite(std::vector<int> &a, const std::vector<int> &b) {
    if (b.empty()) return;
    std::vector<int> out;
    out.reserve(a.size() + b.size());
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    a = std::move(out);
}

}  // namespace

std::size_t encoded_size(const AgreeMsg &m) {
    return sizeof(Wire) + m.body.words.size() * 8 + m.body.failed.size() * 4;
}

void encode_into(const AgreeMsg &m, char *out) {
    const Decision &d = m.body;
    Wire w{static_cast<std::uint8_t>(m.type),
           m.abortable ? std::uint8_t{1} : std::uint8_t{0},
           m.reported ? std::uint8_t{1} : std::uint8_t{0},
           0,
           m.round,
           m.report_tag,
           static_cast<std::uint32_t>(d.words.size()),
           static_cast<std::uint32_t>(d.failed.size()),
           0,
           m.seq,
           d.nonce};
    std::memcpy(out, &w, sizeof w);
    if (!d.words.empty()) std::memcpy(out + sizeof w, d.words.data(), d.words.size() * 8);
    if (!d.failed.empty()) std::memcpy(out + sizeof w + d.words.size() * 8, d.failed.data(), d.failed.size() * 4);
}

std::vector<char> encode(const AgreeMsg &m) {
    std::vector<char> out(encoded_size(m));
    encode_into(m, out.data());
    return out;
}

bool decode(const void *data, std::size_t len, AgreeMsg &m) {
    Wire w;
    if (len < sizeof w) return false;
    const char *p = static_cast<const char *>(data);
    std::memcpy(&w, p, sizeof w);
    // One form of each message only: flags 0 or 1, reserved fields 0.
    if (w.type < 1 || w.type > 3 || w.abortable > 1 || w.reported > 1 || w.reserved != 0 || w.reserved2 != 0)
        return false;
    if (len != sizeof w + std::size_t{w.nwords} * 8 + std::size_t{w.nfailed} * 4) return false;
    m.type = static_cast<AgreeMsg::Type>(w.type);
    m.seq = w.seq;
    m.round = w.round;
    m.abortable = w.abortable != 0;
    m.reported = w.reported != 0;
    m.report_tag = w.report_tag;
    m.body.nonce = w.nonce;
    m.body.words.resize(w.nwords);
    m.body.failed.resize(w.nfailed);
    if (w.nwords) std::memcpy(m.body.words.data(), p + sizeof w, std::size_t{w.nwords} * 8);
    if (w.nfailed)
        std::memcpy(m.body.failed.data(), p + sizeof w + std::size_t{w.nwords} * 8, std::size_t{w.nfailed} * 4);
    // Members, strictly ascending (whether they are members of the group is
    // the receiver's check: it knows the group's size).
    if (!m.body.failed.empty() && m.body.failed.front() < 0) return false;
    return std::adjacent_find(m.body.failed.begin(), m.body.failed.end(), std::greater_equal<int>()) ==
           m.body.failed.end();
}

void Agreements::Instance::reset(std::uint64_t s) {
    seq = s;
    abortable = flood = entered = decided = false;
    mine.clear();
    nonce = 0;
    round = sent_round = sent_to = issued_round = tag = -1;
    got.clear();
    answered.clear();
    asked.clear();
    decision.words.clear();
    decision.failed.clear();
    decision.nonce = 0;
    heard.clear();
}

const Agreements::Instance *Agreements::find(std::uint64_t seq) const {
    auto it = inst_.find(seq);
    return it == inst_.end() ? nullptr : &it->second;
}

bool Agreements::any_decided() const {
    for (const auto &[seq, inst] : inst_)
        if (inst.decided) return true;
    return false;
}

Agreements::Instance *Agreements::instance(std::uint64_t seq) {
    if (auto it = inst_.find(seq); it != inst_.end()) return &it->second;
    // The classes are the two halves of the seq space.
    const std::uint64_t cls = seq >> 63;
    std::size_t &count = count_[cls];
    const auto first = cls == 0 ? inst_.begin() : inst_.lower_bound(std::uint64_t{1} << 63);
    if (count >= kept && seq < first->first) return nullptr;  // long settled
    // The oldest decided one of the class makes way once `kept` are held,
    // its storage reused (the failure-free path then allocates nothing
    // here). Undecided ones stay, however many: someone may wait for them
    // (a program can start many iagree before it waits).
    std::map<std::uint64_t, Instance>::node_type spare;
    while (count >= kept) {
        auto victim = inst_.end();
        for (auto it = cls == 0 ? inst_.begin() : inst_.lower_bound(std::uint64_t{1} << 63);
             it != inst_.end() && (it->first >> 63) == cls; ++it)
            if (it->second.decided) {
                victim = it;
                break;
            }
        if (victim == inst_.end()) break;
        spare = inst_.extract(victim);
        --count;
    }
    ++count;
    if (spare.empty()) {
        Instance &inst = inst_[seq];
        inst.seq = seq;
        return &inst;
    }
    spare.key() = seq;
    spare.mapped().reset(seq);
    return &inst_.insert(std::move(spare)).position->second;
}

void Agreements::enter(const GroupView &v, std::uint64_t seq, std::vector<std::uint64_t> words, std::uint64_t nonce,
                       bool abortable, bool flood, AgreeEffects &out) {
    Instance *inst = instance(seq);
    if (inst == nullptr) return;
    inst->abortable = inst->abortable || abortable;
    inst->flood = flood;
    if (!inst->entered) {  // (entered already: with zeros, by abort())
        inst->entered = true;
        inst->mine = std::move(words);
    }
    inst->nonce = nonce;
    step(v, *inst, out);
}

void Agreements::on_message(const GroupView &v, int from, AgreeMsg m, AgreeEffects &out) {
    if (from < 0 || from >= v.size() || from == v.self()) return;
    if (!m.body.failed.empty() && m.body.failed.back() >= v.size()) return;  // not members: malformed
    Instance *inst = instance(m.seq);
    if (inst == nullptr) return;
    inst->abortable = inst->abortable || m.abortable;
    const AgreeMsg::Type type = m.type;
    const int round = m.round;
    switch (type) {
    case AgreeMsg::Type::contribute: {
        if (v.failed(from)) return;
        // A report is a decision like any other: taken if its root is not
        // known failed here.
        if (m.reported && m.report_tag >= 0 && m.report_tag < v.size() &&
            (m.report_tag == v.self() || !v.failed(m.report_tag)))
            take(v, *inst, m.report_tag, m.body, out);
        Instance::Got *have = inst->got.find(from);
        if (have == nullptr) {
            inst->got.get(from, Instance::Got{round, std::move(m)});
        } else if (round >= have->round) {
            have->round = round;
            have->msg = std::move(m);
        }
        break;
    }
    case AgreeMsg::Type::decide:
        if (inst->flood) {
            // MPI_Finalize's instance: its value is all ones everywhere and
            // what matters is that every member learns it was reached, so a
            // decision counts whoever issued it.
            if (std::find(inst->heard.begin(), inst->heard.end(), from) == inst->heard.end())
                inst->heard.push_back(from);
        } else if (m.round != v.self() && (m.round < 0 || m.round >= v.size() || v.failed(m.round))) {
            return;  // issued by a root this member knows failed: its round is over here
        }
        take(v, *inst, m.round, std::move(m.body), out);
        break;
    case AgreeMsg::Type::ask: break;
    }
    if (inst->decided && type != AgreeMsg::Type::decide) {
        // A late or re-routed request: answered at once if it would count.
        Instance::Got *g = inst->got.find(from);
        int &sent = g != nullptr ? g->answered : inst->answered.get(from, -1);
        if (inst->tag >= round && sent < inst->tag) {
            sent = inst->tag;
            out.sends.push_back({from, AgreeMsg{AgreeMsg::Type::decide, inst->seq, inst->tag, inst->abortable, false,
                                                -1, inst->decision}});
        }
    }
    step(v, *inst, out);
}

void Agreements::on_failures(const GroupView &v, AgreeEffects &out) {
    for (auto &[seq, inst] : inst_) {
        step(v, inst, out);
        if (inst.decided) tell(v, inst, out);
    }
}

void Agreements::abort(const GroupView &v, AgreeEffects &out) {
    if (aborted_) return;
    aborted_ = true;
    for (auto &[seq, inst] : inst_)
        if (inst.abortable && !inst.decided) step(v, inst, out);
}

// Takes decision `d` (tagged `tag`), and passes it on.
void Agreements::take(const GroupView &v, Instance &inst, int tag, Decision d, AgreeEffects &out) {
    if (!inst.decided) {
        inst.decided = true;
        inst.decision = std::move(d);
        inst.tag = tag;
        out.decided.push_back(inst.seq);
    } else if (tag > inst.tag) {
        inst.tag = tag;  // the same value, issued again by a later root
    }
    tell(v, inst, out);
}

// Sends the decision to every live member that contributed here in a round
// that accepts it (and, flooding, to the live BMG neighbours), once per tag.
void Agreements::tell(const GroupView &v, Instance &inst, AgreeEffects &out) {
    auto send = [&](int to, int &sent) {
        if (sent >= inst.tag) return;
        sent = inst.tag;
        out.sends.push_back(
            {to, AgreeMsg{AgreeMsg::Type::decide, inst.seq, inst.tag, inst.abortable, false, -1, inst.decision}});
    };
    for (auto &[member, got] : inst.got)
        if (got.round <= inst.tag && !v.failed(member)) send(member, got.answered);
    if (inst.flood) {
        auto failed = [&](int r) { return v.failed(r); };
        for (int nb : bmg_neighbours(v.size(), v.self(), failed)) {
            Instance::Got *g = inst.got.find(nb);
            send(nb, g != nullptr ? g->answered : inst.answered.get(nb, -1));
        }
    }
}

void Agreements::step(const GroupView &v, Instance &inst, AgreeEffects &out) {
    if (!inst.entered && !inst.decided) {
        if (!(aborted_ && inst.abortable)) return;
        inst.entered = true;  // a creation it skipped, on a revoked group: zeros
        inst.mine.clear();
    }
    if (v.any_failed()) gather(v, inst, out, [&](int r) { return v.failed(r); });
    else gather(v, inst, out, [](int) { return false; });  // the failure-free path: no lookups
}

template <class Failed>
void Agreements::gather(const GroupView &v, Instance &inst, AgreeEffects &out, Failed failed) {
    const int n = v.size(), self = v.self();
    const int round = lowest_live(n, failed);
    // This member itself taken for failed (it was excluded and is leaving):
    // nothing to do.
    if (round < 0 || failed(self)) return;
    inst.round = round;
    auto &children = children_;
    live_children(n, self, failed, children);
    bool complete = true;
    for (int c : children) {
        const Instance::Got *have = inst.got.find(c);
        if (have != nullptr && have->round == round) continue;
        complete = false;
        if (aborted_ && inst.abortable) {
            const std::pair<int, int> key{c, round};
            if (std::find(inst.asked.begin(), inst.asked.end(), key) == inst.asked.end()) {
                inst.asked.push_back(key);
                out.sends.push_back({c, AgreeMsg{AgreeMsg::Type::ask, inst.seq, round, true, false, -1, {}}});
            }
        }
    }
    if (!complete) return;

    // The highest-tagged decision among this member's and its children's
    // reports; else the combination.
    const Decision *best = inst.decided ? &inst.decision : nullptr;
    int best_tag = inst.decided ? inst.tag : -1;
    for (int c : children) {
        const AgreeMsg &m = inst.got.find(c)->msg;
        if (m.reported && m.report_tag > best_tag) best = &m.body, best_tag = m.report_tag;
    }
    Decision combined;
    if (best == nullptr) {
        combined.words = inst.mine;
        combined.failed = v.known_failed();
        for (int c : children) {
            const Decision &d = inst.got.find(c)->msg.body;
            and_into(combined.words, d.words);
            unite(combined.failed, d.failed);
        }
        combined.nonce = inst.nonce;
    }

    if (round == self) {  // the root: issue it
        if (inst.issued_round == round) return;
        inst.issued_round = round;
        out.issued.push_back(inst.seq);
        take(v, inst, round, best != nullptr ? *best : std::move(combined), out);
        return;
    }
    const int parent = live_parent(n, self, failed);
    if (inst.sent_round == round && inst.sent_to == parent) return;
    inst.sent_round = round;
    inst.sent_to = parent;
    out.sends.push_back({parent, AgreeMsg{AgreeMsg::Type::contribute, inst.seq, round, inst.abortable, best != nullptr,
                                          best_tag, best != nullptr ? *best : std::move(combined)}});
}

}  // namespace ftmpi::ft
