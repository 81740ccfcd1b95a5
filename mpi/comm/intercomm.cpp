// Inter-communicators: MPI_Intercomm_create, MPI_Intercomm_merge,
// MPI_Comm_remote_size, MPI_Comm_remote_group, and their Comm_dup / Comm_free.
//
// Layout (objects.hpp): procs/size are the remote group, so point-to-point
// needs nothing special; local_procs is this side's group and `local` a hidden
// intra-communicator over it. Context slots are agreed across both groups: each
// side ANDs its members' free masks, the two leaders swap masks and groups,
// and each leader hands the result to its side.
#include <algorithm>
#include <cstring>

#include "mpi/comm/comm_internal.hpp"
#include "mpi/checks.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/recovery.hpp"

namespace ftmpi::mpi {


int team_swap(MPI_Comm link, int peer, int tag, const void *out, int out_bytes, void *in, int in_bytes) {
    if (peer >= link->size) return MPI_ERR_PROC_FAILED;  // a shrink left no remote group
    MPI_Request rr =
        new_request(ftmpi_request_s::Kind::recv, link, in, in_bytes, MPI_BYTE, peer, tag, link->context + 1);
    start_recv(rr);
    MPI_Request sr =
        new_request(ftmpi_request_s::Kind::send, link, out, out_bytes, MPI_BYTE, peer, tag, link->context + 1);
    start_send(sr);
    wait_complete(sr);
    wait_complete(rr);
    const int se = retire_request(&sr, MPI_STATUS_IGNORE);
    const int re = retire_request(&rr, MPI_STATUS_IGNORE);
    return re != MPI_SUCCESS ? re : se;
}

namespace {

// What one side tells the other.
struct SideInfo {
    SlotMask mask;
    std::uint64_t nonce;  // the side's common nonce (team_common_slots)
    int high;
    int words;  // the length of the payload that follows
};

// The cross-group exchange. `team` is this side's group, `leader` its leader's
// rank in team; the leaders talk to each other over `link` (peer rank `peer`,
// tags from `tag`) and swap their side's `payload` (the leader's counts; the
// group's job ranks, for a new inter-communicator). Out: the other side's
// payload and `high`, the slots free on both sides, and an identifier both
// sides share (for ftmpi_comm_s::uid).
int cross_exchange(MPI_Comm team, int leader, MPI_Comm link, int peer, int tag, int high,
                   const std::vector<int> &payload, std::vector<int> &remote_payload, int &remote_high,
                   SlotMask &common, std::uint64_t &uid) {
    std::uint64_t nonce = 0;
    int err = team_common_slots(team, &common, &nonce);
    auto keep = [&err](int e) {
        if (err == MPI_SUCCESS) err = e;
    };
    SideInfo info{};
    if (team->rank == leader) {
        SideInfo mine{common, nonce, high, static_cast<int>(payload.size())}, theirs{};
        keep(team_swap(link, peer, tag, &mine, sizeof mine, &theirs, sizeof theirs));
        remote_payload.resize(static_cast<std::size_t>(theirs.words > 0 ? theirs.words : 0));
        keep(team_swap(link, peer, tag + 1, payload.data(), static_cast<int>(sizeof(int) * payload.size()),
                       remote_payload.data(), static_cast<int>(sizeof(int) * remote_payload.size())));
        info = theirs;
        for (int w = 0; w < k_slot_words; ++w)
            info.mask[static_cast<std::size_t>(w)] &= common[static_cast<std::size_t>(w)];
    }
    // The leader's error (the other group's failure, say) reaches its group.
    keep(team_bcast(team, leader, &info, sizeof info, err));
    remote_payload.resize(static_cast<std::size_t>(info.words > 0 ? info.words : 0));
    keep(team_bcast(team, leader, remote_payload.data(), static_cast<int>(sizeof(int) * remote_payload.size()), err));
    remote_high = info.high;
    common = info.mask;
    uid = mix_uid(std::min(nonce, info.nonce), std::max(nonce, info.nonce));
    return err;
}

int check_inter(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    if (!comm->inter) return raise(comm, MPI_ERR_COMM, call, "%s is not an inter-communicator", comm_label(comm));
    return MPI_SUCCESS;
}

// Tags for the leaders' exchange on peer_comm: cross tags, apart from any
// of its collectives (internal_tag.hpp).
int leader_tag(int tag) { return itag::leader(tag); }

}  // namespace

MPI_Comm make_intercomm(MPI_Comm local, int slot, std::vector<int> remote_procs, MPI_Errhandler errhandler,
                        std::uint64_t uid) {
    auto c = new ftmpi_comm_s;
    c->inter = true;
    c->uid = uid;
    c->context = static_cast<std::uint32_t>(slot) * 2;
    c->size = static_cast<int>(remote_procs.size());
    c->procs = std::move(remote_procs);
    c->rank = local->rank;
    c->local_procs = local->procs;
    c->local = local;
    c->queue = g.engine->open(c->context, uid);
    c->coll_queue = g.engine->open(c->context + 1, uid);
    c->errhandler = errhandler;
    errhandler_retain(errhandler);
    // The fault-tolerance view: both groups, in an order both compute alike.
    auto v = new ftmpi_comm_s;
    const bool local_first = c->procs.empty() || c->local_procs.front() < c->procs.front();
    v->procs = local_first ? c->local_procs : c->procs;
    const std::vector<int> &second = local_first ? c->procs : c->local_procs;
    v->procs.insert(v->procs.end(), second.begin(), second.end());
    v->size = static_cast<int>(v->procs.size());
    v->rank = local_first ? c->rank : c->size + c->rank;
    v->uid = uid;
    v->context = c->context;
    v->queue = c->queue;
    v->coll_queue = c->coll_queue;
    v->errhandler = errhandler;
    errhandler_retain(errhandler);
    v->ft_owner = c;
    c->ft = v;
    register_comm(v);
    return c;
}

namespace {

// The new inter-communicator over `local` (job ranks of members of
// `local_comm`) and `remote`, after a successful exchange: claims the cross
// slot, makes the hidden local communicator (local_slot) and the
// inter-communicator.
int finish_intercomm(MPI_Comm local_comm, int local_slot, std::uint64_t local_uid, std::vector<int> local,
                     const SlotMask &common, std::vector<int> remote, std::uint64_t uid, MPI_Errhandler errhandler,
                     MPI_Comm *made) {
    const int slot = claim_lowest(common);
    if (slot < 0) {
        release_slot(static_cast<std::uint32_t>(local_slot) * 2);
        return MPI_ERR_INTERN;
    }
    MPI_Comm group = make_comm(local_comm, local_slot, std::move(local), local_uid);
    *made = make_intercomm(group, slot, std::move(remote), errhandler, uid);
    return MPI_SUCCESS;
}

// Spec 000 §17.8.2 across both groups: an agreement over the parent's
// fault-tolerance view decides whether every survivor of both groups made
// the new communicator; if not, it is discarded everywhere.
int uniform_inter(MPI_Comm parent, int err, MPI_Comm *made) {
    int ok = err == MPI_SUCCESS ? 1 : 0;
    agree_internal(parent->ft, &ok, nullptr, true);
    if (ok) return MPI_SUCCESS;
    if (*made != MPI_COMM_NULL) discard_comm(*made);
    *made = MPI_COMM_NULL;
    return err != MPI_SUCCESS ? err : MPI_ERR_PROC_FAILED;
}

}  // namespace

// MPI-3.1 §6.4.2: each group splits by color and key, and the members of a
// color in one group get an inter-communicator with the members of that
// color in the other. Every member of both groups takes part in every step:
// the local (color, key) allgather, a local slot (shared by the colors'
// hidden local communicators, which are disjoint), the leaders' exchange of
// their groups' pairs (which also agrees the cross slot over both groups),
// and the uniformity agreement over both groups.
int split_intercomm(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    const int mine[2] = {color, key};
    std::vector<int> pairs(static_cast<std::size_t>(comm->local->size) * 2);
    int err = team_allgather(comm->local, mine, sizeof mine, pairs.data());
    int local_slot = -1;
    std::uint64_t local_uid = 0, uid = 0;
    const int e1 = agree_slot(comm->local, &local_slot, &local_uid);
    if (err == MPI_SUCCESS) err = e1;
    std::vector<int> remote_pairs;
    int remote_high = 0;
    SlotMask common;
    const int e2 =
        cross_exchange(comm->local, 0, comm, 0, next_team_tag(comm), 0, pairs, remote_pairs, remote_high, common, uid);
    if (err == MPI_SUCCESS) err = e2;
    if (err == MPI_SUCCESS && remote_pairs.size() != comm->procs.size() * 2) err = MPI_ERR_INTERN;
    std::vector<int> local, remote;
    if (err == MPI_SUCCESS && color != MPI_UNDEFINED) {
        local = color_members(pairs, comm->local_procs, color);
        remote = color_members(remote_pairs, comm->procs, color);
    }
    MPI_Comm made = MPI_COMM_NULL;
    if (err == MPI_SUCCESS && !remote.empty())
        err = finish_intercomm(comm->local, local_slot, local_uid, std::move(local), common, std::move(remote), uid,
                               comm->errhandler, &made);
    else if (local_slot >= 0) release_slot(static_cast<std::uint32_t>(local_slot) * 2);
    if (int e = uniform_inter(comm, err, &made); e != MPI_SUCCESS) return e;
    *newcomm = made;
    return MPI_SUCCESS;
}

// Duplicates an inter-communicator (called by MPI_Comm_dup): one color, ranks kept.
int dup_intercomm(MPI_Comm comm, MPI_Comm *newcomm) { return split_intercomm(comm, 0, comm->rank, newcomm); }

bool free_intercomm_parts(MPI_Comm comm) {
    bool view_lives = false;
    if (MPI_Comm v = comm->ft) {
        comm->ft = nullptr;
        // discard_comm retires it now only when nothing refers to it (and
        // may delete it): whether it lives on is known before.
        view_lives = v->refs > 0;
        v->releases_slot = view_lives;
        if (view_lives) comm_retain(comm);  // its ft_owner stays valid until it retires
        discard_comm(v);
    }
    if (MPI_Comm l = comm->local) {
        comm->local = nullptr;
        discard_comm(l);
    }
    return view_lives;
}

int intercomm_from_leaders(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int ltag,
                           int err_in, MPI_Comm *newintercomm, const char **why) {
    const bool leader = local_comm->rank == local_leader;
    // The hidden local communicator first (local group only), then the cross slot.
    int local_slot = -1;
    std::uint64_t local_uid = 0, uid = 0;
    int err = agree_slot(local_comm, &local_slot, &local_uid);
    if (err == MPI_SUCCESS) err = err_in;
    std::vector<int> remote;
    int remote_high = 0;
    SlotMask common;
    const int e2 = cross_exchange(local_comm, local_leader, leader ? peer_comm : local_comm, remote_leader, ltag, 0,
                                  local_comm->procs, remote, remote_high, common, uid);
    if (err == MPI_SUCCESS) err = e2;
    if (err != MPI_SUCCESS && local_slot >= 0) release_slot(static_cast<std::uint32_t>(local_slot) * 2);
    MPI_Comm made = MPI_COMM_NULL;
    if (err == MPI_SUCCESS)
        err = finish_intercomm(local_comm, local_slot, local_uid, local_comm->procs, common, std::move(remote), uid,
                               local_comm->errhandler, &made);
    // Uniform creation (spec 003): the group agrees whether all its survivors
    // made it; the leaders swap their groups' answers over peer_comm; the group
    // agrees on its leader's verdict (the others contribute their answer).
    int ok = err == MPI_SUCCESS ? 1 : 0;
    agree_internal(local_comm, &ok, nullptr, true);
    if (leader) {  // always: the other leader waits for this answer, whatever it is
        int theirs = 0;
        const int e = team_swap(peer_comm, remote_leader, ltag + 2, &ok, sizeof ok, &theirs, sizeof theirs);
        ok = e == MPI_SUCCESS && ok && theirs;
    }
    std::vector<int> gone;
    agree_internal(local_comm, &ok, &gone, true);
    // A leader among the agreed failures most likely died before its swap
    // completed (the other group then failed): fail too. If it died just
    // after, the other group may have succeeded: spec 003's residual case.
    const bool leader_gone =
        std::binary_search(gone.begin(), gone.end(), local_comm->procs[static_cast<std::size_t>(local_leader)]);
    if (ok && !leader_gone) {
        *newintercomm = made;
        return MPI_SUCCESS;
    }
    if (made != MPI_COMM_NULL) discard_comm(made);
    *why = err != MPI_SUCCESS ? "the exchange between the groups failed"
                              : "the exchange failed in the other group (a process failed)";
    return err != MPI_SUCCESS ? err : MPI_ERR_PROC_FAILED;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm *newintercomm) {
    const char *call = "MPI_Intercomm_create";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, local_comm));
    FTMPI_CHECK(check_nonnull(call, local_comm, newintercomm, "newintercomm"));
    if (local_comm->inter) return raise(local_comm, MPI_ERR_COMM, call, "local_comm must be an intra-communicator");
    if (local_leader < 0 || local_leader >= local_comm->size)
        return raise(local_comm, MPI_ERR_RANK, call, "invalid local_leader %d (local_comm has %d ranks)", local_leader,
                     local_comm->size);
    FTMPI_CHECK(check_send_tag(call, local_comm, tag));
    const bool leader = local_comm->rank == local_leader;
    if (leader) {
        FTMPI_CHECK(check_comm(call, peer_comm));
        if (remote_leader < 0 || remote_leader >= peer_comm->size)
            return raise(local_comm, MPI_ERR_RANK, call, "invalid remote_leader %d (peer_comm has %d ranks)",
                         remote_leader, peer_comm->size);
    }
    const char *why = nullptr;
    const int err = intercomm_from_leaders(local_comm, local_leader, peer_comm, remote_leader, leader_tag(tag),
                                           MPI_SUCCESS, newintercomm, &why);
    return err == MPI_SUCCESS ? MPI_SUCCESS : raise(local_comm, err, call, "%s", why);
}

