// ftmpi_info: what this ftmpi is and how it is configured, as Open MPI's
// ompi_info and MPICH's mpichversion tell theirs. Prints the version, the
// MPI version, the build configuration, the libfabric providers this node
// has, and every FTMPI_* knob with its value in this environment, its
// default and its meaning (runtime/config.hpp: the one table of knobs).
//
//   ftmpi_info            everything
//   ftmpi_info --knobs    the knobs only
//   ftmpi_info --version  the version line only
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <set>
#include <string>

#include <mpi.h>
#include <rdma/fabric.h>

#include "ftmpi_config.h"
#include "runtime/config.hpp"

namespace {

using ftmpi::runtime::Config;

// libfabric's providers on this node, loaded as libftmpi loads it (only
// when needed): none when libfabric is not there.
std::string providers() {
    void *lib = ::dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return "(libfabric not found: one-node jobs only)";
    using GetInfo = int (*)(uint32_t, const char *, const char *, uint64_t, const fi_info *, fi_info **);
    using FreeInfo = void (*)(fi_info *);
    auto getinfo = reinterpret_cast<GetInfo>(::dlsym(lib, "fi_getinfo"));
    auto freeinfo = reinterpret_cast<FreeInfo>(::dlsym(lib, "fi_freeinfo"));
    if (getinfo == nullptr || freeinfo == nullptr) return "(libfabric without fi_getinfo)";
    fi_info *list = nullptr;
    if (getinfo(FI_VERSION(1, 11), nullptr, nullptr, 0, nullptr, &list) != 0 || list == nullptr) return "(none)";
    std::set<std::string> names;
    for (const fi_info *i = list; i != nullptr; i = i->next)
        if (i->fabric_attr != nullptr && i->fabric_attr->prov_name != nullptr) names.insert(i->fabric_attr->prov_name);
    freeinfo(list);
    std::string out;
    for (const auto &n : names) out += (out.empty() ? "" : " ") + n;
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    const std::string what = argc > 1 ? argv[1] : "";
    if (argc > 2 || (!what.empty() && what != "--knobs" && what != "--version" && what != "--help")) {
        std::fprintf(stderr, "usage: ftmpi_info [--knobs | --version | --help]\n");
        return 2;
    }
    if (what == "--help") {
        std::printf(
            "usage: ftmpi_info [--knobs | --version]\n"
            "  the version, the MPI version, the build configuration, libfabric's providers on this node\n"
            "  and every FTMPI_* knob with its value in this environment, default and meaning\n");
        return 0;
    }
    std::printf("ftmpi %s\n", FTMPI_VERSION);
    if (what == "--version") return 0;
    Config now;
    try {
        now = ftmpi::runtime::config_from_environment();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "ftmpi_info: %s (MPI_Init would fail)\n", e.what());
        return 1;
    }
    if (what.empty()) {
        std::printf("MPI standard: %d.%d\n", MPI_VERSION, MPI_SUBVERSION);
        std::printf("prefix: %s\n", FTMPI_PREFIX);
        std::printf("argument checks: %s\n", FTMPI_ARG_CHECKS ? "on" : "off (-Darg_checks=false)");
        std::printf("libfabric providers on this node: %s\n", providers().c_str());
    }
    std::printf("knobs (environment variables, read at MPI_Init):\n%s", ftmpi::runtime::knob_help(now).c_str());
    return 0;
}
