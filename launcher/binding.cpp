#include "binding.hpp"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include <memory>

#include "error.hpp"

namespace ftmpi::launcher {

BindingPlan plan_bindings(BindPolicy policy, int np) {
  BindingPlan plan;
  plan.ranks.resize(static_cast<size_t>(np));
  if (policy == BindPolicy::kNone) return plan;

  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) throw LauncherError("hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> guard(topo, hwloc_topology_destroy);
  if (hwloc_topology_load(topo) != 0) throw LauncherError("hwloc_topology_load failed");

  // By default hwloc keeps only what this process may use (the allowed cpuset).
  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
  std::vector<hwloc_obj_t> cores;
  for (hwloc_obj_t c = nullptr;
       (c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, c)) != nullptr;) {
    if (hwloc_bitmap_intersects(c->cpuset, allowed)) cores.push_back(c);
  }
  plan.ncores = static_cast<int>(cores.size());
  if (cores.empty()) {
    plan.warnings.push_back("no cores found in the allowed cpuset; not binding");
    return plan;
  }
  if (policy == BindPolicy::kDefault && np > plan.ncores) return plan;
  if (np > plan.ncores)
    plan.warnings.push_back(std::to_string(np) + " ranks on " + std::to_string(plan.ncores) +
                            " cores: oversubscribed, binding round-robin");

  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (int r = 0; r < np; ++r) {
    hwloc_obj_t core = cores[static_cast<size_t>(r % plan.ncores)];
    hwloc_bitmap_and(set, core->cpuset, allowed);
    RankBinding& b = plan.ranks[static_cast<size_t>(r)];
    b.bound = true;
    b.core = static_cast<int>(core->logical_index);
    CPU_ZERO(&b.cpus);
    hwloc_cpuset_to_glibc_sched_affinity(topo, set, &b.cpus, sizeof b.cpus);
    char* text = nullptr;
    if (hwloc_bitmap_taskset_asprintf(&text, set) >= 0 && text) {
      b.cpuset_text = text;
      std::free(text);
    }
  }
  hwloc_bitmap_free(set);
  return plan;
}

}  // namespace ftmpi::launcher
