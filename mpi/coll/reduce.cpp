// Bcast, Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan and their
// nonblocking versions.
//
// Algorithms: binomial-tree bcast and reduce; allreduce by recursive doubling
// (with the non-power-of-two fold) below k_allreduce_ring_bytes and by ring
// reduce-scatter + ring allgather above; reduce-scatter in one round up to
// 32 members and by ring above (commutative) or reduce + scatterv
// (non-commutative); scan and exscan by recursive
// doubling. Non-commutative ops always combine in rank order.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mpi/coll/common.hpp"
#include "mpi/coll/inter.hpp"
#include "mpi/coll/direct.hpp"

namespace ftmpi::mpi {
namespace {

// After an error the call fails and its buffers hold whatever a failed or
// poisoned receive left: nothing is combined from then on (a user's op
// never sees a buffer that was not received), as on the direct path.

// acc = tmp op acc, where tmp holds lower ranks' data.
void acc_lower(Sched &s, void *acc, const void *tmp, int count, MPI_Datatype t) {
    Sched *sp = &s;
    s.add_local([=] {
        if (sp->error() == MPI_SUCCESS) op_apply(sp->op, tmp, acc, count, t);
    });
}

// acc = acc op tmp, where tmp holds higher ranks' data (tmp is clobbered).
void acc_higher(Sched &s, void *acc, void *tmp, int count, MPI_Datatype t) {
    if (s.op.commute) return acc_lower(s, acc, tmp, count, t);
    Sched *sp = &s;
    s.add_local([=] {
        if (sp->error() != MPI_SUCCESS) return;
        op_apply(sp->op, acc, tmp, count, t);
        copy_typed(acc, tmp, count, t);
    });
}

// Local copy of `count` elements (data bytes only; same layout on both sides).
void raw_copy(Sched &s, void *dst, const void *src, int count, MPI_Datatype t) {
    if (count <= 0 || dst == src) return;
    s.add_local([=] { copy_typed(dst, src, count, t); });
}

// Ring reduce-scatter over blocks (counts/displs in elements) of `acc`: at the
// end block `me` of acc holds the full reduction. Commutative ops only.
// `own`: this rank's input, when acc does not hold it (null: acc does). Then
// each block this rank combines is received straight into acc and combined
// with own's: no copy of the input and no scratch. The block it sends first
// (never combined here) goes from own; acc's copy of it is not written.
void ring_reduce_scatter(Sched &s, void *acc, const void *own, const std::vector<int> &cnt,
                         const std::vector<int> &displ, MPI_Datatype t) {
    const int n = s.size(), me = s.rank();
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    const int maxc = *std::max_element(cnt.begin(), cnt.end());
    void *tmp = own == nullptr ? s.scratch(maxc, t) : nullptr;
    for (int st = 0; st < n - 1; ++st) {
        const int sb = ((me - st - 1) % n + n) % n;
        const int rb = ((me - st - 2) % n + n) % n;
        const auto sd = static_cast<std::size_t>(displ[sb]), rd = static_cast<std::size_t>(displ[rb]);
        s.add_send(at(own != nullptr && st == 0 ? own : acc, sd, t), cnt[sb], t, right);
        if (own != nullptr) {  // acc's block = own's op the lower ranks' (commutative)
            s.add_recv(at(acc, rd, t), cnt[rb], t, left);
            s.next_round();
            acc_lower(s, at(acc, rd, t), at(own, rd, t), cnt[rb], t);
            continue;
        }
        s.add_recv(tmp, cnt[rb], t, left);
        s.next_round();
        acc_higher(s, at(acc, rd, t), tmp, cnt[rb], t);
    }
}

// Whether a commutative reduce-scatter of blocks `cnt` over a group of n
// goes by linear_reduce_scatter (as direct_reduce_scatter does): up to
// k_direct_peers members, and any owner's scratch for n-1 blocks countable
// (the same answer at every member).
bool linear_reduce_scatter_fits(int n, const std::vector<int> &cnt) {
    return n <= k_direct_peers &&
           static_cast<long long>(*std::max_element(cnt.begin(), cnt.end())) * (n - 1) <= INT_MAX;
}

// Reduce-scatter in one round (commutative ops): every block of `src` goes
// to its owner at once, and the owner combines them into `own` (its own
// block's values, by the next round), from
// me-1, me-2 and so on (direct_reduce_scatter's order); empty blocks are
// not sent (every member knows the counts). The ring's bytes,
// without its n-1 steps that each wait for the neighbour (a turn of its
// process at a core, on a crowded node).
void linear_reduce_scatter(Sched &s, const void *src, void *own, const std::vector<int> &cnt,
                           const std::vector<int> &displ, MPI_Datatype t) {
    const int n = s.size(), me = s.rank();
    const int mine = cnt[static_cast<std::size_t>(me)];
    void *tmp = s.scratch(mine * (n - 1), t);
    const auto part = [&](int k) {
        return at(tmp, static_cast<std::size_t>(k - 1) * static_cast<std::size_t>(mine), t);
    };
    for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n, from = (me - k + n) % n;
        if (mine > 0) s.add_recv(part(k), mine, t, from);
        if (cnt[static_cast<std::size_t>(to)] > 0)
            s.add_send(at(src, static_cast<std::size_t>(displ[static_cast<std::size_t>(to)]), t),
                       cnt[static_cast<std::size_t>(to)], t, to);
    }
    s.next_round();
    for (int k = 1; k < n && mine > 0; ++k) acc_lower(s, own, part(k), mine, t);
}

void ring_allgather(Sched &s, void *buf, const int *cnt, const int *displ, MPI_Datatype t) {
    const int n = s.size(), me = s.rank();
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int st = 0; st < n - 1; ++st) {
        const int sb = ((me - st) % n + n) % n;
        const int rb = ((me - st - 1) % n + n) % n;
        s.add_send(at(buf, static_cast<std::size_t>(displ[sb]), t), cnt[sb], t, right);
        s.add_recv(at(buf, static_cast<std::size_t>(displ[rb]), t), cnt[rb], t, left);
        s.next_round();
    }
}

