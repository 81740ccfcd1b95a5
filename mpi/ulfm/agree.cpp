// The agreement on communicators: ft/agreement.hpp's state machine, one per
// communicator, fed with its fault-tolerance messages and the process's
// failures; its sends go out on the fault-tolerance context, and its
// decisions complete the calls waiting for them. Also MPIX_Comm_agree and
// iagree, the internal agreements (uniform creation, file sync) and
// MPI_Finalize's closing agreement.
#include <algorithm>
#include <map>

#include "mpi-ext.h"
#include "ft/agreement.hpp"
#include "ft/topology.hpp"
#include "transport/refused.hpp"
#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/ulfm/recovery_internal.hpp"
#include "mpi/ulfm/ulfm.hpp"
#include "runtime/log.hpp"
#include "runtime/test_hooks.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::mpi {
namespace {

constexpr std::uint64_t k_internal_seq = std::uint64_t{1} << 63;
// MPI_Finalize's agreement on MPI_COMM_WORLD: one instance, the same
// everywhere whatever else each process did.
constexpr std::uint64_t k_finalize_seq = k_internal_seq | std::uint64_t{1} << 62;

// A call waiting for agreement `seq`: a nonblocking call's request, or a
// blocking call's flag.
struct Waiter {
    std::uint64_t seq;
    MPI_Request request;
    std::function<int(const Agreed &)> on_decided;
    bool *done = nullptr;
};
struct CommAgreements {
    ft::Agreements machine;
    std::vector<Waiter> waiters;
};
// Node-based: a CommAgreements stays put while others are added (a decision's
// callbacks may create communicators).
std::map<MPI_Comm, CommAgreements> g_agreements;

Agreed outcome(MPI_Comm c, const ft::Agreements::Instance &inst) {
    Agreed a;
    a.seq = inst.seq;
    a.words = inst.decision.words;  // a view
    a.nonce = inst.decision.nonce;
    for (int r : inst.decision.failed)
        if (r >= 0 && r < c->size) a.failed.push_back(c->procs[static_cast<std::size_t>(r)]);
    std::sort(a.failed.begin(), a.failed.end());
    return a;
}

// A decided agreement: its failures become known here (taken in at the next
// poll, so that acknowledging after an agreement covers them), and the
// nonblocking calls waiting for it complete.
void settle(MPI_Comm c, CommAgreements &st, std::uint64_t seq) {
    const auto *inst = st.machine.find(seq);
    if (inst == nullptr || !inst->decided) return;
    FTMPI_DEBUG("agreement %llu on %s decided", static_cast<unsigned long long>(seq), comm_label(c));
    const std::int64_t at = runtime::failure_stamp();
    for (int r : inst->decision.failed)
        if (r >= 0 && r < c->size && ft::failures().note_failed(c->procs[static_cast<std::size_t>(r)]))
            runtime::emit_at(runtime::EventType::failure_detected, at, c->procs[static_cast<std::size_t>(r)],
                             static_cast<int>(runtime::FailurePath::agreement));
    if (st.waiters.empty()) return;
    bool requests = false;
    for (auto it = st.waiters.begin(); it != st.waiters.end();) {
        if (it->seq == seq && it->done != nullptr) {
            *it->done = true;
            it = st.waiters.erase(it);
        } else {
            requests = requests || it->seq == seq;
            ++it;
        }
    }
    if (!requests) return;
    const Agreed a = outcome(c, *inst);
    std::vector<Waiter> done;
    for (auto it = st.waiters.begin(); it != st.waiters.end();) {
        if (it->seq != seq) {
            ++it;
            continue;
        }
        done.push_back(std::move(*it));
        it = st.waiters.erase(it);
    }
    for (Waiter &w : done) complete_request(w.request, w.on_decided ? w.on_decided(a) : MPI_SUCCESS, 0);
}

// The effects buffer every call below fills and apply() drains; it keeps its
// capacity, so the failure-free path allocates nothing for it. apply() is
// the last use of it in each caller, and drains it before anything that can
// re-enter (completing a request), so a nested call finds it empty.
ft::AgreeEffects &effects() {
    static ft::AgreeEffects fx;
    return fx;
}

void apply(MPI_Comm c, CommAgreements &st, ft::AgreeEffects &fx) {
    // Test kill points: "agree.decide" as a root has sent its decision to
    // half its children; "agree.contribute" right after a contribution.
    std::size_t issue_sends = 0, nth = 0;
    auto issued = [&](const ft::AgreeEffects::Send &s) {
        return s.msg.type == ft::AgreeMsg::Type::decide &&
               std::find(fx.issued.begin(), fx.issued.end(), s.msg.seq) != fx.issued.end();
    };
    for (const auto &s : fx.sends) issue_sends += issued(s) ? 1 : 0;
    for (const auto &s : fx.sends) {
        if (issued(s) && nth++ == issue_sends / 2) runtime::test_kill_point("agree.decide");
        ft_send(c, s.to, agree_tag, ft::encoded_size(s.msg), [&](char *out) { ft::encode_into(s.msg, out); });
        if (s.msg.type == ft::AgreeMsg::Type::contribute && !s.msg.reported)
            runtime::test_kill_point("agree.contribute");
    }
    fx.sends.clear();
    fx.issued.clear();
    if (fx.decided.empty()) return;
    const auto decided = std::move(fx.decided);
    fx.decided.clear();
    for (std::uint64_t seq : decided) settle(c, st, seq);
}

// Enters agreement `seq` on c.
void enter_seq(MPI_Comm c, std::uint64_t seq, std::vector<std::uint64_t> words, MPI_Request waiter,
               std::function<int(const Agreed &)> on_decided, Sequence sequence, bool abortable, bool *done);

// Enters the next agreement on c; returns its number.
std::uint64_t start(MPI_Comm c, std::vector<std::uint64_t> words, MPI_Request waiter,
                    std::function<int(const Agreed &)> on_decided, Sequence sequence, bool abortable,
                    bool *done = nullptr) {
    progress();
    const std::uint64_t seq = sequence == Sequence::user       ? c->agree_seq++
                              : sequence == Sequence::internal ? k_internal_seq | c->internal_seq++
                                                               : k_finalize_seq;
    enter_seq(c, seq, std::move(words), waiter, std::move(on_decided), sequence, abortable, done);
    return seq;
}

void enter_seq(MPI_Comm c, std::uint64_t seq, std::vector<std::uint64_t> words, MPI_Request waiter,
               std::function<int(const Agreed &)> on_decided, Sequence sequence, bool abortable, bool *done) {
    CommAgreements &st = g_agreements[c];
    if (waiter != nullptr || done != nullptr) st.waiters.push_back({seq, waiter, std::move(on_decided), done});
    ft::AgreeEffects &fx = effects();
    st.machine.enter(CommView(c), seq, std::move(words), random_nonce(), abortable, sequence == Sequence::finalize, fx);
    const auto *inst = st.machine.find(seq);
    const bool before =
        inst != nullptr && inst->decided && std::find(fx.decided.begin(), fx.decided.end(), seq) == fx.decided.end();
    apply(c, st, fx);
    if (before) settle(c, st, seq);  // its decision came before this process entered
}

const ft::Agreements::Instance *find(MPI_Comm c, std::uint64_t seq) {
    auto it = g_agreements.find(c);
    return it == g_agreements.end() ? nullptr : it->second.machine.find(seq);
}

// Blocks until `done` (set by settle() when agreement `seq` decided).
Agreed wait_for(MPI_Comm c, std::uint64_t seq, const bool &done) {
    while (!done) progress_wait();
    progress();
    return outcome(c, *find(c, seq));
}

// ULFM: agree reports MPI_ERR_PROC_FAILED when the agreed failures include
// one this process has not acknowledged (the value is agreed all the same).
int agreed_class(MPI_Comm c, const Agreed &a) {
    refresh_failed(c);
    for (int p : a.failed) {
        if (std::find(c->procs.begin(), c->procs.end(), p) == c->procs.end())
            continue;  // an inter-communicator's own group
        bool acked = false;
        for (std::size_t i = 0; i < c->failed.acked && !acked; ++i)
            acked = c->procs[static_cast<std::size_t>(c->failed.ranks[i])] == p;
        if (!acked) return MPI_ERR_PROC_FAILED;
    }
    return MPI_SUCCESS;
}

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

int agreed_flag(MPI_Comm c, const Agreed &a) {
    if (!c->inter) return flag_of(a);
    const auto side = static_cast<std::size_t>(1 - inter_side(c));
    return side < a.words.size() ? static_cast<int>(static_cast<std::uint32_t>(a.words[side])) : 0;
}

}  // namespace

