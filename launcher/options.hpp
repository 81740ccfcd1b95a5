// Command-line parsing for ftmpirun (mpirun spellings).
#pragma once

#include <optional>

#include "allocation.hpp"
#include <string>
#include <utility>
#include <vector>

namespace ftmpi::launcher {

// --bind-to: the unit each rank is bound to (kDefault: core, ranks in even blocks per core when they outnumber the cores).
enum class BindPolicy { kDefault, kCore, kHwthread, kSocket, kNuma, kNone };
// --map-by: the order in which ranks take the node's cores or hardware
// threads (node and slot: one node, so the default core order).
enum class MapPolicy { kCore, kHwthread, kSocket, kNuma };

struct Options {
    enum class Action { kRun, kHelp, kVersion };
    Action action = Action::kRun;
    int np = 1;
    // -x VAR (value taken from the launcher's environment) or -x VAR=value.
    std::vector<std::pair<std::string, std::optional<std::string>>> exports;
    bool tag_output = false;
    std::optional<double> timeout_s;  // --timeout; always > 0 when set
    std::string timeout_text;         // as the user spelled it, for messages
    BindPolicy bind = BindPolicy::kDefault;
    MapPolicy map = MapPolicy::kCore;
    int pe = 1;  // --map-by ...:PE=n, cores per rank
    bool report_bindings = false;
    bool ft = true;                     // false with --no-ft, --with-ft no|false|0, --mca mpi_ft_enable false
    std::string wdir;                   // --wdir: the ranks' working directory; empty: ftmpirun's
    std::string initial_errhandler;     // -initial-errhandler, lower case; empty: not given
    std::string timeline;               // --timeline: the trace file (absolute, created); empty: none
    std::vector<std::string> warnings;  // printed as "ftmpirun: warning..." before the job
    std::string program_path;           // resolved, executable
    std::vector<std::string> argv;      // argv[0] is the program as given
    // ftmpirun across nodes (inside a Slurm allocation, ranks on nodes other
    // than this one): the job's nodes, and each rank's (an index into
    // nodes). Empty: the job runs on this node.
    NodeMap node_map = NodeMap::kSlot;  // --map-by node deals ranks round-robin over the nodes
    std::vector<AllocNode> nodes;
    std::vector<int> rank_node;
};

// Parses argv. Throws UsageError (message without the "ftmpirun: " prefix)
// on any bad usage; resolves the program through PATH and checks that it is
// an executable regular file. Reads hostfiles and the host name, has no
// other side effects. The number of ranks is -n, else -ppn's N (on each
// node), else the hosts' slot total, else the Slurm allocation's slots,
// else 1.
Options parse_options(int argc, char **argv);

// The program to execute for `name`, as Open MPI's mpirun finds it: a name
// containing '/' is used as is (relative to `wdir` when given); a bare name
// is searched in PATH, "." or an empty entry standing for the working
// directory (`wdir`, else ftmpirun's), then in the working directory itself.
// Throws UsageError when nothing executable is found.
std::string resolve_program(const std::string &name, const std::string &wdir = "");

// A count in 1..65536 (ranks, slots, cores). Throws UsageError
// "<what> expects a positive integer ...".
int parse_count(const std::string &what, const std::string &text);

// s in ASCII lower case (host names, option values).
std::string lower(std::string s);

const char *usage_text();

}  // namespace ftmpi::launcher
