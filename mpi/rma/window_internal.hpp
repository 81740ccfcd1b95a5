// Internals shared by the files of the window calls (mpi/rma/window*.cpp).
#pragma once

#include "mpi/rma/protocol.hpp"
#include "mpi/rma/window.hpp"

namespace ftmpi::mpi::rma {

// A non-local call on a revoked window (MPIX_Win_revoke) fails at once.
inline int check_live(const char *call, MPI_Win w) {
    FTMPI_TRY(check_win(call, w));
    if (!w->comm->revoked) return MPI_SUCCESS;
    return raise(w->comm, MPI_ERR_REVOKED, call, "%s was revoked", comm_label(w->comm));
}

// A target rank of the window, or MPI_PROC_NULL (argument `arg`).
inline int check_target(const char *call, MPI_Win w, int rank, const char *arg = "target_rank") {
    return check_dest(call, w->comm, rank, arg);
}

// Whether a passive-target epoch (a lock or lock_all) is open.
bool passive_epoch(MPI_Win w);

// Drives progress until this process's operations toward every target are
// complete: MPI_ERR_PROC_FAILED when one of them lost operations to a failure,
// MPI_ERR_REVOKED, MPI_ERR_RMA_RANGE (a target refused one), or MPI_SUCCESS.
// `flush`: a flush, which with nothing to wait for drives progress only now
// and then (window_sync.cpp).
int complete_all(MPI_Win w, bool flush = false);

// MPI_Win_free: FREE from every live member, even on a revoked window.
void exchange_free(MPI_Win w);

}  // namespace ftmpi::mpi::rma

// The window files name these unqualified.
namespace ftmpi::mpi {
using rma::Kind;
using rma::Target;
using rma::check_live;
using rma::check_target;
using rma::complete_all;
using rma::exchange_free;
using rma::member_failed;
using rma::passive_epoch;
}  // namespace ftmpi::mpi
