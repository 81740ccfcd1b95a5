// The job's process group: every rank and whatever the ranks fork.
//
// ftmpirun puts the ranks in one process group of their own, led by the first
// rank (spawn_child), so that processes a rank forks (system("cmd &"), a
// daemon) are found and ended with the job. A process that leaves the group
// (setsid(), setpgid()) escapes it: that is not tracked (a cgroup would be
// the way to follow those).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace ftmpi::launcher {

using SteadyTime = std::chrono::steady_clock::time_point;

// The live processes (zombies left out) whose process group is `pgid`, read
// from /proc. A snapshot: members may fork or exit meanwhile.
std::vector<pid_t> group_members(pid_t pgid);

// Processes waited for through pidfds. A pidfd names one process: its pid
// being reused later does not matter, and it reads as ready once that process
// has exited (a zombie counts), whoever its parent is. Closes them on
// destruction.
class PidWatch {
public:
    PidWatch() = default;
    ~PidWatch();
    PidWatch(const PidWatch &) = delete;
    PidWatch &operator=(const PidWatch &) = delete;

    // Watches `pid`; false when there is no such process any more (reaped).
    bool add(pid_t pid);
    // Sends `sig` to every watched process (pidfd_send_signal).
    void signal_all(int sig) const;
    // Polls until every watched process has exited or `deadline` passes, and
    // stops watching those that exited. Returns how many are still running.
    size_t wait(SteadyTime deadline);
    size_t size() const { return fds_.size(); }

private:
    std::vector<int> fds_;
};

// Ends process group `pgid`: first waits until `grace_until` for its members
// (found just before) to exit on their own, as those sent a fatal signal
// will; then SIGKILLs the group (SIGKILL reaches stopped processes too) and
// waits until those members are gone or `deadline` passes. Returns how many
// were still running at the SIGKILL; 0 when none (or pgid <= 0, then nothing
// is sent). Callers make sure the number still names the job's group: it
// does while a rank is unreaped (a zombie keeps its group), and pids are
// allocated cyclically, so a group id freed a moment ago is not handed out
// again that soon.
int kill_group(pid_t pgid, SteadyTime grace_until, SteadyTime deadline);

}  // namespace ftmpi::launcher