void blocks(int count, int n, std::vector<int> &cnt, std::vector<int> &displ) {
    cnt.assign(static_cast<std::size_t>(n), count / n);
    for (int i = 0; i < count % n; ++i) ++cnt[static_cast<std::size_t>(i)];
    displ.assign(static_cast<std::size_t>(n), 0);
    for (int i = 1; i < n; ++i)
        displ[static_cast<std::size_t>(i)] =
            displ[static_cast<std::size_t>(i - 1)] + cnt[static_cast<std::size_t>(i - 1)];
}

}  // namespace

void build_bcast(Sched &s, MPI_Comm, void *buf, int count, MPI_Datatype t, int root) {
    const int n = s.size();
    root = s.root(root);
    if (root < 0) return s.next_round();
    bcast_pattern(
        n, (s.rank() - root + n) % n, static_cast<std::size_t>(count) * t->size,
        [&](int from) { s.add_recv(buf, count, t, (from + root) % n); },
        [&](int to) { s.add_pulled_send(buf, count, t, (to + root) % n); }, [&] { s.next_round(); }, true);
}

// Commutative reductions of at least this many bytes over at least this
// many ranks go by blocks (below). With single copy in shared memory the
// binomial tree wins on this 2-core machine at 2 and 4 ranks at every size
// (1 MiB at 2 ranks: 75 us against 115-200 by blocks, Open MPI 95); blocks
// win where each rank combines its share on its own core, at more ranks.
constexpr std::size_t k_reduce_blocks_bytes = 256 * 1024;
constexpr int k_reduce_blocks_ranks = 8;

