// MPI_Comm_idup: a nonblocking duplicate, any number in flight, on intra- and
// inter-communicators, uniform under failures as MPI_Comm_dup is.
//
// Steps of one idup (an Idup), each driven by completions, never by a wait:
//  1. Exchange. At the call, every member offers its free idup slots (their
//     own pool, comm_internal.hpp: a blocking creation never races an idup
//     for a slot) and a nonce, in an allgather over the parent (an
//     inter-communicator's fault-tolerance view, both groups) on the
//     parent's collective context under a tag taken at the call: each idup
//     matches its own messages, whatever the order the exchanges finish in.
//     The offers' AND is the slots free everywhere at offer time (C), the
//     nonces' XOR the new communicator's uid.
//  2. Claim and confirm, one idup of a parent at a time, in call order. A
//     slot free everywhere at offer time may have been taken here since by
//     another idup (another parent's, finished meanwhile): each member
//     claims the candidate if it is still free here, and an agreement over
//     the parent (numbers reserved at the call, so every member pairs the
//     same instances) ANDs "my exchange succeeded" and "I claimed it". Both:
//     the communicator is made. Exchange fine but a claim failed: release,
//     drop the candidate, claim another (chosen from C by the shared nonce
//     and the attempt number, so two idups that collided part ways). An
//     exchange failed anywhere: the idup fails at every member (spec 000
//     §17.8.2), with MPI_ERR_PROC_FAILED or MPI_ERR_REVOKED.
//  Slots that earlier idups of the same parent took while this one was in
//  flight are left out of its candidates (every member knows them alike).
//
// As if MPI_Comm_dup ran at the call (MPI-3.1 §6.4.2): the attribute copy
// callbacks run at the call, on the attributes the parent has then; their
// copies wait in a holder object until the communicator is made (or are
// deleted through it, should the idup fail). The parent may be freed at once
// after the call: the operation completes normally (MPI-3.1 §6.4.3), its
// request holding the parent (comm_create.cpp, discard_comm).
//
// Every step after the call runs inside completion callbacks, inside
// progress(): nothing here waits or drives progress.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <vector>

