// Revoke, agreement and shrink (ULFM; spec 001 §1.3, spec 003).
//
// Revoke: the first time a process learns that a communicator is revoked, it
// marks it, fails every pending operation on it with MPI_ERR_REVOKED, and
// forwards the news to its binomial-graph neighbours in the communicator
// (rank ± 2^k), so every live member hears of it in O(log n) steps even when
// some forwarders are dead.
//
// Agreement: a rotating coordinator. Each member sends its contribution (a
// bit vector to AND, and the failures it knows) to the lowest-ranked member
// it does not know to be failed. That coordinator waits for a contribution
// from every member it does not know to be failed, decides (AND of the
// values, union of the failures, plus its own), and sends the decision to
// all. When a coordinator fails, members re-send to the next one; members
// that already decided send their decision instead, which the new
// coordinator adopts, so no two survivors ever decide differently. Recent
// agreements are kept, so a process answers for one it has returned from.
#include <algorithm>
#include <cstddef>
#include <array>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "mpi-ext.h"
#include "mpi/checks.hpp"
#include "mpi/comm_internal.hpp"
#include "mpi/group.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/recovery.hpp"
#include "mpi/ulfm.hpp"
#include "runtime/log.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {
namespace {

enum Tag : int { revoke_tag = 1, contrib_tag = 2, decide_tag = 3 };

std::unordered_map<std::uint32_t, MPI_Comm> g_comms;  // context slot -> communicator
std::unordered_map<std::uint32_t, std::uint64_t> g_closed;  // context slot -> uid of the last one freed there

// Messages for a communicator this process has not created yet. A slot holds
// one communicator at a time here, and a later one on it can only exist
// after this process freed the earlier: so a message for a slot whose
// communicator here has another uid, or for the last one freed there, is
// stale and dropped, and creating a communicator drops what else waited for
// its slot. The bound is a safety net only.
struct Early {
    std::uint32_t slot;
    std::uint64_t uid;
    int tag, from;
    std::vector<char> payload;
};
std::deque<Early> g_early;
constexpr std::size_t k_early_max = 4096;

std::uint32_t slot_of(MPI_Comm c) { return c->context / 2; }

bool member_failed(MPI_Comm c, int r) { return ft::failures().is_failed(c->procs[static_cast<std::size_t>(r)]); }

// A message to comm rank `peer` on c's fault-tolerance context; the request
// frees itself and its copy of the payload when the transport is done.
void ft_send(MPI_Comm c, int peer, int tag, const std::vector<char> &payload) {
    void *copy = std::malloc(std::max<std::size_t>(payload.size(), 1));
    if (!payload.empty()) std::memcpy(copy, payload.data(), payload.size());

    MPI_Request r = new_request(ftmpi_request_s::Kind::send, c, copy, static_cast<int>(payload.size()), MPI_BYTE,
                                peer, tag, k_ft_context | slot_of(c));
    r->owner = copy;
    r->on_complete = [](MPI_Request done) { std::free(done->owner); };
    r->user_freed = true;
    start_send(r);
}

// This process's binomial-graph neighbours in c (comm ranks ± 2^k) that it
// does not know to be failed, ascending. A notice that every process
// forwards to these on first receipt reaches every live member in O(log n)
// steps, even when some forwarders are dead.
std::vector<int> neighbours(MPI_Comm c) {
    std::set<int> out;
    for (int k = 1; k < c->size; k *= 2)
        for (int peer : {(c->rank + k) % c->size, (c->rank - k % c->size + c->size) % c->size})
            if (peer != c->rank && !member_failed(c, peer)) out.insert(peer);
    return {out.begin(), out.end()};
}

// ---- revoke ----------------------------------------------------------------

void abort_creations(MPI_Comm c);

void revoke_local(MPI_Comm c) {
    if (c->revoked) return;
    c->revoked = true;
    abort_creations(c);
    if (MPI_Comm owner = c->ft_owner) {  // an inter-communicator's view
        owner->revoked = true;
        // Its collectives run their group-internal steps on the hidden local
        // communicator: those must stop too.
        if (owner->local != nullptr) revoke_local(owner->local);
    }
    FTMPI_INFO("%s is revoked", comm_label(c));
    for (MatchQueue *q : {c->queue, c->coll_queue}) {
        auto &posted = q->posted();
        while (!posted.empty()) {
            MPI_Request r = posted.front();
            posted.pop_front();
            r->posted = false;
            r->status.MPI_SOURCE = r->peer;
            r->status.MPI_TAG = r->tag;
            complete_request(r, MPI_ERR_REVOKED, 0);
        }
    }
    g.transport->cancel_sends(c->uid, c->context, c->context + 1, transport::Err::revoked);
    std::vector<char> id(sizeof c->uid);
    std::memcpy(id.data(), &c->uid, sizeof c->uid);
    int sent = 0;
    for (int peer : neighbours(c)) {
        ft_send(c, peer, revoke_tag, id);
        if (++sent == 2) runtime::test_kill_point("revoke");  // tests: a partial revoke notice
    }
}

// ---- agreement -------------------------------------------------------------

// Two sequences of agreements per communicator: the users' recovery calls
// (agree, shrink, validate), which every survivor makes in the same order,
// and internal ones (agree_internal: the uniformity of a creation, file
// sync), numbered apart (k_internal_seq set), so that a member that skipped
// a creation after an error (and revoked) never pairs its next agree or
// shrink with the others' creation.
constexpr std::uint64_t k_internal_seq = std::uint64_t{1} << 63;
// MPI_Finalize's agreement on MPI_COMM_WORLD: one instance, the same
// everywhere whatever else each process did.
constexpr std::uint64_t k_finalize_seq = k_internal_seq | std::uint64_t{1} << 62;

// Which numbering an agreement takes.
enum class Sequence { user, internal, finalize };

struct Instance {
    std::uint64_t seq = 0;
    // A creation's agreement: on a revoked communicator the coordinator
    // decides it failed without waiting for members that will never enter
    // it (they skipped the creation).
    bool abortable = false;
    bool entered = false;                 // this process called the agreement
    std::vector<std::uint64_t> mine;      // its contribution
    std::vector<int> my_failed;           // failures it knew then (job ranks)
    int sent_to = -1;                     // the coordinator it last contributed to
    bool decided = false;
    std::vector<std::uint64_t> value;     // the decision
    std::vector<int> failed;              // agreed failures (job ranks, sorted)
    // As coordinator:
    std::map<int, std::vector<std::uint64_t>> got;  // comm rank -> contribution
    std::set<int> got_failed;
    bool adopt = false;  // a member reported an earlier coordinator's decision
    std::vector<std::uint64_t> adopt_value;
    std::vector<int> adopt_failed;
    // Nonblocking calls (iagree, ishrink, Icomm_validate): `waiter` completes
    // once the agreement is decided, with the class `on_decided` returns after
    // taking the outcome.
    MPI_Request waiter = nullptr;
    std::function<int(const Instance &)> on_decided;
    // MPI_Finalize's instance: the neighbours (comm ranks) that sent this
    // process the decision (see finalize_agreement).
    std::set<int> heard;
};

// An agree flag travels as the low 32 bits of the first word.
std::vector<std::uint64_t> flag_words(int flag) { return {static_cast<std::uint32_t>(flag)}; }
int flag_of(const Instance &inst) { return static_cast<int>(static_cast<std::uint32_t>(inst.value[0])); }

struct Wire {
    std::uint64_t seq;
    std::uint64_t uid;  // the communicator's ftmpi_comm_s::uid
    std::uint32_t decided;
    std::uint32_t nwords;
    std::uint32_t nfailed;
    std::uint32_t abortable;  // Instance::abortable
};

constexpr std::size_t k_kept = 8;  // members are at most one agreement apart
// Per communicator, the users' agreements [0] and the internal ones [1].
std::unordered_map<MPI_Comm, std::array<std::deque<std::unique_ptr<Instance>>, 2>> g_agreements;

// The state of agreement `seq` on c, created on first use; null for one
// older than everything kept (no live member can still need it).
Instance *instance(MPI_Comm c, std::uint64_t seq) {
    auto &list = g_agreements[c][(seq & k_internal_seq) != 0 ? 1 : 0];
    for (auto &i : list)
        if (i->seq == seq) return i.get();
    if (!list.empty() && seq < list.front()->seq) return nullptr;
    auto inst = std::make_unique<Instance>();
    inst->seq = seq;
    auto at = std::find_if(list.begin(), list.end(), [seq](const auto &i) { return i->seq > seq; });
    Instance *raw = inst.get();
    list.insert(at, std::move(inst));
    if (list.size() > k_kept) list.pop_front();
    return raw;
}

int coordinator(MPI_Comm c) {
    for (int r = 0; r < c->size; ++r)
        if (!member_failed(c, r)) return r;
    return c->rank;
}

std::vector<char> encode(MPI_Comm c, const Instance &inst, bool decided, const std::vector<std::uint64_t> &words,
                         const std::vector<int> &failed) {
    Wire w{inst.seq, c->uid, decided ? 1u : 0u, static_cast<std::uint32_t>(words.size()),
           static_cast<std::uint32_t>(failed.size()), inst.abortable ? 1u : 0u};
    std::vector<char> out(sizeof w + words.size() * 8 + failed.size() * 4);
    std::memcpy(out.data(), &w, sizeof w);
    if (!words.empty()) std::memcpy(out.data() + sizeof w, words.data(), words.size() * 8);
    if (!failed.empty()) std::memcpy(out.data() + sizeof w + words.size() * 8, failed.data(), failed.size() * 4);
    return out;
}

bool decode(const std::vector<char> &m, Wire &w, std::vector<std::uint64_t> &words, std::vector<int> &failed) {
    if (m.size() < sizeof w) return false;
    auto p = m.data();
    std::memcpy(&w, p, sizeof w);
    if (m.size() != sizeof w + std::size_t{w.nwords} * 8 + std::size_t{w.nfailed} * 4) return false;
    words.resize(w.nwords);
    failed.resize(w.nfailed);
    if (w.nwords) std::memcpy(words.data(), p + sizeof w, std::size_t{w.nwords} * 8);
    if (w.nfailed) std::memcpy(failed.data(), p + sizeof w + std::size_t{w.nwords} * 8, std::size_t{w.nfailed} * 4);
    return true;
}

void decide(Instance &inst, std::vector<std::uint64_t> value, std::vector<int> failed) {
    if (inst.decided) return;
    FTMPI_DEBUG("agreement %llu decided", static_cast<unsigned long long>(inst.seq));
    inst.decided = true;
    inst.value = std::move(value);
    inst.failed = std::move(failed);
    // Agreed failures are failures here too (taken in at the next poll), so
    // that acknowledging after an agreement covers them.
    for (int p : inst.failed) ft::failures().note_failed(p);
    if (inst.waiter != nullptr) {
        MPI_Request r = inst.waiter;
        inst.waiter = nullptr;
        const int err = inst.on_decided ? inst.on_decided(inst) : MPI_SUCCESS;
        complete_request(r, err, 0);
    }
}

// What a coordinator's decision says failed: what the contributions
// reported and what it knows (job ranks, ascending).
std::vector<int> failures_of(MPI_Comm c, const Instance &inst) {
    std::set<int> failed = inst.got_failed;
    for (int r = 0; r < c->size; ++r)
        if (member_failed(c, r)) failed.insert(c->procs[static_cast<std::size_t>(r)]);
    return {failed.begin(), failed.end()};
}

// Coordinator: decides once every member it believes alive contributed.
void try_decide(MPI_Comm c, Instance &inst) {
    if (inst.decided || coordinator(c) != c->rank) return;
    if (inst.abortable && c->revoked && !inst.adopt) {
        // A creation on a revoked communicator: it fails everywhere, at once.
        decide(inst, std::vector<std::uint64_t>(std::max<std::size_t>(inst.mine.size(), 1), 0), failures_of(c, inst));
    } else if (!inst.entered) {
        return;
    } else if (inst.adopt) {
        decide(inst, inst.adopt_value, inst.adopt_failed);
    } else {
        for (int r = 0; r < c->size; ++r)
            if (!member_failed(c, r) && inst.got.find(r) == inst.got.end()) return;
        std::vector<std::uint64_t> value = inst.mine;
        for (auto &[r, v] : inst.got)
            for (std::size_t i = 0; i < value.size() && i < v.size(); ++i) value[i] &= v[i];
        value.push_back(random_nonce());  // identifies what a shrink creates
        decide(inst, std::move(value), failures_of(c, inst));
    }
    const auto msg = encode(c, inst, true, inst.value, inst.failed);
    std::vector<int> to;
    if (inst.seq == k_finalize_seq) {
        to = neighbours(c);  // which forward it (finalize_agreement)
    } else {
        for (int r = 0; r < c->size; ++r)
            if (r != c->rank && !member_failed(c, r)) to.push_back(r);
    }
    for (std::size_t i = 0; i < to.size(); ++i) {
        if (i == to.size() / 2) runtime::test_kill_point("agree.decide");
        ft_send(c, to[i], decide_tag, msg);
    }
}

// A revoked communicator's creations still undecided: failed, if this
// process coordinates them (try_decide).
void abort_creations(MPI_Comm c) {
    auto it = g_agreements.find(c);
    if (it == g_agreements.end()) return;
    for (auto &inst : it->second[1])
        if (inst->abortable && !inst->decided) try_decide(c, *inst);
}

void on_contribution(MPI_Comm c, Instance &inst, int from, bool decided, std::vector<std::uint64_t> words,
                     std::vector<int> failed, bool abortable) {
    inst.abortable = inst.abortable || abortable;
    FTMPI_DEBUG("agreement %llu on %s: contribution from %d%s", static_cast<unsigned long long>(inst.seq),
                comm_label(c), from, decided ? " (decided)" : "");
    if (inst.decided) {  // a late or re-routed request: answer it
        if (from != c->rank) ft_send(c, from, decide_tag, encode(c, inst, true, inst.value, inst.failed));
        return;
    }
    if (decided) {
        inst.adopt = true;
        inst.adopt_value = std::move(words);
        inst.adopt_failed = std::move(failed);
    } else {
        inst.got[from] = std::move(words);
        inst.got_failed.insert(failed.begin(), failed.end());
    }
    try_decide(c, inst);
}

// Sends this process's contribution (or decision) to its current coordinator,
// unless it already went there.
void contribute(MPI_Comm c, Instance &inst) {
    const int coord = coordinator(c);
    if (coord == inst.sent_to) return;
    inst.sent_to = coord;
    FTMPI_DEBUG("agreement %llu on %s: contributing to %d", static_cast<unsigned long long>(inst.seq), comm_label(c),
                coord);
    const auto &words = inst.decided ? inst.value : inst.mine;
    const auto &failed = inst.decided ? inst.failed : inst.my_failed;
    if (coord == c->rank) {
        on_contribution(c, inst, c->rank, inst.decided, words, failed, inst.abortable);
        return;
    }
    ft_send(c, coord, contrib_tag, encode(c, inst, inst.decided, words, failed));
    if (!inst.decided) runtime::test_kill_point("agree.contribute");
}

std::vector<int> known_failed(MPI_Comm c) {
    std::vector<int> out;
    for (int r = 0; r < c->size; ++r)
        if (member_failed(c, r)) out.push_back(c->procs[static_cast<std::size_t>(r)]);
    return out;
}

// Enters the next agreement on c with `words`. With `waiter` (nonblocking
// calls), on_decided runs and then the request completes once it is decided.
Instance &start_agreement(MPI_Comm c, std::vector<std::uint64_t> words, MPI_Request waiter = nullptr,
                          std::function<int(const Instance &)> on_decided = {}, Sequence sequence = Sequence::user,
                          bool abortable = false) {
    progress();
    const std::uint64_t seq = sequence == Sequence::user       ? c->agree_seq++
                              : sequence == Sequence::internal ? k_internal_seq | c->internal_seq++
                                                               : k_finalize_seq;
    Instance &inst = *instance(c, seq);  // the newest: never null
    inst.abortable = abortable;
    inst.mine = std::move(words);
    inst.my_failed = known_failed(c);
    inst.entered = true;
    inst.waiter = waiter;
    inst.on_decided = std::move(on_decided);
    contribute(c, inst);
    try_decide(c, inst);
    return inst;
}

// Blocks until the next agreement on c is decided, then takes in the agreed failures.
Instance &run_agreement(MPI_Comm c, std::vector<std::uint64_t> words, Sequence sequence = Sequence::user,
                        bool abortable = false) {
    Instance &inst = start_agreement(c, std::move(words), nullptr, {}, sequence, abortable);
    while (!inst.decided) progress_wait();
    progress();
    return inst;
}


// ULFM: agree reports MPI_ERR_PROC_FAILED when the agreed failures include
// one this process has not acknowledged (the value is agreed all the same).
int agreed_class(MPI_Comm c, const Instance &inst) {
    refresh_failed(c);
    for (int p : inst.failed) {
        if (std::find(c->procs.begin(), c->procs.end(), p) == c->procs.end()) continue;  // an inter-communicator's own group
        bool acked = false;
        for (std::size_t i = 0; i < c->failed.acked && !acked; ++i)
            acked = c->procs[static_cast<std::size_t>(c->failed.ranks[i])] == p;
        if (!acked) return MPI_ERR_PROC_FAILED;
    }
    return MPI_SUCCESS;
}

int check_intra(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    if (comm->inter)
        return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, call,
                     "%s on inter-communicators is not implemented by ftmpi yet", call);
    return MPI_SUCCESS;
}

