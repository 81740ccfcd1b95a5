#include "mpi/api_lock.hpp"

#include <sched.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace ftmpi::mpi {

bool g_api_locking = false;

namespace {

std::mutex g_mutex;
std::atomic<std::thread::id> g_owner{};
int g_depth = 0;  // guarded by g_mutex

}  // namespace

void api_lock() {
    const std::thread::id me = std::this_thread::get_id();
    if (g_owner.load(std::memory_order_relaxed) == me) {
        ++g_depth;
        return;
    }
    g_mutex.lock();
    g_owner.store(me, std::memory_order_relaxed);
    g_depth = 1;
}

void api_unlock() {
    if (--g_depth > 0) return;
    g_owner.store(std::thread::id{}, std::memory_order_relaxed);
    g_mutex.unlock();
}

void api_lock_yield() {
    const std::thread::id me = std::this_thread::get_id();
    if (g_owner.load(std::memory_order_relaxed) != me) {
        sched_yield();
        return;
    }
    const int depth = g_depth;
    g_owner.store(std::thread::id{}, std::memory_order_relaxed);
    g_mutex.unlock();
    sched_yield();
    g_mutex.lock();
    g_owner.store(me, std::memory_order_relaxed);
    g_depth = depth;
}

}  // namespace ftmpi::mpi
