#include "ft/detector.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <vector>

#include "ft/detector_core.hpp"
#include "runtime/log.hpp"
#include "runtime/service_thread.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::ft {

namespace {

// The detector's log line for event `e` about rank `r`.
void log_event(const DetectorCore::Event &e, int r) {
    switch (e.kind) {
    case DetectorCore::Event::told: FTMPI_INFO("process %d is failed (told by rank %d)", e.id, e.by); break;
    case DetectorCore::Event::link_closed: FTMPI_INFO("rank %d is failed: its liveness link closed", r); break;
    case DetectorCore::Event::ended:
        FTMPI_INFO("rank %d is failed: its process ended (liveness link reset) and no goodbye came", r);
        break;
    case DetectorCore::Event::timeout:
        FTMPI_WARN("rank %d is failed: no heartbeat for %lld ms%s%s%s", r, e.ms, e.detail ? " (" : "",
                   e.detail ? e.detail : "", e.detail ? ")" : "");
        break;
    case DetectorCore::Event::starved:
        FTMPI_INFO("rank %d: no heartbeat for %lld ms, but %s: not suspected while it does", r, e.ms, e.detail);
        break;
    }
}

// The failure events (runtime/tool_events.hpp) of what the protocol found,
// stamped `at` (read before the step that published the failure).
void tell_tools(const DetectorCore::Event &e, int base, std::int64_t at) {
    using runtime::EventType, runtime::FailurePath;
    switch (e.kind) {
    case DetectorCore::Event::told: runtime::emit_at(EventType::failure_learned, at, e.id, base + e.by); break;
    case DetectorCore::Event::link_closed:
    case DetectorCore::Event::ended:
        runtime::emit_at(EventType::failure_detected, at, e.id, static_cast<int>(FailurePath::liveness_link));
        break;
    case DetectorCore::Event::timeout:
        runtime::emit_at(EventType::failure_detected, at, e.id, static_cast<int>(FailurePath::heartbeat));
        break;
    case DetectorCore::Event::starved: break;
    }
}

}  // namespace

namespace {

// The detector's thread, by name (runtime::thread_activity finds a peer's).
constexpr const char *k_thread_name = "ftmpi-detector";

// What /proc says about the detector thread of a predecessor on this node
// whose heartbeats are overdue (DetectorCore::Evidence). Running (on a CPU
// or waiting for one) is `waiting`, unless, since the last look, it ran more
// than it waited while sending nothing: then it is stuck in a loop.
class ProcEvidence {
public:
    explicit ProcEvidence(const transport::ControlChannel &channel) : channel_(channel) {}

    DetectorCore::Evidence operator()(int pred) {
        using E = DetectorCore::Evidence;
        const int pid = channel_.pid_of(static_cast<transport::PeerId>(pred));
        if (pid <= 0) return {};
        const auto a = runtime::thread_activity(pid, k_thread_name);
        if (!a) return {};
        using S = runtime::ThreadActivity::State;
        switch (a->state) {
        case S::gone: return {E::silent, "its process has ended"};
        case S::stopped: return {E::silent, "its process is stopped"};
        case S::sleeping: return {E::silent, "its detector thread sleeps past its heartbeat"};
        case S::running: break;
        }
        Look &last = looks_[pred];
        const auto now = DetectorCore::Clock::now();
        const bool looping =
            last.pid == pid && a->cpu_ns - last.cpu_ns > a->run_delay_ns - last.run_delay_ns &&
            a->cpu_ns - last.cpu_ns > static_cast<std::uint64_t>(std::chrono::nanoseconds(now - last.at).count() / 2);
        last = {pid, now, a->cpu_ns, a->run_delay_ns};
        if (looping) return {E::silent, "its detector thread runs without sending"};
        return {E::waiting, "its detector thread waits for a CPU"};
    }

private:
    struct Look {
        int pid = 0;
        DetectorCore::Time at{};
        std::uint64_t cpu_ns = 0, run_delay_ns = 0;
    };
    const transport::ControlChannel &channel_;
    std::unordered_map<int, Look> looks_;
};

}  // namespace

Detector::Detector(FailedSet &set, std::unique_ptr<transport::ControlChannel> channel, int rank, int size, int id_base,
                   DetectorOptions opt, std::function<bool(int)> kill)
    : set_(set), channel_(std::move(channel)), rank_(rank), size_(size), base_(id_base), opt_(opt),
      kill_(std::move(kill)) {}

Detector::~Detector() { stop(false); }

void Detector::start() {
    thread_ = std::thread([this] { run(); });
    // Waiting here gives the new thread the CPU on a full node: a process
    // that went on to finish MPI_Init first could otherwise tell its peers
    // it is up (its hellos) while its detector had not beaten yet.
    std::unique_lock<std::mutex> lock(mu_);
    if (!beating_cv_.wait_for(lock, std::chrono::seconds(10), [this] { return beating_; }))
        FTMPI_WARN("the failure detector's thread has not started after 10 s");
}

void Detector::signal_beating() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        beating_ = true;
    }
    beating_cv_.notify_all();
}

void Detector::signal_first_heard() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        first_heard_ = true;
    }
    beating_cv_.notify_all();
}

