// MPI_Comm_split_type by hardware (MPI 4.0 §7.4.2: MPI_COMM_TYPE_HW_GUIDED and
// MPI_COMM_TYPE_HW_UNGUIDED) and MPI_Get_hw_resource_info (MPI 4.1), from
// hwloc's view of where each process is bound (runtime/topology.hpp); and
// by process set (MPI 4.1: MPI_COMM_TYPE_RESOURCE_GUIDED).
//
// Levels: 0 is the node ("mpi_shared_memory", as MPI_COMM_TYPE_SHARED
// groups), then hwloc's Package ... PU. A process belongs to an object of a
// level when every CPU it is bound to is in that object; an unbound process
// belongs to none below the node.
#include <strings.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/info.hpp"
#include "mpi/session/session.hpp"
#include "runtime/topology.hpp"

namespace ftmpi::mpi {
namespace {

constexpr std::size_t k_levels = runtime::k_hw_levels.size() + 1;
using Place = std::array<int, k_levels>;
constexpr const char *k_type_key = "mpi_hw_resource_type";
constexpr const char *k_node_level = "mpi_shared_memory";

const char *level_name(std::size_t l) { return l == 0 ? k_node_level : runtime::k_hw_levels[l - 1]; }

// The level a resource type names (any case), or -1.
int level_of(const std::string &name) {
    for (std::size_t l = 0; l < k_levels; ++l)
        if (strcasecmp(name.c_str(), level_name(l)) == 0) return static_cast<int>(l);
    return -1;
}

// This process's place: its node (the lowest id among the processes of its
// node), then the index at each hwloc level.
Place my_place() {
    Place p;
    const auto &job = g.pm->job();
    p[0] = job.id_base + *std::min_element(job.local_peers.begin(), job.local_peers.end());
    const runtime::HwPlace hw = runtime::hw_place();
    std::copy(hw.index.begin(), hw.index.end(), p.begin() + 1);
    return p;
}

// The requested level of MPI_COMM_TYPE_HW_GUIDED (info key
// mpi_hw_resource_type), or -1.
int guided_level(MPI_Info info) {
    if (info == MPI_INFO_NULL) return -1;
    for (const auto &[k, v] : info->entries)
        if (k == k_type_key) return level_of(v);
    return -1;
}

// Members whose places agree with `mine` on levels 0..l.
bool same_prefix(const Place &a, const Place &b, std::size_t l) {
    return std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(l) + 1, b.begin());
}

// The split's color (the lowest rank of this process's part) and level, or
// MPI_UNDEFINED. Guided: the node and the requested level's object.
// Unguided: the largest level whose part is a strict subset of the
// communicator; the members of one part share every level down to it, so
// they all pick it.
std::pair<int, int> choose(const std::vector<Place> &all, int self, int split_type, int wanted) {
    const Place &mine = all[static_cast<std::size_t>(self)];
    const int n = static_cast<int>(all.size());
    auto lowest = [&](auto same) {
        for (int r = 0; r < n; ++r)
            if (same(all[static_cast<std::size_t>(r)])) return r;
        return self;
    };
    if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
        if (wanted < 0 || mine[static_cast<std::size_t>(wanted)] < 0) return {MPI_UNDEFINED, -1};
        const auto l = static_cast<std::size_t>(wanted);
        return {lowest([&](const Place &p) { return p[0] == mine[0] && p[l] == mine[l]; }), wanted};
    }
    for (std::size_t l = 0; l < k_levels; ++l) {
        if (mine[l] < 0) continue;
        const auto members =
            std::count_if(all.begin(), all.end(), [&](const Place &p) { return same_prefix(p, mine, l); });
        if (members < n) return {lowest([&](const Place &p) { return same_prefix(p, mine, l); }), static_cast<int>(l)};
    }
    return {MPI_UNDEFINED, -1};
}

}  // namespace

int hw_split(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    const char *call = "MPI_Comm_split_type";
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    if (comm->inter)
        return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, call,
                     "split_type %d on an inter-communicator is not implemented by ftmpi yet", split_type);
    const Place mine = my_place();
    std::vector<Place> all(static_cast<std::size_t>(comm->size));
    const int err = team_allgather(comm, mine.data(), static_cast<int>(sizeof mine), all.data());
    // Still a member of the split after an error, so that the others' split completes (and fails).
    const auto [color, level] =
        err == MPI_SUCCESS ? choose(all, comm->rank, split_type, guided_level(info)) : std::pair{MPI_UNDEFINED, -1};
    FTMPI_TRY(MPI_Comm_split(comm, color, key, newcomm));
    if (err != MPI_SUCCESS) return raise(comm, err, call, "the exchange of the members' places failed");
    if (*newcomm != MPI_COMM_NULL && level >= 0)
        (*newcomm)->info = {{k_type_key, level_name(static_cast<std::size_t>(level))}};
    return MPI_SUCCESS;
}

// MPI_COMM_TYPE_RESOURCE_GUIDED: the members of the process set named by
// info key mpi_pset_name (as each member sees it: ftmpi://node is its own
// node's processes) form one part; MPI_COMM_NULL outside it or for a name
// it does not know.
int pset_split(MPI_Comm comm, int key, MPI_Info info, MPI_Comm *newcomm) {
    const char *call = "MPI_Comm_split_type";
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    if (comm->inter)
        return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, call,
                     "MPI_COMM_TYPE_RESOURCE_GUIDED on an inter-communicator is not implemented by ftmpi yet");
    std::string name;
    if (info != MPI_INFO_NULL)
        for (const auto &[k, v] : info->entries)
            if (k == "mpi_pset_name") name = v;
    std::vector<int> procs;
    int color = MPI_UNDEFINED;
    const int me = g.pm->job().id();
    if (!name.empty() && pset_procs(name.c_str(), procs) && std::find(procs.begin(), procs.end(), me) != procs.end())
        color = *std::min_element(procs.begin(), procs.end());
    FTMPI_TRY(MPI_Comm_split(comm, color, key, newcomm));
    if (*newcomm != MPI_COMM_NULL) (*newcomm)->info = {{"mpi_pset_name", name}};
    return MPI_SUCCESS;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

// What this process is bound to, as implementation-defined keys
// (README): ftmpi_hw_<level> = the object's logical index for each
// level whose one object holds all its CPUs, ftmpi_hw_cpus = those CPUs.
int MPI_Get_hw_resource_info(MPI_Info *hw_info) {
    const char *call = "MPI_Get_hw_resource_info";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, hw_info, "hw_info"));
    const ftmpi::runtime::HwPlace hw = ftmpi::runtime::hw_place();
    Hints hints;
    for (std::size_t l = 0; l < hw.index.size(); ++l)
        if (hw.index[l] >= 0)
            hints.emplace_back(std::string("ftmpi_hw_") + ftmpi::runtime::k_hw_levels[l], std::to_string(hw.index[l]));
    hints.emplace_back("ftmpi_hw_cpus", hw.cpus);
    *hw_info = info_of(hints);
    return MPI_SUCCESS;
}