int check_any(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    return MPI_SUCCESS;
}

// Where revoke, agree and shrink run: the communicator, or an
// inter-communicator's view over both groups.
MPI_Comm ft_view(MPI_Comm c) { return c->inter ? c->ft : c; }

// Inter-communicators (spec 001 §1.3.1): each group receives the AND over the
// other group's flags. Word 0 carries the first group's flags in the view's
// order, word 1 the second's; a process sets its own group's word.
int inter_side(MPI_Comm c) { return c->ft->procs.front() == c->local_procs.front() ? 0 : 1; }

std::vector<std::uint64_t> agree_words(MPI_Comm c, int flag) {
    if (!c->inter) return flag_words(flag);
    std::vector<std::uint64_t> w(2, 0xffffffffu);
    w[static_cast<std::size_t>(inter_side(c))] = static_cast<std::uint32_t>(flag);
    return w;
}

int agreed_flag(MPI_Comm c, const Instance &inst) {
    if (!c->inter) return flag_of(inst);
    return static_cast<int>(static_cast<std::uint32_t>(inst.value[static_cast<std::size_t>(1 - inter_side(c))]));
}

}  // namespace

namespace {

void handle(MPI_Comm c, int tag, int from, const std::vector<char> &payload) {
    if (from < 0 || from >= c->size) return;
    if (tag == revoke_tag) {
        revoke_local(c);
        return;
    }
    Wire w;
    std::vector<std::uint64_t> words;
    std::vector<int> failed;
    if (!decode(payload, w, words, failed)) {
        FTMPI_WARN("malformed agreement message from rank %d of %s dropped", from, comm_label(c));
        return;
    }
    Instance *inst = instance(c, w.seq);
    if (inst == nullptr) return;  // long settled
    if (tag == contrib_tag)
        on_contribution(c, *inst, from, w.decided != 0, std::move(words), std::move(failed), w.abortable != 0);
    else if (tag == decide_tag) {
        const bool news = !inst->decided;
        decide(*inst, std::move(words), std::move(failed));
        if (w.seq == k_finalize_seq) inst->heard.insert(from);
        if (!news) return;
        const auto msg = encode(c, *inst, true, inst->value, inst->failed);
        if (w.seq == k_finalize_seq)  // forwarded on first receipt (finalize_agreement)
            for (int peer : neighbours(c)) ft_send(c, peer, decide_tag, msg);
        // Members that re-routed their request here (this process was taken
        // for the coordinator before it knew) wait for this decision.
        for (const auto &[r, contribution] : inst->got)
            if (r != c->rank && !member_failed(c, r)) ft_send(c, r, decide_tag, msg);
    }
}

// The communicator uid a message names (revoke: its payload; agreement: Wire::uid).
bool uid_of(int tag, const std::vector<char> &payload, std::uint64_t &uid) {
    const std::size_t at = tag == revoke_tag ? 0 : offsetof(Wire, uid);
    if (payload.size() < at + sizeof uid) return false;
    std::memcpy(&uid, payload.data() + at, sizeof uid);
    return true;
}

}  // namespace

