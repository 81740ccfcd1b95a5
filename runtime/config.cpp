#include "runtime/config.hpp"

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace ftmpi::runtime {
namespace {

Config g_config;

void parse(const char *var, const char *text, std::string &out) {
    out = text;
    (void)var;
}

template <typename Int>
void parse(const char *var, const char *text, Int &out) {
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0')
        throw std::runtime_error(std::string("invalid value '") + text + "' for " + var + " (expected an integer)");
    if constexpr (std::is_unsigned_v<Int>) {
        if (v < 0)
            throw std::runtime_error(std::string("invalid value '") + text + "' for " + var +
                                     " (expected a non-negative integer)");
    }
    out = static_cast<Int>(v);
}

template <typename T>
std::string show(const T &v) {
    std::ostringstream os;
    if constexpr (std::is_same_v<T, std::string>) os << (v.empty() ? "(empty)" : v);
    else os << v;
    return os.str();
}

}  // namespace

Config config_from_environment() {
    Config c;
#define FTMPI_KNOB_PARSE(name, type, def, layer, help)                  \
    if (const char *s = std::getenv("FTMPI_" #name); s && *s != '\0') { \
        parse("FTMPI_" #name, s, c.name);                               \
        c.set.name = true;                                              \
    }
    FTMPI_KNOBS(FTMPI_KNOB_PARSE)
#undef FTMPI_KNOB_PARSE
    return c;
}

void load_config() { g_config = config_from_environment(); }

// A crowded node's processes take turns on its cores, and a rendezvous
// waits for its receiver to run: on 4 ranks over 2 cores, messages up to
// 64 KiB went faster eagerly (osu_bcast, osu_allreduce, osu_iallgather,
// osu_neighbor_allgather); larger ones move by single copy (single_copy,
// config.hpp).
void settle_node_knobs(bool crowded) {
    g_config.crowded = crowded;
    if (crowded && !g_config.set.EAGER_LIMIT) g_config.EAGER_LIMIT = 65536;
    if (crowded && !g_config.set.COLL_EAGER_LIMIT) g_config.COLL_EAGER_LIMIT = 65536;
}

const Config &config() { return g_config; }

std::string knob_help(const Config &now) {
    std::ostringstream os;
    const Config defaults;
#define FTMPI_KNOB_HELP(name, type, def, layer, help)                                                             \
    os << "  FTMPI_" #name << " = " << show(now.name) << " (" << (now.set.name ? "set" : "unset") << "; default " \
       << show(defaults.name) << ")\n      " << help << "\n";
    FTMPI_KNOBS(FTMPI_KNOB_HELP)
#undef FTMPI_KNOB_HELP
    return os.str();
}

}  // namespace ftmpi::runtime
