// CPU binding plan computed with hwloc before any rank is forked.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

#include "options.hpp"

namespace ftmpi::launcher {

struct RankBinding {
  bool bound = false;
  int core = -1;            // hwloc logical index of the core
  cpu_set_t cpus{};         // applied with sched_setaffinity in the child
  std::string cpuset_text;  // "0x1" style (taskset format)
};

struct BindingPlan {
  std::vector<RankBinding> ranks;  // one per rank
  int ncores = 0;                  // cores in the allowed cpuset
  std::vector<std::string> warnings;
};

// --bind-to core binds rank i to allowed core i % ncores (warning when
// np > ncores); the default policy binds only when np <= ncores. Throws
// LauncherError when the topology cannot be loaded.
BindingPlan plan_bindings(BindPolicy policy, int np);

}  // namespace ftmpi::launcher
