// The task keeper (runtime/task_keeper.hpp): what the task srun waits for
// reports, for each way the rank ends. Each case forks a "task" that starts a
// keeper; the rank (the task's child) then does one thing, and the test reads
// the task's wait status as slurmstepd would.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "runtime/shm_names.hpp"
#include "runtime/task_keeper.hpp"

using ftmpi::runtime::start_task_keeper;
using ftmpi::runtime::task_keeper_joined;

namespace {

// Waits up to 20 s for `pid`; SIGKILLs it (failing the test) past that.
int wait_status(pid_t pid) {
    int status = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return status;
        if (std::chrono::steady_clock::now() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            FAIL("the task did not end within 20 s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

// Forks a task whose keeper takes `launcher` (0: this test process) as
// slurmstepd; the rank runs `rank` and then exits 99. Returns the task's pid;
// `ready` gets one byte from the rank (its pid) when `rank` calls `signal_ready`.
struct Task {
    pid_t task = -1;
    pid_t rank = -1;
};

int g_ready_fd = -1;
void signal_ready() {
    const pid_t me = getpid();
    if (write(g_ready_fd, &me, sizeof me) != sizeof me) _exit(97);
}


Task start(const std::function<void()> &rank, pid_t launcher = 0, bool wait_ready = false) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t self = getpid();
    const pid_t task = fork();
    REQUIRE(task >= 0);
    if (task == 0) {
        close(fds[0]);
        g_ready_fd = fds[1];
        // Catch's own handlers would report the signals a task gets as this test's failure.
        for (int sig : {SIGTERM, SIGINT, SIGSEGV, SIGABRT, SIGILL, SIGFPE}) signal(sig, SIG_DFL);
        if (start_task_keeper(launcher != 0 ? launcher : self) < 0) _exit(98);
        rank();
        _exit(99);
    }
    close(fds[1]);
    Task t{task, -1};
    if (wait_ready) REQUIRE(read(fds[0], &t.rank, sizeof t.rank) == sizeof t.rank);
    close(fds[0]);
    return t;
}

// The rank: waits for signals (a handler for SIGUSR1 exits 7).
void wait_for_signals() {
    signal(SIGUSR1, [](int) { _exit(7); });
    signal_ready();
    for (;;) pause();
}

// A task whose rank joined and waits for signals (ready when this returns).
Task start_waiting(pid_t launcher) {
    return start(
        [] {
            task_keeper_joined();
            wait_for_signals();
        },
        launcher, true);
}

}  // namespace

TEST_CASE("task keeper: the rank's exit code is the task's", "[keeper]") {
    const int st = wait_status(start([] { _exit(3); }).task);
    REQUIRE(WIFEXITED(st));
    REQUIRE(WEXITSTATUS(st) == 3);
}

TEST_CASE("task keeper: a joined rank killed alone leaves the task exiting 0", "[keeper]") {
    const int st = wait_status(start([] {
                                   task_keeper_joined();
                                   raise(SIGKILL);
                               }).task);
    REQUIRE(WIFEXITED(st));
    REQUIRE(WEXITSTATUS(st) == 0);
}

TEST_CASE("task keeper: a rank killed before joining kills the task the same way", "[keeper]") {
    const int st = wait_status(start([] { raise(SIGKILL); }).task);
    REQUIRE(WIFSIGNALED(st));
    REQUIRE(WTERMSIG(st) == SIGKILL);
}

TEST_CASE("task keeper: a signal to the task from a third process reaches the rank", "[keeper]") {
    // pid 1 stands for slurmstepd: this test process is a third party.
    const Task t = start_waiting(1);
    REQUIRE(kill(t.task, SIGUSR1) == 0);
    const int st = wait_status(t.task);
    REQUIRE(WIFEXITED(st));
    REQUIRE(WEXITSTATUS(st) == 7);
}

TEST_CASE("task keeper: a signal the whole step got ends the task by that signal", "[keeper]") {
    // This test process is slurmstepd: it signals both processes of the step,
    // and the keeper forwards nothing from it.
    // The rank first: the keeper learns of its death before its own copy of
    // the signal arrives, and must wait for that before deciding.
    const Task t = start_waiting(0);
    REQUIRE(kill(t.rank, SIGTERM) == 0);
    REQUIRE(kill(t.task, SIGTERM) == 0);
    const int st = wait_status(t.task);
    REQUIRE(WIFSIGNALED(st));
    REQUIRE(WTERMSIG(st) == SIGTERM);
}

TEST_CASE("task keeper: the rank dies with its keeper", "[keeper]") {
    const Task t = start_waiting(0);
    REQUIRE(kill(t.task, SIGKILL) == 0);
    const int st = wait_status(t.task);
    REQUIRE(WIFSIGNALED(st));
    // The rank gets SIGKILL when its keeper dies (it would wait forever otherwise).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!ftmpi::runtime::process_gone(t.rank) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE(ftmpi::runtime::process_gone(t.rank));
}

TEST_CASE("task keeper: the shm regions of a killed rank are removed", "[keeper]") {
    const Task t = start(
        [] {
            // Stands for the shm provider's region (runtime/shm_names.hpp).
            const std::string name = "/dev/shm/" + ftmpi::runtime::new_shm_region_name();
            FILE *f = std::fopen(name.c_str(), "w");
            if (f == nullptr) _exit(96);
            std::fclose(f);
            task_keeper_joined();
            signal_ready();
            raise(SIGKILL);
        },
        0, true);
    const int st = wait_status(t.task);
    REQUIRE(WIFEXITED(st));
    REQUIRE(WEXITSTATUS(st) == 0);
    REQUIRE(ftmpi::runtime::remove_shm_regions_of(t.rank) == 0);
}
