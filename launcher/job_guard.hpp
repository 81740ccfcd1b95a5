// The job guard: a process that ends the job, and removes what its ranks left
// in /dev/shm, when ftmpirun dies before it could (SIGKILL, `timeout -s KILL`,
// an OOM kill, a crash).
//
// The ranks die with ftmpirun (PR_SET_PDEATHSIG), but a dead process removes
// nothing: each rank's libfabric shm region (/dev/shm/ftmpi-<pid>-*,
// runtime/shm_names.hpp) stays, and so do processes the ranks forked. The
// regions cannot be unlinked earlier, while the job runs: libfabric 1.17's shm
// crashes when a message arrives from a peer whose region is gone.
//
// So ftmpirun forks the guard first, while it still has one thread. The guard
// moves to a process group of its own (`timeout` signals its own group, which
// ftmpirun is in), names itself "ftmpirun-guard", keeps only stderr and the
// read end of a pipe, and ignores the signals a terminal or a `kill` by name
// would send, so it outlives what killed ftmpirun. ftmpirun writes on the pipe
// the job's process group and each rank's pid as it forks it, then, once the
// job ended and ftmpirun itself cleaned up, a clean-end record.
//
// End of file without the clean end: ftmpirun is gone (or gave up on an
// internal error). The guard SIGKILLs the job's process group and every rank
// (through pidfds opened when it learned the pids, so a reused pid cannot be
// hit), waits until the ranks are gone (bounded by kCleanupDeadline), removes
// each rank's regions, prints one line when it killed or removed anything,
// and exits. With the clean end it exits at once.
#pragma once

#include <sys/types.h>

#include <chrono>

#include "process_group.hpp"

namespace ftmpi::launcher {

class JobGuard {
public:
    // How long the guard waits for the killed ranks to be gone before it
    // removes their regions anyway and exits.
    static constexpr auto kCleanupDeadline = std::chrono::seconds(5);

    // Forks the guard. Call while this process has a single thread (the child
    // runs ordinary code, not only async-signal-safe calls). Throws
    // LauncherError.
    JobGuard();
    // end(false) unless end() was called.
    ~JobGuard();
    JobGuard(const JobGuard &) = delete;
    JobGuard &operator=(const JobGuard &) = delete;

    // The job's process group, once known (the first rank's pid).
    void job_group(pid_t pgid);
    // A rank, right after it was forked (before it can have been reaped).
    void rank(pid_t pid);

    // Ends the guard: `clean` says the job is over and cleaned up (every rank
    // reaped, the process group emptied, the regions removed), so the guard has
    // nothing to do; otherwise it does its cleanup. Closes the pipe and waits
    // for the guard to exit (a bounded wait, longer when not clean). Idempotent.
    void end(bool clean);

    pid_t pid() const { return pid_; }
    // ftmpirun's reaping loop (waitpid(-1)) reaped the guard: it died early,
    // which is said once on stderr, and the job goes on without it.
    void reaped(int wait_status);

private:
    void send(int kind, int value);

    pid_t pid_ = -1;
    int wr_ = -1;     // write end of the pipe, -1 once ended
    PidWatch watch_;  // the guard, to wait for its exit
    bool gone_ = false;
};

}  // namespace ftmpi::launcher
