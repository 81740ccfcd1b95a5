// Failure notices from the process manager (PMIx events), handed from the PMIx
// thread to the fault-tolerance layer.
//
// The PMIx event thread calls post_peer_terminated(). The `ft` layer installs a
// handler at MPI_Init; notices that arrive before it exists are kept and handed
// over when it is installed, so none is lost during start-up.
#pragma once

namespace ftmpi::runtime {

// Called on whatever thread posted the notice; must be thread-safe and quick.
using TerminatedHandler = void (*)(int id);

// Any thread. Records that process `id` (runtime/process_manager.hpp) terminated.
void post_peer_terminated(int id);

// Installs `h` (nullptr: keep notices queued again) and hands it every queued notice.
void set_terminated_handler(TerminatedHandler h);

}  // namespace ftmpi::runtime
