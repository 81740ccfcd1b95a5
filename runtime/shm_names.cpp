#include "runtime/shm_names.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

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

namespace {

// Unlinks the regions in /dev/shm for which `doomed(pid of its creator)`.
template <typename Doomed>
int remove_regions(Doomed doomed) {
    constexpr std::size_t k_prefix = sizeof "ftmpi-" - 1;
    int removed = 0;
    DIR *d = ::opendir(k_dir);
    if (d == nullptr) return 0;
    while (dirent *e = ::readdir(d)) {
        if (std::strncmp(e->d_name, "ftmpi-", k_prefix) != 0) continue;
        char *end = nullptr;
        const long pid = std::strtol(e->d_name + k_prefix, &end, 10);
        if (end == e->d_name + k_prefix || *end != '-' || pid <= 0) continue;
        if (doomed(static_cast<pid_t>(pid), ::dirfd(d), e->d_name) && ::unlinkat(::dirfd(d), e->d_name, 0) == 0)
            ++removed;
    }
    ::closedir(d);
    return removed;
}

}  // namespace

char process_state(pid_t pid) {
    char path[64], stat[256] = {};
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    FILE *f = std::fopen(path, "re");
    if (f == nullptr) return '\0';
    const bool ok = std::fgets(stat, sizeof stat, f) != nullptr;
    std::fclose(f);
    const char *paren = ok ? std::strrchr(stat, ')') : nullptr;
    return paren != nullptr && paren[1] == ' ' ? paren[2] : '\0';
}

bool process_gone(pid_t pid) {
    if (::kill(pid, 0) != 0) return errno == ESRCH;
    return process_state(pid) == 'Z';
}

int remove_shm_regions_of(pid_t pid) {
    return remove_regions([pid](pid_t owner, int, const char *) { return owner == pid; });
}

int remove_stale_shm_regions() {
    const uid_t me = ::geteuid();
    return remove_regions([me](pid_t owner, int dir, const char *name) {
        struct stat st;
        return ::fstatat(dir, name, &st, 0) == 0 && st.st_uid == me && process_gone(owner);
    });
}

}  // namespace ftmpi::runtime
