// Shrink (ULFM; spec 001 §1.3): one agreement on the AND of the free-slot
// masks and on the failures; every survivor then makes the new communicator
// from the outcome: the survivors in their old order, on the lowest slot
// free everywhere, named by the agreement's nonce.
#include <algorithm>

#include "mpi-ext.h"
#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/ulfm/recovery_internal.hpp"
#include "runtime/test_hooks.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::mpi {
namespace {

// Survivors of an ordered group under the agreed failures (sorted process ids).
std::vector<int> survivors(const std::vector<int> &procs, const std::vector<int> &failed) {
    std::vector<int> out;
    for (int p : procs)
        if (!std::binary_search(failed.begin(), failed.end(), p)) out.push_back(p);
    return out;
}

// The new communicator from the shrink's outcome. An inter-communicator takes
// two slots (itself and its hidden local group). MPI_ERR_INTERN when no slot
// is free everywhere, or (ishrink) when the agreed slot was taken here by a
// creation that overlapped it.
int build_shrunk(MPI_Comm comm, const Agreed &a, MPI_Comm *newcomm) {
    runtime::test_kill_point("shrink");
    SlotMask common{};
    for (std::size_t i = 0; i < common.size() && i < a.words.size(); ++i) common[i] = a.words[i];
    const int slot = lowest_slot(common);
    if (!claim_slot(slot)) return MPI_ERR_INTERN;
    if (!comm->inter) {
        *newcomm = make_comm(comm, slot, survivors(comm->procs, a.failed), a.nonce);
        return MPI_SUCCESS;
    }
    common[static_cast<std::size_t>(slot / 64)] &= ~(std::uint64_t{1} << (slot % 64));
    const int local_slot = lowest_slot(common);
    if (!claim_slot(local_slot)) {
        release_slot(static_cast<std::uint32_t>(slot) * 2);
        return MPI_ERR_INTERN;
    }
    std::vector<int> mine = survivors(comm->local_procs, a.failed);
    MPI_Comm local = make_comm(comm, local_slot, mine, mix_uid(a.nonce, static_cast<std::uint64_t>(mine.front())));
    *newcomm = make_intercomm(local, slot, survivors(comm->procs, a.failed), comm->errhandler, a.nonce);
    return MPI_SUCCESS;
}

// build_shrunk, and the event of a shrink started at t0 (runtime/tool_events.hpp).
int shrink_from(MPI_Comm comm, const Agreed &a, MPI_Comm *newcomm, std::int64_t t0) {
    const int err = build_shrunk(comm, a, newcomm);
    if (err == MPI_SUCCESS && t0 != 0)
        runtime::emit(runtime::EventType::shrink_done, comm->context, (*newcomm)->size, runtime::event_since(t0));
    return err;
}

std::vector<std::uint64_t> free_words() {
    const SlotMask &free = free_slots();
    return std::vector<std::uint64_t>(free.begin(), free.end());
}

int shrink_call(const char *call, MPI_Comm comm, MPI_Comm *newcomm) {
    FTMPI_TRY(check_any(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    const std::int64_t t0 = runtime::event_start(runtime::EventType::shrink_done);
    if (shrink_from(comm, run_agreement(ft_view(comm), free_words()), newcomm, t0) != MPI_SUCCESS)
        return raise(comm, MPI_ERR_INTERN, call, "no context id is free at every survivor of %s", comm_label(comm));
    return MPI_SUCCESS;
}

// Nonblocking: *newcomm is set when the request completes. A communicator
// creation that overlaps it on this process may take the slot the shrink
// agrees on; the request then fails with MPI_ERR_INTERN.
int ishrink_call(const char *call, MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    FTMPI_TRY(check_any(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    *newcomm = MPI_COMM_NULL;
    const std::int64_t t0 = runtime::event_start(runtime::EventType::shrink_done);
    *request = agreement_request(comm, ft_view(comm), free_words(),
                                 [comm, newcomm, t0](const Agreed &a) { return shrink_from(comm, a, newcomm, t0); });
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {
int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm) { return shrink_call("MPIX_Comm_shrink", comm, newcomm); }
int MPI_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm) { return shrink_call("MPI_Comm_shrink", comm, newcomm); }
int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    return ishrink_call("MPIX_Comm_ishrink", comm, newcomm, request);
}
int MPI_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    return ishrink_call("MPI_Comm_ishrink", comm, newcomm, request);
}
}  // extern "C"
