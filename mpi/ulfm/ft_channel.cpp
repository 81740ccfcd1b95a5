// The fault-tolerance channel: messages on a communicator's fault-tolerance
// context (k_ft_context | slot), which a revoke does not close. The progress
// engine hands them here as they arrive (Engine::on_arrival), so a process
// answers agreement requests and forwards revokes whenever it drives
// progress, also for agreements it has returned from and for communicators
// it has freed.
//
// Every message starts with its communicator's uid. A slot holds one
// communicator at a time here, and a later one on it exists only after this
// process freed the earlier; so a message for a slot whose communicator here
// has another uid, or for the last one freed there, is stale and dropped.
// Messages for a communicator not created here yet wait (bounded, as a safety
// net) and are handled when it is registered.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mpi/comm/comm_internal.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/ulfm/recovery_internal.hpp"
#include "mpi/ulfm/ulfm.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::mpi {
namespace {

std::unordered_map<std::uint32_t, MPI_Comm> g_comms;        // context slot -> communicator
std::unordered_map<std::uint32_t, std::uint64_t> g_closed;  // context slot -> uid of the last one freed there

struct Early {
    std::uint32_t slot;
    std::uint64_t uid;
    int tag, from;
    std::vector<char> body;
};
std::deque<Early> g_early;
constexpr std::size_t k_early_max = 4096;

// Freed communicators whose agreements decided, or that were revoked, newest
// last: kept (the object and its agreements) so that a member still in one
// of those agreements gets the decision (or this process's part) from this
// process, which moved on, freed the communicator, and may be in MPI_Finalize.
// Revoked ones are counted apart, with more room: a member of the other
// group of an inter-communicator revoked here may start its creation late
// (a spawned process still starting), and this process waits for it at
// MPI_Finalize (finalize_connected).
constexpr std::size_t k_lingering_max = 16, k_lingering_revoked_max = 256;
std::deque<MPI_Comm> g_lingering;

std::uint32_t slot_of(MPI_Comm c) { return c->context / 2; }

void handle(MPI_Comm c, int tag, int from, const void *body, std::size_t len) {
    if (from < 0 || from >= c->size) return;
    if (tag == revoke_tag) {
        if (!c->revoked) runtime::emit(runtime::EventType::comm_revoked, c->context, 1);
        revoke_local(c);
    } else if (tag == agree_tag) on_agree_message(c, from, body, len);
}

void stop_lingering(MPI_Comm c) {
    forget_agreements(c);
    comm_release(c);
}

}  // namespace

int CommView::size() const { return c_->size; }
int CommView::self() const { return c_->rank; }
bool CommView::failed(int r) const { return ft::failures().is_failed(c_->procs[static_cast<std::size_t>(r)]); }
bool CommView::any_failed() const { return !ft::failures().in_order().empty(); }
std::vector<int> CommView::known_failed() const {
    std::vector<int> out;
    if (ft::failures().in_order().empty()) return out;
    for (int r = 0; r < c_->size; ++r)
        if (failed(r)) out.push_back(r);
    return out;
}

void ft_send(MPI_Comm c, int peer, int tag, std::size_t len, const std::function<void(char *)> &write) {
    const std::size_t total = sizeof c->uid + len;
    char *copy = static_cast<char *>(std::malloc(total));
    std::memcpy(copy, &c->uid, sizeof c->uid);
    if (len != 0) write(copy + sizeof c->uid);
    MPI_Request r = new_request(ftmpi_request_s::Kind::send, c, copy, static_cast<int>(total), MPI_BYTE, peer, tag,
                                k_ft_context | slot_of(c));
    r->owner = copy;
    r->on_complete = [](MPI_Request done) { std::free(done->owner); };
    r->user_freed = true;
    start_send(r);
}

void ft_send(MPI_Comm c, int peer, int tag, const void *body, std::size_t len) {
    ft_send(c, peer, tag, len, [&](char *out) { std::memcpy(out, body, len); });
}

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
    for (Early &e : mine) handle(c, e.tag, e.from, e.body.data(), e.body.size());
}

void unregister_comm(MPI_Comm c) {
    auto it = g_comms.find(slot_of(c));
    if (it != g_comms.end() && it->second == c) {
        g_comms.erase(it);
        g_closed[slot_of(c)] = c->uid;
    }
    // A revoked one lingers too: a member still in a creation over it (one
    // this process skipped, as when it revoked the communicator and freed it
    // instead of merging) asks for this process's part, which its aborted
    // agreements give as zeros, so that the creation fails there too.
    // An inter-communicator's agreements run on its view (which lingers on
    // its own); the inter-communicator, of the same uid but only the other
    // group's size, would take the view's messages and drop them.
    if (c->inter || (!agreements_decided(c) && !c->revoked)) {
        forget_agreements(c);
        return;
    }
    comm_retain(c);  // the object stays (discard_comm defers its deletion) until evicted here
    g_lingering.push_back(c);
    const bool revoked = c->revoked;
    const auto kind = [revoked](MPI_Comm l) { return l->revoked == revoked; };
    const auto count = static_cast<std::size_t>(std::count_if(g_lingering.begin(), g_lingering.end(), kind));
    if (count <= (revoked ? k_lingering_revoked_max : k_lingering_max)) return;
    const auto oldest = std::find_if(g_lingering.begin(), g_lingering.end(), kind);
    stop_lingering(*oldest);
    g_lingering.erase(oldest);
}

void release_lingering() {
    for (MPI_Comm c : g_lingering) stop_lingering(c);
    g_lingering.clear();
}

void on_ft_message(const transport::Arrival &a) {
    if (a.rendezvous) return;  // never sent: every fault-tolerance message is eager
    std::uint64_t uid = 0;
    if (a.length < sizeof uid) return;
    const char *p = static_cast<const char *>(a.eager_data);
    std::memcpy(&uid, p, sizeof uid);
    const char *body = p + sizeof uid;
    const std::size_t len = a.length - sizeof uid;
    const std::uint32_t slot = a.context & ~k_ft_context;
    auto it = g_comms.find(slot);
    if (it != g_comms.end() && it->second->uid == uid) {
        handle(it->second, a.tag, a.source_rank, body, len);
        return;
    }
    for (MPI_Comm l : g_lingering)
        if (l->uid == uid) {
            // Agreements only: nothing is revoked there any more.
            if (a.tag == agree_tag && a.source_rank >= 0 && a.source_rank < l->size)
                on_agree_message(l, a.source_rank, body, len);
            return;
        }
    if (it != g_comms.end()) return;  // stale
    if (auto closed = g_closed.find(slot); closed != g_closed.end() && closed->second == uid) return;
    g_early.push_back({slot, uid, a.tag, a.source_rank, std::vector<char>(body, body + len)});
    if (g_early.size() > k_early_max) g_early.pop_front();
}

void recovery_on_failures() {
    // Collectives of a communicator made collectively inactive give up their
    // sends waiting for a receiver (which gave up too: see start_recv). The
    // cancelled sends complete at once, and their release may retire a freed
    // communicator (leaving g_comms): the contexts are listed first.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> inactive;
    for (auto &[slot, c] : g_comms)
        if (collectively_inactive(c)) inactive.emplace_back(c->uid, c->context + 1);
    for (auto [uid, context] : inactive) g.transport->cancel_sends(uid, context, context, transport::Err::canceled);
    agreements_on_failures();
}

}  // namespace ftmpi::mpi
