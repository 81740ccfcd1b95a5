#include "runtime/test_hooks.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/config.hpp"
#include "runtime/log.hpp"

namespace ftmpi::runtime {

void test_kill_point(const char *site, int job_rank) {
    const std::string &spec = config().TEST_KILL_AT;
    if (spec.empty()) return;
    const auto colon = spec.find(':');
    if (colon == std::string::npos || spec.compare(0, colon, site) != 0) return;
    int rank = -1, nth = 1;
    if (std::sscanf(spec.c_str() + colon + 1, "%d:%d", &rank, &nth) < 1 || rank != job_rank) return;
    static int visits = 0;
    if (++visits != nth) return;
    FTMPI_WARN("test hook: dying at %s (visit %d)", site, visits);
    std::fflush(nullptr);
    ::raise(SIGKILL);
}

}  // namespace ftmpi::runtime