// The group with high = false comes first; on a tie, the group whose leader
// has the lower job rank.
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
    const char *call = "MPI_Intercomm_merge";
    FTMPI_TRY(check_inter(call, intercomm));
    FTMPI_CHECK(check_nonnull(call, intercomm, newintracomm, "newintracomm"));
    std::vector<int> remote;
    int remote_high = 0;
    SlotMask common;
    std::uint64_t uid = 0;
    const int mine = high ? 1 : 0;
    int err = cross_exchange(intercomm->local, 0, intercomm, 0, next_team_tag(intercomm), mine, intercomm->local->procs,
                             remote, remote_high, common, uid);
    const int slot = err == MPI_SUCCESS ? claim_lowest(common) : -1;
    if (err == MPI_SUCCESS && slot < 0) err = MPI_ERR_INTERN;
    MPI_Comm made = MPI_COMM_NULL;
    if (err == MPI_SUCCESS) {
        bool local_first =
            mine < remote_high || (mine == remote_high && intercomm->local_procs.front() < intercomm->procs.front());
        std::vector<int> procs = local_first ? intercomm->local_procs : intercomm->procs;
        const std::vector<int> &second = local_first ? intercomm->procs : intercomm->local_procs;
        procs.insert(procs.end(), second.begin(), second.end());
        made = make_comm(intercomm, slot, std::move(procs), uid);
    }
    if (int e = uniform_inter(intercomm, err, &made); e != MPI_SUCCESS)
        return raise(intercomm, e, call, "the exchange between the groups failed");
    *newintracomm = made;
    return MPI_SUCCESS;
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size) {
    FTMPI_TRY(check_inter("MPI_Comm_remote_size", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_remote_size", comm, size, "size"));
    *size = comm->size;
    return MPI_SUCCESS;
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group) {
    FTMPI_TRY(check_inter("MPI_Comm_remote_group", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_remote_group", comm, group, "group"));
    *group = new_group(comm->procs);
    return MPI_SUCCESS;
}

}  // extern "C"
