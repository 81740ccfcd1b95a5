// Communicator attributes and keyvals.
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Copies `from`'s attributes to `to` through each keyval's copy callback (MPI_Comm_dup).
int copy_attributes(MPI_Comm from, MPI_Comm to);
// Runs every delete callback and empties the attributes (MPI_Comm_free).
int delete_attributes(MPI_Comm comm);

}  // namespace ftmpi::mpi
