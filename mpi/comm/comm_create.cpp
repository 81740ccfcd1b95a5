// Communicator creation and destruction: Comm_dup, Comm_idup, Comm_split,
// Comm_split_type, Comm_create, Comm_create_group, Comm_free, and the queries
// Comm_compare and Comm_test_inter.
//
// Context ids. A communicator uses two contexts: 2*slot for point-to-point and
// 2*slot+1 for its internal collectives. Each process keeps the set of slots
// it has free; creating a communicator ANDs the participants' free sets and
// takes the lowest slot free everywhere. No central server, and a slot is
// never reused while a communicator holding it lives here. Slots 0 and 1 are
// MPI_COMM_WORLD and MPI_COMM_SELF.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "mpi/comm/attributes.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/dynamic/connect.hpp"
#include "mpi/checks.hpp"
#include "mpi/p2p/bsend.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/topo/topology.hpp"
#include "mpi/ulfm/ulfm.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {


namespace {
SlotMask initial_mask() {
    SlotMask m;
    m.fill(~std::uint64_t{0});
    // MPI_COMM_WORLD, MPI_COMM_SELF, the bridge and the dials of
    // connections between jobs (mpi/dynamic/connect.hpp).
    m[0] &= ~std::uint64_t{15};
    return m;
}
SlotMask g_free = initial_mask();
SlotMask g_free_idup = [] {
    SlotMask m;
    m.fill(~std::uint64_t{0});
    return m;
}();
}  // namespace

const SlotMask &free_slots() { return g_free; }
const SlotMask &free_idup_slots() { return g_free_idup; }

bool claim_idup_slot(int slot) {
    const int i = slot - k_idup_first_slot;
    if (i < 0 || i >= k_slot_words * 64) return false;
    std::uint64_t &word = g_free_idup[static_cast<std::size_t>(i / 64)];
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    if ((word & bit) == 0) return false;
    word &= ~bit;
    return true;
}

void release_slot(std::uint32_t context) {
    std::uint32_t slot = context / 2;
    SlotMask &m = slot >= static_cast<std::uint32_t>(k_idup_first_slot) ? g_free_idup : g_free;
    if (&m == &g_free_idup) slot -= k_idup_first_slot;
    m[slot / 64] |= std::uint64_t{1} << (slot % 64);
}

int lowest_slot(const SlotMask &m) {
    for (int w = 0; w < k_slot_words; ++w)
        if (m[static_cast<std::size_t>(w)] != 0) return w * 64 + __builtin_ctzll(m[static_cast<std::size_t>(w)]);
    return -1;
}

bool claim_slot(int slot) {
    if (slot < 0) return false;
    std::uint64_t &word = g_free[static_cast<std::size_t>(slot / 64)];
    const std::uint64_t bit = std::uint64_t{1} << (slot % 64);
    if ((word & bit) == 0) return false;
    word &= ~bit;
    return true;
}

int claim_lowest(const SlotMask &m) {
    const int slot = lowest_slot(m);
    return claim_slot(slot) ? slot : -1;
}

// ---- exchanges among the members of `team` on its collective context ----
// Linear (through one member), failure-aware like every internal operation.
// TODO(issue 3): switch to the logarithmic collectives of mpi/coll.

int next_team_tag(MPI_Comm team) {
    return itag::make(team->coll_seq++);  // the sequence wraps in its width
}

int team_send(MPI_Comm team, int peer, int tag, const void *buf, int bytes) {
    MPI_Request r = new_request(ftmpi_request_s::Kind::send, team, buf, bytes, MPI_BYTE, peer, tag, team->context + 1);
    start_send(r);
    wait_complete(r);
    return retire_request(&r, MPI_STATUS_IGNORE);
}

// A message marked with k_coll_poison carries an error its sender saw (poison_of).
int team_recv(MPI_Comm team, int peer, int tag, void *buf, int bytes) {
    MPI_Request r = new_request(ftmpi_request_s::Kind::recv, team, buf, bytes, MPI_BYTE, peer, tag, team->context + 1);
    start_recv(r);
    wait_complete(r);
    MPI_Status st{};
    const int err = retire_request(&r, &st);
    return err == MPI_SUCCESS ? poison_of(st.MPI_TAG) : err;
}

