// The tools interface (mpi/tools/mpit.cpp) in one process, without MPI_Init: the
// control variables follow the knob table, FTMPI_LOG changes what the logger
// prints, and a session's counters follow the process's counters exactly.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "mpi/state.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"

namespace {

// What `f` writes to file descriptor 2.
template <typename F>
std::string stderr_of(F f) {
    std::fflush(stderr);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const int saved = ::dup(STDERR_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    f();
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    return out;
}

struct ToolsSession {
    ToolsSession() {
        int provided = -1;
        REQUIRE(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    }
    ~ToolsSession() { MPI_T_finalize(); }
};

int cvar(const char *name) {
    int i = -1;
    REQUIRE(MPI_T_cvar_get_index(name, &i) == MPI_SUCCESS);
    return i;
}

}  // namespace

TEST_CASE("a control variable per knob, in the table's order", "[mpi][tools]") {
    ToolsSession t;
    const char *names[] = {
#define FTMPI_KNOB_NAME(name, type, def, layer, help) "FTMPI_" #name,
        FTMPI_KNOBS(FTMPI_KNOB_NAME)
#undef FTMPI_KNOB_NAME
    };
    int n = -1;
    REQUIRE(MPI_T_cvar_get_num(&n) == MPI_SUCCESS);
    REQUIRE(n == static_cast<int>(sizeof names / sizeof names[0]));
    for (int i = 0; i < n; ++i) CHECK(cvar(names[i]) == i);
}

TEST_CASE("writing FTMPI_LOG changes what the logger prints", "[mpi][tools][runtime]") {
    ToolsSession t;
    MPI_T_cvar_handle h;
    int count = 0, saved = -1;
    REQUIRE(MPI_T_cvar_handle_alloc(cvar("FTMPI_LOG"), nullptr, &h, &count) == MPI_SUCCESS);
    REQUIRE(MPI_T_cvar_read(h, &saved) == MPI_SUCCESS);
    CHECK(saved == ftmpi::runtime::log_level());

    int level = 0;  // errors only
    REQUIRE(MPI_T_cvar_write(h, &level) == MPI_SUCCESS);
    CHECK(ftmpi::runtime::log_level() == 0);
    std::string out = stderr_of([] {
        FTMPI_WARN("tools-test warning at level 0");
        FTMPI_ERROR("tools-test error at level 0");
    });
    CHECK(out.find("tools-test warning") == std::string::npos);
    CHECK(out.find("tools-test error at level 0") != std::string::npos);

    level = 3;  // debug
    REQUIRE(MPI_T_cvar_write(h, &level) == MPI_SUCCESS);
    out = stderr_of([] { FTMPI_DEBUG("tools-test debug at level 3"); });
    CHECK(out.find("debug: tools-test debug at level 3") != std::string::npos);

    // A later reload of the environment (MPI_Init) keeps the written level.
    ::setenv("FTMPI_LOG", "1", 1);
    ftmpi::runtime::load_config();
    ::unsetenv("FTMPI_LOG");
    int now = -1;
    REQUIRE(MPI_T_cvar_read(h, &now) == MPI_SUCCESS);
    CHECK(now == 3);

    REQUIRE(MPI_T_cvar_write(h, &saved) == MPI_SUCCESS);
    REQUIRE(MPI_T_cvar_handle_free(&h) == MPI_SUCCESS);
}

TEST_CASE("session counters follow the process's counters", "[mpi][tools]") {
    ToolsSession t;
    auto &p2p = ftmpi::mpi::g.p2p;
    const auto saved = p2p;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int index = -1, count = 0;
    unsigned long long v = 0;
    REQUIRE(MPI_T_pvar_session_create(&s) == MPI_SUCCESS);
    REQUIRE(MPI_T_pvar_get_index("ftmpi_p2p_bytes_received", MPI_T_PVAR_CLASS_COUNTER, &index) == MPI_SUCCESS);
    REQUIRE(MPI_T_pvar_handle_alloc(s, index, nullptr, &h, &count) == MPI_SUCCESS);
    auto read = [&] {
        REQUIRE(MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS);
        return v;
    };

    p2p.bytes_received += 100;  // stopped: not counted
    CHECK(read() == 0);
    REQUIRE(MPI_T_pvar_start(s, h) == MPI_SUCCESS);
    p2p.bytes_received += 7;
    CHECK(read() == 7);
    REQUIRE(MPI_T_pvar_stop(s, h) == MPI_SUCCESS);
    p2p.bytes_received += 50;
    CHECK(read() == 7);
    REQUIRE(MPI_T_pvar_start(s, h) == MPI_SUCCESS);
    p2p.bytes_received += 3;
    CHECK(read() == 10);
    v = 40;
    REQUIRE(MPI_T_pvar_write(s, h, &v) == MPI_SUCCESS);
    p2p.bytes_received += 2;
    CHECK(read() == 42);
    REQUIRE(MPI_T_pvar_readreset(s, h, &v) == MPI_SUCCESS);
    CHECK(v == 42);
    CHECK(read() == 0);

    REQUIRE(MPI_T_pvar_session_free(&s) == MPI_SUCCESS);
    p2p = saved;
}

TEST_CASE("MPI_T error classes have strings", "[mpi][tools][errors]") {
    for (int c = MPI_T_ERR_MEMORY; c <= MPI_T_ERR_INVALID; ++c) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0, cls = -1;
        REQUIRE(MPI_Error_string(c, text, &len) == MPI_SUCCESS);
        CHECK(std::strncmp(text, "MPI_T_ERR_", 10) == 0);
        REQUIRE(MPI_Error_class(c, &cls) == MPI_SUCCESS);
        CHECK(cls == c);
    }
}
