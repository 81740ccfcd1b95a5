#include "runtime/launcher_env.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ftmpi::runtime {
namespace {

// The integer value of environment variable `name`, or 0.
long env_count(const char *name) {
    const char *v = std::getenv(name);
    return v == nullptr ? 0 : std::strtol(v, nullptr, 10);
}

}  // namespace

void check_no_pmix_launch() {
    // srun sets these for the tasks of a step (SLURM_NTASKS alone is also set
    // in an allocation's shell, where a program started by hand is a singleton).
    if (const long n = env_count("SLURM_STEP_NUM_TASKS"); n > 1)
        throw std::runtime_error("started by srun as one of " + std::to_string(n) +
                                 " tasks, but without a PMIx server: ftmpi needs srun --mpi=pmix");
    // PMI-1 and PMI-2 launchers (MPICH's hydra, srun --mpi=pmi2).
    if (const long n = env_count("PMI_SIZE"); n > 1)
        throw std::runtime_error("started as one of " + std::to_string(n) +
                                 " processes by a PMI-1/PMI-2 launcher: ftmpi needs a PMIx launcher (ftmpirun, "
                                 "srun --mpi=pmix, prterun)");
}

}  // namespace ftmpi::runtime