// The members that take part in the team's internal exchanges: all of them,
// or, after MPI_Comm_validate recognized failures, the others (2011 API).
namespace {
std::vector<int> team_members(MPI_Comm team) {
    if (!team->coll_ranks.empty()) return team->coll_ranks;
    std::vector<int> all(static_cast<std::size_t>(team->size));
    for (int r = 0; r < team->size; ++r) all[static_cast<std::size_t>(r)] = r;
    return all;
}

// A revoked team fails the exchange (a one-member team too, which sends
// nothing that could be refused), and so does a collectively inactive one (a
// failure not recognized).
int team_start_error(MPI_Comm team) {
    if (team->revoked) return MPI_ERR_REVOKED;
    return ft::failures().epoch() != 0 && collectively_inactive(team) ? MPI_ERR_PROC_FAILED : MPI_SUCCESS;
}
}  // namespace

// Entries of recognized failed members are left untouched.
int team_allgather(MPI_Comm team, const void *mine, int bytes, void *all) {
    const int tag = next_team_tag(team);
    char *out = static_cast<char *>(all);
    const std::size_t each = static_cast<std::size_t>(bytes);
    int err = team_start_error(team);
    auto keep = [&err](int e) {
        if (err == MPI_SUCCESS) err = e;
    };
    std::memcpy(out + static_cast<std::size_t>(team->rank) * each, mine, each);
    const std::vector<int> ids = team_members(team);
    const int root = ids.front();
    if (team->rank == root) {
        for (std::size_t i = 1; i < ids.size(); ++i)
            keep(team_recv(team, ids[i], tag, out + static_cast<std::size_t>(ids[i]) * each, bytes));
        // Everyone gets this outcome, and so does the root: a member that
        // dies after its contribution came fails the send of the result to
        // it, but the others have the result by then, so that failure must
        // not make the root's outcome differ from theirs (it is found later).
        const int out_tag = poisoned_tag(tag + 1, err);  // tell everyone
        for (std::size_t i = 1; i < ids.size(); ++i) {
            (void)team_send(team, ids[i], out_tag, out, bytes * team->size);
            if (i == 1) ftmpi::runtime::test_kill_point("team.result");  // tests: the others never get it
        }
    } else {
        keep(team_send(team, root, tag, mine, bytes));
        keep(team_recv(team, root, tag + 1, out, bytes * team->size));
    }
    return err;
}

int team_bcast(MPI_Comm team, int root, void *buf, int bytes, int root_err) {
    const int tag = next_team_tag(team);
    if (team->rank != root) return team_recv(team, root, tag, buf, bytes);
    const int start_err = team_start_error(team);
    const int out_tag = poisoned_tag(tag, root_err != MPI_SUCCESS ? root_err : start_err);
    // As in team_allgather: the root's outcome is what it told the others,
    // whatever sending it to a member that died since costs.
    for (int p : team_members(team))
        if (p != root) (void)team_send(team, p, out_tag, buf, bytes);
    return start_err;
}

std::uint64_t random_nonce() {
    static std::mt19937_64 gen{std::random_device{}() ^ (static_cast<std::uint64_t>(::getpid()) << 32)};
    return gen();
}

std::uint64_t mix_uid(std::uint64_t a, std::uint64_t b) {
    std::uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 29);
}

int team_common_slots(MPI_Comm team, SlotMask *common, std::uint64_t *uid) {
    struct Offer {
        SlotMask free;
        std::uint64_t nonce;
    };
    const Offer mine{g_free, random_nonce()};
    std::vector<Offer> all(static_cast<std::size_t>(team->size));
    const int err = team_allgather(team, &mine, sizeof(Offer), all.data());
    if (err != MPI_SUCCESS) return err;
    common->fill(~std::uint64_t{0});
    std::uint64_t id = 0;
    for (int r : team_members(team)) {
        const Offer &o = all[static_cast<std::size_t>(r)];
        for (int w = 0; w < k_slot_words; ++w)
            (*common)[static_cast<std::size_t>(w)] &= o.free[static_cast<std::size_t>(w)];
        id ^= o.nonce;
    }
    if (uid != nullptr) *uid = id;
    return MPI_SUCCESS;
}

