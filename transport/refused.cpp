#include "transport/refused.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "runtime/log.hpp"

namespace ftmpi::transport {
namespace {
std::atomic<std::uint64_t> g_refused{0};
constexpr std::uint64_t k_logged_in_full = 10;
constexpr std::uint64_t k_then_one_in = 1000;
}  // namespace

void refuse(const char *channel, const char *why_fmt, ...) {
    const std::uint64_t n = g_refused.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n > k_logged_in_full && n % k_then_one_in != 0) return;
    char why[256];
    va_list ap;
    va_start(ap, why_fmt);
    std::vsnprintf(why, sizeof why, why_fmt, ap);
    va_end(ap);
    FTMPI_WARN("%s channel: refused input (%s)%s", channel, why,
               n == k_logged_in_full ? "; further refusals are logged one in 1000" : "");
}

std::uint64_t refused_count() { return g_refused.load(std::memory_order_relaxed); }

}  // namespace ftmpi::transport
