#include "mpi/coll/direct.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "ft/failures.hpp"
#include "mpi/coll/barrier.hpp"
#include "mpi/coll/ops.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {
namespace {

// One collective call: its tag, and the first error seen.
class Steps {
public:
    explicit Steps(MPI_Comm comm) : comm_(comm), ctx_(comm->context + 1), tag_(next_team_tag(comm)) {}

    // Sends count elements of sbuf to `to` and receives up to as many into
    // rbuf from `from` (-1: no such side), both posted before either is
    // waited for.
    void step(int to, const void *sbuf, int from, void *rbuf, int count, MPI_Datatype t) {
        exchange(to, sbuf, count, t, from, rbuf, count, t);
    }
    // A step whose two sides have their own counts and types.
    void exchange(int to, const void *sbuf, int scount, MPI_Datatype st, int from, void *rbuf, int rcount,
                  MPI_Datatype rt) {
        runtime::test_kill_point("coll.round");
        if (from >= 0) post_recv(from, rbuf, rcount, rt);
        if (to >= 0) post_send(to, sbuf, scount, st);
        wait();
    }

    // A round of several transfers: posted, then wait() for them all.
    void post_recv(int from, void *buf, int count, MPI_Datatype t) {
        MPI_Request r = new_request(ftmpi_request_s::Kind::recv, comm_, buf, count, t, from, tag_, ctx_);
        start_recv(r);
        posted_[n_++] = {r, static_cast<std::size_t>(count) * t->size};
    }
    void post_send(int to, const void *buf, int count, MPI_Datatype t) {
        // After an error the remaining steps carry it on (k_coll_poison).
        const int tag = poisoned_tag(tag_, err_);
        // Room in the ring: written now, no request to wait for (as MPI_Send).
        if (inject_coll(comm_, ctx_, buf, count, t, to, tag)) return;
        MPI_Request r = new_request(ftmpi_request_s::Kind::send, comm_, buf, count, t, to, tag, ctx_);
        r->mode = transport::SendMode::collective;
        start_send(r);
        posted_[n_++] = {r, 0};
    }
    void wait() {
        for (int i = 0; i < n_; ++i) {
            MPI_Request r = posted_[i].request;
            const bool recv = r->kind == ftmpi_request_s::Kind::recv;
            wait_complete(r);
            MPI_Status st{};
            const int e = retire_request(&r, &st);
            if (err_ == MPI_SUCCESS) err_ = e != MPI_SUCCESS || !recv ? e : poison_of(st.MPI_TAG);
            // A shorter message than the call's count: the members' counts
            // differ (MPICH's collective size mismatch). The rest of the
            // buffer was never written, so nothing may be combined from it.
            if (recv && err_ == MPI_SUCCESS && st.ftmpi_count != posted_[i].bytes) err_ = MPI_ERR_OTHER;
        }
        n_ = 0;
    }
    int result() const { return err_; }

private:
    struct Posted {
        MPI_Request request;
        std::size_t bytes;  // a receive's expected length
    };
    MPI_Comm comm_;
    std::uint32_t ctx_;
    int tag_;
    int err_ = MPI_SUCCESS;
    Posted posted_[2 * k_direct_peers];
    int n_ = 0;
};

// A scratch buffer for one message of the direct path.
struct Scratch {
    alignas(16) char bytes[k_direct_bytes];
};

// acc = tmp op acc (tmp holds lower ranks' data). After an error the data is
// meaningless and the call fails: nothing is combined (a user's op never
// sees a buffer that was not received).
void combine_lower(const Steps &s, const ftmpi_op_s &op, void *acc, const void *tmp, int count, MPI_Datatype t) {
    if (s.result() != MPI_SUCCESS) return;
    op_apply(op, tmp, acc, count, t);
}

// acc = acc op tmp (tmp holds higher ranks' data; clobbered). As combine_lower.
void combine_higher(const Steps &s, const ftmpi_op_s &op, void *acc, void *tmp, int count, MPI_Datatype t) {
    if (s.result() != MPI_SUCCESS) return;
    if (op.commute) {
        op_apply(op, tmp, acc, count, t);
        return;
    }
    op_apply(op, acc, tmp, count, t);
    std::memcpy(acc, tmp, static_cast<std::size_t>(count) * t->size);
}

// A block's local copy (none of no bytes: the buffers may then be null).
void copy_bytes(void *dst, const void *src, std::size_t n) {
    if (n > 0) std::memcpy(dst, src, n);
}

}  // namespace

