#include "runtime/log.hpp"

#include <unistd.h>

#include <atomic>
#include <ctime>
#include <cstdio>

#include "runtime/config.hpp"

namespace ftmpi::runtime {
namespace {
std::atomic<int> g_rank{-1};
// set_log_level's level, once it was called (g_level_set).
std::atomic<bool> g_level_set{false};
std::atomic<int> g_level{0};
constexpr const char *k_level_names[] = {"error", "warning", "info", "debug"};
}  // namespace

void set_log_rank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

int log_level() {
    if (g_level_set.load(std::memory_order_acquire)) return g_level.load(std::memory_order_relaxed);
    return config().LOG;
}

void set_log_level(int level) {
    g_level.store(level, std::memory_order_relaxed);
    g_level_set.store(true, std::memory_order_release);
}

const char *level_name(int level) {
    constexpr int n = static_cast<int>(sizeof k_level_names / sizeof k_level_names[0]);
    return level >= 0 && level < n ? k_level_names[level] : nullptr;
}

void vlog(Level level, const char *fmt, va_list ap) {
    if (static_cast<int>(level) > log_level()) return;
    char buf[2048];
    // Info and debug lines carry the node's monotonic clock (MPI_Wtime), to order events across ranks.
    char clock[32] = "";
    if (level >= Level::info) {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        std::snprintf(clock, sizeof clock, " %.6f",
                      static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9);
    }
    int n = std::snprintf(buf, sizeof buf, "ftmpi[%d]%s %s: ", g_rank.load(std::memory_order_relaxed), clock,
                          level_name(static_cast<int>(level)));
    if (n < 0) return;
    int m = std::vsnprintf(buf + n, sizeof buf - static_cast<size_t>(n) - 1, fmt, ap);
    if (m < 0) return;
    size_t len = static_cast<size_t>(n) + static_cast<size_t>(m);
    if (len > sizeof buf - 2) len = sizeof buf - 2;
    buf[len++] = '\n';
    ssize_t ignored = ::write(STDERR_FILENO, buf, len);
    (void)ignored;
}

void log(Level level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

}  // namespace ftmpi::runtime