void register_comm(MPI_Comm c) {
    g_comms[slot_of(c)] = c;
    std::vector<Early> mine;
    for (auto it = g_early.begin(); it != g_early.end();) {  // what arrived before it existed
        if (it->slot != slot_of(c)) {
            ++it;
            continue;
        }
        if (it->uid == c->uid) mine.push_back(std::move(*it));
        it = g_early.erase(it);  // the others: stale
    }
    for (Early &e : mine) handle(c, e.tag, e.from, e.payload);
}

// Freed communicators that decided agreements, newest last, kept (object and
// agreements) so that a member still waiting in one of those agreements, whose
// coordinator failed, gets its decision from this process (which moved on,
// freed the communicator, and may be in MPI_Finalize).
constexpr std::size_t k_lingering_max = 16;
std::deque<MPI_Comm> g_lingering;

MPI_Comm lingering(std::uint64_t uid) {
    for (MPI_Comm l : g_lingering)
        if (l->uid == uid) return l;
    return nullptr;
}

// A late request on a freed communicator: answered with the decision if
// this process has it; nothing new starts there.
void answer_late(MPI_Comm c, int tag, int from, const std::vector<char> &payload) {
    Wire w;
    std::vector<std::uint64_t> words;
    std::vector<int> failed;
    if (tag != contrib_tag || from < 0 || from >= c->size || !decode(payload, w, words, failed)) return;
    const auto &list = g_agreements[c][(w.seq & k_internal_seq) != 0 ? 1 : 0];
    for (const auto &inst : list)
        if (inst->seq == w.seq && inst->decided && from != c->rank)
            ft_send(c, from, decide_tag, encode(c, *inst, true, inst->value, inst->failed));
}

