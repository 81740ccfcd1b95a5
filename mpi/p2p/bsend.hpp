// Buffered sends: MPI_Buffer_attach/detach and the buffer's allocator.
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// Copies the message into the attached buffer and starts an internal send
// from there. Returns MPI_SUCCESS or MPI_ERR_BUFFER (no buffer / no space).
int bsend_start(const char *call, MPI_Comm comm, const void *buf, int count, MPI_Datatype type, int dest, int tag);
// The internal send `r` is over: its chunk of the buffer is free again.
void bsend_chunk_done(MPI_Request r);
// Buffered sends started and not yet complete (0 with no buffer attached).
int bsend_pending();
// A communicator or session goes: its buffer's messages are sent first
// (as a detach would), then the buffer is forgotten.
void bsend_forget(const void *owner);

}  // namespace ftmpi::mpi
