#include "runtime/topology.hpp"

#include <hwloc.h>

#include <cstdlib>

namespace ftmpi::runtime {
namespace {

// A loaded topology of this node, destroyed with the object.
struct Topology {
    hwloc_topology_t topo = nullptr;
    bool loaded = false;
    Topology() {
        if (hwloc_topology_init(&topo) != 0) {
            topo = nullptr;
            return;
        }
        loaded = hwloc_topology_load(topo) == 0;
    }
    ~Topology() {
        if (topo != nullptr) hwloc_topology_destroy(topo);
    }
    Topology(const Topology &) = delete;
    Topology &operator=(const Topology &) = delete;
};

constexpr std::array<hwloc_obj_type_t, k_hw_levels.size()> k_hw_types = {
    HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
    HWLOC_OBJ_L1CACHE, HWLOC_OBJ_CORE,     HWLOC_OBJ_PU};

}  // namespace

int node_pus() {
    Topology t;
    if (!t.loaded) return 1;
    const int n = hwloc_get_nbobjs_by_type(t.topo, HWLOC_OBJ_PU);
    return n < 1 ? 1 : n;
}

HwPlace hw_place() {
    HwPlace place;
    place.index.fill(-1);
    Topology t;
    if (!t.loaded) return place;
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine == nullptr) return place;
    if (hwloc_get_cpubind(t.topo, mine, HWLOC_CPUBIND_THREAD) != 0 || hwloc_bitmap_iszero(mine))
        hwloc_bitmap_copy(mine, hwloc_topology_get_allowed_cpuset(t.topo));
    for (std::size_t l = 0; l < k_hw_types.size(); ++l) {
        const int n = hwloc_get_nbobjs_by_type(t.topo, k_hw_types[l]);
        for (int i = 0; i < n; ++i) {
            hwloc_obj_t obj = hwloc_get_obj_by_type(t.topo, k_hw_types[l], static_cast<unsigned>(i));
            if (obj != nullptr && obj->cpuset != nullptr && hwloc_bitmap_isincluded(mine, obj->cpuset)) {
                place.index[l] = static_cast<int>(obj->logical_index);
                break;
            }
        }
    }
    char *list = nullptr;
    if (hwloc_bitmap_list_asprintf(&list, mine) >= 0 && list != nullptr) place.cpus = list;
    std::free(list);
    hwloc_bitmap_free(mine);
    return place;
}

}  // namespace ftmpi::runtime
