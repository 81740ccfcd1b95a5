// Group construction shared by the calls that return groups.
#pragma once

#include <vector>

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// A new group over `procs` (job ranks, in group order).
MPI_Group new_group(std::vector<int> procs);
// The same, but MPI_GROUP_EMPTY when `procs` is empty.
MPI_Group group_or_empty(std::vector<int> procs);

}  // namespace ftmpi::mpi
