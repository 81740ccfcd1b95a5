#include "mpi/coll/barrier.hpp"
#include "mpi/coll/inter.hpp"

#include "mpi/checks.hpp"
#include "mpi/coll/common.hpp"
#include "mpi/comm_internal.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {

int barrier(MPI_Comm comm) {
    const int n = comm->size;
    const int me = comm->rank;
    // One tag for every round, as in a schedule (build_ibarrier), so that a
    // rank on this path and one on the schedule's (after a failure) match:
    // each round has its own peers (dist < n), and a pair's messages match in
    // order.
    const int base = next_team_tag(comm);
    const std::uint32_t ctx = comm->context + 1;
    int first_err = MPI_SUCCESS;
    char token = 0;
    for (int dist = 1; dist < n; dist *= 2) {
        runtime::test_kill_point("coll.round");
        MPI_Request rr = new_request(ftmpi_request_s::Kind::recv, comm, &token, 0, MPI_BYTE, (me - dist + n) % n,
                                     base, ctx);
        start_recv(rr);
        // After a failure, the remaining rounds carry it on (see k_coll_poison).
        const int send_tag = poisoned_tag(base, first_err);
        MPI_Request sr =
            new_request(ftmpi_request_s::Kind::send, comm, &token, 0, MPI_BYTE, (me + dist) % n, send_tag, ctx);
        start_send(sr);
        wait_complete(sr);
        wait_complete(rr);
        MPI_Status st;
        const int es = retire_request(&sr, MPI_STATUS_IGNORE), er = retire_request(&rr, &st);
        if (first_err == MPI_SUCCESS) first_err = es != MPI_SUCCESS ? es : er;
        if (first_err == MPI_SUCCESS && er == MPI_SUCCESS) first_err = poison_of(st.MPI_TAG);
    }
    return first_err;
}

}  // namespace ftmpi::mpi

extern "C" int MPI_Barrier(MPI_Comm comm) {
    using namespace ftmpi::mpi;
    if (is_inter(comm)) return inter_call_barrier(comm);
    FTMPI_TRY(check_coll_start("MPI_Barrier", comm));
    // After any failure: the schedule, which skips recognized failures and
    // fails on a collectively inactive communicator (spec 000 §17.7).
    if (ftmpi::ft::failures().epoch() != 0)
        return run_blocking("MPI_Barrier", comm, [&](Sched &s) { build_ibarrier(s, comm); });
    const int err = barrier(comm);
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    return raise(comm, err, "MPI_Barrier", "a member of %s failed", comm_label(comm));
}

// Nonblocking barrier: the same dissemination pattern as a schedule.
namespace ftmpi::mpi {
void build_ibarrier(Sched &s, MPI_Comm) {
    const int n = s.size(), me = s.rank();
    for (int dist = 1; dist < n; dist *= 2) {
        s.add_recv(nullptr, 0, MPI_BYTE, (me - dist + n) % n);
        s.add_send(nullptr, 0, MPI_BYTE, (me + dist) % n);
        s.next_round();
    }
}
}  // namespace ftmpi::mpi

extern "C" int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    using namespace ftmpi::mpi;
    FTMPI_TRY(check_coll_start("MPI_Ibarrier", comm));
    FTMPI_CHECK(check_nonnull("MPI_Ibarrier", comm, request, "request"));
    return run_nonblocking(comm, request, [&](Sched &s) { build_ibarrier(s, comm); });
}
