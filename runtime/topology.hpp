// Node topology (hwloc).
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace ftmpi::runtime {

// Hardware threads this process may use on this node (cgroup-allowed PUs),
// at least 1.
int node_pus();

// Whether `local_procs` processes of a job on this node are more than its
// hardware threads: they then take turns on the cores.
inline bool node_crowded(std::size_t local_procs) { return local_procs > static_cast<std::size_t>(node_pus()); }

// The hardware levels below a node that MPI_COMM_TYPE_HW_GUIDED and
// HW_UNGUIDED know (hwloc's names), largest first.
inline constexpr std::array<const char *, 7> k_hw_levels = {"Package", "NUMANode", "L3Cache", "L2Cache",
                                                            "L1Cache", "Core",     "PU"};

// Where the calling thread runs (a rank's binding: ftmpi's own threads may
// run elsewhere, FTMPI_SERVICE_CPUS): per level, the logical index of the
// object of that type that holds every CPU the thread is bound to, or -1
// (bound across several, or no such object on this node); and those CPUs
// (a list such as "0-3,8").
struct HwPlace {
    std::array<int, k_hw_levels.size()> index{};
    std::string cpus;
};
HwPlace hw_place();

}  // namespace ftmpi::runtime
