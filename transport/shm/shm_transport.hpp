// The shared-memory fast path: ftmpi's own transport between processes of
// one node, with libfabric (loaded only when needed) for peers on other nodes.
//
// Every pair of processes on a node shares one segment in /dev/shm:
//   two rings (transport/shm/ring.hpp), one per direction, that carry eager
//   messages and the protocol's control records, and
//   two tables of transfer descriptors, one per direction, for large
//   messages: the sender posts its buffer's address in a descriptor, the RTS
//   names it, and once the receiver claims it both processes copy the data
//   (process_vm_readv at the receiver, process_vm_writev at the sender),
//   taking 64 KiB chunks from a shared counter until every byte is done. A
//   sender busy elsewhere leaves every chunk to the receiver.
// Where the kernel refuses single copy (ptrace rules, another user), the
// receiver declines the descriptor and asks for the data (CTS); the sender
// then streams it through the ring in fragments.
//
// Failures: a ring has one writer and one reader, and a record is published
// by a stamp written last, so a process that dies in the middle of writing
// leaves nothing its peer could misread (ring.hpp). A transfer whose peer
// died ends when the peer is marked failed (mark_failed), like every other
// operation with it; nothing here ever waits on one peer.
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
