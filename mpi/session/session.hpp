// Sessions (mpi/session/session.cpp): what other parts of the library use.
#pragma once

#include <vector>

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// A live session handle (*s): MPI_SUCCESS, else MPI_ERR_SESSION raised
// naming the call.
int check_session(const char *call, MPI_Session *s);

// The processes (ids) of the process set `name` as this process sees it
// (mpi://WORLD, mpi://SELF, ftmpi://node, any case); false for an unknown name.
bool pset_procs(const char *name, std::vector<int> &out);

}  // namespace ftmpi::mpi
