// The ranks of the job: fork/exec, reaping, and the exit-status rule.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace ftmpi::launcher {

struct RankState {
    int base = 0;  // the first process id of its namespace (0: the job MPI started)
    int rank = 0;  // its rank there
    pid_t pid = -1;
    bool connected = false;  // client_connected seen (it is a PMIx client)
    bool finalized = false;  // client_finalized seen
    bool reaped = false;
    int wait_status = 0;        // valid once reaped
    bool failed = false;        // valid once reaped, see rank_failed()
    bool killed_by_us = false;  // the launcher signalled it while tearing the job down
    bool lost = false;          // ftmpirun across nodes: its node was lost (failed, status SIGKILL)
    bool stopped = false;       // across nodes: stopped (SIGSTOP), as its daemon last said
};

// Shell-style code of a wait status: the exit code, or 128 + signal number.
int exit_code_of(int wait_status);

// A rank failed when it died from a signal, or when it connected to PMIx and
// exited without finalizing (whatever its exit code). A program that never
// connected and exited normally has not failed.
bool rank_failed(const RankState &r);

// Spec 000 §17.5.2 (advice to implementors), applied to reaped ranks:
//  - no_ft_code set (classic mode after its first failure): that code;
//  - no failed rank: rank 0's code;
//  - else the code of the lowest rank that exited normally after finalizing;
//  - else the code of the last MPI_Abort;
//  - else rank 0's code (128 + signo when it died from a signal).
int job_exit_code(const std::vector<RankState> &ranks, std::optional<int> last_abort, std::optional<int> no_ft_code);

// Rank `unstarted` of the job ended before it ever connected to PMIx: when
// another rank of the job did connect, the job cannot start (their MPI_Init
// fence counts it), and this is the code it ends with (the rank's, or 1).
// None while no rank connected (plain programs are not affected).
std::optional<int> unstarted_blocks(const std::vector<RankState> &ranks, int unstarted);

// "SIGSEGV" (or "signal N" when the number has no name).
std::string signal_name(int sig);

// Signals a program raises on itself by crashing (a fault, abort()), as
// opposed to those sent to it (SIGKILL, SIGTERM, ...).
bool is_crash_signal(int sig);

// The line ftmpirun prints at the end of a job that had failures, without
// the "ftmpirun: " prefix; empty when no rank failed. It counts the failed
// ranks (rank_failed(), plus `unstarted`: a rank that ended before it
// connected, which kept the job from starting) and groups them by how they
// ended, in rank order of each group's first rank:
//   "5 of 8 ranks failed: ranks 1,4-6 killed by signal 9 (SIGKILL);
//    rank 2 exited with code 3 without calling MPI_Finalize"
// Ranks that ftmpirun itself killed while ending the job say so ("sent by
// ftmpirun"). With spawned processes (RankState::base != 0) it counts and
// lists processes by id instead, and says so.
std::string failure_summary(const std::vector<RankState> &ranks, std::optional<int> unstarted);

// What one child needs; every pointer/fd must stay valid across fork().
struct SpawnSpec {
    const char *path = nullptr;
    char *const *argv = nullptr;
    char *const *envp = nullptr;
    const cpu_set_t *cpus = nullptr;  // null: inherit the launcher's affinity
    int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
    const char *exec_error_msg = nullptr;  // written to stderr if execve fails
    const char *cwd = nullptr;             // null: the launcher's
    const char *cwd_error_msg = nullptr;   // written to stderr if chdir fails
    // The process group to join: 0 starts a new one led by the child (whose
    // group id is then its pid), -1 stays in the launcher's.
    pid_t pgid = -1;
    // What the child gets when the launcher dies (PR_SET_PDEATHSIG; 0: nothing).
    int death_signal = SIGKILL;
};

// Forks a child that dies with the launcher (PR_SET_PDEATHSIG, spec.death_signal), joins
// spec.pgid, has default signal dispositions and an empty signal mask, and
// execs spec.path. Only async-signal-safe calls run in the child.
//
// The ranks share one process group of their own, not the launcher's
// (launcher/process_group.hpp): what they fork is in it too and is ended
// with the job. A terminal's ^C, and `timeout`'s group signal, reach only
// ftmpirun then: it forwards SIGINT and SIGTERM to the job's group, and the
// job guard (job_guard.hpp) ends the group when ftmpirun is killed. (^Z
// stops ftmpirun alone: SIGTSTP is not forwarded.)
// Both the parent and the child call setpgid, so the group is set before
// either goes on, whichever runs first; a child that cannot join exits 127.
// The group must exist (its leader not yet reaped). Returns the pid; throws
// LauncherError when fork fails.
pid_t spawn_child(const SpawnSpec &spec);

// Builds the child environment: `base` (NAME=value strings), then each
// override replacing any earlier entry of the same name.
std::vector<std::string> merge_env(const std::vector<std::string> &base, const std::vector<std::string> &overrides);

}  // namespace ftmpi::launcher
