// Failure handling on windows: revoking (MPIX_Win_revoke, MPI_Win_invalidate),
// validating (MPI_Win_validate, MPI_Iwin_validate) and the failed members' group.
#include <utility>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/rma/window_internal.hpp"

using namespace ftmpi::mpi;

extern "C" {

// Spec 001 §1.3.2 (MPI_Win_invalidate), Open MPI's MPIX name: every member's
// window is revoked (the hidden communicator's reliable revoke), and its
// calls blocked on the window return MPI_ERR_REVOKED.
int MPIX_Win_revoke(MPI_Win win) {
    FTMPI_TRY(check_win("MPIX_Win_revoke", win));
    return MPIX_Comm_revoke(win->comm);
}

int MPI_Win_invalidate(MPI_Win win) {
    FTMPI_TRY(check_win("MPI_Win_invalidate", win));
    return MPIX_Comm_revoke(win->comm);
}

int MPIX_Win_is_revoked(MPI_Win win, int *flag) {
    FTMPI_TRY(check_win("MPIX_Win_is_revoked", win));
    FTMPI_CHECK(check_nonnull("MPIX_Win_is_revoked", win->comm, flag, "flag"));
    progress();
    *flag = win->comm->revoked ? 1 : 0;
    return MPI_SUCCESS;
}

// Spec 000 §17.11.1: the same group of failed processes at every live
// member, or an error at every one (the validate agreement of the hidden
// communicator).
int MPI_Win_validate(MPI_Win win, MPI_Group *failed) {
    FTMPI_TRY(check_win("MPI_Win_validate", win));
    return MPI_Comm_validate(win->comm, failed);
}

int MPI_Iwin_validate(MPI_Win win, MPI_Group *failed, MPI_Request *request) {
    FTMPI_TRY(check_win("MPI_Iwin_validate", win));
    return MPI_Icomm_validate(win->comm, failed, request);
}

int MPI_Win_get_group_failed(MPI_Win win, MPI_Group *failed) {
    FTMPI_TRY(check_win("MPI_Win_get_group_failed", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_group_failed", win->comm, failed, "failed"));
    progress();
    std::vector<int> procs;
    for (int r = 0; r < win->comm->size; ++r)
        if (member_failed(win, r)) procs.push_back(win->comm->procs[static_cast<std::size_t>(r)]);
    *failed = group_or_empty(std::move(procs));
    return MPI_SUCCESS;
}

int MPI_Win_get_failed(MPI_Win win, MPI_Group *failed) { return MPI_Win_get_group_failed(win, failed); }
int MPIX_Win_get_failed(MPI_Win win, MPI_Group *failed) { return MPI_Win_get_group_failed(win, failed); }

}  // extern "C"
