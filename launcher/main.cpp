// ftmpirun: launches an ftmpi job on this node with an embedded PMIx server.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "error.hpp"
#include "ftmpi_config.h"
#include "launcher.hpp"
#include "options.hpp"

int main(int argc, char **argv) {
    using namespace ftmpi::launcher;
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
        rc = run_job(opts);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "ftmpirun: %s\n", e.what());
    }
    // Every rank is reaped and its output drained. Exit without running static
    // destructors or atexit handlers while PMIx's progress thread may still run.
    std::fflush(nullptr);
    std::_Exit(rc);
}