void stop_lingering(MPI_Comm c) {
    g_agreements.erase(c);
    if (--c->refs == 0 && c->freed) delete_comm_object(c);
}

void unregister_comm(MPI_Comm c) {
    auto it = g_comms.find(slot_of(c));
    if (it != g_comms.end() && it->second == c) {
        g_comms.erase(it);
        g_closed[slot_of(c)] = c->uid;
    }
    auto ag = g_agreements.find(c);
    if (ag == g_agreements.end()) return;
    bool decided = false;
    for (const auto &list : ag->second)
        for (const auto &inst : list) decided = decided || inst->decided;
    if (!decided) {
        g_agreements.erase(ag);
        return;
    }
    ++c->refs;  // the object stays (discard_comm defers its deletion) until evicted here
    g_lingering.push_back(c);
    if (g_lingering.size() <= k_lingering_max) return;
    stop_lingering(g_lingering.front());
    g_lingering.pop_front();
}

void release_lingering() {
    for (MPI_Comm c : g_lingering) stop_lingering(c);
    g_lingering.clear();
}

void on_ft_message(const transport::Arrival &a) {
    if (a.rendezvous) return;  // never sent: every fault-tolerance message is eager
    const auto p = static_cast<const char *>(a.eager_data);
    std::vector<char> payload(p, p + a.length);
    const std::uint32_t slot = a.context & ~k_ft_context;
    std::uint64_t uid = 0;
    if (!uid_of(a.tag, payload, uid)) return;
    auto it = g_comms.find(slot);
    if (it != g_comms.end() && it->second->uid == uid) {
        handle(it->second, a.tag, a.source_rank, payload);
        return;
    }
    if (MPI_Comm l = lingering(uid)) {
        answer_late(l, a.tag, a.source_rank, payload);
        return;
    }
    if (it != g_comms.end()) return;  // stale
    if (auto closed = g_closed.find(slot); closed != g_closed.end() && closed->second == uid) return;
    g_early.push_back({slot, uid, a.tag, a.source_rank, std::move(payload)});
    if (g_early.size() > k_early_max) g_early.pop_front();
}

