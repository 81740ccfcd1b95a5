// The failure record as the MPI layer sees it, and the wiring of every source
// of failure news into the process-wide FailedSet (ft/failed_set.hpp).
//
// Sources: the launcher's PMIx events (any thread), the transport's
// unreachable-peer reports (progress thread), and the detector's heartbeat
// ring and broadcasts (its own thread). All of them add to the shared set;
// the progress thread then ingests what is new at its next poll(): it marks
// the peer failed in the transport and bumps the epoch, so a wait loop sees a
// change with one load and a compare. The MPI layer reads only this ingested
// view, so what a query reports and what an operation fails on agree.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "ft/failed_set.hpp"

namespace ftmpi::runtime {
class ProcessManager;
}
namespace ftmpi::transport {
class Transport;
class ControlChannel;
}  // namespace ftmpi::transport

namespace ftmpi::ft {

class Failures {
public:
    // Init: sizes the record for process ids below `id_limit`, takes the
    // transport's unreachable reports and the launcher's events.
    // attach(nullptr, 0) detaches (finalize).
    void attach(transport::Transport *t, int id_limit);
    // Init, after attach: starts the heartbeat detector of this job's ranks
    // on `channel` (null: none).
    void start_detector(std::unique_ptr<transport::ControlChannel> channel, runtime::ProcessManager &pm);
    // Init, after start_detector: these processes of this job got far enough
    // in their MPI_Init to have started their detectors (their hellos came).
    void peers_started(const std::vector<std::uint32_t> &ids);  // transport::PeerId
    // Init, after peers_started: waits until the detector heard its first
    // predecessor (Detector::wait_first_heard); bounded by the late-starter
    // allowance, after which that predecessor is declared failed anyway.
    void await_predecessor();
    // Finalize: stops the detector, telling the observer this process leaves normally.
    void stop_detector();

    // Progress thread. Ingests new failures; one atomic load when there are none.
    void poll() {
        if (shared_.size() != ingested_) ingest();
    }
    // Progress thread: a local source found `peer` failed.
    void declare_failed(int peer);
    // Any thread: `peer` is failed (launcher event, agreement); the detector
    // spreads it, and the progress thread takes it in at its next poll().
    // True when it was not known failed before.
    bool note_failed(int peer);
    bool is_failed(int peer) const { return peer >= 0 && peer < static_cast<int>(failed_.size()) && failed_[peer]; }
    std::uint64_t epoch() const { return epoch_; }
    // Peers in the order their failure became known here.
    const std::vector<int> &in_order() const { return order_; }
    FailedSet &shared() { return shared_; }
    // Any thread: the longest silence of the watched predecessor that this
    // process's detector has seen between two of its heartbeats (ms; 0
    // before the second one): how close a live process came to being
    // suspected (MPI_T ftmpi_ft_heartbeat_gap_max_ms).
    long long heartbeat_gap_max_ms() const { return gap_max_ms_.load(std::memory_order_relaxed); }

private:
    void ingest();

    transport::Transport *transport_ = nullptr;
    FailedSet shared_;
    std::size_t ingested_ = 0;
    std::vector<bool> failed_;
    std::vector<int> order_;
    std::uint64_t epoch_ = 0;
    std::atomic<long long> gap_max_ms_{0};  // written by the detector's thread
};

// The process's one record: constant-initialized (no guard on every call,
// and it outlives every object built at run time). Inline: read on the hot
// paths (one-sided operations, waits).
extern constinit Failures g_failures;
inline Failures &failures() { return g_failures; }

}  // namespace ftmpi::ft
