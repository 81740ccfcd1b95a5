// The library's own threads that must answer within milliseconds whatever
// the application does: the failure detector's (its heartbeats) and the
// liveness links'. A rank may be busy on every thread it has, bound with
// another rank to one core (ftmpirun's placement when ranks outnumber
// cores); a heartbeat that waits for that core long enough looks like a
// dead process, and the detector has it killed.
//
// And how a process finds out whether such a thread of a peer on its node is
// silent because it cannot run (the peer is stopped, dead, or that thread is
// stuck) or only because it waits for a CPU.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace ftmpi::runtime {

// Called first thing on such a thread; every step is best effort:
//   - named `name` (at most 15 characters), so that peers (thread_activity)
//     and tools find it in /proc;
//   - free to run on any CPU the launcher was given (FTMPI_SERVICE_CPUS,
//     which ftmpirun sets when it binds ranks), not only on the rank's own
//     core: a saturated core does not hold it;
//   - a short scheduling slice (sched_setattr's sched_runtime, Linux 6.12
//     and later, no privilege needed): when it wakes, the scheduler runs it
//     ahead of threads that have computed for a while.
void become_service_thread(const char *name);

// The CPUs of a list such as "0-3,8" (what FTMPI_SERVICE_CPUS holds), in a
// bit set of CPU numbers below 1024; nullopt when malformed or empty.
struct CpuList {
    std::uint64_t bits[16] = {};
};
std::optional<CpuList> parse_cpu_list(const char *text);

// What /proc tells about thread `name` of process `pid` on this node.
struct ThreadActivity {
    enum class State { gone, stopped, running, sleeping } state;  // running: on a CPU or waiting for one
    std::uint64_t cpu_ns = 0;                                     // time it has run
    std::uint64_t run_delay_ns = 0;                               // time it has waited, runnable, for a CPU
};
// nullopt: no such thread (another process has that pid, or /proc says
// nothing); `gone`: the process has ended (or is a zombie).
std::optional<ThreadActivity> thread_activity(pid_t pid, const char *name);

}  // namespace ftmpi::runtime