int agree_slot(MPI_Comm team, int *slot, std::uint64_t *uid) {
    SlotMask common;
    if (int err = team_common_slots(team, &common, uid); err != MPI_SUCCESS) return err;
    *slot = claim_lowest(common);
    return *slot < 0 ? MPI_ERR_INTERN : MPI_SUCCESS;
}

int make_hidden_comm(MPI_Comm comm, MPI_Comm *hidden) {
    int slot = -1;
    std::uint64_t uid = 0;
    const int err = agree_slot(comm, &slot, &uid);
    *hidden = err == MPI_SUCCESS ? make_comm(comm, slot, comm->procs, uid) : MPI_COMM_NULL;
    int ok = *hidden != MPI_COMM_NULL ? 1 : 0;
    agree_internal(comm, &ok, nullptr, true);
    if (ok) return MPI_SUCCESS;
    if (*hidden != MPI_COMM_NULL) discard_comm(*hidden);
    *hidden = MPI_COMM_NULL;
    return err != MPI_SUCCESS ? err : comm->revoked ? MPI_ERR_REVOKED : MPI_ERR_PROC_FAILED;
}

MPI_Comm make_comm(MPI_Comm parent, int slot, std::vector<int> procs, std::uint64_t uid) {
    auto c = new ftmpi_comm_s;
    c->uid = uid;
    c->context = static_cast<std::uint32_t>(slot) * 2;
    c->size = static_cast<int>(procs.size());
    const int me = g.pm->job().id();
    c->rank = static_cast<int>(std::find(procs.begin(), procs.end(), me) - procs.begin());
    c->procs = std::move(procs);
    c->queue = g.engine->open(c->context, uid);
    c->coll_queue = g.engine->open(c->context + 1, uid);
    c->errhandler = parent->errhandler;
    c->session = parent->session;
    errhandler_retain(c->errhandler);
    register_comm(c);
    return c;
}

int dup_intercomm(MPI_Comm comm, MPI_Comm *newcomm);

namespace {

// A freed communicator without pending operations: its context is free again
// here, its queues close, it leaves the fault-tolerance channel (or lingers
// there, taking a reference), and the object goes once nothing refers to it.
void retire_comm(MPI_Comm c) {
    c->retired = true;
    const bool view_keeps_slot = c->inter && free_intercomm_parts(c);
    unregister_comm(c);
    if (c->ft_owner == nullptr) {  // an inter-communicator's view shares its owner's context and queues
        if (!view_keeps_slot) release_slot(c->context);
        g.engine->close(c->queue);
        g.engine->close(c->coll_queue);
    } else if (c->releases_slot) {
        release_slot(c->context);
        c->releases_slot = false;
        comm_release(c->ft_owner);  // held since the owner retired (free_intercomm_parts)
    }
    if (c->refs == 0) delete_comm_object(c);
}

}  // namespace

void discard_comm(MPI_Comm c) {
    if (c == g_parent) g_parent = MPI_COMM_NULL;
    c->magic = Magic::dead;
    c->freed = true;
    // Its pending operations complete normally first (MPI-3.1 §6.4.3): a
    // nonblocking collective's later rounds, an idup's exchange and
    // agreements still need its queues and its agreements (comm_release).
    if (c->refs == 0) retire_comm(c);
}

void comm_release(MPI_Comm c) {
    if (--c->refs > 0 || !c->freed) return;
    if (c->retired) delete_comm_object(c);
    else retire_comm(c);
}

void delete_comm_object(MPI_Comm c) {
    if (c->ft_owner == nullptr) {
        g.engine->destroy(c->queue);
        g.engine->destroy(c->coll_queue);
    }
    errhandler_release(c->errhandler);
    delete c->topo;
    delete c;
}

