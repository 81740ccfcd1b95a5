#include "process_group.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ftmpi::launcher {

std::vector<pid_t> group_members(pid_t pgid) {
    std::vector<pid_t> out;
    if (pgid <= 0) return out;
    DIR *d = ::opendir("/proc");
    if (!d) return out;
    while (dirent *e = ::readdir(d)) {
        char *end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || pid <= 0) continue;
        char path[64], stat[512] = {};
        std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;  // exited meanwhile
        const ssize_t n = ::read(fd, stat, sizeof stat - 1);
        ::close(fd);
        if (n <= 0) continue;
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        const char *paren = std::strrchr(stat, ')');
        char state = 0;
        long ppid = 0, pgrp = 0;
        if (!paren || std::sscanf(paren + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
        if (pgrp == pgid && state != 'Z') out.push_back(static_cast<pid_t>(pid));
    }
    ::closedir(d);
    return out;
}

PidWatch::~PidWatch() {
    for (int fd : fds_) ::close(fd);
}

bool PidWatch::add(pid_t pid) {
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0U));  // O_CLOEXEC
    if (fd < 0) return false;
    fds_.push_back(fd);
    return true;
}

void PidWatch::signal_all(int sig) const {
    for (int fd : fds_) ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0U);
}

size_t PidWatch::wait(SteadyTime deadline) {
    std::vector<pollfd> pfds;
    for (int fd : fds_) pfds.push_back({fd, POLLIN, 0});
    while (!pfds.empty()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        const int n = ::poll(pfds.data(), pfds.size(), static_cast<int>(std::max<long long>(left.count(), 0)));
        if (n < 0 && errno != EINTR) break;
        std::erase_if(pfds, [](const pollfd &p) {
            if (p.revents == 0) return false;
            ::close(p.fd);
            return true;
        });
        for (auto &p : pfds) p.revents = 0;
        if (left.count() <= 0) break;
    }
    fds_.clear();
    for (const auto &p : pfds) fds_.push_back(p.fd);
    return fds_.size();
}

int kill_group(pid_t pgid, SteadyTime grace_until, SteadyTime deadline) {
    if (pgid <= 0) return 0;
    PidWatch members;
    for (pid_t pid : group_members(pgid)) members.add(pid);
    if (members.size() == 0) return 0;
    const int running = static_cast<int>(members.wait(grace_until));
    ::kill(-pgid, SIGKILL);  // also what they forked since the snapshot
    members.wait(deadline);
    return running;
}

}  // namespace ftmpi::launcher
