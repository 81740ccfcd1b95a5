// The in-band failure detector: a heartbeat observation ring plus reliable
// broadcast of failures over a binomial graph, on its own thread and its own
// control endpoint (transport/control.hpp), so it runs while the application
// computes and needs nothing from the launcher.
//
// Ring: every process sends a heartbeat every `period` to its observer, the
// next process in rank order (cyclically) that it does not know to be failed
// or gone; it observes its own predecessor the same way. A predecessor silent
// for `timeout` is declared failed, and the launcher is asked to kill it (a
// stopped or merely slow process is excluded: spec 000 §17.3).
//
// Broadcast: each failure this process learns of, from any source, is sent
// once to its binomial-graph neighbours (rank ± 2^k); a process forwards what
// it learns in turn, so news reaches everyone in O(log n) steps and around
// failed forwarders. Heartbeats carry a digest of the sender's failed set;
// when the two ends of a ring link disagree they exchange their sets, which
// repairs anything lost (a message refused, a forwarder dead mid-broadcast).
//
// A process that finds itself in the failed set has been excluded: it leaves
// at once (exit status k_excluded_exit).
//
// The protocol itself is ft/detector_core.hpp's state machine; this class
// runs it on its thread over the control channel. Its overlays (ring, BMG)
// are ft/topology.hpp's, shared with revoke and the agreement; ft/sim/ runs
// the same state machine for up to 100,000 simulated processes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ft/failed_set.hpp"
#include "transport/control.hpp"

namespace ftmpi::ft {

constexpr int k_excluded_exit = 70;

struct DetectorOptions {
    int period_ms = 100;
    int timeout_ms = 1000;
    // What an excluded process does; empty: log and _exit(k_excluded_exit).
    // (Tests that run several detectors in one process stop just that one.)
    std::function<void()> on_excluded;
    // Where the thread publishes the longest heartbeat gap it has seen (ms); may be null.
    std::atomic<long long> *gap_max_ms = nullptr;
};

class Detector {
public:
    // The ring is the job's `size` ranks, and the control channel's peers
    // are those ranks; the failed set holds process ids (rank r is id_base + r:
    // runtime/process_manager.hpp), and so do failure messages. `kill` asks
    // the launcher to kill a process id; false when it cannot.
    Detector(FailedSet &set, std::unique_ptr<transport::ControlChannel> channel, int rank, int size, int id_base,
             DetectorOptions opt, std::function<bool(int)> kill);
    ~Detector();
    Detector(const Detector &) = delete;
    Detector &operator=(const Detector &) = delete;

    // Starts the thread and returns once it has sent its first heartbeats
    // (or after 10 s, logged): a peer that hears from this process on
    // another channel afterwards knows its detector runs (peer_started).
    void start();
    // Returns once the first predecessor was heard (or known to have
    // started, or replaced after its failure), at most after `limit`: false
    // then. MPI_Init waits here, so that no process takes part in anything
    // while its predecessor's silence would still count as a late start: a
    // peer stopped right after init is then found within one timeout.
    bool wait_first_heard(std::chrono::milliseconds limit);
    // Joins the thread. `goodbye`: first tell the observer that this process
    // leaves normally (MPI_Finalize), so that its silence is not a failure.
    void stop(bool goodbye);
    // Any thread: the failed set grew; spread the news now.
    void wake() { channel_->wake(); }
    // Any thread: rank `rank`'s detector had sent its first heartbeats
    // (DetectorCore::peer_started).
    void peer_started(int rank);

private:
    void run();
    void signal_beating();            // the thread: start() may return
    void signal_first_heard();        // the thread: wait_first_heard() may return
    std::vector<int> take_started();  // the thread: peer_started ranks since the last call

    FailedSet &set_;
    std::unique_ptr<transport::ControlChannel> channel_;
    int rank_;
    int size_;
    int base_;
    DetectorOptions opt_;
    std::function<bool(int)> kill_;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> goodbye_{false};
    std::thread thread_;
    std::mutex mu_;                       // guards what follows
    std::condition_variable beating_cv_;  // start() waits for beating_
    bool beating_ = false;                // the first heartbeats are sent
    bool first_heard_ = false;            // DetectorCore::awaiting_first() ended
    std::vector<int> started_;            // peer_started ranks the thread has not taken yet
    std::atomic<bool> any_started_{false};
};

}  // namespace ftmpi::ft