namespace {

int fail(MPI_Comm comm, int err, const char *call) {
    return raise(comm, err, call, "communicator creation over %s failed", comm_label(comm));
}


// Spec 000 §17.8.2: creation succeeds at every survivor or fails at every
// survivor. `err` is this member's outcome; the parent's members agree on
// success (MPIX_Comm_agree's algorithm, which also runs on a revoked parent).
// When someone failed, a communicator made here is discarded, and the call
// fails with this member's error or MPI_ERR_PROC_FAILED.
int uniform(MPI_Comm parent, const char *call, int err, MPI_Comm *made) {
    int ok = err == MPI_SUCCESS ? 1 : 0;
    agree_internal(parent, &ok, nullptr, true);
    if (ok) return MPI_SUCCESS;
    if (*made != MPI_COMM_NULL) discard_comm(*made);
    *made = MPI_COMM_NULL;
    if (err != MPI_SUCCESS) return fail(parent, err, call);
    if (parent->revoked)
        return raise(parent, MPI_ERR_REVOKED, call, "%s was revoked during the communicator's creation",
                     comm_label(parent));
    return raise(parent, MPI_ERR_PROC_FAILED, call,
                 "communicator creation over %s failed at another member (a process failed)", comm_label(parent));
}

}  // namespace

std::vector<int> color_members(const std::vector<int> &pairs, const std::vector<int> &procs, int color,
                               const std::function<bool(int)> &skip) {
    std::vector<std::tuple<int, int>> members;  // (key, rank)
    for (std::size_t r = 0; r < procs.size(); ++r)
        if (pairs[r * 2] == color && !(skip && skip(static_cast<int>(r))))
            members.emplace_back(pairs[r * 2 + 1], static_cast<int>(r));
    std::sort(members.begin(), members.end());
    std::vector<int> out;
    for (const auto &[k, r] : members) out.push_back(procs[static_cast<std::size_t>(r)]);
    return out;
}

int create_subcomm(MPI_Comm comm, const char *call, int err, std::vector<int> procs, MPI_Comm *newcomm) {
    int slot = -1;
    std::uint64_t uid = 0;
    const int e2 = agree_slot(comm, &slot, &uid);  // every member takes part, whatever happened
    if (err == MPI_SUCCESS) err = e2;
    else if (e2 == MPI_SUCCESS) release_slot(static_cast<std::uint32_t>(slot) * 2);
    const int me = g.pm->job().id();
    const bool member = std::find(procs.begin(), procs.end(), me) != procs.end();
    MPI_Comm c = MPI_COMM_NULL;
    if (err == MPI_SUCCESS && !member) release_slot(static_cast<std::uint32_t>(slot) * 2);
    if (err == MPI_SUCCESS && member) c = make_comm(comm, slot, std::move(procs), uid);
    FTMPI_TRY(uniform(comm, call, err, &c));
    if (c != MPI_COMM_NULL) inherit_recognized(comm, c);
    *newcomm = c;
    return MPI_SUCCESS;
}

namespace {

// `group` is a subgroup of comm's group (an inter-communicator's local group), checked.
int group_in_comm(const char *call, MPI_Comm comm, MPI_Group group) {
    if (group == MPI_GROUP_NULL || group->magic != Magic::group)
        return raise(comm, MPI_ERR_GROUP, call, "invalid group (argument group)");
    const std::vector<int> &procs = comm->inter ? comm->local_procs : comm->procs;
    for (int p : group->procs)
        if (std::find(procs.begin(), procs.end(), p) == procs.end())
            return raise(comm, MPI_ERR_GROUP, call, "group holds process %d, which is not in %s%s", p,
                         comm->inter ? "the local group of " : "", comm_label(comm));
    return MPI_SUCCESS;
}

}  // namespace

}  // namespace ftmpi::mpi

