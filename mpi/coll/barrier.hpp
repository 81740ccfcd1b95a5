// Barrier over the failure-aware point-to-point core.
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Dissemination barrier on comm's collective context. Every round is run even
// after an error, so no surviving member waits forever on this process.
// Returns MPI_SUCCESS or the first error class seen (MPI_ERR_PROC_FAILED).
int barrier(MPI_Comm comm);

}  // namespace ftmpi::mpi
