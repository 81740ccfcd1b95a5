#include "mpi/api/api_lock.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <thread>

#include "runtime/cpu_relax.hpp"

namespace ftmpi::mpi {

bool g_api_locking = false;

namespace {

// The lock is a ticket lock: a thread takes the next ticket and holds the
// lock when `serving` reaches it, so threads get it in the order they asked
// (a plain mutex lets the thread that just released it take it back before
// a woken waiter runs: measured, a thread polling MPI_Iprobe kept a
// ping-pong thread of its rank out for 5 ms per message). A waiter spins a
// little, then sleeps on `serving` with its ticket's bit
// (FUTEX_WAIT_BITSET), so a release wakes the next ticket's holder alone.
std::atomic<std::uint32_t> g_next{0};      // the next ticket handed out
std::atomic<std::uint32_t> g_serving{0};   // the ticket that holds the lock
std::atomic<std::uint32_t> g_sleepers{0};  // waiters asleep (or about to be) on g_serving
std::atomic<std::thread::id> g_owner{};
int g_depth = 0;  // the owner's nesting; only the owner touches it

// Spins before a waiter sleeps: about a microsecond, the time a short MPI
// call holds the lock; longer spinning only takes a core from the holder
// when ranks outnumber cores.
constexpr int k_spins = 64;

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
              std::atomic<std::uint32_t>::is_always_lock_free);

std::uint32_t *futex_word() { return reinterpret_cast<std::uint32_t *>(&g_serving); }
std::uint32_t bit_of(std::uint32_t ticket) { return 1u << (ticket % 32); }

using runtime::cpu_relax;

void acquire() {
    const std::uint32_t ticket = g_next.fetch_add(1, std::memory_order_relaxed);
    for (int i = 0; i < k_spins; ++i) {
        if (g_serving.load(std::memory_order_acquire) == ticket) return;
        cpu_relax();
    }
    for (;;) {
        // Counted before the last look, so that a release either sees this
        // sleeper and wakes it, or comes before that look (then the futex
        // call finds the word changed and returns at once).
        g_sleepers.fetch_add(1, std::memory_order_seq_cst);
        const std::uint32_t now = g_serving.load(std::memory_order_seq_cst);
        if (now != ticket)
            ::syscall(SYS_futex, futex_word(), FUTEX_WAIT_BITSET_PRIVATE, now, nullptr, nullptr, bit_of(ticket));
        g_sleepers.fetch_sub(1, std::memory_order_relaxed);
        if (g_serving.load(std::memory_order_acquire) == ticket) return;
    }
}

void release() {
    const std::uint32_t next = g_serving.fetch_add(1, std::memory_order_seq_cst) + 1;
    if (g_sleepers.load(std::memory_order_seq_cst) != 0)
        ::syscall(SYS_futex, futex_word(), FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, nullptr, nullptr, bit_of(next));
}

}  // namespace

void api_lock() {
    const std::thread::id me = std::this_thread::get_id();
    if (g_owner.load(std::memory_order_relaxed) == me) {
        ++g_depth;
        return;
    }
    acquire();
    g_owner.store(me, std::memory_order_relaxed);
    g_depth = 1;
}

void api_unlock() {
    if (--g_depth > 0) return;
    g_owner.store(std::thread::id{}, std::memory_order_relaxed);
    release();
}

bool api_lock_yield() {
    if (g_owner.load(std::memory_order_relaxed) != std::this_thread::get_id()) return false;
    // Nobody else asked: keep it (a thread that asks later gets it at the
    // next turn).
    if (g_next.load(std::memory_order_relaxed) - g_serving.load(std::memory_order_relaxed) <= 1) return false;
    const int depth = g_depth;
    g_owner.store(std::thread::id{}, std::memory_order_relaxed);
    release();
    acquire();  // behind every thread that was waiting
    g_owner.store(std::this_thread::get_id(), std::memory_order_relaxed);
    g_depth = depth;
    return true;
}

}  // namespace ftmpi::mpi