// Large commutative reductions: ring reduce-scatter straight from the input,
// then every block to the root (Rabenseifner's reduce): each rank moves and
// combines 1/n of the data per step, where a binomial tree has the root take
// in and combine all of it from each child in turn.
void reduce_by_blocks(Sched &s, const void *input, void *recvbuf, int count, MPI_Datatype t, int root) {
    const int n = s.size(), me = s.rank();
    std::vector<int> cnt, displ;
    blocks(count, n, cnt, displ);
    void *acc = me == root ? recvbuf : s.scratch(count, t);
    const bool apart = !overlapping(acc, input, count, t);
    if (!apart) raw_copy(s, acc, input, count, t);
    ring_reduce_scatter(s, acc, apart ? input : nullptr, cnt, displ, t);
    s.next_round();
    const auto block = [&](int r) { return at(acc, static_cast<std::size_t>(displ[static_cast<std::size_t>(r)]), t); };
    if (me != root) {
        s.add_send(block(me), cnt[static_cast<std::size_t>(me)], t, root);
    } else {
        for (int r = 0; r < n; ++r)
            if (r != root) s.add_recv(block(r), cnt[static_cast<std::size_t>(r)], t, r);
    }
    s.next_round();
}

// A tree's operand of more than k_piece_bytes, up to k_pieces_bytes, moves
// in eager pieces (the counts decide, alike at every member): the sender is
// done once it wrote them, and the receiver combines each straight from
// where it arrived (Sched::add_combine_recv), where a whole message waits
// for the receiver's copy, which the combine then reads again. Larger, the
// pieces lose: the combine reads lines the sender just wrote, from its
// core, where a single copy of an unchanged send buffer finds them clean in
// its own (docs/performance.md: osu_reduce at 16-64 KiB).
constexpr std::size_t k_piece_bytes = 8 * 1024;
constexpr std::size_t k_pieces_bytes = 32 * 1024;

// f(offset, count) (in elements) for each piece of an operand.
template <class F>
void each_piece(int count, MPI_Datatype t, F f) {
    const std::size_t bytes = static_cast<std::size_t>(count) * t->size;
    int piece = count;
    if (bytes > k_piece_bytes && bytes <= k_pieces_bytes)
        piece = static_cast<int>(std::max<std::size_t>(1, k_piece_bytes / t->size));
    int o = 0;
    do {
        const int c = std::min(piece, count - o);
        f(static_cast<std::size_t>(o), c);
        o += c;
    } while (o < count);
}

void send_pieces(Sched &s, const void *buf, int count, MPI_Datatype t, int peer) {
    each_piece(count, t, [&](std::size_t o, int c) { s.add_send(at(buf, o, t), c, t, peer); });
}

void build_reduce(Sched &s, MPI_Comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, int root) {
    const int n = s.size(), me = s.rank();
    root = s.root(root);
    if (root < 0) return s.next_round();
    const bool commute = s.op.commute;
    const void *input = (sendbuf == MPI_IN_PLACE) ? recvbuf : sendbuf;
    if (n >= k_reduce_blocks_ranks && commute && count >= n &&
        static_cast<std::size_t>(count) * t->size >= k_reduce_blocks_bytes)
        return reduce_by_blocks(s, input, recvbuf, count, t, root);
    const int tree_root = commute ? root : 0;  // non-commutative: rank order from 0
    const int vr = (me - tree_root + n) % n;
    // A leaf sends its input as it is; the others combine into acc.
    const bool leaf = (vr & 1) != 0 || vr + 1 >= n;
    if (leaf && n > 1 && !(me == root && tree_root == root)) {
        send_pieces(s, input, count, t, (vr - (vr & -vr) + tree_root) % n);
        s.next_round();
        if (tree_root != root && me == root) s.add_recv(recvbuf, count, t, tree_root);
        s.next_round();
        return;
    }
    void *acc = me == root && tree_root == root ? recvbuf : s.scratch(count, t);
    // Commutative: the first child's data goes straight into acc, and the
    // input is combined into it (no copy of the input first).
    bool filled = false;
    if (n > 1) {
        void *tmp = nullptr;
        for (int mask = 1; mask < n; mask <<= 1) {
            if ((vr & mask) == 0) {
                const int from = ((vr | mask) + tree_root) % n;
                if ((vr | mask) >= n) continue;
                if (!filled && commute && !overlapping(acc, input, count, t)) {
                    each_piece(count, t, [&](std::size_t o, int c) {
                        s.add_combine_recv(at(acc, o, t), at(input, o, t), c, t, from);
                    });
                    s.next_round();
                } else {
                    if (!filled) raw_copy(s, acc, input, count, t);
                    if (tmp == nullptr) tmp = s.scratch(count, t);
                    each_piece(count, t, [&](std::size_t o, int c) { s.add_operand_recv(at(tmp, o, t), c, t, from); });
                    s.next_round();
                    acc_higher(s, acc, tmp, count, t);
                }
                filled = true;
            } else {
                send_pieces(s, acc, count, t, (vr - mask + tree_root) % n);
                s.next_round();
                break;
            }
        }
        if (tree_root != root) {
            if (me == tree_root) s.add_send(acc, count, t, root);
            if (me == root) s.add_recv(recvbuf, count, t, tree_root);
        }
    }
    if (!filled) raw_copy(s, acc, input, count, t);
    s.next_round();
}