// Every member's block of counts[] fits.
bool all_fit(MPI_Comm comm, const int *counts, MPI_Datatype t) {
    for (int i = 0; i < comm->size; ++i)
        if (!direct_fits(comm, counts[i], t)) return false;
    return true;
}

bool direct_fits_rooted(MPI_Comm comm, int root, const void *mine, int mine_count, MPI_Datatype mine_type,
                        const int *many_counts, MPI_Datatype many_type) {
    if (!direct_small(comm)) return false;
    if (comm->rank != root) return direct_fits(comm, mine_count, mine_type);
    return (mine == MPI_IN_PLACE || direct_fits(comm, mine_count, mine_type)) && all_fit(comm, many_counts, many_type);
}

bool direct_fits_pair(MPI_Comm comm, const void *sendbuf, const int *scounts, MPI_Datatype st, const int *rcounts,
                      MPI_Datatype rt) {
    if (!direct_small(comm) || sendbuf == MPI_IN_PLACE) return false;
    return all_fit(comm, scounts, st) && all_fit(comm, rcounts, rt);
}

bool direct_fits(MPI_Comm comm, int count, MPI_Datatype t) {
    return ft::failures().epoch() == 0 && !comm->revoked && comm->coll_ranks.empty() && t->predefined &&
           t->contiguous && static_cast<std::size_t>(count) * t->size <= k_direct_bytes;
}

// barrier_pattern, as build_ibarrier.
int direct_barrier(MPI_Comm comm) {
    Steps s(comm);
    char token = 0;
    barrier_pattern(
        comm->size, comm->rank, [&](int to, int from) { s.step(to, &token, from, &token, 0, MPI_BYTE); }, [] {});
    return s.result();
}

// bcast_pattern, as build_bcast.
int direct_bcast(MPI_Comm comm, void *buf, int count, MPI_Datatype t, int root) {
    const int n = comm->size;
    Steps s(comm);
    bcast_pattern(
        n, (comm->rank - root + n) % n, static_cast<std::size_t>(count) * t->size,
        [&](int from) { s.step(-1, nullptr, (from + root) % n, buf, count, t); },
        [&](int to) { s.step((to + root) % n, buf, -1, nullptr, count, t); }, [] {});
    return s.result();
}

// Binomial tree toward the root (toward 0 for a non-commutative op, then to
// the root), as build_reduce.
int direct_reduce(MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, const ftmpi_op_s &op,
                  int root) {
    const int n = comm->size, me = comm->rank;
    const int tree_root = op.commute ? root : 0;
    const int vr = (me - tree_root + n) % n;
    const std::size_t bytes = static_cast<std::size_t>(count) * t->size;
    const void *input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    Scratch own, tmp;
    void *acc = me == root && tree_root == root ? recvbuf : own.bytes;
    if (acc != input && bytes > 0) std::memcpy(acc, input, bytes);
    Steps s(comm);
    for (int mask = 1; mask < n; mask <<= 1) {
        if ((vr & mask) == 0) {
            const int child = vr | mask;
            if (child >= n) continue;
            s.step(-1, nullptr, (child + tree_root) % n, tmp.bytes, count, t);
            combine_higher(s, op, acc, tmp.bytes, count, t);
        } else {
            s.step((vr - mask + tree_root) % n, acc, -1, nullptr, count, t);
            break;
        }
    }
    if (tree_root != root) {
        if (me == tree_root) s.step(root, acc, -1, nullptr, count, t);
        if (me == root) s.step(-1, nullptr, tree_root, recvbuf, count, t);
    }
    return s.result();
}