// Live members are at most one agreement apart, so only the two newest this
// process entered can still be undecided somewhere.
void agree_internal(MPI_Comm c, int *flag, std::vector<int> *agreed_failed, bool creation) {
    const Instance &inst = run_agreement(c, flag_words(*flag), Sequence::internal, creation);
    *flag = flag_of(inst);
    if (agreed_failed != nullptr) *agreed_failed = inst.failed;
}

// The decision spreads over the binomial graph: the coordinator sends it to
// its neighbours, and every process forwards it to its own on first receipt.
// So a process that decided and left cannot strand the others when the
// coordinator dies halfway through its sends (they would re-route to a
// process that is gone, not failed, and wait for it forever): its
// neighbours have the decision. A process leaves once every live neighbour
// sent it the decision, so none of these messages goes to a process that
// has left.
void finalize_agreement() {
    MPI_Comm c = MPI_COMM_WORLD;
    Instance &inst = run_agreement(c, flag_words(1), Sequence::finalize);
    auto pending = [&] {
        for (int peer : neighbours(c))
            if (inst.heard.count(peer) == 0) return true;
        return false;
    };
    while (pending()) progress_wait();
}

void recovery_on_failures() {
    // Collectives of a communicator made collectively inactive give up their
    // sends waiting for a receiver (which gave up too: see start_recv).
    for (auto &[slot, c] : g_comms)
        if (collectively_inactive(c)) g.transport->cancel_sends(c->uid, c->context + 1, c->context + 1, transport::Err::canceled);
    for (auto &[c, lists] : g_agreements)
        for (auto &list : lists) {
            int rerouted = 0;
            for (auto it = list.rbegin(); it != list.rend() && rerouted < 2; ++it) {
                if (!(*it)->entered) continue;
                ++rerouted;
                contribute(c, **it);
                try_decide(c, **it);
            }
        }
}

}  // namespace ftmpi::mpi

