#include "runtime/log.hpp"

#include <unistd.h>

#include <atomic>
#include <ctime>
#include <cstdio>

#include "runtime/config.hpp"

namespace ftmpi::runtime {
namespace {
std::atomic<int> g_rank{-1};
}

void set_log_rank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

void vlog(Level level, const char *fmt, va_list ap) {
    if (static_cast<int>(level) > config().LOG) return;
    static const char *names[] = {"error", "warning", "info", "debug"};
    char buf[2048];
    // Info and debug lines carry the node's monotonic clock (MPI_Wtime), to order events across ranks.
    char clock[32] = "";
    if (level >= Level::info) {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        std::snprintf(clock, sizeof clock, " %.6f", static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9);
    }
    int n = std::snprintf(buf, sizeof buf, "ftmpi[%d]%s %s: ", g_rank.load(std::memory_order_relaxed), clock,
                          names[static_cast<int>(level)]);
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
