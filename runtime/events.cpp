#include "runtime/events.hpp"

#include <mutex>
#include <vector>

namespace ftmpi::runtime {
namespace {
std::mutex g_lock;
TerminatedHandler g_handler = nullptr;
std::vector<int> g_queued;
}  // namespace

void post_peer_terminated(int rank) {
    std::lock_guard<std::mutex> hold(g_lock);
    if (g_handler != nullptr) g_handler(rank);
    else g_queued.push_back(rank);
}

void set_terminated_handler(TerminatedHandler h) {
    std::lock_guard<std::mutex> hold(g_lock);
    g_handler = h;
    if (h == nullptr) return;
    for (int r : g_queued) h(r);
    g_queued.clear();
}

}  // namespace ftmpi::runtime
