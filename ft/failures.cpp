#include "ft/failures.hpp"

#include <atomic>
#include <chrono>

#include "ft/detector.hpp"
#include "ft/detector_core.hpp"
#include "runtime/config.hpp"
#include "runtime/events.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/tool_events.hpp"
#include "transport/control.hpp"
#include "transport/transport.hpp"

namespace ftmpi::ft {
namespace {

std::unique_ptr<Detector> g_detector;
// The running detector, for the PMIx thread: published once it runs, cleared
// (with the PMIx handler removed first) before it stops.
std::atomic<Detector *> g_running{nullptr};
int g_base = 0;  // the ring's first process id

void wake_detector() {
    if (Detector *d = g_running.load(std::memory_order_acquire)) d->wake();
}

// PMIx event thread.
void on_terminated(int id) {
    FTMPI_DEBUG("launcher event: process %d terminated", id);
    runtime::mark_service_thread();
    const std::int64_t at = runtime::failure_stamp();
    if (failures().note_failed(id))
        runtime::emit_at(runtime::EventType::failure_detected, at, id,
                         static_cast<int>(runtime::FailurePath::launcher));
}

}  // namespace

constinit Failures g_failures;

void Failures::attach(transport::Transport *t, int id_limit) {
    if (t == nullptr) {
        runtime::set_terminated_handler(nullptr);
        transport_ = nullptr;
        return;
    }
    transport_ = t;
    shared_.reset(id_limit);
    ingested_ = 0;
    failed_.assign(static_cast<std::size_t>(id_limit), false);
    order_.clear();
    t->set_unreachable_hook([this](transport::PeerId peer) { declare_failed(static_cast<int>(peer)); });
    runtime::set_terminated_handler(&on_terminated);  // hands over notices queued since PMIx_Init
}

void Failures::start_detector(std::unique_ptr<transport::ControlChannel> channel, runtime::ProcessManager &pm) {
    if (!channel) return;
    const auto &cfg = runtime::config();
    DetectorOptions opt;
    opt.period_ms = cfg.FT_PERIOD_MS;
    opt.timeout_ms = cfg.FT_TIMEOUT_MS;
    opt.gap_max_ms = &gap_max_ms_;
    const auto &job = pm.job();
    g_base = job.id_base;
    g_detector = std::make_unique<Detector>(shared_, std::move(channel), job.rank, job.size, job.id_base, opt,
                                            [&pm](int victim) { return pm.request_kill(victim); });
    g_detector->start();
    g_running.store(g_detector.get(), std::memory_order_release);
}

void Failures::peers_started(const std::vector<std::uint32_t> &ids) {
    if (!g_detector) return;
    const int base = g_base;
    for (std::uint32_t id : ids) g_detector->peer_started(static_cast<int>(id) - base);
}

void Failures::await_predecessor() {
    if (!g_detector) return;
    const int timeout = runtime::config().FT_TIMEOUT_MS;
    const auto limit = std::chrono::milliseconds(static_cast<long long>(timeout) * (DetectorCore::k_starved_limit + 2));
    if (!g_detector->wait_first_heard(limit))
        FTMPI_WARN("the failure detector has not heard its predecessor after %lld ms",
                   static_cast<long long>(limit.count()));
}

void Failures::stop_detector() {
    if (!g_detector) return;
    // No PMIx handler runs once this returns (later notices queue), so none
    // can touch the detector while it goes away.
    runtime::set_terminated_handler(nullptr);
    g_running.store(nullptr, std::memory_order_release);
    g_detector->stop(true);
    g_detector.reset();
}

void Failures::declare_failed(int peer) {
    const std::int64_t at = runtime::failure_stamp();
    if (note_failed(peer))
        runtime::emit_at(runtime::EventType::failure_detected, at, peer,
                         static_cast<int>(runtime::FailurePath::transport));
    ingest();
}

bool Failures::note_failed(int peer) {
    if (!shared_.add(peer)) return false;
    wake_detector();
    return true;
}

void Failures::ingest() {
    const std::size_t n = shared_.size();
    for (; ingested_ < n; ++ingested_) {
        const int peer = shared_.at(ingested_);
        failed_[static_cast<std::size_t>(peer)] = true;
        order_.push_back(peer);
        ++epoch_;
        FTMPI_INFO("process %d is failed", peer);
        if (transport_ != nullptr) transport_->mark_failed(static_cast<transport::PeerId>(peer));
    }
    // Events the detector's and the launcher's threads raised for callbacks
    // that may run only on an application's thread.
    runtime::deliver_deferred_events();
}

}  // namespace ftmpi::ft
