// CPU binding plan computed with hwloc before any rank is forked.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

#include "options.hpp"

namespace ftmpi::launcher {

struct RankBinding {
    bool bound = false;
    std::string where;        // "core 3", "socket 0", "cores 2-3" (hwloc logical indexes)
    cpu_set_t cpus{};         // applied with sched_setaffinity in the child
    std::string cpuset_text;  // "0x1" style (taskset format)
};

struct BindingPlan {
    std::vector<RankBinding> ranks;  // one per rank
    int ncores = 0;                  // cores in the allowed cpuset
    std::vector<std::string> warnings;
};

// Ranks take the allowed cores (hardware threads with --map-by hwthread) in
// --map-by order, o.pe each, round-robin when there are too few (with a
// warning); each is bound to the --bind-to unit holding its first one (all
// its units with PE > 1). The default policy binds to the mapped unit; when
// there are too few, it gives consecutive ranks the same one, in even
// blocks, for the job's first launch (`first_launch`) with PE = 1, and
// leaves the ranks unbound otherwise. Throws LauncherError when the topology
// cannot be loaded.
BindingPlan plan_bindings(const Options &o, bool first_launch = true);

// The CPUs this process may run on (its affinity) as a list such as "0-3,8":
// a bound rank's own service threads (the failure detector's) may run on
// any of them (FTMPI_SERVICE_CPUS, runtime/service_thread.hpp). Empty when
// it cannot be read.
std::string own_cpu_list();

}  // namespace ftmpi::launcher
