// Opening the transports of a process (MPI_Init).
#pragma once

#include <memory>

#include "transport/transport.hpp"

namespace ftmpi::transport {

// Whether this job's peers on this node use the shared-memory fast path
// (FTMPI_SHM_FASTPATH, and FTMPI_PROVIDER empty or "shm").
bool shm_fast_path();

// Opens the fast path for this node's peers and, for peers on other nodes
// (or every peer when the fast path is off), the libfabric transport;
// exchanges addresses through the process manager. Init only; throws
// std::runtime_error naming what failed.
std::unique_ptr<Transport> open_transport(runtime::ProcessManager &pm, Sink &sink);

}  // namespace ftmpi::transport