void build_allreduce(Sched &s, MPI_Comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t) {
    const int n = s.size(), me = s.rank();
    void *acc = recvbuf;
    if (n > 1 && s.op.commute && count >= n && static_cast<std::size_t>(count) * t->size >= k_allreduce_ring_bytes) {
        // The ring reads sendbuf itself: recvbuf is never a copy of it first.
        std::vector<int> cnt, displ;
        blocks(count, n, cnt, displ);
        ring_reduce_scatter(s, acc, sendbuf == MPI_IN_PLACE ? nullptr : sendbuf, cnt, displ, t);
        ring_allgather(s, acc, cnt.data(), displ.data(), t);
        s.next_round();
        return;
    }
    if (sendbuf != MPI_IN_PLACE) raw_copy(s, acc, sendbuf, count, t);
    if (n == 1 || count == 0) {
        s.next_round();
        return;
    }
    int p2 = 1;
    while (p2 * 2 <= n) p2 *= 2;
    const int rem = n - p2;
    void *tmp = s.scratch(count, t);
    int newrank;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            s.add_send(acc, count, t, me + 1);
            s.next_round();
            newrank = -1;
        } else {
            s.add_recv(tmp, count, t, me - 1);
            s.next_round();
            acc_lower(s, acc, tmp, count, t);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    if (newrank != -1) {
        for (int mask = 1; mask < p2; mask <<= 1) {
            const int np = newrank ^ mask;
            const int partner = np < rem ? np * 2 + 1 : np + rem;
            s.add_send(acc, count, t, partner);
            s.add_recv(tmp, count, t, partner);
            s.next_round();
            if (partner < me) acc_lower(s, acc, tmp, count, t);
            else acc_higher(s, acc, tmp, count, t);
        }
    }
    if (me < 2 * rem) {
        if (me % 2 == 1) s.add_send(acc, count, t, me - 1);
        else s.add_recv(acc, count, t, me + 1);
    }
    s.next_round();
}

