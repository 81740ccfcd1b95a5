#include "mpi/coll/barrier.hpp"
#include "mpi/coll/inter.hpp"

#include "mpi/checks.hpp"
#include "mpi/coll/common.hpp"
#include "mpi/coll/direct.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/ulfm.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {

int barrier(MPI_Comm comm) { return direct_barrier(comm); }

}  // namespace ftmpi::mpi

extern "C" int MPI_Barrier(MPI_Comm comm) {
    using namespace ftmpi::mpi;
    FTMPI_TRY(check_coll_start("MPI_Barrier", comm));
    if (comm->inter) return run_blocking("MPI_Barrier", comm, [&](Sched &s) { build_inter_barrier(s); });
    // After any failure: the schedule, which skips recognized failures and
    // fails on a collectively inactive communicator (spec 000 §17.7).
    if (!direct_fits(comm, 0, MPI_BYTE))
        return run_blocking("MPI_Barrier", comm, [&](Sched &s) { build_ibarrier(s, comm); });
    const int err = barrier(comm);
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    return raise(comm, err, "MPI_Barrier", "a member of %s failed", comm_label(comm));
}

// Nonblocking barrier: the same pattern as a schedule.
namespace ftmpi::mpi {
void build_ibarrier(Sched &s, MPI_Comm) {
    barrier_pattern(
        s.size(), s.rank(),
        [&](int to, int from) {
            if (from >= 0) s.add_recv(nullptr, 0, MPI_BYTE, from);
            if (to >= 0) s.add_send(nullptr, 0, MPI_BYTE, to);
        },
        [&] { s.next_round(); });
}
}  // namespace ftmpi::mpi

namespace {
int barrier_start(const char *call, MPI_Comm comm, MPI_Request *request, ftmpi::mpi::Run run) {
    using namespace ftmpi::mpi;
    FTMPI_TRY(check_coll_start(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    return run_nonblocking(comm, request, run, [&](Sched &s) {
        if (comm->inter) build_inter_barrier(s);
        else build_ibarrier(s, comm);
    });
}
}  // namespace

extern "C" int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    return barrier_start("MPI_Ibarrier", comm, request, ftmpi::mpi::Run::nonblocking);
}

// MPI 4.0
extern "C" int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(ftmpi::mpi::check_init_info("MPI_Barrier_init", comm, info));
    return barrier_start("MPI_Barrier_init", comm, request, ftmpi::mpi::Run::persistent);
}