namespace ftmpi::mpi {
namespace {

int revoke_call(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_any(call, comm));
    revoke_local(ft_view(comm));
    return MPI_SUCCESS;
}

int is_revoked_call(const char *call, MPI_Comm comm, int *flag) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, flag, "flag"));
    progress();
    *flag = comm->revoked ? 1 : 0;
    return MPI_SUCCESS;
}

int agree_call(const char *call, MPI_Comm comm, int *flag) {
    FTMPI_TRY(check_any(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, flag, "flag"));
    const Instance &inst = run_agreement(ft_view(comm), agree_words(comm, *flag));
    *flag = agreed_flag(comm, inst);
    const int err = agreed_class(comm, inst);
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    return raise(comm, err, call, "the agreed failures on %s include unacknowledged ones",
                 comm_label(comm));
}

// The nonblocking calls (iagree, ishrink, Icomm_validate): a request on
// `comm` that completes, with the class `on_decided` returns, once the
// agreement on `view` is decided.
MPI_Request agreement_request(MPI_Comm comm, MPI_Comm view, std::vector<std::uint64_t> words,
                              std::function<int(const Instance &)> on_decided) {
    MPI_Request r = new_request(ftmpi_request_s::Kind::coll, comm, nullptr, 0, nullptr, 0, 0, 0);
    start_agreement(view, std::move(words), r, std::move(on_decided));  // may complete r at once
    return r;
}