// Blocks of the input belong to comm ranks; after recognized failures the
// blocks of failed ranks are carried along but not reduced.
void build_reduce_scatter(Sched &s, MPI_Comm comm, const void *sendbuf, void *recvbuf, const int *counts,
                          MPI_Datatype t) {
    const int n = s.size(), me = s.rank();
    const auto all = static_cast<std::size_t>(comm->size);
    std::vector<int> cnt(counts, counts + all), displ(all, 0);
    for (std::size_t i = 1; i < all; ++i) displ[i] = displ[i - 1] + cnt[i - 1];
    const int total = displ.back() + cnt.back();
    const void *input = (sendbuf == MPI_IN_PLACE) ? recvbuf : sendbuf;
    if (total == 0) {
        s.next_round();
        return;
    }
    const int mine = cnt[static_cast<std::size_t>(s.real(me))];
    if (s.op.commute) {
        const int *vc = s.per_rank(cnt.data()), *vd = s.per_rank(displ.data());
        const std::vector<int> vcnt(vc, vc + n), vdispl(vd, vd + n);
        const auto own = static_cast<std::size_t>(vd[me]);
        const bool linear = n > 1 && linear_reduce_scatter_fits(n, vcnt);
        if (linear && sendbuf != MPI_IN_PLACE) {
            // The blocks go straight from the input, and recvbuf gathers
            // the sum: no copy of the input (in place, the result's room
            // overlaps blocks still being sent).
            raw_copy(s, recvbuf, at(input, own, t), mine, t);
            linear_reduce_scatter(s, input, recvbuf, vcnt, vdispl, t);
            s.next_round();
            return;
        }
        void *acc = s.scratch(total, t);
        raw_copy(s, acc, input, total, t);
        if (linear) linear_reduce_scatter(s, acc, at(acc, own, t), vcnt, vdispl, t);
        else if (n > 1) ring_reduce_scatter(s, acc, nullptr, vcnt, vdispl, t);
        raw_copy(s, recvbuf, at(acc, own, t), mine, t);
        s.next_round();
        return;
    }
    void *acc = s.scratch(total, t);
    raw_copy(s, acc, input, total, t);
    void *full = me == 0 ? s.scratch(total, t) : nullptr;
    build_reduce(s, comm, acc, full, total, t, s.real(0));
    build_scatterv(s, comm, full, cnt.data(), displ.data(), t, recvbuf, mine, t, s.real(0));
}

