// The active-message protocol of one-sided communication: what the MPI calls
// in mpi/rma/window*.cpp send, and the hooks that attach a window to the
// progress engine. See mpi/rma/window.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "ft/failures.hpp"
#include "mpi/rma/window.hpp"

namespace ftmpi::mpi::rma {

// The message kinds (the tag on the window's context).
enum class Kind : std::int32_t {
    put = 1,
    acc,
    get,
    get_acc,
    cas,
    ack,
    reply,
    lock,
    unlock,
    grant,
    deny,
    fence,
    post,
    complete,
    free
};

// Whether window rank `rank` is known failed here.
inline bool member_failed(MPI_Win w, int rank) {
    return ft::failures().is_failed(w->comm->procs[static_cast<std::size_t>(rank)]);
}

// Sends `payload` to window rank `rank`. False when the target is known failed
// (nothing was sent).
bool send(MPI_Win w, int rank, Kind kind, std::vector<char> payload);

// The header and target-type description of an operation on `count`
// elements of `type` at displacement `disp`, with predefined op id `op`
// (op_replace for a put or get), `data_bytes` of packed data to follow, and
// the Fetch id of a GET-type operation. Append the data, then send.
std::vector<char> operation(MPI_Aint disp, int count, MPI_Datatype type, int op, std::size_t data_bytes,
                            std::uint64_t fetch);

// Attaches the window's handler to its queue (it takes what arrived before),
// and detaches it.
void open_window(MPI_Win w);
void close_window(MPI_Win w);

// After new failures: fails pending operations and lock requests toward the
// failed members, and poisons locks they held.
void on_failures();

}  // namespace ftmpi::mpi::rma
