// What the environment says about the launcher, before connecting to it.
#pragma once

namespace ftmpi::runtime {

// Throws std::runtime_error, saying what to do, when this process is one task
// of a multi-task launch by a launcher that is not a PMIx server (srun
// --mpi=pmi2 or --mpi=none, a PMI-1/PMI-2 mpiexec): without PMIx it would run
// as a one-rank job, next to N-1 others that think the same. Call only when
// no PMIx server is named (PMIX_NAMESPACE unset).
void check_no_pmix_launch();

}  // namespace ftmpi::runtime