void build_scan(Sched &s, MPI_Comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, bool exclusive) {
    const int n = s.size(), me = s.rank();
    const void *input = (sendbuf == MPI_IN_PLACE) ? recvbuf : sendbuf;
    void *partial = s.scratch(count, t);
    raw_copy(s, partial, input, count, t);
    if (!exclusive) raw_copy(s, recvbuf, input, count, t);
    if (count == 0 || n == 1) {
        s.next_round();
        return;
    }
    void *tmp = s.scratch(count, t);
    bool have = !exclusive;
    for (int mask = 1; mask < n; mask <<= 1) {
        const int partner = me ^ mask;
        if (partner >= n) continue;
        s.add_send(partial, count, t, partner);
        s.add_recv(tmp, count, t, partner);
        s.next_round();
        if (partner < me) {
            if (have) {
                acc_lower(s, recvbuf, tmp, count, t);
            } else {
                raw_copy(s, recvbuf, tmp, count, t);
                have = true;
            }
            acc_lower(s, partial, tmp, count, t);
        } else {
            acc_higher(s, partial, tmp, count, t);
        }
    }
    s.next_round();
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

namespace {

// send_used / recv_used: whether this process's send / receive buffer is
// significant. An inter-communicator allows MPI_IN_PLACE in neither.
int check_reduction(const char *call, MPI_Comm comm, const void *sendbuf, const void *recvbuf, int count,
                    MPI_Datatype t, MPI_Op op, bool send_used, bool recv_used) {
    FTMPI_TRY(check_coll_start(call, comm));
#if FTMPI_ARG_CHECKS
    FTMPI_TRY(check_count(call, comm, count));
    FTMPI_TRY(check_type(call, comm, t));
    FTMPI_TRY(check_op_type(call, comm, op, t));
    if (send_used && comm->inter) FTMPI_TRY(check_no_in_place(call, comm, sendbuf, "sendbuf"));
    if (send_used && sendbuf != MPI_IN_PLACE) FTMPI_TRY(check_typed_buffer(call, comm, sendbuf, count, t, "sendbuf"));
    if (recv_used) {
        FTMPI_TRY(check_no_in_place(call, comm, recvbuf, "recvbuf"));
        FTMPI_TRY(check_typed_buffer(call, comm, recvbuf, count, t, "recvbuf"));
    }
#else
    (void)sendbuf, (void)recvbuf, (void)count, (void)t, (void)op, (void)send_used, (void)recv_used;
#endif
    return MPI_SUCCESS;
}

void set_op(Sched &s, MPI_Op op) { s.op = *op; }

// At MPI_PROC_NULL (an inter-communicator's root group, but the root) no
// argument but root is significant.
bool bystander(MPI_Comm comm, int root) { return comm->inter && root == MPI_PROC_NULL; }

int check_bcast(const char *call, MPI_Comm comm, void *buf, int count, MPI_Datatype t, int root) {
    FTMPI_TRY(check_coll_start(call, comm));
    FTMPI_CHECK(check_root(call, comm, root));
    if (bystander(comm, root)) return MPI_SUCCESS;
    FTMPI_CHECK(check_no_in_place(call, comm, buf, "buffer"));
    FTMPI_CHECK(check_side(call, comm, buf, count, t, "buffer", "count", "datatype"));
    return MPI_SUCCESS;
}

// Intra: every rank sends, the root receives (and may pass MPI_IN_PLACE).
// Inter: the root's remote group sends, MPI_ROOT receives.
int check_reduce(const char *call, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,
                 MPI_Op op, int root) {
    FTMPI_TRY(check_coll_start(call, comm));
    FTMPI_CHECK(check_root(call, comm, root));
    if (bystander(comm, root)) return MPI_SUCCESS;
    const bool root_here = at_root(comm, root);
    if (!comm->inter && !root_here) FTMPI_CHECK(check_no_in_place(call, comm, sendbuf, "sendbuf (not at the root)"));
    return check_reduction(call, comm, sendbuf, recvbuf, count, t, op, !(comm->inter && root_here), root_here);
}

// The schedules of each kind of communicator.
void bcast_sched(Sched &s, MPI_Comm comm, void *buf, int count, MPI_Datatype t, int root) {
    if (comm->inter) build_inter_bcast(s, buf, count, t, root);
    else build_bcast(s, comm, buf, count, t, root);
}

// The op is copied where this process combines (not at an inter root or bystander).
void reduce_sched(Sched &s, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, MPI_Op op,
                  int root) {
    if (!comm->inter) {
        set_op(s, op);
        build_reduce(s, comm, sendbuf, recvbuf, count, t, root);
        return;
    }
    if (root >= 0) set_op(s, op);
    build_inter_reduce(s, sendbuf, recvbuf, count, t, root);
}

void allreduce_sched(Sched &s, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,
                     MPI_Op op) {
    set_op(s, op);
    if (comm->inter) build_inter_allreduce(s, sendbuf, recvbuf, count, t);
    else build_allreduce(s, comm, sendbuf, recvbuf, count, t);
}

}  // namespace

extern "C" {

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    FTMPI_TRY(check_bcast("MPI_Bcast", comm, buffer, count, datatype, root));
    if (!comm->inter && direct_fits(comm, count, datatype))
        return coll_result("MPI_Bcast", comm, direct_bcast(comm, buffer, count, datatype, root));
    return run_blocking("MPI_Bcast", comm, [&](Sched &s) { bcast_sched(s, comm, buffer, count, datatype, root); });
}

static int bcast_start(const char *call, void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                       MPI_Request *request, Run run) {
    FTMPI_TRY(check_bcast(call, comm, buffer, count, datatype, root));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    return run_nonblocking(comm, request, run, [&](Sched &s) { bcast_sched(s, comm, buffer, count, datatype, root); });
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request) {
    return bcast_start("MPI_Ibcast", buffer, count, datatype, root, comm, request, Run::nonblocking);
}

// MPI 4.0
int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                   MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Bcast_init", comm, info));
    return bcast_start("MPI_Bcast_init", buffer, count, datatype, root, comm, request, Run::persistent);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
    FTMPI_TRY(check_reduce("MPI_Reduce", comm, sendbuf, recvbuf, count, datatype, op, root));
    if (!comm->inter && direct_fits(comm, count, datatype))
        return coll_result("MPI_Reduce", comm, direct_reduce(comm, sendbuf, recvbuf, count, datatype, *op, root));
    return run_blocking("MPI_Reduce", comm,
                        [&](Sched &s) { reduce_sched(s, comm, sendbuf, recvbuf, count, datatype, op, root); });
}

