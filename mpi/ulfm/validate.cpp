// The 2011 validate family (spec 000 §17.7.4, spec 004): one agreement,
// whose agreed failures, restricted to the communicator, become its set G at
// every survivor; collectives then run over the other members.
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "mpi/checks.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/ulfm/recovery_internal.hpp"
#include "mpi/ulfm/ulfm.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::mpi {
namespace {

// `t0`: when the validate started (its event, runtime/tool_events.hpp).
void recognize(MPI_Comm c, const Agreed &a, std::int64_t t0) {
    std::vector<int> g;
    for (int r = 0; r < c->size; ++r)
        if (std::binary_search(a.failed.begin(), a.failed.end(), c->procs[static_cast<std::size_t>(r)])) g.push_back(r);
    if (t0 != 0)
        runtime::emit(runtime::EventType::validate_done, c->context, static_cast<std::int64_t>(g.size()),
                      runtime::event_since(t0));
    set_recognized(c, std::move(g));
    // Members may have left the collectives before validate after different
    // numbers of calls (an error stops a loop at some ranks only): all restart
    // the collective sequence at an epoch named by the agreement, and drop
    // what abandoned collectives of older epochs left behind.
    const std::uint32_t epoch = itag::epoch_number(a.seq + 1);
    c->coll_seq = itag::epoch_start(epoch);
    c->coll_queue->drop_unexpected([epoch](int tag) { return !itag::is_cross(tag) && itag::epoch_of(tag) != epoch; });
}

MPI_Group recognized_group(MPI_Comm c) {
    std::vector<int> procs;
    for (int r : c->failed.global) procs.push_back(c->procs[static_cast<std::size_t>(r)]);
    return group_or_empty(std::move(procs));
}

// The validate calls' arguments: an intra-communicator, and the named
// output arguments non-null.
int validate_args(const char *call, MPI_Comm comm,
                  std::initializer_list<std::pair<const void *, const char *>> outputs) {
    FTMPI_TRY(check_intra(call, comm));
    for (const auto &[p, name] : outputs) FTMPI_CHECK(check_nonnull(call, comm, p, name));
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {
int MPI_Comm_validate(MPI_Comm comm, MPI_Group *failed) {
    FTMPI_TRY(validate_args("MPI_Comm_validate", comm, {{failed, "failed"}}));
    const std::int64_t t0 = ftmpi::runtime::event_start(ftmpi::runtime::EventType::validate_done);
    recognize(comm, run_agreement(comm, flag_words(1)), t0);
    *failed = recognized_group(comm);
    return MPI_SUCCESS;
}

int MPI_Icomm_validate(MPI_Comm comm, MPI_Group *failed, MPI_Request *request) {
    FTMPI_TRY(validate_args("MPI_Icomm_validate", comm, {{failed, "failed"}, {request, "request"}}));
    const std::int64_t t0 = ftmpi::runtime::event_start(ftmpi::runtime::EventType::validate_done);
    *request = agreement_request(comm, comm, flag_words(1), [comm, failed, t0](const Agreed &a) {
        recognize(comm, a, t0);
        *failed = recognized_group(comm);
        return MPI_SUCCESS;
    });
    return MPI_SUCCESS;
}

int MPI_Comm_validate_global(MPI_Comm comm, int *num_failed, int *num_new) {
    FTMPI_TRY(validate_args("MPI_Comm_validate_global", comm, {{num_failed, "num_failed"}, {num_new, "num_new"}}));
    const std::int64_t t0 = ftmpi::runtime::event_start(ftmpi::runtime::EventType::validate_done);
    recognize(comm, run_agreement(comm, flag_words(1)), t0);
    *num_failed = static_cast<int>(comm->failed.global.size());
    *num_new = static_cast<int>(comm->failed.local_new.size());
    return MPI_SUCCESS;
}
}  // extern "C"
