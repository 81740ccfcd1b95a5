// What ftmpirun's head tells its daemons about the job (ftmpirun across
// nodes), as frames' payloads (wire.hpp): the job-wide settings, sent once
// in `launch`, and each namespace of processes (the job's in `launch`, a
// spawned one in `ns_add`): where each process runs and what it executes.
// Encoded field by field; decode fails (false) on a payload that does not
// hold exactly one well-formed spec with values in range, so a daemon never
// acts on a truncated or inconsistent one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "wire.hpp"

namespace ftmpi::launcher {

struct JobSettings {
    std::string nspace;              // the first namespace ("ftmpi.<head's pid>")
    std::string secret;              // the universe's (runtime/auth.hpp): not sent, each end derives it
    std::vector<std::string> nodes;  // node names; vertex v is nodes[v - 1]
    std::vector<std::string> env;    // NAME=value for every process (ftmpirun's additions)
    BindPolicy bind = BindPolicy::kDefault;
    MapPolicy map = MapPolicy::kCore;
    int pe = 1;
    bool report_bindings = false;
    bool ft = true;
    int universe_size = 1;
};

struct NamespaceSpec {
    struct App {
        std::string path;  // resolved, absolute
        std::vector<std::string> argv, env;
        std::string cwd;  // empty: the job's
    };
    int base = 0;           // the first process id
    std::vector<int> node;  // per process: its vertex (1..nodes)
    std::vector<int> app;   // per process: its program (index into apps; its MPI_APPNUM)
    std::vector<App> apps;
    int size() const { return static_cast<int>(node.size()); }
};

// The universe's secret of a job whose head and daemons share `launch_key`
// (so that it never crosses the network).
std::string universe_secret(const std::string &launch_key);

void encode(wire::Writer &w, const JobSettings &s);
void encode(wire::Writer &w, const NamespaceSpec &ns);
// Each reads one spec from `r`; false when malformed or out of range
// (`nodes`: the vertices a namespace may name are 1..nodes).
bool decode(wire::Reader &r, JobSettings &s);
bool decode(wire::Reader &r, NamespaceSpec &ns, int nodes);

}  // namespace ftmpi::launcher
