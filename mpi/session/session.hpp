// Sessions (mpi/session/session.cpp): what other parts of the library use.
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// A live session handle (*s): MPI_SUCCESS, else MPI_ERR_SESSION raised
// naming the call.
int check_session(const char *call, MPI_Session *s);

}  // namespace ftmpi::mpi