bool Detector::wait_first_heard(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    return beating_cv_.wait_for(lock, limit, [this] { return first_heard_; });
}

std::vector<int> Detector::take_started() {
    std::vector<int> ranks;
    if (!any_started_.load(std::memory_order_acquire)) return ranks;
    std::lock_guard<std::mutex> lock(mu_);
    ranks.swap(started_);
    any_started_.store(false, std::memory_order_relaxed);
    return ranks;
}

void Detector::peer_started(int rank) {
    if (rank < 0 || rank >= size_ || rank == rank_) return;
    std::lock_guard<std::mutex> lock(mu_);
    started_.push_back(rank);
    any_started_.store(true, std::memory_order_release);
    channel_->wake();
}

void Detector::stop(bool goodbye) {
    if (!thread_.joinable()) return;
    goodbye_.store(goodbye, std::memory_order_relaxed);
    stopping_.store(true, std::memory_order_release);
    channel_->wake();
    thread_.join();
}

void Detector::run() {
    using Clock = DetectorCore::Clock;
    using Ms = DetectorCore::Ms;
    runtime::become_service_thread(k_thread_name);
    DetectorCore core(set_, rank_, size_, base_, Ms(opt_.period_ms), Ms(opt_.timeout_ms), channel_->max_message());
    core.set_evidence(ProcEvidence(*channel_));
    DetectorCore::Effects fx;
    std::deque<std::pair<int, std::vector<char>>> retry;  // messages refused for now
    auto out = [&](int peer, std::vector<char> &&msg) {
        if (!channel_->send(static_cast<transport::PeerId>(peer), msg.data(), msg.size()) && retry.size() < 4096)
            retry.emplace_back(peer, std::move(msg));
    };
    bool excluded = false;
    // The failure events' time: read before the first core step whose
    // events are not yet applied (a step publishes the failures it finds).
    std::int64_t stamp = 0;
    auto stamp_step = [&] {
        if (fx.events.empty()) stamp = runtime::failure_stamp();
    };
    // Carries out what the protocol asked for.
    auto apply = [&] {
        for (auto &s : fx.sends) out(s.peer, std::move(s.msg));
        fx.sends.clear();
        if (fx.watch != -2) channel_->watch(fx.watch);
        fx.watch = -2;
        for (const auto &e : fx.events) {
            const int r = e.id - base_;
            tell_tools(e, base_, stamp);
            log_event(e, r);
            if ((e.kind == DetectorCore::Event::timeout || e.kind == DetectorCore::Event::ended) && !kill_(e.id))
                FTMPI_INFO("the launcher cannot kill rank %d; it will exclude itself", r);
        }
        fx.events.clear();
        if (!fx.excluded || excluded) return;
        excluded = true;
        if (opt_.on_excluded) {
            opt_.on_excluded();
            stopping_.store(true, std::memory_order_release);
            return;
        }
        FTMPI_ERROR("this process was declared failed by the failure detector of another process; it leaves the job");
        std::fflush(nullptr);
        ::_exit(k_excluded_exit);
    };

    auto receive = [&](const void *data, std::size_t len) {
        stamp_step();
        core.on_message(data, len, Clock::now(), fx);
    };
    stamp_step();
    core.start(Clock::now(), fx);
    apply();
    signal_beating();
    bool first_heard = false;
    auto note_first_heard = [&] {
        if (first_heard || core.awaiting_first()) return;
        first_heard = true;
        signal_first_heard();
    };
    while (!stopping_.load(std::memory_order_acquire)) {
        note_first_heard();
        // What arrived while this thread was away counts before any judgement.
        channel_->wait(0, receive);
        apply();
        auto now = Clock::now();
        for (int r : take_started()) core.peer_started(r, now);
        for (const auto &lost : channel_->take_lost()) {  // the watched predecessor's process ended
            stamp_step();
            core.on_lost(static_cast<int>(lost.peer), lost.certain, now, fx);
        }
        stamp_step();
        const bool again = core.tick(now, fx);
        apply();
        if (again) continue;                              // spread it and move to the next predecessor
        for (std::size_t i = retry.size(); i > 0; --i) {  // one pass over what was refused
            auto item = std::move(retry.front());
            retry.pop_front();
            if (set_.contains(base_ + item.first)) continue;
            if (!channel_->send(static_cast<transport::PeerId>(item.first), item.second.data(), item.second.size()))
                retry.push_back(std::move(item));
        }
        note_first_heard();
        now = Clock::now();
        int wait_ms = static_cast<int>(std::chrono::ceil<Ms>(core.deadline() - now).count());
        if (!retry.empty()) wait_ms = std::min(wait_ms, 5);
        if (core.idle()) wait_ms = std::max(opt_.period_ms, 1);
        channel_->wait(std::max(wait_ms, 0), receive);
        apply();
        if (opt_.gap_max_ms != nullptr) opt_.gap_max_ms->store(core.max_gap().count(), std::memory_order_relaxed);
    }
    if (goodbye_.load(std::memory_order_relaxed)) {
        channel_->leaving();
        core.goodbye(fx);
        apply();
    }
    FTMPI_DEBUG("detector stops; longest heartbeat gap from rank %d: %lld ms", core.pred(),
                static_cast<long long>(core.max_gap().count()));
}

}  // namespace ftmpi::ft
