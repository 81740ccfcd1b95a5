// Attributes of communicators, datatypes and windows (mpi/comm/attributes.cpp).
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Copies `from`'s attributes to `to` through each keyval's copy callback
// (MPI_Comm_dup, MPI_Type_dup). On a callback's error, `to` is left without
// attributes (those copied are deleted again) and the error is returned.
int copy_attributes(MPI_Comm from, MPI_Comm to);
int copy_attributes(MPI_Datatype from, MPI_Datatype to);
// Runs every delete callback, the attribute set last first, and empties the
// attributes (MPI_Comm_free, MPI_Type_free, MPI_Win_free, MPI_Finalize on
// MPI_COMM_SELF and MPI_COMM_WORLD). Returns the first callback error.
int delete_attributes(MPI_Comm comm);
int delete_attributes(MPI_Datatype type);
int delete_attributes(MPI_Win win);
// MPI_Win_get_attr for a keyval that is not a predefined window key.
int get_user_attr(const char *call, MPI_Win win, int keyval, void *attribute_val, int *flag);

}  // namespace ftmpi::mpi
