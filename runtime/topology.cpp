#include "runtime/topology.hpp"

#include <hwloc.h>

namespace ftmpi::runtime {

int node_pus() {
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return 1;
    int n = 1;
    if (hwloc_topology_load(topo) == 0) {
        n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        if (n < 1) n = 1;
    }
    hwloc_topology_destroy(topo);
    return n;
}

}  // namespace ftmpi::runtime