int iagree_call(const char *call, MPI_Comm comm, int *flag, MPI_Request *request) {
    FTMPI_TRY(check_any(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, flag, "flag"));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    *request = agreement_request(comm, ft_view(comm), agree_words(comm, *flag), [comm, flag](const Instance &inst) {
        *flag = agreed_flag(comm, inst);
        return MPI_SUCCESS;
    });
    return MPI_SUCCESS;
}

// Survivors of an ordered group under the agreed failures (sorted job ranks).
std::vector<int> survivors(const std::vector<int> &procs, const std::vector<int> &failed) {
    std::vector<int> out;
    for (int p : procs)
        if (!std::binary_search(failed.begin(), failed.end(), p)) out.push_back(p);
    return out;
}

// Shrink is one agreement on the AND of the free-slot masks and on the
// failures; this makes the new communicator from its outcome. An
// inter-communicator takes two slots (itself and its hidden local group).
// MPI_ERR_INTERN when no slot is free everywhere, or (ishrink) when the
// agreed slot was taken here by a creation that overlapped it.
int shrink_from(MPI_Comm comm, const Instance &inst, MPI_Comm *newcomm) {
    runtime::test_kill_point("shrink");
    SlotMask common{};
    for (std::size_t i = 0; i < common.size() && i < inst.value.size(); ++i) common[i] = inst.value[i];
    const int slot = lowest_slot(common);
    if (!claim_slot(slot)) return MPI_ERR_INTERN;
    const std::uint64_t uid = inst.value.back();  // the coordinator's nonce
    if (!comm->inter) {
        *newcomm = make_comm(comm, slot, survivors(comm->procs, inst.failed), uid);
        return MPI_SUCCESS;
    }
    common[static_cast<std::size_t>(slot / 64)] &= ~(std::uint64_t{1} << (slot % 64));
    const int local_slot = lowest_slot(common);
    if (!claim_slot(local_slot)) {
        release_slot(static_cast<std::uint32_t>(slot) * 2);
        return MPI_ERR_INTERN;
    }
    std::vector<int> mine = survivors(comm->local_procs, inst.failed);
    MPI_Comm local = make_comm(comm, local_slot, mine, mix_uid(uid, static_cast<std::uint64_t>(mine.front())));
    *newcomm = make_intercomm(local, slot, survivors(comm->procs, inst.failed), comm->errhandler, uid);
    return MPI_SUCCESS;
}

std::vector<std::uint64_t> free_words() {
    const SlotMask &free = free_slots();
    return std::vector<std::uint64_t>(free.begin(), free.end());
}

