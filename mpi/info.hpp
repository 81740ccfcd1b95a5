// Hints kept by communicators and windows (MPI_*_set_info / get_info).
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

using Hints = std::vector<std::pair<std::string, std::string>>;

// Sets every key of `info` (a valid info object) in `into`, replacing values.
void merge_hints(Hints &into, MPI_Info info);

// A new info object holding `hints` (MPI_*_get_info's info_used).
MPI_Info info_of(const Hints &hints);

}  // namespace ftmpi::mpi
