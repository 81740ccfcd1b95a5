#include "ft/detector.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "ft/detector_core.hpp"
#include "runtime/log.hpp"

namespace ftmpi::ft {

Detector::Detector(FailedSet &set, std::unique_ptr<transport::ControlChannel> channel, int rank, int size,
                   int id_base, DetectorOptions opt, std::function<bool(int)> kill)
    : set_(set), channel_(std::move(channel)), rank_(rank), size_(size), base_(id_base), opt_(opt),
      kill_(std::move(kill)) {}

Detector::~Detector() { stop(false); }

void Detector::start() { thread_ = std::thread([this] { run(); }); }

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
    DetectorCore core(set_, rank_, size_, base_, Ms(opt_.period_ms), Ms(opt_.timeout_ms), channel_->max_message());
    DetectorCore::Effects fx;
    std::deque<std::pair<int, std::vector<char>>> retry;  // messages refused for now
    auto out = [&](int peer, std::vector<char> &&msg) {
        if (!channel_->send(static_cast<transport::PeerId>(peer), msg.data(), msg.size()) && retry.size() < 4096)
            retry.emplace_back(peer, std::move(msg));
    };
    bool excluded = false;
    // Carries out what the protocol asked for.
    auto apply = [&] {
        for (auto &s : fx.sends) out(s.peer, std::move(s.msg));
        fx.sends.clear();
        if (fx.watch != -2) channel_->watch(fx.watch);
        fx.watch = -2;
        for (const auto &e : fx.events) {
            const int r = e.id - base_;
            switch (e.kind) {
            case DetectorCore::Event::told: FTMPI_INFO("process %d is failed (told by rank %d)", e.id, e.by); break;
            case DetectorCore::Event::link_closed: FTMPI_INFO("rank %d is failed: its liveness link closed", r); break;
            case DetectorCore::Event::ended:
                FTMPI_INFO("rank %d is failed: its process ended (liveness link reset) and no goodbye came", r);
                break;
            case DetectorCore::Event::timeout: FTMPI_WARN("rank %d is failed: no heartbeat for %lld ms", r, e.ms); break;
            }
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

    core.start(Clock::now(), fx);
    apply();
    while (!stopping_.load(std::memory_order_acquire)) {
        auto now = Clock::now();
        for (const auto &lost : channel_->take_lost())  // the watched predecessor's process ended
            core.on_lost(static_cast<int>(lost.peer), lost.certain, now, fx);
        const bool again = core.tick(now, fx);
        apply();
        if (again) continue;  // spread it and move to the next predecessor
        for (std::size_t i = retry.size(); i > 0; --i) {  // one pass over what was refused
            auto item = std::move(retry.front());
            retry.pop_front();
            if (set_.contains(base_ + item.first)) continue;
            if (!channel_->send(static_cast<transport::PeerId>(item.first), item.second.data(), item.second.size()))
                retry.push_back(std::move(item));
        }
        int wait_ms = static_cast<int>(std::chrono::duration_cast<Ms>(core.deadline() - now).count());
        if (!retry.empty()) wait_ms = std::min(wait_ms, 5);
        if (core.idle()) wait_ms = std::max(opt_.period_ms, 1);
        channel_->wait(std::max(wait_ms, 0),
                       [&](const void *data, std::size_t len) { core.on_message(data, len, Clock::now(), fx); });
        apply();
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
