#include "binding.hpp"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include <memory>

#include "error.hpp"

namespace ftmpi::launcher {
namespace {

using Topology = std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)>;
using Bitmap = std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)>;

Bitmap new_bitmap() { return Bitmap(hwloc_bitmap_alloc(), hwloc_bitmap_free); }

// The allowed objects of `type`, in logical order.
std::vector<hwloc_obj_t> allowed_objs(hwloc_topology_t topo, hwloc_obj_type_t type) {
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    std::vector<hwloc_obj_t> out;
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo, type, o)) != nullptr;)
        if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, allowed)) out.push_back(o);
    return out;
}

// The order in which ranks take `units` (cores or hardware threads): in
// logical order, or round-robin over the sockets / NUMA nodes they belong to.
std::vector<hwloc_obj_t> map_order(hwloc_topology_t topo, const std::vector<hwloc_obj_t> &units, MapPolicy map) {
    if (map != MapPolicy::kSocket && map != MapPolicy::kNuma) return units;
    const auto groups = allowed_objs(topo, map == MapPolicy::kSocket ? HWLOC_OBJ_PACKAGE : HWLOC_OBJ_NUMANODE);
    if (groups.size() < 2) return units;
    std::vector<std::vector<hwloc_obj_t>> per_group(groups.size());
    for (hwloc_obj_t u : units)
        for (size_t g = 0; g < groups.size(); ++g)
            if (hwloc_bitmap_isincluded(u->cpuset, groups[g]->cpuset)) {
                per_group[g].push_back(u);
                break;
            }
    std::vector<hwloc_obj_t> out;
    for (size_t k = 0; out.size() < units.size(); ++k)
        for (auto &g : per_group)
            if (k < g.size()) out.push_back(g[k]);
    return out;
}

const char *unit_name(BindPolicy b) {
    switch (b) {
    case BindPolicy::kHwthread: return "hwthread";
    case BindPolicy::kSocket: return "socket";
    case BindPolicy::kNuma: return "numa";
    default: return "core";
    }
}

// The object of the bind unit that holds `u` (u itself for core/hwthread
// when it is of that type).
hwloc_obj_t bind_obj(hwloc_topology_t topo, hwloc_obj_t u, BindPolicy b) {
    switch (b) {
    case BindPolicy::kSocket: return hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, u);
    case BindPolicy::kNuma: {
        // NUMA nodes are memory children in hwloc 2: the one whose cpuset covers u.
        for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)) != nullptr;)
            if (hwloc_bitmap_isincluded(u->cpuset, n->cpuset)) return n;
        return nullptr;
    }
    case BindPolicy::kCore:
        return u->type == HWLOC_OBJ_CORE ? u : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, u);
    default: return u;
    }
}

}  // namespace

BindingPlan plan_bindings(const Options &o, bool first_launch) {
    const int np = o.np;
    BindingPlan plan;
    plan.ranks.resize(static_cast<size_t>(np));
    if (o.bind == BindPolicy::kNone) return plan;

    hwloc_topology_t raw;
    if (hwloc_topology_init(&raw) != 0) throw LauncherError("hwloc_topology_init failed");
    Topology topo(raw, hwloc_topology_destroy);
    if (hwloc_topology_load(raw) != 0) throw LauncherError("hwloc_topology_load failed");

    // By default hwloc keeps only what this process may use (the allowed cpuset).
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(raw);
    const auto cores = allowed_objs(raw, HWLOC_OBJ_CORE);
    plan.ncores = static_cast<int>(cores.size());
    if (cores.empty()) {
        plan.warnings.push_back("no cores found in the allowed cpuset; not binding");
        return plan;
    }
    const bool hw = o.map == MapPolicy::kHwthread;
    const auto units = map_order(raw, hw ? allowed_objs(raw, HWLOC_OBJ_PU) : cores, o.map);
    const int nunits = static_cast<int>(units.size());
    // Default: bind to the mapped unit. Oversubscribed, consecutive ranks share
    // a unit, in blocks as even as they go (4 ranks on 2 cores: 0-1 on the
    // first, 2-3 on the second). Left unbound, the kernel pairs ranks as it
    // likes and moves them, and which ranks share a core sets how many context
    // switches a collective costs: the 4-rank barrier takes about 11 us with
    // 0-1 / 2-3 on a core and 21 us with 0-2 / 1-3 or 0-3 / 1-2. Ranks spawned
    // later, and PE > 1, stay unbound when oversubscribed.
    BindPolicy bind = o.bind;
    const bool oversubscribed = np * o.pe > nunits;
    bool blocks = false;
    if (bind == BindPolicy::kDefault) {
        if (oversubscribed && (o.pe > 1 || !first_launch)) return plan;
        bind = hw ? BindPolicy::kHwthread : BindPolicy::kCore;
        blocks = oversubscribed;
    }
    if (oversubscribed && !blocks)
        plan.warnings.push_back(std::to_string(np) + " ranks" +
                                (o.pe > 1 ? " of " + std::to_string(o.pe) + " " + (hw ? "hwthreads" : "cores") : "") +
                                " on " + std::to_string(nunits) + (hw ? " hwthreads" : " cores") +
                                ": oversubscribed, binding round-robin");

    Bitmap set = new_bitmap();
    for (int r = 0; r < np; ++r) {
        RankBinding &b = plan.ranks[static_cast<size_t>(r)];
        hwloc_bitmap_zero(set.get());
        std::string first, last;
        // PE=n: the rank's n consecutive units (in map order) together.
        for (int k = 0; k < o.pe; ++k) {
            const long long at = blocks ? static_cast<long long>(r) * nunits / np : (r * o.pe + k) % nunits;
            hwloc_obj_t u = units[static_cast<size_t>(at)];
            hwloc_obj_t obj = bind_obj(raw, u, o.pe > 1 ? (hw ? BindPolicy::kHwthread : BindPolicy::kCore) : bind);
            if (obj == nullptr) obj = u;  // no socket/NUMA object above it: the unit itself
            hwloc_bitmap_or(set.get(), set.get(), obj->cpuset);
            (k == 0 ? first : last) = std::to_string(obj->logical_index);
        }
        hwloc_bitmap_and(set.get(), set.get(), allowed);
        b.bound = true;
        b.where = o.pe > 1 ? std::string(hw ? "hwthreads " : "cores ") + first + "-" + last
                           : std::string(unit_name(bind)) + " " + first;
        CPU_ZERO(&b.cpus);
        hwloc_cpuset_to_glibc_sched_affinity(raw, set.get(), &b.cpus, sizeof b.cpus);
        char *text = nullptr;
        if (hwloc_bitmap_taskset_asprintf(&text, set.get()) >= 0 && text) {
            b.cpuset_text = text;
            std::free(text);
        }
    }
    return plan;
}

std::string own_cpu_list() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return "";
    std::string out;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set)) continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
        if (!out.empty()) out += ',';
        out += std::to_string(c);
        if (last > c) out += "-" + std::to_string(last);
        c = last;
    }
    return out;
}

}  // namespace ftmpi::launcher
