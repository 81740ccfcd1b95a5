// Failure notices from the process manager (PMIx events), handed from the PMIx
// thread to the progress engine.
//
// The PMIx event thread calls post_peer_terminated(); the progress engine checks
// events_pending() (one relaxed atomic load, nothing else on the failure-free
// path) and drains the ranks with take_terminated().
#pragma once

#include <atomic>
#include <vector>

namespace ftmpi::runtime {

namespace detail {
extern std::atomic<bool> g_events_pending;
}

inline bool events_pending() { return detail::g_events_pending.load(std::memory_order_acquire); }

// Any thread. Records that job rank `rank` terminated.
void post_peer_terminated(int rank);

// Progress thread only. Moves every rank posted since the last call into `out`.
void take_terminated(std::vector<int> &out);

}  // namespace ftmpi::runtime
