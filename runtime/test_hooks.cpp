#include "runtime/test_hooks.hpp"

#include <signal.h>

#include <cstdio>
#include <string>

#include "runtime/config.hpp"
#include "runtime/log.hpp"

namespace ftmpi::runtime {

namespace detail {
bool g_test_hooks_armed = false;
}

namespace {
int g_rank = -1;
}

void arm_test_hooks(int job_rank) {
    g_rank = job_rank;
    detail::g_test_hooks_armed = !config().TEST_KILL_AT.empty();
}

void detail::test_kill_point_slow(const char *site) {
    const std::string &spec = config().TEST_KILL_AT;
    const auto colon = spec.find(':');
    if (colon == std::string::npos || spec.compare(0, colon, site) != 0) return;
    int rank = -1, nth = 1;
    if (std::sscanf(spec.c_str() + colon + 1, "%d:%d", &rank, &nth) < 1 || rank != g_rank) return;
    static int visits = 0;
    if (++visits != nth) return;
    FTMPI_WARN("test hook: dying at %s (visit %d)", site, visits);
    std::fflush(nullptr);
    ::raise(SIGKILL);
}

}  // namespace ftmpi::runtime
