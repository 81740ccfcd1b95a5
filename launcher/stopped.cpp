// Stopped processes that no failure detector watches (stopped.hpp).
#include "stopped.hpp"

#include <algorithm>
#include <utility>

namespace ftmpi::launcher {
namespace {

constexpr auto kWatchPoll = std::chrono::milliseconds(100);  // while one is watched, or others are finished
constexpr auto kIdlePoll = std::chrono::milliseconds(250);   // a process may stop at any time

void earliest(std::optional<StopWatch::Clock::time_point> &next, StopWatch::Clock::time_point t) {
    if (!next || t < *next) next = t;
}

}  // namespace

void StopWatch::reset() {
    stranded_since_.reset();
    lone_since_.clear();
}

StopWatch::Verdict StopWatch::check(const std::vector<RankState> &procs, const std::function<bool(int)> &stopped,
                                    bool spawned, std::chrono::milliseconds timeout, Clock::time_point now) {
    Verdict v;
    std::vector<std::pair<int, bool>> live;     // id, stopped
    std::unordered_map<int, bool> all_stopped;  // namespace (first id) -> every live process is stopped
    bool someone_left = false, someone_runs = false, every_unreaped_stopped = true, any_unreaped = false;
    for (int id = 0; id < static_cast<int>(procs.size()); ++id) {
        const RankState &st = procs[static_cast<size_t>(id)];
        if (st.reaped) {
            someone_left = true;
            continue;
        }
        any_unreaped = true;
        const bool s = st.pid > 0 && stopped(id);
        every_unreaped_stopped = every_unreaped_stopped && s;
        if (st.pid <= 0) continue;
        someone_runs = someone_runs || !s;
        live.emplace_back(id, s);
        all_stopped.try_emplace(st.base, true).first->second &= s;
    }
    // stranded
    if (!any_unreaped || !someone_left || !every_unreaped_stopped) {
        stranded_since_.reset();
        if (any_unreaped && someone_left) earliest(v.next, now + kWatchPoll);  // look again while others are finished
    } else {
        if (!stranded_since_) stranded_since_ = now;
        if (now - *stranded_since_ < timeout) {
            earliest(v.next, now + kWatchPoll);
        } else {
            stranded_since_.reset();
            for (const auto &[id, s] : live) v.stranded.push_back(id);
        }
    }
    // lone, once a namespace was spawned
    if (!spawned) return v;
    bool watching = false;
    for (const auto &[id, s] : live) {
        if (!s || !all_stopped[procs[static_cast<size_t>(id)].base] ||
            std::find(v.stranded.begin(), v.stranded.end(), id) != v.stranded.end()) {
            lone_since_.erase(id);
            continue;
        }
        watching = true;  // a namespace all stopped cannot run anyone: someone_runs is another namespace's
        auto [it, fresh] = lone_since_.emplace(id, now);
        if (fresh || now - it->second < timeout || !someone_runs) continue;
        lone_since_.erase(it);
        v.lone.push_back(id);
    }
    if (!live.empty()) earliest(v.next, now + (watching ? kWatchPoll : kIdlePoll));
    return v;
}

}  // namespace ftmpi::launcher
