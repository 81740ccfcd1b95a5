// ftmpirun's view of a Slurm allocation and its placement rules
// (launcher/allocation.hpp): host lists, per-node counts, the allocation from
// the environment, and where ranks go.
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "launcher/allocation.hpp"
#include "launcher/error.hpp"

using namespace ftmpi::launcher;
using V = std::vector<std::string>;

TEST_CASE("Slurm host lists expand as Slurm expands them") {
    CHECK(expand_hostlist("ftn1") == V{"ftn1"});
    CHECK(expand_hostlist("ftn[1-3]") == V{"ftn1", "ftn2", "ftn3"});
    CHECK(expand_hostlist("ftn[1-2,5],login") == V{"ftn1", "ftn2", "ftn5", "login"});
    CHECK(expand_hostlist("n[08-10]") == V{"n08", "n09", "n10"});  // zero padding kept
    CHECK(expand_hostlist("r[1-2]n[1-2]") == V{"r1n1", "r1n2", "r2n1", "r2n2"});
    CHECK(expand_hostlist("a[1],b") == V{"a1", "b"});
    for (const char *bad : {"", "ftn[1-", "ftn[3-1]", "ftn[a]", "a,,b", "x]", "a[1[2]]"})
        CHECK_THROWS_AS(expand_hostlist(bad), UsageError);
}

TEST_CASE("per-node counts expand") {
    CHECK(expand_counts("4") == std::vector<int>{4});
    CHECK(expand_counts("2(x3),1") == std::vector<int>{2, 2, 2, 1});
    CHECK(expand_counts("1(x2)") == std::vector<int>{1, 1});
    for (const char *bad : {"", "x", "2(x", "2(x3", "2(xa)", "-1"}) CHECK_THROWS_AS(expand_counts(bad), UsageError);
}

namespace {
struct Env {
    std::map<std::string, std::string> vars;
    const char *operator()(const char *name) const {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    }
};
}  // namespace

TEST_CASE("the allocation from Slurm's variables") {
    Env outside;
    CHECK(slurm_allocation(outside).empty());
    Env tasks{{{"SLURM_JOB_NODELIST", "ftn[1-2]"}, {"SLURM_TASKS_PER_NODE", "3,1"}, {"SLURMD_NODENAME", "ftn2"}}};
    auto nodes = slurm_allocation(tasks);
    REQUIRE(nodes.size() == 2);
    CHECK((nodes[0].name == "ftn1" && nodes[0].slots == 3 && nodes[1].slots == 1));
    CHECK(this_node(nodes, tasks) == std::optional<std::size_t>{1});
    // no task count (salloc -N 2): the CPUs, else one slot per node
    Env cpus{{{"SLURM_JOB_NODELIST", "ftn[1-2]"}, {"SLURM_JOB_CPUS_PER_NODE", "2(x2)"}}};
    nodes = slurm_allocation(cpus);
    CHECK((nodes[0].slots == 2 && nodes[1].slots == 2));
    CHECK_FALSE(this_node(nodes, cpus).has_value());
    Env bare{{{"SLURM_JOB_NODELIST", "a,b,c"}}};
    nodes = slurm_allocation(bare);
    CHECK((nodes.size() == 3 && nodes[2].slots == 1));
}

TEST_CASE("ranks go to nodes by Open MPI's rules") {
    const std::vector<AllocNode> two{{"a", 2}, {"b", 2}}, uneven{{"a", 3}, {"b", 1}}, ones{{"a", 1}, {"b", 1}};
    using I = std::vector<int>;
    CHECK(plan_nodes(3, two, NodeMap::kSlot, 0) == I{0, 0, 1});  // fill in order
    CHECK(plan_nodes(4, uneven, NodeMap::kSlot, 0) == I{0, 0, 0, 1});
    CHECK(plan_nodes(8, ones, NodeMap::kSlot, 0) == I{0, 0, 0, 0, 1, 1, 1, 1});  // beyond: in proportion
    CHECK(plan_nodes(8, uneven, NodeMap::kSlot, 0) == I{0, 0, 0, 0, 0, 0, 1, 1});
    CHECK(plan_nodes(5, ones, NodeMap::kSlot, 0) == I{0, 0, 0, 1, 1});  // the remainder to the earlier node
    CHECK(plan_nodes(5, two, NodeMap::kNode, 0) == I{0, 1, 0, 1, 0});   // round-robin
    CHECK(plan_nodes(4, two, NodeMap::kSlot, 2) == I{0, 0, 1, 1});      // -ppn 2
    CHECK(plan_nodes(3, two, NodeMap::kSlot, 2) == I{0, 0, 1});
    CHECK(plan_nodes(4, two, NodeMap::kNode, 2) == I{0, 1, 0, 1});
    CHECK_THROWS_AS(plan_nodes(5, two, NodeMap::kSlot, 2), UsageError);
    CHECK(plan_nodes(0, two, NodeMap::kSlot, 0).empty());
}