static int reduce_start(const char *call, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm, MPI_Request *request, Run run) {
    FTMPI_TRY(check_reduce(call, comm, sendbuf, recvbuf, count, datatype, op, root));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    return run_nonblocking(comm, request, run,
                           [&](Sched &s) { reduce_sched(s, comm, sendbuf, recvbuf, count, datatype, op, root); });
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *request) {
    return reduce_start("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, request, Run::nonblocking);
}

// MPI 4.0
int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Reduce_init", comm, info));
    return reduce_start("MPI_Reduce_init", sendbuf, recvbuf, count, datatype, op, root, comm, request, Run::persistent);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    FTMPI_TRY(check_reduction("MPI_Allreduce", comm, sendbuf, recvbuf, count, datatype, op, true, true));
    if (!comm->inter && direct_fits(comm, count, datatype))
        return coll_result("MPI_Allreduce", comm, direct_allreduce(comm, sendbuf, recvbuf, count, datatype, *op));
    return run_blocking("MPI_Allreduce", comm,
                        [&](Sched &s) { allreduce_sched(s, comm, sendbuf, recvbuf, count, datatype, op); });
}

static int allreduce_start(const char *call, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request, Run run) {
    FTMPI_TRY(check_reduction(call, comm, sendbuf, recvbuf, count, datatype, op, true, true));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    return run_nonblocking(comm, request, run,
                           [&](Sched &s) { allreduce_sched(s, comm, sendbuf, recvbuf, count, datatype, op); });
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request) {
    return allreduce_start("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm, request, Run::nonblocking);
}

// MPI 4.0
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Allreduce_init", comm, info));
    return allreduce_start("MPI_Allreduce_init", sendbuf, recvbuf, count, datatype, op, comm, request, Run::persistent);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    FTMPI_TRY(check_intra_coll_start("MPI_Scan", comm));
    FTMPI_TRY(check_reduction("MPI_Scan", comm, sendbuf, recvbuf, count, datatype, op, true, true));
    return run_blocking("MPI_Scan", comm, [&](Sched &s) {
        set_op(s, op);
        build_scan(s, comm, sendbuf, recvbuf, count, datatype, false);
    });
}

// MPI_Iscan, MPI_Iexscan (exclusive) and their persistent forms.
static int scan_start(const char *call, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                      MPI_Comm comm, MPI_Request *request, Run run, bool exclusive = false) {
    FTMPI_TRY(check_intra_coll_start(call, comm));
    FTMPI_TRY(check_reduction(call, comm, sendbuf, recvbuf, count, datatype, op, true, true));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    return run_nonblocking(comm, request, run, [&](Sched &s) {
        set_op(s, op);
        build_scan(s, comm, sendbuf, recvbuf, count, datatype, exclusive);
    });
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request) {
    return scan_start("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, request, Run::nonblocking);
}

// MPI 4.0
int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Scan_init", comm, info));
    return scan_start("MPI_Scan_init", sendbuf, recvbuf, count, datatype, op, comm, request, Run::persistent);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    FTMPI_TRY(check_intra_coll_start("MPI_Exscan", comm));
    FTMPI_TRY(check_reduction("MPI_Exscan", comm, sendbuf, recvbuf, count, datatype, op, true, true));
    return run_blocking("MPI_Exscan", comm, [&](Sched &s) {
        set_op(s, op);
        build_scan(s, comm, sendbuf, recvbuf, count, datatype, true);
    });
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request *request) {
    return scan_start("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, request, Run::nonblocking, true);
}

// MPI 4.0
int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Exscan_init", comm, info));
    return scan_start("MPI_Exscan_init", sendbuf, recvbuf, count, datatype, op, comm, request, Run::persistent, true);
}

}  // extern "C"