Agreed run_agreement(MPI_Comm c, std::vector<std::uint64_t> words, Sequence sequence, bool abortable) {
    bool done = false;
    return wait_for(c, start(c, std::move(words), nullptr, {}, sequence, abortable, &done), done);
}

MPI_Request agreement_request(MPI_Comm comm, MPI_Comm view, std::vector<std::uint64_t> words,
                              std::function<int(const Agreed &)> on_decided) {
    MPI_Request r = new_request(ftmpi_request_s::Kind::coll, comm, nullptr, 0, nullptr, 0, 0, 0);
    start(view, std::move(words), r, std::move(on_decided), Sequence::user, false);  // may complete r at once
    return r;
}

void on_agree_message(MPI_Comm c, int from, const void *body, std::size_t len) {
    ft::AgreeMsg m;
    if (!ft::decode(body, len, m)) {
        transport::refuse("agreement", "a malformed %zu-byte message from rank %d of %s", len, from, comm_label(c));
        return;
    }
    CommAgreements &st = g_agreements[c];
    ft::AgreeEffects &fx = effects();
    st.machine.on_message(CommView(c), from, std::move(m), fx);
    apply(c, st, fx);
}

void abort_creations(MPI_Comm c) {
    CommAgreements &st = g_agreements[c];
    ft::AgreeEffects &fx = effects();
    st.machine.abort(CommView(c), fx);
    apply(c, st, fx);
}

