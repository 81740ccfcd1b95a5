// Requests: allocation, starting sends and receives, completion.
//
// A request completes exactly once (complete = true, status filled). Its
// memory is reused only when libfabric no longer holds its transport Op.
#pragma once

#include "mpi/objects.hpp"
#include "mpi/state.hpp"

namespace ftmpi::mpi {

MPI_Request new_request(ftmpi_request_s::Kind kind, MPI_Comm comm, const void *buf, int count, MPI_Datatype type,
                        int peer, int tag, std::uint32_t context);
// Returns a finished request to the pool (deferred while libfabric holds its Op).
void release_request(MPI_Request r);

// Frees every pooled request (MPI_Finalize). Requests libfabric may still hold
// are left alone.
void free_request_pool();

// Starts a send or a receive described by the request's fields.
void start_send(MPI_Request r);
// A standard blocking send without a request: true when the message went
// out at once (small, contiguous, room for it) and the send is done; false,
// with nothing done, when the caller must go through a request.
bool send_now(MPI_Comm comm, const void *buf, int count, MPI_Datatype type, int dest, int tag);
// The same for a collective's send on `context`, uncounted, and only while
// nothing has failed (then the request path's rules apply): written to the
// ring now, no request; false, with nothing done, otherwise.
bool inject_coll(MPI_Comm comm, std::uint32_t context, const void *buf, int count, MPI_Datatype type, int dest,
                 int tag);
void start_recv(MPI_Request r);

// Completes `r` with MPI error class `err` and `bytes` delivered.
void complete_request(MPI_Request r, int err, std::size_t bytes);

// A request on comm that is already complete (a nonblocking call that
// finished before returning, e.g. MPI_Comm_idup, MPI_File_iread), with error
// class `err` and `bytes` in its status.
MPI_Request completed_request(MPI_Comm comm, int err = MPI_SUCCESS, std::size_t bytes = 0);

// Blocks (driving progress) until `r` is complete, or until it is a wildcard
// receive left pending by a failure (r->failure_pending; never for internal or
// blocking requests).
inline void wait_complete(MPI_Request r) {
    while (!r->complete && !r->failure_pending) progress_wait();
}

// Copies the status out (copy_status) and retires the request (REQUEST_NULL,
// or inactive for persistent ones). Returns the request's error class.
int retire_request(MPI_Request *slot, MPI_Status *status);

// Generalized requests (mpi/p2p/grequest.cpp). grequest_query fills r->status
// through the user's query callback and returns its code; grequest_free runs
// the free callback (once) and returns its code.
int grequest_query(MPI_Request r);
int grequest_free(MPI_Request r);
// MPI_Cancel of a generalized request: its cancel callback.
int grequest_cancel(MPI_Request r);

// The status of a null or inactive request (its MPI_ERROR left as it is).
void empty_status(MPI_Status *status);

// Copies a status out to the user's, all but MPI_ERROR: a call reports its
// error by its return code, and only the calls of many requests (Waitall,
// Waitsome, Testall, Testsome) write MPI_ERROR, and only when they return
// MPI_ERR_IN_STATUS (MPI-3.1 §3.2.5). No-op for MPI_STATUS_IGNORE.
inline void copy_status(MPI_Status *to, const MPI_Status &from) {
    if (to == MPI_STATUS_IGNORE) return;
    const int keep = to->MPI_ERROR;
    *to = from;
    to->MPI_ERROR = keep;
}

// A request that counts as "active" for the Wait/Test family.
inline bool is_active(MPI_Request r) { return r != MPI_REQUEST_NULL && (!r->persistent || r->active); }

}  // namespace ftmpi::mpi
