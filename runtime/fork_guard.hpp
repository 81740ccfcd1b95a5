// Processes forked by a rank while MPI is up (osu_latency_mp, codes that
// fork helpers or call system()).
//
// The child shares the rank's sockets, libfabric endpoints, PMIx connection
// and shared-memory regions. It must never tear them down: when it exits, the
// libraries' exit-time destructors (libfabric's among them) would shut the
// shared connections down under the rank, whose peers then declare it
// failed. So, while the guard is armed, a child's exit skips every exit-time
// handler registered before the fork and every library destructor: it
// flushes stdio and leaves with _exit and the same status. Handlers the child
// registers itself still run. exec() is unaffected.
//
// The rank itself, when it calls exit() while MPI is up (without
// MPI_Finalize, or from inside a call), leaves the same way: the threads of
// the libraries under MPI (PMIx's event thread, the failure detector, the
// liveness links) still run and would use state the exit-time destructors
// free (a peer's death reported during the exit crashed it). Handlers
// registered after MPI_Init still run first; those registered before it do
// not run.
#pragma once

namespace ftmpi::runtime {

// Arms the guard (MPI_Init, once MPI is up). `on_child` runs in the child
// right after the fork (it must only touch this process's memory).
void arm_fork_guard(void (*on_child)());
// Disarms it (MPI_Finalize): the rank and children forked later exit normally.
void disarm_fork_guard();

}  // namespace ftmpi::runtime
