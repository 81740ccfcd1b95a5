// The agreement (ULFM's MPIX_Comm_agree, and everything built on it: iagree,
// shrink, validate, uniform creation, MPI_Finalize's closing step) as a pure
// state machine: no MPI handles, no transport, no threads, no clock. Events go
// in (enter, a message, new failures, a revoke); effects come out (messages
// to send, agreements decided). mpi/ulfm/agree.cpp adapts it to communicators;
// ft/sim/ runs it for up to 100,000 simulated processes.
//
// Protocol: an early returning agreement (ERA, spec 003) over the k-nomial
// tree of ft/topology.hpp (radix 8: flat up to 8 members).
//
//  - Gather. A member's contribution is its words (ANDed) and the failures it
//    knows (united). Once it has entered and holds a contribution from every
//    child, it sends the combination to its parent. The root decides: the
//    AND, the union plus what it knows, and its nonce. Failure-free, every
//    member sends one message up and one down to each child: O(log n) each
//    (at most 7 log8 n children), and the tree's depth in rounds each way.
//  - Broadcast. The decision flows down the tree; a member returns as soon as
//    it has it (early return) and keeps it to answer anyone who asks later.
//  - Failures. A member whose parent failed sends to its nearest live
//    ancestor; one whose children failed waits for their children instead.
//    Work is numbered by round: the root it serves, the lowest member it does
//    not know failed. A contribution counts only in its own round, and a
//    member sends one per round.
//  - Safety. A decision is tagged with the round of the root that issued it,
//    and a member takes a decision only while it does not know that root
//    failed. A member that has decided reports its decision (value and tag)
//    instead of a combination; a root issues the value of the highest-tagged
//    report it gathered, and combines values only when it gathered none.
//    Since a member reports in round R only after it learned every member
//    below R failed, which is after it took any decision tagged below R, the
//    gather of round R sees every decision a survivor took earlier, and by
//    induction over rounds no two survivors decide differently.
//  - Creations on a revoked group (`abortable`): members that skipped the
//    creation never enter. After abort(), a member asks children that owe it
//    a contribution; a member asked who has not entered enters with zeros,
//    so the creation fails everywhere without waiting for anyone forever.
//  - Flooding (`flood`, MPI_Finalize's instance): the decision also goes to
//    every live BMG neighbour, and each member forwards it on first receipt;
//    `heard` records who sent it, so a process leaves only once its
//    neighbours have it (no one will ask it again).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "ft/group_view.hpp"

namespace ftmpi::ft {

// What an agreement decides (and what a report carries).
struct Decision {
    std::vector<std::uint64_t> words;  // AND of the contributions (missing words count as 0)
    std::vector<int> failed;           // agreed failures: members, ascending
    std::uint64_t nonce = 0;           // the issuing root's nonce (names what a shrink creates)
    bool operator==(const Decision &) const = default;
};

struct AgreeMsg {
    enum class Type : std::uint8_t { contribute = 1, decide = 2, ask = 3 };
    Type type = Type::contribute;
    std::uint64_t seq = 0;
    // contribute, ask: the sender's round. decide: the round that issued it.
    int round = 0;
    bool abortable = false;
    // contribute: carries the sender's decision (reported, tagged
    // report_tag) instead of a combination.
    bool reported = false;
    int report_tag = -1;
    Decision body;  // the combination (its nonce unused), a report, or the decision
};

// Encoded size and the codec; decode rejects anything malformed.
std::size_t encoded_size(const AgreeMsg &m);
void encode_into(const AgreeMsg &m, char *out);  // encoded_size(m) bytes
std::vector<char> encode(const AgreeMsg &m);
bool decode(const void *data, std::size_t len, AgreeMsg &m);

struct AgreeEffects {
    struct Send {
        int to;
        AgreeMsg msg;
    };
    std::vector<Send> sends;
    std::vector<std::uint64_t> decided;  // agreements that decided during this call
    std::vector<std::uint64_t> issued;   // agreements this member issued as the root during this call
};

// A small map from members, ascending (a member hears from its children and
// a few re-routed members: a sorted vector beats a tree here).
template <class V>
class ByMember {
public:
    V *find(int m) {
        auto it = at(m);
        return it != items_.end() && it->first == m ? &it->second : nullptr;
    }
    const V *find(int m) const { return const_cast<ByMember *>(this)->find(m); }
    V &get(int m, const V &init) {
        auto it = at(m);
        if (it == items_.end() || it->first != m) it = items_.insert(it, {m, init});
        return it->second;
    }
    auto begin() const { return items_.begin(); }
    auto end() const { return items_.end(); }
    auto begin() { return items_.begin(); }
    auto end() { return items_.end(); }
    void clear() { items_.clear(); }

private:
    typename std::vector<std::pair<int, V>>::iterator at(int m) {
        return std::lower_bound(items_.begin(), items_.end(), m, [](const auto &i, int k) { return i.first < k; });
    }
    std::vector<std::pair<int, V>> items_;
};

// The agreements of one group. Instances are numbered by seq; every member
// enters the same numbers in the same order. Of each class (the top bit of
// seq), every undecided instance and the newest decided ones, `kept` in all
// when possible, are kept with their decisions; messages for older ones are
// dropped (members are at most one agreement apart).
class Agreements {
public:
    struct Instance {
        std::uint64_t seq = 0;
        bool abortable = false, flood = false;
        bool entered = false;
        std::vector<std::uint64_t> mine;
        std::uint64_t nonce = 0;
        int round = -1;  // the round this member's gather serves
        int sent_round = -1, sent_to = -1;
        int issued_round = -1;  // root: the round it issued the decision in
        struct Got {
            int round;
            AgreeMsg msg;
            int answered = -1;  // the highest tag of a decision sent back
        };
        ByMember<Got> got;                       // member -> its latest contribution
        ByMember<int> answered;                  // others (flood, asks) -> highest tag sent
        std::vector<std::pair<int, int>> asked;  // (member, round) asked to contribute
        bool decided = false;
        int tag = -1;  // the round of the decision held
        Decision decision;
        std::vector<int> heard;  // flood: members that sent the decision

        // Back to a fresh instance `s`, keeping the containers' storage.
        void reset(std::uint64_t s);
    };

    static constexpr std::size_t kept = 8;

    // This member enters agreement `seq` with `words` and `nonce` (used if
    // it ends up the root that combines).
    void enter(const GroupView &v, std::uint64_t seq, std::vector<std::uint64_t> words, std::uint64_t nonce,
               bool abortable, bool flood, AgreeEffects &out);
    void on_message(const GroupView &v, int from, AgreeMsg m, AgreeEffects &out);
    // The view's failures grew.
    void on_failures(const GroupView &v, AgreeEffects &out);
    // The group was revoked: its abortable agreements fail (see above).
    void abort(const GroupView &v, AgreeEffects &out);

    // Null if unknown or no longer kept.
    const Instance *find(std::uint64_t seq) const;
    bool any_decided() const;
    bool aborted() const { return aborted_; }

private:
    Instance *instance(std::uint64_t seq);
    void step(const GroupView &v, Instance &inst, AgreeEffects &out);
    template <class Failed>
    void gather(const GroupView &v, Instance &inst, AgreeEffects &out, Failed failed);
    void take(const GroupView &v, Instance &inst, int tag, Decision d, AgreeEffects &out);
    void tell(const GroupView &v, Instance &inst, AgreeEffects &out);

    std::map<std::uint64_t, Instance> inst_;
    std::size_t count_[2] = {0, 0};  // instances kept per class
    bool aborted_ = false;
    std::vector<int> children_;  // scratch for step()
};

}  // namespace ftmpi::ft
