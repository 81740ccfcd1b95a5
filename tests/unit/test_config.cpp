#include <cstdlib>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "runtime/config.hpp"

using namespace ftmpi::runtime;

TEST_CASE("knobs have their defaults and parse from the environment", "[runtime][config]") {
    ::unsetenv("FTMPI_EAGER_LIMIT");
    ::unsetenv("FTMPI_PROVIDER");
    load_config();
    CHECK(config().EAGER_LIMIT == 8192);
    CHECK(config().PROVIDER.empty());
    ::setenv("FTMPI_EAGER_LIMIT", "0x1000", 1);
    ::setenv("FTMPI_PROVIDER", "tcp", 1);
    load_config();
    CHECK(config().EAGER_LIMIT == 4096);
    CHECK(config().PROVIDER == "tcp");
    ::unsetenv("FTMPI_EAGER_LIMIT");
    ::unsetenv("FTMPI_PROVIDER");
    load_config();
}

TEST_CASE("malformed knob values are rejected with the variable's name", "[runtime][config]") {
    const char *bad[] = {"abc", "12x", "-5", ""};
    for (const char *v : bad) {
        if (*v == '\0') continue;  // empty means "unset"
        ::setenv("FTMPI_RX_BUFFERS", v, 1);
        try {
            load_config();
            FAIL("accepted FTMPI_RX_BUFFERS=" << v);
        } catch (const std::runtime_error &e) {
            CHECK(std::string(e.what()).find("FTMPI_RX_BUFFERS") != std::string::npos);
        }
    }
    ::unsetenv("FTMPI_RX_BUFFERS");
    load_config();
}

TEST_CASE("help text lists every knob with its value, whether set, and its default", "[runtime][config]") {
    ::setenv("FTMPI_RX_BUFFERS", "32", 1);
    const Config now = config_from_environment();
    ::unsetenv("FTMPI_RX_BUFFERS");
    CHECK(now.set.RX_BUFFERS);
    CHECK_FALSE(now.set.EAGER_LIMIT);
    const std::string help = knob_help(now);
    for (const char *k : {"FTMPI_PROVIDER", "FTMPI_NET_PROVIDER", "FTMPI_NET_IFACE", "FTMPI_EAGER_LIMIT",
                          "FTMPI_RX_BUFFERS", "FTMPI_YIELD", "FTMPI_LOG", "FTMPI_LAUNCHER", "FTMPI_PARENT_PORT"})
        CHECK(help.find(k) != std::string::npos);
    CHECK(help.find("FTMPI_RX_BUFFERS = 32 (set; default 64)") != std::string::npos);
    CHECK(help.find("FTMPI_EAGER_LIMIT = 8192 (unset; default 8192)") != std::string::npos);
}

TEST_CASE("single copy within a node: every rendezvous, crowded or not, unless turned off", "[runtime][config]") {
    Config c;
    CHECK(c.SHM_CMA == 1);
    CHECK(single_copy(c));
    c.crowded = true;
    CHECK(single_copy(c));
    c.SHM_CMA = -1;  // the old default's value: still on
    CHECK(single_copy(c));
    c.SHM_CMA = 0;
    CHECK_FALSE(single_copy(c));
    c.crowded = false;
    CHECK_FALSE(single_copy(c));
}
