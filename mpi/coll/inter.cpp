// Collectives on inter-communicators, as schedules over the two groups
// (inter.hpp). Each group works on its hidden local intra-communicator with
// the intra algorithms (build_bcast, build_reduce, build_scatterv); the
// groups meet through their leaders (local rank 0) or, where data goes from
// every member to every member, through direct cross transfers.
//
// Algorithms:
// - barrier: fan-in to the leader, the leaders swap a token, bcast from it;
// - bcast: root -> the other group's leader -> its local bcast;
// - reduce: local reduce to the leader -> the root;
// - allreduce, reduce_scatter(_block): local reduce to the leader, the
//   leaders swap their group's reduction, local bcast / scatterv of the
//   other group's;
// - gather(v) / scatter(v): the root receives from / sends to every member of
//   the other group directly;
// - allgather(v): every member sends its block to the other group's leader;
//   the leaders swap a token (so each learns what failed in its own group
//   from the other), then bcast the other group's blocks locally;
// - alltoall(v,w): every pair exchanges directly, then a barrier (the
//   exchange alone would leave a failure unknown in the failed process's
//   own group).
#include "mpi/coll/inter.hpp"

#include <tuple>
#include <utility>
#include <vector>

#include "mpi/coll/common.hpp"
#include "mpi/coll/direct.hpp"

