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
#pragma once

namespace ftmpi::runtime {

// Arms the guard (MPI_Init, once MPI is up). `on_child` runs in the child
// right after the fork (it must only touch this process's memory).
void arm_fork_guard(void (*on_child)());
// Disarms it (MPI_Finalize): children forked later exit normally.
void disarm_fork_guard();

}  // namespace ftmpi::runtime
