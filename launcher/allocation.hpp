// A Slurm allocation as ftmpirun sees it, and where ranks go on its nodes.
// Pure functions of the allocation's variables (SLURM_JOB_NODELIST,
// SLURM_TASKS_PER_NODE, SLURM_JOB_CPUS_PER_NODE, SLURMD_NODENAME), so the
// placement rules are testable without Slurm (tests/unit/test_placement.cpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ftmpi::launcher {

// Slurm's host list syntax: "ftn[1-3,5],login0[01-02]" (ranges keep their
// zero padding; several bracket groups multiply). Throws UsageError on a
// malformed list.
std::vector<std::string> expand_hostlist(const std::string &list);

// Slurm's per-node counts: "2(x3),1" is 2, 2, 2, 1. Throws UsageError.
std::vector<int> expand_counts(const std::string &counts);

struct AllocNode {
    std::string name;
    int slots;
};

// The allocation in the environment `get` reads (getenv's signature), in
// Slurm's node order: slots from SLURM_TASKS_PER_NODE, else
// SLURM_JOB_CPUS_PER_NODE, else 1 per node. Empty outside an allocation.
std::vector<AllocNode> slurm_allocation(const std::function<const char *(const char *)> &get);

// The node this process runs on within `nodes` (SLURMD_NODENAME, set on the
// allocation's nodes: in a batch script and in job steps), or none.
std::optional<std::size_t> this_node(const std::vector<AllocNode> &nodes,
                                     const std::function<const char *(const char *)> &get);

// Where ranks go, Open MPI's rules: kSlot fills the nodes in order up to
// their slots, and beyond the allocation's slots spreads ranks over the
// nodes in proportion to their slots (in blocks, in node order); kNode
// deals ranks round-robin over the nodes; ppn (when > 0) puts that many on
// each node in turn. Returns each rank's node index; throws UsageError when
// -ppn leaves ranks without a node.
enum class NodeMap { kSlot, kNode };
std::vector<int> plan_nodes(int np, const std::vector<AllocNode> &nodes, NodeMap map, int ppn);

}  // namespace ftmpi::launcher
