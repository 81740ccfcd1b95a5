// The task keeper: how a rank's death reaches srun's exit status.
//
// srun exits 128+signal as soon as one task of the step died of a signal,
// whatever the other tasks did (Slurm 22.05, src/srun/launch.c,
// _task_finish()). A fault-tolerant job whose rank was SIGKILLed and whose
// survivors recovered and exited 0 would still end with 137: not the
// survivors' status that MPI 4.0 §17.5.2 (spec 000) asks of the launcher.
//
// So under srun, MPI_Init forks first thing, while the process still has one
// thread: the child is the rank and goes on with the program; the parent, the
// task Slurm started, becomes the keeper. It waits for the rank and exits
//   - with the rank's exit code when the rank exited;
//   - by the rank's signal when the rank died of a signal that was sent to the
//     keeper too (the step being cancelled or signalled by Slurm reaches every
//     process of the step), or when the rank died before MPI_Init completed
//     (the job could not start with it);
//   - with 0 otherwise, a process failure the job survives, after printing
//     which rank died of which signal: the survivors' statuses make srun's.
// Whichever way the rank ended, the keeper removes the shm regions it left
// (runtime/shm_names.hpp), as ftmpirun does for its ranks.
// Signals sent to the keeper by anyone but slurmstepd (which signals every
// process of the step itself) are forwarded to the rank. The rank gets
// SIGKILL if the keeper dies. FTMPI_SLURM_KEEPER=0 turns it off.
#pragma once

#include <sys/types.h>

namespace ftmpi::runtime {

// Starts the keeper when this process is one task of a multi-task srun step
// with a PMIx server (its parent is slurmstepd, FTMPI_LAUNCHER is not
// ftmpirun), fault tolerance is on, FTMPI_SLURM_KEEPER is 1 and the process
// has a single thread. Returns in the rank (or at once when not kept).
void keep_slurm_task();

// Marks that the rank has joined its job (MPI_Init succeeded). A no-op
// without a keeper.
void task_keeper_joined();

// Forks unconditionally: returns the keeper's pid in the child (the rank);
// the parent runs the keeper and never returns. Signals from `launcher` are
// not forwarded. Returns -1 (errno set) when fork fails. For keep_slurm_task()
// and the unit tests.
pid_t start_task_keeper(pid_t launcher);

}  // namespace ftmpi::runtime
