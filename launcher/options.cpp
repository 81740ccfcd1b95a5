#include "options.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>
#include <vector>

#include "allocation.hpp"
#include "error.hpp"
#include "hosts.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::launcher {
namespace {

bool is_executable_file(const std::string &path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// `path` made absolute against ftmpirun's directory: a rank changes to its
// working directory before it executes the program.
std::string absolute(const std::string &path) {
    if (path.front() == '/') return path;
    char here[4096];
    if (::getcwd(here, sizeof here) == nullptr) return path;
    return std::string(here) + "/" + (path.rfind("./", 0) == 0 ? path.substr(2) : path);
}

double parse_timeout(const std::string &text) {
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v <= 0)
        throw UsageError("--timeout expects a positive number of seconds, got '" + text + "'");
    return v;
}

bool valid_env_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

BindPolicy parse_bind(const std::string &v) {
    const std::string l = lower(v);
    if (l == "core") return BindPolicy::kCore;
    if (l == "hwthread") return BindPolicy::kHwthread;
    if (l == "socket" || l == "package") return BindPolicy::kSocket;
    if (l == "numa") return BindPolicy::kNuma;
    if (l == "none") return BindPolicy::kNone;
    throw UsageError("--bind-to expects core, hwthread, socket, numa or none, got '" + v + "'");
}

// "unit[:PE=n[,OVERSUBSCRIBE]]".
void parse_map(const std::string &v, Options &o) {
    const std::string l = lower(v);
    const std::string unit = l.substr(0, l.find(':'));
    if (unit == "node" || unit == "slot") o.node_map = unit == "node" ? NodeMap::kNode : NodeMap::kSlot;
    if (unit == "core" || unit == "slot" || unit == "node") o.map = MapPolicy::kCore;
    else if (unit == "hwthread") o.map = MapPolicy::kHwthread;
    else if (unit == "socket" || unit == "package") o.map = MapPolicy::kSocket;
    else if (unit == "numa") o.map = MapPolicy::kNuma;
    else
        throw UsageError(
            "--map-by expects core, socket, numa, hwthread, node or slot "
            "(optionally :PE=n), got '" +
            v + "'");
    if (unit.size() == l.size()) return;
    std::string mods = l.substr(unit.size() + 1);
    std::size_t pos = 0;
    while (pos <= mods.size()) {
        const std::size_t comma = mods.find(',', pos);
        const std::string m = mods.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (m.rfind("pe=", 0) == 0) o.pe = parse_count("--map-by ...:PE", m.substr(3));
        else if (m != "oversubscribe")  // more ranks than cores is always allowed
            throw UsageError("--map-by: unknown modifier '" + m + "' in '" + v + "' (accepted: PE=n, OVERSUBSCRIBE)");
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
}

// Open MPI 5 (prte's schizo): fault tolerance for every value but no,
// false and 0 (ulfm and mpi alike).
bool parse_with_ft(const std::string &v) {
    const std::string l = lower(v);
    if (l.empty())
        throw UsageError("--with-ft expects a value (no, false or 0: fault tolerance off; anything else: on)");
    return !(l == "no" || l == "false" || l == "0");
}

// An MCA boolean as Open MPI 5 parses it (prte's mca_base_var_enum bool):
// leading white space skipped, then a decimal integer (non-zero: true) or,
// case-sensitive, true/t/enabled/yes/y or false/f/disabled/no/n.
bool parse_mca_bool(const std::string &key, const std::string &value) {
    const std::string v = value.substr(std::min(value.size(), value.find_first_not_of(" \t\n\v\f\r")));
    char *end = nullptr;
    errno = 0;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (*end == '\0' && errno == 0) return n != 0;
    for (const char *t : {"true", "t", "enabled", "yes", "y"})
        if (v == t) return true;
    for (const char *f : {"false", "f", "disabled", "no", "n"})
        if (v == f) return false;
    throw UsageError("--mca " + key +
                     " expects a boolean (1, true, t, enabled, yes, y; 0, false, f, disabled, no, n), got '" + value +
                     "'");
}

std::string parse_errhandler(const std::string &opt, const std::string &v) {
    const std::string l = lower(v);
    if (l == "mpi_errors_are_fatal" || l == "mpi_errors_return" || l == "mpi_errors_abort") return l;
    throw UsageError(opt + " expects mpi_errors_are_fatal, mpi_errors_return or mpi_errors_abort, got '" + v + "'");
}

void add_export(Options &o, const std::string &opt, const std::string &name, std::optional<std::string> value) {
    if (!valid_env_name(name)) throw UsageError(opt + ": '" + name + "' is not a variable name");
    o.exports.emplace_back(name, std::move(value));
}

// One option as parse_options reads it: its name (without an inline
// "=value"), the inline value, and the command line, whose next argument is
// the value when none was given inline.
struct OptionArg {
    int argc;
    char **argv;
    int &i;  // the option's index in argv; taking the next argument as a value advances it
    std::string opt;
    std::optional<std::string> inl;

    // The option's value: the text after '=' when given inline, else the next argument.
    std::string value() { return value_of(inl); }
    // A second value (-genv VAR VALUE, --mca KEY VALUE): always the next argument.
    std::string next_value() { return value_of(std::nullopt); }
    void no_value() const {
        if (inl) throw UsageError("option " + opt + " does not take a value");
    }

private:
    std::string value_of(const std::optional<std::string> &v) {
        if (v) return *v;
        if (i + 1 >= argc) throw UsageError("option " + opt + " requires a value");
        return std::string(argv[++i]);
    }
};

// What decides the number of ranks, settled once every option is read.
struct RankCount {
    std::optional<int> np, ppn;
    std::vector<HostEntry> hosts;

    // Outside an allocation: -n, else -ppn's N, else the hosts' slot total
    // (every host this node), else 1.
    int ranks() const {
        const int slots = hosts.empty() ? -1 : check_hosts_local(hosts);  // -1: no host list
        if (np && ppn && *np > *ppn)
            throw UsageError("-n " + std::to_string(*np) + " asks for more ranks than " + std::to_string(*ppn) +
                             " per node, and outside a Slurm allocation ftmpirun starts jobs on this node only");
        return np ? *np : ppn ? *ppn : slots >= 0 ? slots : 1;
    }
};

// The allocation's nodes that the host list names (its slots, or the
// allocation's for a host given without), in the list's order; a host of
// no node of the allocation is refused.
std::vector<AllocNode> hosts_in(const std::vector<AllocNode> &alloc, const std::vector<HostEntry> &hosts,
                                std::optional<std::size_t> me) {
    std::vector<AllocNode> out;
    for (const HostEntry &h : hosts) {
        std::optional<std::size_t> at;
        for (std::size_t i = 0; i < alloc.size() && !at; ++i)
            if (alloc[i].name == h.name || alloc[i].name == h.name.substr(0, h.name.find('.'))) at = i;
        if (!at && me && is_this_node(h.name)) at = me;
        if (!at) throw UsageError(h.origin + ": host '" + h.name + "' is not a node of this Slurm allocation");
        auto same = std::find_if(out.begin(), out.end(), [&](const AllocNode &n) { return n.name == alloc[*at].name; });
        const int slots = h.slots.value_or(alloc[*at].slots);
        if (same != out.end()) same->slots += h.slots.value_or(0);
        else out.push_back({alloc[*at].name, slots});
    }
    return out;
}

// Inside a Slurm allocation (sbatch, salloc), as Open MPI's mpirun: the
// allocation's nodes (or those the hosts name), ranks -n, else -ppn's N on
// each, else one per slot; placed by --map-by slot (the default) or node.
// A job whose ranks all land on this node runs as a one-node job; any
// other runs across the nodes (head.hpp). False outside an allocation.
bool settle_in_allocation(const RankCount &count, Options &o) {
    const auto get = [](const char *name) -> const char * { return std::getenv(name); };
    const std::vector<AllocNode> alloc = slurm_allocation(get);
    if (alloc.empty()) return false;
    const std::optional<std::size_t> me = this_node(alloc, get);
    std::vector<AllocNode> nodes = count.hosts.empty() ? alloc : hosts_in(alloc, count.hosts, me);
    int slots = 0;
    for (const AllocNode &n : nodes) slots += n.slots;
    const int k = static_cast<int>(nodes.size());
    o.np = count.np ? *count.np : count.ppn ? *count.ppn * k : slots;
    if (o.np > ftmpi::runtime::k_max_processes)
        throw UsageError("-n " + std::to_string(o.np) + ": at most " + std::to_string(ftmpi::runtime::k_max_processes) +
                         " ranks");
    std::vector<int> where = plan_nodes(o.np, nodes, o.node_map, count.ppn.value_or(0));
    const bool here_only = me && std::all_of(where.begin(), where.end(), [&](int n) {
                               return nodes[static_cast<std::size_t>(n)].name == alloc[*me].name;
                           });
    if (here_only) return true;
    o.nodes = std::move(nodes);
    o.rank_node = std::move(where);
    return true;
}

// -x, -genv/-env, -genvall: the ranks' environment. False when `a` is none of them.
bool parse_env_option(OptionArg &a, Options &o) {
    const std::string &opt = a.opt;
    if (opt == "-x") {
        std::string v = a.value();
        auto eq = v.find('=');
        std::string name = v.substr(0, eq);
        if (!valid_env_name(name)) throw UsageError("-x expects VAR or VAR=value, got '" + v + "'");
        if (eq == std::string::npos) o.exports.emplace_back(name, std::nullopt);
        else o.exports.emplace_back(name, v.substr(eq + 1));
    } else if (opt == "--genv" || opt == "--env") {
        const std::string name = a.value();
        add_export(o, opt.substr(1), name, a.next_value());
    } else if (opt == "--genvall") {
        a.no_value();  // the ranks get the whole environment anyway
    } else {
        return false;
    }
    return true;
}

// How many ranks and where: -n, -H/--host, --hostfile, -ppn, --bind-to,
// --map-by, --report-bindings. False when `a` is none of them.
bool parse_placement_option(OptionArg &a, Options &o, RankCount &count) {
    const std::string &opt = a.opt;
    if (opt == "-n" || opt == "-np" || opt == "--np" || opt == "--n" || opt == "-c") {
        count.np = parse_count(opt, a.value());
    } else if (opt == "--bind-to") {
        o.bind = parse_bind(a.value());
    } else if (opt == "--map-by") {
        const std::string v = a.value();
        if (lower(v).rfind("ppr:", 0) == 0) {  // Open MPI's ppr:N:node[:modifiers]: N ranks per node
            const std::string rest = v.substr(4);
            const std::size_t colon = rest.find(':');
            const std::string unit =
                colon == std::string::npos ? "" : lower(rest.substr(colon + 1, rest.find(':', colon + 1) - colon - 1));
            if (unit != "node")
                throw UsageError("--map-by ppr:N:RESOURCE: ftmpirun takes ppr:N:node (N ranks per node), got '" + v +
                                 "'");
            count.ppn = parse_count("--map-by ppr:N", rest.substr(0, colon));
            parse_map(rest.substr(colon + 1), o);
        } else {
            parse_map(v, o);
        }
    } else if (opt == "--report-bindings") {
        a.no_value();
        o.report_bindings = true;
    } else if (opt == "-H" || opt == "--host" || opt == "--hosts") {
        auto h = parse_host_list(a.value(), opt);
        count.hosts.insert(count.hosts.end(), h.begin(), h.end());
    } else if (opt == "--hostfile" || opt == "--machinefile" || opt == "-f") {
        auto h = read_hostfile(a.value());
        count.hosts.insert(count.hosts.end(), h.begin(), h.end());
    } else if (opt == "--ppn" || opt == "--npernode" || opt == "-N") {
        count.ppn = parse_count(opt, a.value());
    } else {
        return false;
    }
    return true;
}

// Fault tolerance and error handling: --no-ft, --with-ft, --enable-recovery,
// -initial-errhandler, and --mca (only mpi_ft_enable counts; any other key is
// ignored, with one warning per key). False when `a` is none of them.
bool parse_ft_option(OptionArg &a, Options &o, std::set<std::string> &mca_warned) {
    const std::string &opt = a.opt;
    if (opt == "--no-ft") {
        a.no_value();
        o.ft = false;
    } else if (opt == "--with-ft") {
        o.ft = parse_with_ft(a.value());
    } else if (opt == "--enable-recovery") {
        a.no_value();
        o.ft = true;  // Open MPI 5: the job outlives a failed process
    } else if (opt == "--initial-errhandler") {
        o.initial_errhandler = parse_errhandler(opt, a.value());
    } else if (opt == "--mca") {
        const std::string key = a.value();
        const std::string value = a.next_value();
        if (key == "mpi_ft_enable") {
            o.ft = parse_mca_bool(key, value);
        } else if (mca_warned.insert(key).second) {
            o.warnings.push_back("ignoring --mca " + key + " " + value + " (an Open MPI parameter)");
        }
    } else {
        return false;
    }
    return true;
}

// --timeline FILE: creates (or empties) FILE with the trace's header, into
// which the ranks append (runtime/tool_events.hpp); its absolute path.
std::string start_timeline(const std::string &file) {
    if (file.empty()) throw UsageError("--timeline expects a file name");
    std::string path = file;
    if (path.front() != '/') {
        char cwd[4096];
        if (::getcwd(cwd, sizeof cwd) == nullptr) throw UsageError("--timeline: cannot find the current directory");
        path = std::string(cwd) + "/" + path;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string head = runtime::timeline_header();
    if (fd < 0 || ::write(fd, head.data(), head.size()) != static_cast<ssize_t>(head.size())) {
        const std::string why = std::strerror(errno);
        if (fd >= 0) ::close(fd);
        throw UsageError("--timeline: cannot write " + path + ": " + why);
    }
    ::close(fd);
    return path;
}

}  // namespace

std::string lower(std::string s) {
    for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

int parse_count(const std::string &what, const std::string &text) {
    char *end = nullptr;
    errno = 0;
    long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v <= 0 || v > 65536)
        throw UsageError(what + " expects a positive integer (at most 65536), got '" + text + "'");
    return static_cast<int>(v);
}

const char *usage_text() {
    return "usage: ftmpirun [options] program [args...]\n"
           "  -n, -np, --np, -c N number of ranks (default: -ppn N, else the hosts' slots, else 1)\n"
           "  -x VAR[=value]      export VAR (from this environment or with value) to the ranks\n"
           "  -genv, -env VAR VALUE  export VAR=VALUE to the ranks (MPICH)\n"
           "  --tag-output        prefix every output line with [rank]\n"
           "  --timeout SECONDS   kill the job after SECONDS (exit code 124)\n"
           "  --bind-to core|hwthread|socket|numa|none\n"
           "                      bind each rank (default: core; with more ranks than\n"
           "                      cores, consecutive ranks share one)\n"
           "  --map-by core|socket|numa|hwthread|node|slot[:PE=n], or ppr:N:node (-ppn N)\n"
           "                      order ranks take the cores in; PE=n: n cores per rank;\n"
           "                      across nodes, slot fills each node's slots in turn and\n"
           "                      node deals ranks round-robin over the nodes\n"
           "  --report-bindings   print each rank's binding on stderr\n"
           "  -H, --host HOST[:SLOTS][,...]  --hostfile, --machinefile, -f FILE\n"
           "                      the nodes to run on: nodes of the Slurm allocation\n"
           "                      (outside one, this node only)\n"
           "  -ppn, --npernode, -N N  ranks per node\n"
           "  --wdir, -wdir, --wd DIR  the ranks' working directory (also where a bare\n"
           "                      program name is looked for after PATH)\n"
           "  --no-ft, --with-ft no|false|0  classic mode: the first failed rank kills the job\n"
           "  --with-ft ulfm|mpi|..., --enable-recovery  fault tolerant (the default)\n"
           "  -initial-errhandler mpi_errors_are_fatal|mpi_errors_return|mpi_errors_abort\n"
           "                      MPI_COMM_WORLD's and MPI_COMM_SELF's handler at MPI_Init\n"
           "  --mca KEY VALUE     Open MPI parameters: ignored with a warning, except\n"
           "                      mpi_ft_enable BOOL (Open MPI's booleans: 0|1, false|true,\n"
           "                      f|t, disabled|enabled, no|yes, n|y)\n"
           "  --timeline FILE     write the ranks' fault-tolerance events (failures, revokes,\n"
           "                      agreements, shrinks, spawns) into FILE, a Chrome/Perfetto trace\n"
           "  --oversubscribe, --allow-run-as-root  accepted (always allowed)\n"
           "  --version, --help\n"
           "Long options may also be spelled with one dash (-bind-to core).\n"
           "Options stop at the first non-option argument or at '--'.\n"
           "Exit status: rank 0's code; after failures the lowest finalized rank's, else\n"
           "the last MPI_Abort's (MPI 4.0 section 17.5.2); 130 or 143 after a SIGINT or\n"
           "SIGTERM to ftmpirun, and 124 after --timeout, whatever the ranks did.\n";
}

std::string resolve_program(const std::string &name, const std::string &wdir) {
    const std::string here = wdir.empty() ? std::string(".") : wdir;
    if (name.find('/') != std::string::npos) {
        const std::string path = name.front() == '/' ? name : here + "/" + name;
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) throw UsageError("program '" + name + "' not found");
        if (!is_executable_file(path)) throw UsageError("program '" + name + "' is not an executable file");
        return absolute(path);
    }
    // Open MPI's order (opal_path_findv): PATH's directories, "." (or an
    // empty entry) standing for the working directory; then the working
    // directory itself when PATH did not name it.
    const char *path_env = std::getenv("PATH");
    const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
    std::vector<std::string> dirs;
    bool saw_here = false;
    for (std::size_t pos = 0;;) {
        const std::size_t colon = path.find(':', pos);
        std::string dir = path.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
        if (dir.empty() || dir == ".") {
            dir = here;
            saw_here = true;
        }
        dirs.push_back(dir);
        if (colon == std::string::npos) break;
        pos = colon + 1;
    }
    if (!saw_here) dirs.push_back(here);
    bool found_non_exec = false;
    for (const std::string &dir : dirs) {
        const std::string cand = dir + "/" + name;
        if (is_executable_file(cand)) return absolute(cand);
        if (::access(cand.c_str(), F_OK) == 0) found_non_exec = true;
    }
    const std::string where = "PATH or the working directory" + (wdir.empty() ? std::string() : " " + wdir);
    if (found_non_exec) throw UsageError("program '" + name + "' found in " + where + " but is not executable");
    throw UsageError("program '" + name + "' not found in " + where);
}

Options parse_options(int argc, char **argv) {
    Options o;
    RankCount count;
    std::set<std::string> mca_warned;
    int i = 1;
    for (; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg.size() < 2 || arg[0] != '-') break;  // first non-option: the program
        // Long options with one dash (Open MPI and MPICH accept both): -bind-to.
        if (arg[1] != '-' && arg.size() > 2 && arg != "-np") arg = "-" + arg;
        OptionArg a{argc, argv, i, arg, std::nullopt};
        if (arg.rfind("--", 0) == 0) {
            auto eq = arg.find('=');
            if (eq != std::string::npos) {
                a.opt = arg.substr(0, eq);
                a.inl = arg.substr(eq + 1);
            }
        }
        const std::string &opt = a.opt;
        if (parse_env_option(a, o) || parse_placement_option(a, o, count) || parse_ft_option(a, o, mca_warned))
            continue;
        if (opt == "--tag-output") {
            a.no_value();
            o.tag_output = true;
        } else if (opt == "--timeout") {
            o.timeout_text = a.value();
            o.timeout_s = parse_timeout(o.timeout_text);
        } else if (opt == "--timeline") {
            o.timeline = start_timeline(a.value());
        } else if (opt == "--wdir" || opt == "--wd") {
            o.wdir = a.value();
            struct stat st {};
            if (o.wdir.empty() || ::stat(o.wdir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
                throw UsageError(opt + ": '" + o.wdir + "' is not a directory");
        } else if (opt == "--oversubscribe" || opt == "--allow-run-as-root") {
            a.no_value();  // more ranks than cores is allowed; ftmpirun never refuses root
        } else if (opt == "--version" || opt == "-V") {
            o.action = Options::Action::kVersion;
            return o;
        } else if (opt == "--help" || opt == "-h") {
            o.action = Options::Action::kHelp;
            return o;
        } else {
            throw UsageError("unknown option '" + std::string(argv[i]) + "' (see ftmpirun --help)");
        }
    }
    if (!settle_in_allocation(count, o)) o.np = count.ranks();
    if (i >= argc) throw UsageError("no program given (see ftmpirun --help)");
    o.program_path = resolve_program(argv[i], o.wdir);
    for (; i < argc; ++i) o.argv.emplace_back(argv[i]);
    return o;
}

}  // namespace ftmpi::launcher
