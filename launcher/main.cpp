// ftmpirun: launches an ftmpi job with an embedded PMIx server, on this node
// or across the nodes of a Slurm allocation (head.hpp; `--ftmpi-daemon`:
// one node's daemon, daemon.hpp).
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <cstring>

#include "daemon.hpp"
#include "error.hpp"
#include "ftmpi_config.h"
#include "head.hpp"
#include "launcher.hpp"
#include "options.hpp"

int main(int argc, char **argv) {
    using namespace ftmpi::launcher;
    if (argc == 3 && std::strcmp(argv[1], "--ftmpi-daemon") == 0) {
        int rc = kExitInternal;
        try {
            rc = run_daemon(argv[2]);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "ftmpirun daemon: %s\n", e.what());
        }
        std::fflush(nullptr);
        std::_Exit(rc);
    }
    Options opts;
    try {
        opts = parse_options(argc, argv);
    } catch (const UsageError &e) {
        std::fprintf(stderr, "ftmpirun: %s\n", e.what());
        return kExitUsage;
    }
    if (opts.action == Options::Action::kHelp) {
        std::fputs(usage_text(), stdout);
        return 0;
    }
    if (opts.action == Options::Action::kVersion) {
        std::printf("ftmpirun (ftmpi) %s\n", FTMPI_VERSION);
        return 0;
    }
    for (const auto &w : opts.warnings) std::fprintf(stderr, "ftmpirun: %s\n", w.c_str());
    int rc = kExitInternal;
    try {
        rc = opts.nodes.empty() ? run_job(opts) : run_head(opts, opts.nodes, opts.rank_node);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "ftmpirun: %s\n", e.what());
    }
    // Every rank is reaped and its output drained. Exit without running static
    // destructors or atexit handlers while PMIx's progress thread may still run.
    std::fflush(nullptr);
    std::_Exit(rc);
}
