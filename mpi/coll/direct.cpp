#include "mpi/coll/direct.hpp"

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

    // Sends `bytes` of sbuf to `to` and receives up to `bytes` into rbuf from
    // `from` (-1: no such side), both posted before either is waited for.
    void step(int to, const void *sbuf, int from, void *rbuf, int count, MPI_Datatype t) {
        runtime::test_kill_point("coll.round");
        MPI_Request rr = MPI_REQUEST_NULL, sr = MPI_REQUEST_NULL;
        if (from >= 0) {
            rr = new_request(ftmpi_request_s::Kind::recv, comm_, rbuf, count, t, from, tag_, ctx_);
            start_recv(rr);
        }
        if (to >= 0) {
            // After an error the remaining steps carry it on (k_coll_poison).
            sr = new_request(ftmpi_request_s::Kind::send, comm_, sbuf, count, t, to, poisoned_tag(tag_, err_), ctx_);
            start_send(sr);
        }
        if (sr != MPI_REQUEST_NULL) {
            wait_complete(sr);
            const int e = retire_request(&sr, MPI_STATUS_IGNORE);
            if (err_ == MPI_SUCCESS) err_ = e;
        }
        if (rr != MPI_REQUEST_NULL) {
            wait_complete(rr);
            MPI_Status st{};
            const int e = retire_request(&rr, &st);
            if (err_ == MPI_SUCCESS) err_ = e != MPI_SUCCESS ? e : poison_of(st.MPI_TAG);
            // A shorter message than the call's count: the members' counts
            // differ (MPICH's collective size mismatch). The rest of rbuf
            // was never written, so nothing may be combined from it.
            if (err_ == MPI_SUCCESS && st.ftmpi_count != static_cast<std::size_t>(count) * t->size)
                err_ = MPI_ERR_OTHER;
        }
    }
    int result() const { return err_; }

private:
    MPI_Comm comm_;
    std::uint32_t ctx_;
    int tag_;
    int err_ = MPI_SUCCESS;
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

}  // namespace

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

}  // namespace ftmpi::mpi
