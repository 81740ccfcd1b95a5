// Stopped processes that no failure detector watches: ftmpirun does the
// detector's job for them (spec 000 §17.3: a stopped process is excluded,
// killed as failed, and every process hears of it). Two cases:
//  - stranded: every other process of a fault-tolerant job has ended
//    (finalized, or failed) while the ones still there are stopped
//    (SIGSTOP, not a debugger's trace stop); the detectors that would have
//    found them left with the others;
//  - lone: every live process of a namespace is stopped while a process of
//    another namespace still runs (a spawned process alone in its job, the
//    last child left after its siblings gave up the connection, parents
//    stopped while their children run): the ranks' detector watches the
//    processes of one namespace only.
// Either way, stopped for the ranks' detector timeout, they are to be
// killed. Pure logic over the processes' states, for a one-node job
// (Runner, reading /proc) and across nodes (the head, told by the daemons).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "job.hpp"

namespace ftmpi::launcher {

class StopWatch {
public:
    using Clock = std::chrono::steady_clock;
    struct Verdict {
        std::vector<int> stranded, lone;        // process ids to kill, by case
        std::optional<Clock::time_point> next;  // when to look again (none: nothing to watch)
    };
    // `procs` by id; `stopped(id)`: live process id (unreaped, started) is
    // stopped; `spawned`: a namespace besides the job's exists. Call again
    // by `next`; reset() when the job no longer needs it (no fault
    // tolerance, or ending).
    Verdict check(const std::vector<RankState> &procs, const std::function<bool(int)> &stopped, bool spawned,
                  std::chrono::milliseconds timeout, Clock::time_point now);
    void reset();

private:
    std::optional<Clock::time_point> stranded_since_;
    std::unordered_map<int, Clock::time_point> lone_since_;
};

}  // namespace ftmpi::launcher
