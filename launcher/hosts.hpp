// Host lists (-H, --host, --hostfile, --machinefile): inside a Slurm
// allocation they name its nodes (options.cpp); outside one, every host
// must name this node.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ftmpi::launcher {

struct HostEntry {
    std::string name;
    std::optional<int> slots;  // as given ("host:4", "host slots=4"); none: 1 slot
    std::string origin;        // "-H" or "FILE:LINE", for messages
};

// "host[:slots][,host[:slots]...]" (Open MPI's -H, MPICH's -hosts).
// Throws UsageError on an empty name or a bad slot count.
std::vector<HostEntry> parse_host_list(const std::string &text, const std::string &opt);

// A hostfile in Open MPI's ("host slots=N") or MPICH's ("host:N") format; '#'
// starts a comment, blank lines are skipped. Throws UsageError when the file
// cannot be read or a line is malformed (naming FILE:LINE).
std::vector<HostEntry> read_hostfile(const std::string &path);

// True when `name` names this node: localhost, a 127.x.y.z or ::1 address,
// the host name, its short form, or its fully qualified name.
bool is_this_node(const std::string &name);

// Throws UsageError, pointing to salloc and sbatch, when an entry names
// another node. Returns the total number of slots (1 per entry without one).
int check_hosts_local(const std::vector<HostEntry> &hosts);

}  // namespace ftmpi::launcher