// Recursive doubling with the non-power-of-two fold, as build_allreduce
// below its ring threshold.
int direct_allreduce(MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,
                     const ftmpi_op_s &op) {
    const int n = comm->size, me = comm->rank;
    if (sendbuf != MPI_IN_PLACE && count > 0) std::memcpy(recvbuf, sendbuf, static_cast<std::size_t>(count) * t->size);
    if (n == 1 || count == 0) {
        (void)next_team_tag(comm);  // the schedule takes a tag even then
        return MPI_SUCCESS;
    }
    void *acc = recvbuf;
    Scratch tmp;
    Steps s(comm);
    int p2 = 1;
    while (p2 * 2 <= n) p2 *= 2;
    const int rem = n - p2;
    int newrank = me - rem;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            s.step(me + 1, acc, -1, nullptr, count, t);
            newrank = -1;
        } else {
            s.step(-1, nullptr, me - 1, tmp.bytes, count, t);
            combine_lower(s, op, acc, tmp.bytes, count, t);
            newrank = me / 2;
        }
    }
    if (newrank != -1) {
        for (int mask = 1; mask < p2; mask <<= 1) {
            const int np = newrank ^ mask;
            const int partner = np < rem ? np * 2 + 1 : np + rem;
            s.step(partner, acc, partner, tmp.bytes, count, t);
            if (partner < me) combine_lower(s, op, acc, tmp.bytes, count, t);
            else combine_higher(s, op, acc, tmp.bytes, count, t);
        }
    }
    if (me < 2 * rem) {
        if (me % 2 == 1) s.step(me - 1, acc, -1, nullptr, count, t);
        else s.step(-1, nullptr, me + 1, acc, count, t);
    }
    return s.result();
}

namespace {

// Linear, as build_gatherv and build_scatterv: the root takes (gather) or
// sends (scatter) every rank's block of `many` (counts and displacements in
// elements) in one round; `mine` is the block every member sends (gather)
// or receives (scatter).
int rooted(MPI_Comm comm, int root, bool gather, void *many, const int *counts, const int *displs,
           MPI_Datatype many_type, void *mine, int mine_count, MPI_Datatype mine_type) {
    const int n = comm->size, me = comm->rank;
    Steps s(comm);
    runtime::test_kill_point("coll.round");
    const auto post = [&](bool recv, int peer, void *buf, int count, MPI_Datatype t) {
        if (recv) s.post_recv(peer, buf, count, t);
        else s.post_send(peer, buf, count, t);
    };
    if (me != root) {
        post(!gather, root, mine, mine_count, mine_type);
    } else {
        const auto at_block = [&](int i) {
            return static_cast<char *>(many) + static_cast<std::ptrdiff_t>(displs[i]) * many_type->extent;
        };
        for (int k = 1; k < n; ++k) {
            const int i = (root + k) % n;
            post(gather, i, at_block(i), counts[i], many_type);
        }
        if (mine != MPI_IN_PLACE) {
            const std::size_t bytes = std::min(static_cast<std::size_t>(counts[me]) * many_type->size,
                                               static_cast<std::size_t>(mine_count) * mine_type->size);
            if (gather) copy_bytes(at_block(me), mine, bytes);
            else copy_bytes(mine, at_block(me), bytes);
        }
    }
    s.wait();
    return s.result();
}

}  // namespace

int direct_gatherv(MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype st, void *recvbuf, const int *rcounts,
                   const int *displs, MPI_Datatype rt, int root) {
    return rooted(comm, root, true, recvbuf, rcounts, displs, rt, const_cast<void *>(sendbuf), scount, st);
}

int direct_scatterv(MPI_Comm comm, const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype st,
                    void *recvbuf, int rcount, MPI_Datatype rt, int root) {
    return rooted(comm, root, false, const_cast<void *>(sendbuf), scounts, displs, st, recvbuf, rcount, rt);
}

