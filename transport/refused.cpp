#include "transport/refused.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "runtime/log.hpp"

namespace ftmpi::transport {
namespace {
std::atomic<std::uint64_t> g_refused{0};
std::mutex g_per_channel_mu;
std::map<std::string, std::uint64_t> g_per_channel;  // each channel has its own log budget
constexpr std::uint64_t k_logged_in_full = 10;
constexpr std::uint64_t k_then_one_in = 1000;
}  // namespace

void refuse(const char *channel, const char *why_fmt, ...) {
    g_refused.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t n;
    {
        std::lock_guard<std::mutex> lock(g_per_channel_mu);
        n = ++g_per_channel[channel];
    }
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