namespace ftmpi::mpi {

int create_over_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    const int me = g.pm->job().id();
    auto at = std::find(group->procs.begin(), group->procs.end(), me);
    ftmpi_comm_s team;
    team.context = comm->context;
    team.uid = comm->uid;  // its messages go to comm's queues
    team.queue = comm->queue;
    team.coll_queue = comm->coll_queue;
    team.procs = group->procs;
    team.size = static_cast<int>(group->procs.size());
    team.rank = static_cast<int>(at - group->procs.begin());
    team.coll_seq = itag::group_seq(tag);
    int slot = -1;
    std::uint64_t uid = 0;
    if (int err = agree_slot(&team, &slot, &uid); err != MPI_SUCCESS) return err;
    *newcomm = make_comm(comm, slot, group->procs, uid);
    return MPI_SUCCESS;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    FTMPI_TRY(check_init("MPI_Comm_dup"));
    FTMPI_CHECK(check_comm("MPI_Comm_dup", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_dup", comm, newcomm, "newcomm"));
    ftmpi::runtime::test_kill_point("dup");
    MPI_Comm c = MPI_COMM_NULL;
    if (comm->inter) {
        if (int err = dup_intercomm(comm, &c); err != MPI_SUCCESS) return fail(comm, err, "MPI_Comm_dup");
    } else {
        int slot = -1;
        std::uint64_t uid = 0;
        const int err = agree_slot(comm, &slot, &uid);
        if (err == MPI_SUCCESS) c = make_comm(comm, slot, comm->procs, uid);
        FTMPI_TRY(uniform(comm, "MPI_Comm_dup", err, &c));
        inherit_recognized(comm, c);
        if (comm->topo != nullptr) c->topo = new Topology(*comm->topo);
    }
    if (int err = copy_attributes(comm, c); err != MPI_SUCCESS) {
        discard_comm(c);
        return raise(comm, err, "MPI_Comm_dup", "an attribute copy callback failed");
    }
    *newcomm = c;
    return MPI_SUCCESS;
}

// MPI_Comm_idup is in mpi/comm/comm_idup.cpp.

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    FTMPI_TRY(check_init("MPI_Comm_split"));
    FTMPI_CHECK(check_comm("MPI_Comm_split", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_split", comm, newcomm, "newcomm"));
    if (color < 0 && color != MPI_UNDEFINED)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d (argument color)", color);
    if (comm->inter) {
        if (int err = split_intercomm(comm, color, key, newcomm); err != MPI_SUCCESS)
            return fail(comm, err, "MPI_Comm_split");
        return MPI_SUCCESS;
    }
    const int mine[2] = {color, key};
    std::vector<int> all(static_cast<std::size_t>(comm->size) * 2);
    const int err = team_allgather(comm, mine, sizeof mine, all.data());
    std::vector<int> procs;
    if (err == MPI_SUCCESS && color != MPI_UNDEFINED)  // recognized failures count as MPI_UNDEFINED
        procs = color_members(all, comm->procs, color, [comm](int r) { return recognized(comm, r); });
    return create_subcomm(comm, "MPI_Comm_split", err, std::move(procs), newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    FTMPI_TRY(check_init("MPI_Comm_split_type"));
    FTMPI_CHECK(check_comm("MPI_Comm_split_type", comm));
    FTMPI_CHECK(check_info_arg("MPI_Comm_split_type", comm, info));
    if (split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_HW_UNGUIDED)
        return hw_split(comm, split_type, key, info, newcomm);
    if (split_type == MPI_COMM_TYPE_RESOURCE_GUIDED) return pset_split(comm, key, info, newcomm);
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_split_type", "unknown split_type %d", split_type);
    // Processes of one node share its lowest job rank (locality from the process manager).
    const auto &local = g.pm->job().local_peers;
    const int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : *std::min_element(local.begin(), local.end());
    return MPI_Comm_split(comm, color, key, newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    FTMPI_TRY(check_init("MPI_Comm_create"));
    FTMPI_CHECK(check_comm("MPI_Comm_create", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_create", comm, newcomm, "newcomm"));
    FTMPI_TRY(group_in_comm("MPI_Comm_create", comm, group));
    if (comm->inter) {
        // MPI-3.1 §6.4.2: group is a subgroup of the local group (each group
        // passes its own); the result joins the two subgroups, and is
        // MPI_COMM_NULL outside them or when either is empty. That is a split
        // with one color for the group's members, ranked in the group's order.
        const int me = g.pm->job().id();
        const auto at = std::find(group->procs.begin(), group->procs.end(), me);
        const bool member = at != group->procs.end();
        const int err = split_intercomm(comm, member ? 0 : MPI_UNDEFINED,
                                        member ? static_cast<int>(at - group->procs.begin()) : 0, newcomm);
        return err == MPI_SUCCESS ? MPI_SUCCESS : fail(comm, err, "MPI_Comm_create");
    }
    return create_subcomm(comm, "MPI_Comm_create", MPI_SUCCESS, group->procs, newcomm);
}

// Collective over the group's members only. Their exchange runs on comm's
// collective context under tags derived from `tag`, far above the ones comm's
// own collectives use.
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    FTMPI_TRY(check_init("MPI_Comm_create_group"));
    FTMPI_CHECK(check_comm("MPI_Comm_create_group", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_create_group", comm, newcomm, "newcomm"));
    if (comm->inter)
        return raise(comm, MPI_ERR_COMM, "MPI_Comm_create_group",
                     "%s is an inter-communicator; MPI_Comm_create_group takes an intra-communicator",
                     comm_label(comm));
    FTMPI_CHECK(check_send_tag("MPI_Comm_create_group", comm, tag));
    FTMPI_TRY(group_in_comm("MPI_Comm_create_group", comm, group));
    // Collective over the group only (no uniformity agreement over comm): a
    // revoked comm fails it at once.
    FTMPI_TRY(check_not_revoked("MPI_Comm_create_group", comm));
    const int me = g.pm->job().id();
    if (std::find(group->procs.begin(), group->procs.end(), me) == group->procs.end())
        return raise(comm, MPI_ERR_GROUP, "MPI_Comm_create_group", "the calling process is not in group");
    if (int err = create_over_group(comm, group, tag, newcomm); err != MPI_SUCCESS)
        return fail(comm, err, "MPI_Comm_create_group");
    return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm *comm) {
    FTMPI_TRY(check_init("MPI_Comm_free"));
    FTMPI_CHECK(check_nonnull("MPI_Comm_free", MPI_COMM_NULL, comm, "comm"));
    FTMPI_CHECK(check_comm("MPI_Comm_free", *comm));
    MPI_Comm c = *comm;
    if (c->predefined)
        return raise(c, MPI_ERR_COMM, "MPI_Comm_free", "%s is predefined and cannot be freed", comm_label(c));
    const int err = delete_attributes(c);
    bsend_forget(c);  // MPI_Comm_attach_buffer's messages go first
    discard_comm(c);
    *comm = MPI_COMM_NULL;
    if (err != MPI_SUCCESS) return raise(MPI_COMM_NULL, err, "MPI_Comm_free", "an attribute delete callback failed");
    return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
    FTMPI_TRY(check_init("MPI_Comm_compare"));
    FTMPI_CHECK(check_comm("MPI_Comm_compare", comm1));
    FTMPI_CHECK(check_comm("MPI_Comm_compare", comm2));
    FTMPI_CHECK(check_nonnull("MPI_Comm_compare", comm1, result, "result"));
    if (comm1 == comm2) {
        *result = MPI_IDENT;
    } else if (comm1->procs == comm2->procs) {
        *result = MPI_CONGRUENT;
    } else {
        std::vector<int> a = comm1->procs, b = comm2->procs;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        *result = a == b ? MPI_SIMILAR : MPI_UNEQUAL;
    }
    return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int *flag) {
    FTMPI_TRY(check_init("MPI_Comm_test_inter"));
    FTMPI_CHECK(check_comm("MPI_Comm_test_inter", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_test_inter", comm, flag, "flag"));
    *flag = comm->inter ? 1 : 0;
    return MPI_SUCCESS;
}

}  // extern "C"
