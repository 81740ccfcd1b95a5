// What the core offers the Fortran bindings (mpi/fortran/): callbacks
// written in Fortran take INTEGER handles and lengths by reference, so the
// core converts before calling them.
#pragma once

#include <mpi.h>

namespace ftmpi::mpi {

// The op's function is Fortran's: called as fn(invec, inoutvec, INTEGER len,
// INTEGER datatype), len an INTEGER(KIND=MPI_COUNT_KIND) for MPI_Op_create_c's.
int set_op_fortran(MPI_Op op);

// The handler's function is Fortran's: called as fn(INTEGER handle, INTEGER
// code), the handle being to_fortran(pointer to the C handle it is given).
int set_errhandler_fortran(MPI_Errhandler errhandler, MPI_Fint (*to_fortran)(const void *handle));

// Runs fn(ctx, error) once when request `r` is released: its operation done
// and the user done with it (a wait or test completed it, or it completed
// after MPI_Request_free). Called inside the library: fn makes no MPI call.
int add_request_release_hook(MPI_Request r, void (*fn)(void *ctx, int error), void *ctx);

}  // namespace ftmpi::mpi