namespace ftmpi::mpi {
namespace {

constexpr int k_leader = 0;  // each group's leader: its local rank 0

bool is_leader(const Sched &s) { return s.rank() == k_leader; }

// Every local member's token reaches the leader: the bcast tree from the
// leader (bcast_pattern), run backwards.
void fan_in(Sched &s) {
    int parent = -1;
    std::vector<int> children;
    bcast_pattern(
        s.size(), s.rank(), 0, [&](int from) { parent = from; }, [&](int to) { children.push_back(to); }, [] {});
    if (!children.empty()) {
        for (int c : children) s.add_recv(nullptr, 0, MPI_BYTE, c);
        s.next_round();
    }
    if (parent >= 0) {
        s.add_send(nullptr, 0, MPI_BYTE, parent);
        s.next_round();
    }
}

// The leaders swap `count` elements of t: sbuf goes out, rbuf comes in.
void leader_swap(Sched &s, const void *sbuf, void *rbuf, int count, MPI_Datatype t) {
    if (!is_leader(s)) return;
    s.add_cross_recv(rbuf, count, t, k_leader);
    s.add_cross_send(sbuf, count, t, k_leader);
    s.next_round();
}

// Element offsets of blocks of `counts` packed one after the other; returns the total.
int packed_offsets(const int *counts, int n, std::vector<std::size_t> &off) {
    off.assign(static_cast<std::size_t>(n), 0);
    std::size_t total = 0;
    for (int j = 0; j < n; ++j) {
        off[static_cast<std::size_t>(j)] = total;
        total += static_cast<std::size_t>(counts[j]);
    }
    return static_cast<int>(total);
}

}  // namespace

void build_inter_barrier(Sched &s) {
    fan_in(s);
    leader_swap(s, nullptr, nullptr, 0, MPI_BYTE);
    build_bcast(s, s.local_comm(), nullptr, 0, MPI_BYTE, k_leader);
}

void build_inter_bcast(Sched &s, void *buf, int count, MPI_Datatype t, int root) {
    if (root == MPI_PROC_NULL) return;
    if (root == MPI_ROOT) {
        s.add_cross_send(buf, count, t, k_leader);
        s.next_round();
        return;
    }
    if (is_leader(s)) {
        s.add_cross_recv(buf, count, t, root);
        s.next_round();
    }
    build_bcast(s, s.local_comm(), buf, count, t, k_leader);
}

void build_inter_reduce(Sched &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, int root) {
    if (root == MPI_PROC_NULL) return;
    if (root == MPI_ROOT) {
        s.add_cross_recv(recvbuf, count, t, k_leader);
        s.next_round();
        return;
    }
    void *partial = is_leader(s) ? s.scratch(count, t) : nullptr;
    build_reduce(s, s.local_comm(), sendbuf, partial, count, t, k_leader);
    if (is_leader(s)) {
        s.add_cross_send(partial, count, t, root);
        s.next_round();
    }
}

void build_inter_allreduce(Sched &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t) {
    void *partial = is_leader(s) ? s.scratch(count, t) : nullptr;
    build_reduce(s, s.local_comm(), sendbuf, partial, count, t, k_leader);
    leader_swap(s, partial, recvbuf, count, t);
    build_bcast(s, s.local_comm(), recvbuf, count, t, k_leader);
}

void build_inter_reduce_scatter(Sched &s, const void *sendbuf, void *recvbuf, const int *counts, MPI_Datatype t) {
    std::vector<std::size_t> off;
    const int total = packed_offsets(counts, s.size(), off);
    std::vector<int> displs(off.begin(), off.end());
    void *partial = is_leader(s) ? s.scratch(total, t) : nullptr;
    void *theirs = is_leader(s) ? s.scratch(total, t) : nullptr;
    build_reduce(s, s.local_comm(), sendbuf, partial, total, t, k_leader);
    leader_swap(s, partial, theirs, total, t);
    build_scatterv(s, s.local_comm(), theirs, counts, displs.data(), t, recvbuf, counts[s.rank()], t, k_leader);
}

void build_inter_gatherv(Sched &s, const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                         const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                         const MPI_Datatype *types) {
    if (root == MPI_PROC_NULL) return;
    if (root == MPI_ROOT) {
        for (int j = 0; j < s.remote_size(); ++j) {
            const MPI_Datatype t = types != nullptr ? types[j] : rtype;
            s.add_cross_recv(at(recvbuf, static_cast<std::size_t>(displs[j]), t), rcounts[j], t, j);
        }
    } else {
        s.add_cross_send(sendbuf, scount, stype, root);
    }
    s.next_round();
}

void build_inter_scatterv(Sched &s, const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype stype,
                          void *recvbuf, int rcount, MPI_Datatype rtype, int root, const MPI_Datatype *types) {
    if (root == MPI_PROC_NULL) return;
    if (root == MPI_ROOT) {
        for (int j = 0; j < s.remote_size(); ++j) {
            const MPI_Datatype t = types != nullptr ? types[j] : stype;
            s.add_cross_send(at(sendbuf, static_cast<std::size_t>(displs[j]), t), scounts[j], t, j);
        }
    } else {
        s.add_cross_recv(recvbuf, rcount, rtype, root);
    }
    s.next_round();
}

// `n` bytes as a count and type: MPI_BYTE, or beyond INT_MAX one element of
// a type the schedule holds.
std::pair<int, MPI_Datatype> bytes_as(Sched &s, std::size_t n) {
    if (n <= 0x7fffffff) return {static_cast<int>(n), MPI_BYTE};
    // Out of memory: nothing moves, and the sizes disagree (MPI_ERR_TRUNCATE).
    const MPI_Datatype t = s.adopt(elements_type(static_cast<MPI_Count>(n), MPI_BYTE));
    return t == MPI_DATATYPE_NULL ? std::pair{0, MPI_BYTE} : std::pair{1, t};
}

// The leader receives the other group's blocks packed (their bytes, in
// remote rank order), bcasts them, and every member unpacks. Every member of
// a group sees the same counts, so all describe the packed bytes alike.
void build_inter_allgatherv(Sched &s, const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                            const int *rcounts, const int *displs, MPI_Datatype rtype, const MPI_Datatype *types) {
    const int r = s.remote_size();
    const auto ty = [&](int j) { return types != nullptr ? types[j] : rtype; };
    std::vector<std::size_t> off(static_cast<std::size_t>(r) + 1, 0);
    for (int j = 0; j < r; ++j)
        off[static_cast<std::size_t>(j) + 1] =
            off[static_cast<std::size_t>(j)] + static_cast<std::size_t>(rcounts[j]) * ty(j)->size;
    char *packed = static_cast<char *>(s.scratch_bytes(off.back()));
    const auto block = [&](int j) {
        return bytes_as(s, off[static_cast<std::size_t>(j) + 1] - off[static_cast<std::size_t>(j)]);
    };
    s.add_cross_send(sendbuf, scount, stype, k_leader);
    if (is_leader(s))
        for (int j = 0; j < r; ++j) {
            const auto [n, t] = block(j);
            s.add_cross_recv(packed + off[static_cast<std::size_t>(j)], n, t, j);
        }
    s.next_round();
    leader_swap(s, nullptr, nullptr, 0, MPI_BYTE);
    const auto [n, t] = bytes_as(s, off.back());
    build_bcast(s, s.local_comm(), packed, n, t, k_leader);
    for (int j = 0; j < r; ++j) {
        const auto [bn, bt] = block(j);
        s.add_copy(packed + off[static_cast<std::size_t>(j)], bn, bt,
                   at(recvbuf, static_cast<std::size_t>(displs[j]), ty(j)), rcounts[j], ty(j));
    }
    s.next_round();
}

// A vector longer than INT_MAX elements: the whole vector as one element of
// a type, each member's block as one element of a type placed where the
// block starts (the counts are the same at every member of a group, and
// both groups' vectors have one length, so all take this path together).
void build_inter_reduce_scatter_wide(Sched &s, const void *sendbuf, void *recvbuf, const MPI_Count *counts,
                                     MPI_Datatype t) {
    // Out of memory for a type: that block moves nothing (the sizes disagree: MPI_ERR_TRUNCATE).
    const auto elements = [&](MPI_Count c, MPI_Aint at) {
        const MPI_Datatype b = c > 0 ? s.adopt(elements_type(c, t, at)) : MPI_DATATYPE_NULL;
        return b == MPI_DATATYPE_NULL ? std::pair{0, t} : std::pair{1, b};
    };
    const auto n = static_cast<std::size_t>(s.size());
    MPI_Count total = 0;
    std::vector<int> ones(n), zeros(n, 0);
    std::vector<MPI_Datatype> blocks(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::tie(ones[i], blocks[i]) = elements(counts[i], static_cast<MPI_Aint>(total) * t->extent);
        total += counts[i];
    }
    const auto [wn, whole] = elements(total, 0);
    void *partial = is_leader(s) ? s.scratch(wn, whole) : nullptr;
    void *theirs = is_leader(s) ? s.scratch(wn, whole) : nullptr;
    build_reduce(s, s.local_comm(), sendbuf, partial, wn, whole, k_leader);
    leader_swap(s, partial, theirs, wn, whole);
    const auto [mn, mine] = elements(counts[static_cast<std::size_t>(s.rank())], 0);
    build_scatterv(s, s.local_comm(), theirs, ones.data(), zeros.data(), t, recvbuf, mn, mine, k_leader, blocks.data());
}

void build_inter_alltoallw(Sched &s, const void *sendbuf, const int *scounts, const MPI_Aint *sdispls,
                           const MPI_Datatype *stypes, void *recvbuf, const int *rcounts, const MPI_Aint *rdispls,
                           const MPI_Datatype *rtypes) {
    const int r = s.remote_size();
    for (int k = 0; k < r; ++k) {
        const int j = (s.rank() + k) % r;  // members start at different peers
        s.add_cross_recv(static_cast<char *>(recvbuf) + rdispls[j], rcounts[j], rtypes[j], j);
        s.add_cross_send(static_cast<const char *>(sendbuf) + sdispls[j], scounts[j], stypes[j], j);
    }
    s.next_round();
    build_inter_barrier(s);
}

}  // namespace ftmpi::mpi
