#include "runtime/shm_names.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>

namespace ftmpi::runtime {
namespace {
constexpr const char *k_dir = "/dev/shm";

std::string prefix_of(pid_t pid) { return "ftmpi-" + std::to_string(pid) + "-"; }
}  // namespace

std::string new_shm_region_name() {
    std::random_device rd;
    char tail[17];
    std::snprintf(tail, sizeof tail, "%08x%08x", rd(), rd());
    return prefix_of(::getpid()) + tail;
}

int remove_shm_regions_of(pid_t pid) {
    const std::string prefix = prefix_of(pid);
    int removed = 0;
    DIR *d = ::opendir(k_dir);
    if (d == nullptr) return 0;
    while (dirent *e = ::readdir(d)) {
        if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0) continue;
        if (::unlinkat(::dirfd(d), e->d_name, 0) == 0) ++removed;
    }
    ::closedir(d);
    return removed;
}

}  // namespace ftmpi::runtime
