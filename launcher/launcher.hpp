// The launcher's event loop: spawns the ranks, forwards I/O and signals,
// acts on PMIx upcalls and child deaths, and computes the exit status.
#pragma once

#include "options.hpp"

namespace ftmpi::launcher {

// Runs the whole job described by `opts` on the calling (main) thread and
// returns ftmpirun's exit status: spec 000 §17.5.2's rule (job_exit_code),
// or 124 after --timeout, 128 + signo after a SIGINT or SIGTERM. Every child
// is reaped, the job's process group emptied, the ranks' shm regions and the
// PMIx tmpdir removed before it returns. Throws LauncherError only before the
// first rank is forked (the job guard may have been).
int run_job(const Options &opts);

}  // namespace ftmpi::launcher