// Every block in one round, as build_allgatherv.
int direct_allgatherv(MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype st, void *recvbuf,
                      const int *rcounts, const int *displs, MPI_Datatype rt) {
    const int n = comm->size, me = comm->rank;
    const auto at_block = [&](int i) {
        return static_cast<char *>(recvbuf) + static_cast<std::ptrdiff_t>(displs[i]) * rt->extent;
    };
    const bool in_place = sendbuf == MPI_IN_PLACE;
    Steps s(comm);
    runtime::test_kill_point("coll.round");
    for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n, from = (me - k + n) % n;
        s.post_recv(from, at_block(from), rcounts[from], rt);
        if (in_place) s.post_send(to, at_block(me), rcounts[me], rt);
        else s.post_send(to, sendbuf, scount, st);
    }
    // The own block once the peers have theirs under way (sent from sendbuf).
    if (!in_place)
        copy_bytes(
            at_block(me), sendbuf,
            std::min(static_cast<std::size_t>(rcounts[me]) * rt->size, static_cast<std::size_t>(scount) * st->size));
    s.wait();
    return s.result();
}

// Every pair in one round, as build_alltoallw (not in place).
int direct_alltoallv(MPI_Comm comm, const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype st,
                     void *recvbuf, const int *rcounts, const int *rdispls, MPI_Datatype rt) {
    const int n = comm->size, me = comm->rank;
    const auto sp = [&](int i) {
        return static_cast<const char *>(sendbuf) + static_cast<std::ptrdiff_t>(sdispls[i]) * st->extent;
    };
    const auto rp = [&](int i) {
        return static_cast<char *>(recvbuf) + static_cast<std::ptrdiff_t>(rdispls[i]) * rt->extent;
    };
    Steps s(comm);
    runtime::test_kill_point("coll.round");
    for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n, from = (me - k + n) % n;
        s.post_recv(from, rp(from), rcounts[from], rt);
        s.post_send(to, sp(to), scounts[to], st);
    }
    copy_bytes(
        rp(me), sp(me),
        std::min(static_cast<std::size_t>(scounts[me]) * st->size, static_cast<std::size_t>(rcounts[me]) * rt->size));
    s.wait();
    return s.result();
}

// Every block to its owner in one round, as build_reduce_scatter for a
// commutative op (linear_reduce_scatter): at most k_direct_bytes in all, so
// the whole vector is on the stack; received one at a time (every send is
// posted first) and combined from me-1, me-2 and so on, as there; empty
// blocks are not sent.
int direct_reduce_scatter(MPI_Comm comm, const void *sendbuf, void *recvbuf, const int *counts, MPI_Datatype t,
                          const ftmpi_op_s &op) {
    const int n = comm->size, me = comm->rank;
    std::size_t displ[k_direct_peers], total = 0;
    for (int i = 0; i < n; ++i) displ[i] = total, total += static_cast<std::size_t>(counts[i]);
    Steps s(comm);
    if (total == 0) return s.result();  // the schedule sends nothing either
    Scratch acc, tmp;
    copy_bytes(acc.bytes, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, total * t->size);
    const auto block = [&](int i) { return acc.bytes + displ[i] * t->size; };
    runtime::test_kill_point("coll.round");
    for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n;
        if (counts[to] > 0) s.post_send(to, block(to), counts[to], t);
    }
    for (int k = 1; k < n && counts[me] > 0; ++k) {
        s.post_recv((me - k + n) % n, tmp.bytes, counts[me], t);
        s.wait();
        combine_higher(s, op, block(me), tmp.bytes, counts[me], t);
    }
    s.wait();  // the sends, where no block was this member's to receive
    copy_bytes(recvbuf, block(me), static_cast<std::size_t>(counts[me]) * t->size);
    return s.result();
}

}  // namespace ftmpi::mpi