bool agreements_decided(MPI_Comm c) {
    auto it = g_agreements.find(c);
    return it != g_agreements.end() && it->second.machine.any_decided();
}

void forget_agreements(MPI_Comm c) { g_agreements.erase(c); }

void agreements_on_failures() {
    std::vector<MPI_Comm> comms;
    for (const auto &[c, st] : g_agreements) comms.push_back(c);
    for (MPI_Comm c : comms) {
        auto it = g_agreements.find(c);
        if (it == g_agreements.end()) continue;
        ft::AgreeEffects &fx = effects();
        it->second.machine.on_failures(CommView(c), fx);
        apply(c, it->second, fx);
    }
}

std::uint64_t reserve_internal(MPI_Comm c, std::uint64_t n) {
    const std::uint64_t base = c->internal_seq;
    c->internal_seq += n;
    return base;
}

// Called from completion callbacks (a nonblocking creation's next step), so
// it drives no progress itself (state.hpp: the transport is not re-entrant).
void start_internal(MPI_Comm c, std::uint64_t number, int flag, std::function<void(const Agreed &)> on_decided) {
    MPI_Request r = new_request(ftmpi_request_s::Kind::coll, c, nullptr, 0, nullptr, 0, 0, 0);
    r->user_freed = true;  // nobody waits on it: released once decided
    enter_seq(
        c, k_internal_seq | number, flag_words(flag), r,
        [f = std::move(on_decided)](const Agreed &a) {
            f(a);
            return MPI_SUCCESS;
        },
        Sequence::internal, true, nullptr);
}

void agree_internal(MPI_Comm c, int *flag, std::vector<int> *agreed_failed, bool abortable) {
    const Agreed a = run_agreement(c, flag_words(*flag), Sequence::internal, abortable);
    *flag = flag_of(a);
    if (agreed_failed != nullptr) *agreed_failed = a.failed;
}

// MPI_Finalize: the decision floods the binomial graph (ft/agreement.hpp,
// `flood`), and a process leaves once every live neighbour sent it the
// decision, so no one will ask it for anything again.
void finalize_agreement() {
    MPI_Comm c = MPI_COMM_WORLD;
    const std::uint64_t seq = start(c, flag_words(1), nullptr, {}, Sequence::finalize, false);
    const CommView view(c);
    auto pending = [&] {
        const auto *inst = find(c, seq);
        if (inst == nullptr || !inst->decided) return true;
        for (int peer : ft::bmg_neighbours(c->size, c->rank, [&](int r) { return view.failed(r); }))
            if (std::find(inst->heard.begin(), inst->heard.end(), peer) == inst->heard.end()) return true;
        return false;
    };
    while (pending()) progress_wait();
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

namespace {

int agree_call(const char *call, MPI_Comm comm, int *flag) {
    FTMPI_TRY(check_any(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, flag, "flag"));
    const std::int64_t t0 = runtime::event_start(runtime::EventType::agree_decided);
    const Agreed a = run_agreement(ft_view(comm), agree_words(comm, *flag));
    *flag = agreed_flag(comm, a);
    if (t0 != 0) runtime::emit(runtime::EventType::agree_decided, comm->context, *flag, runtime::event_since(t0));
    const int err = agreed_class(comm, a);
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    return raise(comm, err, call, "the agreed failures on %s include unacknowledged ones", comm_label(comm));
}

int iagree_call(const char *call, MPI_Comm comm, int *flag, MPI_Request *request) {
    FTMPI_TRY(check_any(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, flag, "flag"));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    const std::int64_t t0 = runtime::event_start(runtime::EventType::agree_decided);
    *request = agreement_request(comm, ft_view(comm), agree_words(comm, *flag), [comm, flag, t0](const Agreed &a) {
        *flag = agreed_flag(comm, a);
        if (t0 != 0) runtime::emit(runtime::EventType::agree_decided, comm->context, *flag, runtime::event_since(t0));
        return MPI_SUCCESS;
    });
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {
int MPIX_Comm_agree(MPI_Comm comm, int *flag) { return agree_call("MPIX_Comm_agree", comm, flag); }
int MPI_Comm_agree(MPI_Comm comm, int *flag) { return agree_call("MPI_Comm_agree", comm, flag); }
int MPI_Comm_agreement(MPI_Comm comm, int *flag) { return agree_call("MPI_Comm_agreement", comm, flag); }
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request) {
    return iagree_call("MPIX_Comm_iagree", comm, flag, request);
}
int MPI_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request) {
    return iagree_call("MPI_Comm_iagree", comm, flag, request);
}
int MPI_Icomm_agreement(MPI_Comm comm, int *flag, MPI_Request *request) {
    return iagree_call("MPI_Icomm_agreement", comm, flag, request);
}
}  // extern "C"
