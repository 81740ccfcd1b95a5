#include "runtime/test_hooks.hpp"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "runtime/config.hpp"
#include "runtime/log.hpp"

namespace ftmpi::runtime {

namespace detail {
bool g_test_hooks_armed = false;
}

namespace {

enum class How { kill, exit, stop };

struct Spec {
    std::string site;
    int nth = 1;
    How how = How::kill;
    int visits = 0;
};

int g_hook_rank = -1;
bool g_counting = false;
std::vector<Spec> g_specs;             // this rank's
std::map<std::string, int> *g_counts;  // FTMPI_TEST_KILL_AT=count; leaked on purpose (read at exit)

void print_counts() {
    std::string line = "ftmpi-hooks: rank " + std::to_string(g_hook_rank);
    for (const auto &[site, n] : *g_counts) line += " " + site + "=" + std::to_string(n);
    std::fprintf(stderr, "%s\n", line.c_str());
}

// "site:rank[:nth[:how]]"; false when malformed.
bool parse_one(const std::string &text, Spec &spec, int &rank) {
    const auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    spec.site = text.substr(0, colon);
    char how[16] = "kill";
    const int got = std::sscanf(text.c_str() + colon + 1, "%d:%d:%15s", &rank, &spec.nth, how);
    if (got < 1 || spec.nth < 1) return false;
    if (std::strcmp(how, "kill") == 0) spec.how = How::kill;
    else if (std::strcmp(how, "exit") == 0) spec.how = How::exit;
    else if (std::strcmp(how, "stop") == 0) spec.how = How::stop;
    else return false;
    return true;
}

}  // namespace

void arm_test_hooks(int job_rank) {
    g_hook_rank = job_rank;
    const std::string &text = config().TEST_KILL_AT;
    if (text.empty()) return;
    if (text == "count") {
        g_counting = true;
        g_counts = new std::map<std::string, int>;
        std::atexit(print_counts);
        detail::g_test_hooks_armed = true;
        return;
    }
    std::size_t at = 0;
    while (at <= text.size()) {
        const auto comma = text.find(',', at);
        const std::string one = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        Spec spec;
        int rank = -1;
        if (!parse_one(one, spec, rank)) FTMPI_WARN("FTMPI_TEST_KILL_AT: ignoring '%s'", one.c_str());
        else if (rank == job_rank) g_specs.push_back(spec);
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    detail::g_test_hooks_armed = !g_specs.empty();
}

void detail::test_kill_point_slow(const char *site) {
    if (g_counting) {
        ++(*g_counts)[site];
        return;
    }
    for (Spec &s : g_specs) {
        if (s.site != site || ++s.visits != s.nth) continue;
        FTMPI_WARN("test hook: dying at %s (visit %d, %s)", site, s.visits,
                   s.how == How::kill   ? "SIGKILL"
                   : s.how == How::exit ? "exit(3)"
                                        : "SIGSTOP");
        std::fflush(nullptr);
        if (s.how == How::exit) std::exit(3);
        ::raise(s.how == How::stop ? SIGSTOP : SIGKILL);
        return;  // continued after a SIGSTOP: the detector has most likely failed it already
    }
}

}  // namespace ftmpi::runtime