int shrink_call(const char *call, MPI_Comm comm, MPI_Comm *newcomm) {
    FTMPI_TRY(check_any(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    if (shrink_from(comm, run_agreement(ft_view(comm), free_words()), newcomm) != MPI_SUCCESS)
        return raise(comm, MPI_ERR_INTERN, call, "no context id is free at every survivor of %s",
                     comm_label(comm));
    return MPI_SUCCESS;
}

// ---- validate (2011 API: spec 000 §17.7.4, spec 004) ------------------------
// One agreement: its agreed failures, restricted to comm, become G at every
// survivor; collectives then run over the other members.

void recognize(MPI_Comm c, const Instance &inst) {
    std::vector<int> g;
    for (int r = 0; r < c->size; ++r)
        if (std::binary_search(inst.failed.begin(), inst.failed.end(), c->procs[static_cast<std::size_t>(r)]))
            g.push_back(r);
    set_recognized(c, std::move(g));
    // Members may have left the collectives before validate after different
    // numbers of calls (an error stops a loop at some ranks only): all restart
    // the collective sequence at an epoch named by the agreement, and drop
    // what abandoned collectives of older epochs left behind.
    const std::uint32_t epoch = static_cast<std::uint32_t>(inst.seq + 1) & 0xffu;
    c->coll_seq = epoch << 16;
    c->coll_queue->drop_unexpected([epoch](int tag) {
        return (tag & k_cross_tag) == 0 && ((static_cast<std::uint32_t>(tag) >> 21) & 0xffu) != epoch;
    });
}

MPI_Group recognized_group(MPI_Comm c) {
    std::vector<int> procs;
    for (int r : c->failed.global) procs.push_back(c->procs[static_cast<std::size_t>(r)]);
    return group_or_empty(std::move(procs));
}

int validate_call(const char *call, MPI_Comm comm, MPI_Group *failed) {
    FTMPI_TRY(check_intra(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, failed, "failed"));
    recognize(comm, run_agreement(comm, flag_words(1)));
    *failed = recognized_group(comm);
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

// The ULFM names (Open MPI 5, MPICH) and the 2011 draft's (spec 001: invalidate,
// agreement, shrink), one implementation each.
extern "C" {
int MPIX_Comm_revoke(MPI_Comm comm) { return revoke_call("MPIX_Comm_revoke", comm); }
int MPI_Comm_invalidate(MPI_Comm comm) { return revoke_call("MPI_Comm_invalidate", comm); }
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag) { return is_revoked_call("MPIX_Comm_is_revoked", comm, flag); }
int MPIX_Comm_agree(MPI_Comm comm, int *flag) { return agree_call("MPIX_Comm_agree", comm, flag); }
int MPI_Comm_agreement(MPI_Comm comm, int *flag) { return agree_call("MPI_Comm_agreement", comm, flag); }
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request) {
    return iagree_call("MPIX_Comm_iagree", comm, flag, request);
}
int MPI_Icomm_agreement(MPI_Comm comm, int *flag, MPI_Request *request) {
    return iagree_call("MPI_Icomm_agreement", comm, flag, request);
}
int MPI_Comm_validate(MPI_Comm comm, MPI_Group *failed) { return validate_call("MPI_Comm_validate", comm, failed); }

int MPI_Icomm_validate(MPI_Comm comm, MPI_Group *failed, MPI_Request *request) {
    const char *call = "MPI_Icomm_validate";
    FTMPI_TRY(check_intra(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, failed, "failed"));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    *request = agreement_request(comm, comm, flag_words(1), [comm, failed](const Instance &inst) {
        recognize(comm, inst);
        *failed = recognized_group(comm);
        return MPI_SUCCESS;
    });
    return MPI_SUCCESS;
}

int MPI_Comm_validate_global(MPI_Comm comm, int *num_failed, int *num_new) {
    const char *call = "MPI_Comm_validate_global";
    FTMPI_TRY(check_intra(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, num_failed, "num_failed"));
    FTMPI_CHECK(check_nonnull(call, comm, num_new, "num_new"));
    recognize(comm, run_agreement(comm, flag_words(1)));
    *num_failed = static_cast<int>(comm->failed.global.size());
    *num_new = static_cast<int>(comm->failed.local_new.size());
    return MPI_SUCCESS;
}

int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm) { return shrink_call("MPIX_Comm_shrink", comm, newcomm); }
int MPI_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm) { return shrink_call("MPI_Comm_shrink", comm, newcomm); }
// Nonblocking: *newcomm is set when the request completes. A communicator
// creation that overlaps it on this process may take the slot the shrink
// agrees on; the request then fails with MPI_ERR_INTERN.
int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    const char *call = "MPIX_Comm_ishrink";
    FTMPI_TRY(check_any(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    *newcomm = MPI_COMM_NULL;
    *request = agreement_request(comm, ft_view(comm), free_words(),
                                 [comm, newcomm](const Instance &inst) { return shrink_from(comm, inst, newcomm); });
    return MPI_SUCCESS;
}
}  // extern "C"