#include "mpi/comm/attributes.hpp"
#include "mpi/checks.hpp"
#include "mpi/info.hpp"
#include "mpi/coll/common.hpp"
#include "mpi/coll/sched.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/ulfm/recovery_internal.hpp"
#include "mpi/topo/topology.hpp"
#include "mpi/ulfm/ulfm.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {
namespace {

constexpr int k_attempts = 32;  // agreement numbers reserved per idup
constexpr int k_spread = 64;    // a retry's candidate: one of the first k_spread of C

struct IdupOffer {
    SlotMask free;
    std::uint64_t nonce;
};

struct Idup {
    MPI_Comm parent;      // the user's communicator (maybe freed since the call)
    MPI_Comm team;        // where the exchange and agreements run (parent, or its view)
    MPI_Comm *out;        // the user's newcomm, written at completion
    MPI_Request request;  // the user's
    std::uint64_t agree_base = 0;
    IdupOffer mine{};
    std::vector<IdupOffer> all;
    int exchange_err = MPI_SUCCESS;
    bool exchanged = false, confirming = false;
    int attempt = 0;
    std::vector<int> excluded;  // slots not to try (taken by earlier idups, or failed claims)
    std::vector<int> claimed;   // this attempt's slots, claimed here
    std::uint64_t nonce = 0;
    // The parent's attributes as copied at the call (a holder that never
    // becomes a communicator), and the copy's outcome.
    ftmpi_comm_s *held = nullptr;
    int copy_err = MPI_SUCCESS;
    // MPI_Comm_idup_with_info: the new communicator's hints (info's, not the parent's).
    bool with_info = false;
    Hints hints;
};

// The idups of each parent, in call order.
std::map<MPI_Comm, std::deque<Idup *>> g_idup_queues;

int idup_slots_needed(const Idup &d) { return d.parent->inter ? 2 : 1; }

// The slots of C (the offers' AND) not excluded, ascending.
std::vector<int> idup_candidates(const Idup &d) {
    SlotMask common;
    common.fill(~std::uint64_t{0});
    for (const IdupOffer &o : d.all)
        for (int w = 0; w < k_slot_words; ++w)
            common[static_cast<std::size_t>(w)] &= o.free[static_cast<std::size_t>(w)];
    std::vector<int> out;
    for (int w = 0; w < k_slot_words; ++w)
        for (std::uint64_t bits = common[static_cast<std::size_t>(w)]; bits != 0; bits &= bits - 1) {
            const int slot = k_idup_first_slot + w * 64 + __builtin_ctzll(bits);
            if (std::find(d.excluded.begin(), d.excluded.end(), slot) == d.excluded.end()) out.push_back(slot);
        }
    return out;
}

void idup_release_claims(Idup &d) {
    for (int slot : d.claimed) release_slot(static_cast<std::uint32_t>(slot) * 2);
    d.claimed.clear();
}

void idup_pump(MPI_Comm parent);

// The idup is over: the user's request completes with `err` (its release
// may retire a freed parent: the parent is not touched after it unless
// later idups, whose requests hold it, are pending).
void idup_finish(Idup *d, MPI_Comm made, int err) {
    if (made != MPI_COMM_NULL && d->copy_err != MPI_SUCCESS) {  // a copy callback failed at the call
        discard_comm(made);
        made = MPI_COMM_NULL;
        err = d->copy_err;
    }
    if (made != MPI_COMM_NULL) made->attrs = std::move(d->held->attrs);
    if (made != MPI_COMM_NULL && d->with_info) made->info = std::move(d->hints);
    else delete_attributes(d->held);  // the copies go (their delete callbacks run)
    delete d->held;
    *d->out = made;
    MPI_Comm parent = d->parent;
    MPI_Request r = d->request;
    auto q = g_idup_queues.find(parent);
    q->second.erase(std::find(q->second.begin(), q->second.end(), d));
    delete d;
    const bool more = !q->second.empty();
    if (!more) g_idup_queues.erase(q);
    complete_request(r, err, 0);
    if (more) idup_pump(parent);
}

MPI_Comm idup_make(Idup &d) {
    MPI_Comm p = d.parent;
    if (!p->inter) {
        MPI_Comm c = make_comm(p, d.claimed[0], p->procs, d.nonce);
        inherit_recognized(p, c);
        if (p->topo != nullptr) c->topo = new Topology(*p->topo);
        return c;
    }
    // Both groups chose the same two slots: the inter-communicator's, then
    // the hidden local communicator's (whose uid differs per group).
    MPI_Comm local = make_comm(p->local, d.claimed[1], p->local->procs,
                               mix_uid(d.nonce, static_cast<std::uint64_t>(p->local_procs.front())));
    return make_intercomm(local, d.claimed[0], p->procs, p->errhandler, d.nonce);
}

void idup_decided(Idup *d, int flag) {
    d->confirming = false;
    if ((flag & 1) == 0) {  // an exchange failed somewhere: fails everywhere
        idup_release_claims(*d);
        int err = d->exchange_err;
        if (err == MPI_SUCCESS) err = d->parent->revoked ? MPI_ERR_REVOKED : MPI_ERR_PROC_FAILED;
        idup_finish(d, MPI_COMM_NULL, err);
        return;
    }
    if ((flag & 2) != 0) {
        MPI_Comm made = idup_make(*d);
        // Later idups of this parent leave these slots out (they may have
        // offered them before this claim).
        for (Idup *o : g_idup_queues[d->parent])
            if (o != d) o->excluded.insert(o->excluded.end(), d->claimed.begin(), d->claimed.end());
        d->claimed.clear();
        idup_finish(d, made, MPI_SUCCESS);
        return;
    }
    // Some member could not claim: try other slots.
    idup_release_claims(*d);
    idup_pump(d->parent);
}

// Claims this attempt's slots and enters its agreement (front idup only).
void idup_confirm(Idup *d) {
    d->confirming = true;
    int flag = d->exchange_err == MPI_SUCCESS ? 1 : 0;
    if (flag) {
        const std::vector<int> c = idup_candidates(*d);
        const auto need = static_cast<std::size_t>(idup_slots_needed(*d));
        if (c.size() < need || d->attempt >= k_attempts) {
            d->exchange_err = MPI_ERR_INTERN;  // no slot free at every member: fails everywhere alike
            flag = 0;
        } else {
            // First try: the lowest. Retries: spread by the shared nonce.
            const std::size_t span = std::min<std::size_t>(c.size() - need + 1, k_spread);
            const std::size_t at =
                d->attempt == 0 ? 0 : mix_uid(d->nonce, static_cast<std::uint64_t>(d->attempt)) % span;
            bool ok = true;
            for (std::size_t i = 0; i < need; ++i) {
                const int slot = c[at + i];
                d->excluded.push_back(slot);  // should this attempt fail, the next tries others
                if (ok && claim_idup_slot(slot)) d->claimed.push_back(slot);
                else ok = false;
            }
            if (!ok) idup_release_claims(*d);
            else flag |= 2;
        }
    }
    const std::uint64_t number = d->agree_base + static_cast<std::uint64_t>(std::min(d->attempt, k_attempts - 1));
    ++d->attempt;
    start_internal(d->team, number, flag, [d](const Agreed &a) { idup_decided(d, flag_of(a)); });
}

// Moves the parent's front idup on when its exchange is done.
void idup_pump(MPI_Comm parent) {
    auto it = g_idup_queues.find(parent);
    if (it == g_idup_queues.end() || it->second.empty()) return;
    Idup *d = it->second.front();
    if (d->exchanged && !d->confirming) idup_confirm(d);
}

void idup_exchanged(void *ctx, int err) {
    auto *d = static_cast<Idup *>(ctx);
    d->exchanged = true;
    d->exchange_err = err;
    for (const IdupOffer &o : d->all) d->nonce ^= o.nonce;
    idup_pump(d->parent);
}

// MPI_Comm_idup(_with_info): info is null for the former.
int idup_start(const char *call, MPI_Comm comm, const MPI_Info *info, MPI_Comm *newcomm, MPI_Request *request) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    if (info != nullptr) FTMPI_CHECK(check_info_arg(call, comm, *info));
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    ftmpi::runtime::test_kill_point("dup");
    auto *d = new Idup{};
    d->parent = comm;
    d->team = comm->inter ? comm->ft : comm;
    d->out = newcomm;
    d->with_info = info != nullptr;
    if (info != nullptr) merge_hints(d->hints, *info, HintKind::comm);
    d->request = new_request(ftmpi_request_s::Kind::coll, comm, nullptr, 0, nullptr, 0, 0, 0);
    d->request->complete = false;
    d->held = new ftmpi_comm_s;
    d->held->magic = Magic::dead;  // never a communicator the user can use
    d->copy_err = copy_attributes(comm, d->held);
    d->agree_base = reserve_internal(d->team, k_attempts);
    d->mine = IdupOffer{free_idup_slots(), random_nonce()};
    d->all.resize(static_cast<std::size_t>(d->team->size));
    g_idup_queues[comm].push_back(d);
    *request = d->request;
    // The tag is the parent's (an inter-communicator's collectives number
    // both groups' calls alike; its view's sequence is not the user's).
    auto *s = new Sched(d->team, next_team_tag(comm));
    const int bytes = static_cast<int>(sizeof(IdupOffer));
    std::vector<int> counts(static_cast<std::size_t>(d->team->size), bytes), displs(counts.size());
    for (std::size_t i = 0; i < displs.size(); ++i) displs[i] = static_cast<int>(i) * bytes;
    build_allgatherv(*s, d->team, &d->mine, bytes, MPI_BYTE, d->all.data(), counts.data(), displs.data(), MPI_BYTE);
    s->on_finish(&idup_exchanged, d);
    MPI_Request internal = s->start_nonblocking();  // may finish (and run `exchanged`) at once
    if (internal->complete) release_request(internal);
    else internal->user_freed = true;
    return MPI_SUCCESS;
}


}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    return idup_start("MPI_Comm_idup", comm, nullptr, newcomm, request);
}

// MPI 4.0: MPI_Comm_idup, and the new communicator's hints are info's (as
// MPI_Comm_dup_with_info).
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request) {
    return idup_start("MPI_Comm_idup_with_info", comm, &info, newcomm, request);
}

}  // extern "C"
