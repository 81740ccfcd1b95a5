// Node topology (hwloc).
#pragma once

namespace ftmpi::runtime {

// Hardware threads this process may use on this node (cgroup-allowed PUs),
// at least 1.
int node_pus();

}  // namespace ftmpi::runtime
