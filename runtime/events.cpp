#include "runtime/events.hpp"

#include <mutex>

namespace ftmpi::runtime {
namespace detail {
std::atomic<bool> g_events_pending{false};
}
namespace {
std::mutex g_lock;
std::vector<int> g_terminated;
}  // namespace

void post_peer_terminated(int rank) {
    std::lock_guard<std::mutex> hold(g_lock);
    g_terminated.push_back(rank);
    detail::g_events_pending.store(true, std::memory_order_release);
}

void take_terminated(std::vector<int> &out) {
    std::lock_guard<std::mutex> hold(g_lock);
    out.insert(out.end(), g_terminated.begin(), g_terminated.end());
    g_terminated.clear();
    detail::g_events_pending.store(false, std::memory_order_release);
}

}  // namespace ftmpi::runtime
