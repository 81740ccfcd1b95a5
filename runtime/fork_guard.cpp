#include "runtime/fork_guard.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace ftmpi::runtime {
namespace {

std::atomic<bool> g_armed{false};
void (*g_on_child)() = nullptr;

// Runs first among the exit handlers the child inherited (handlers run in
// reverse order of registration), before the libraries' destructors.
void child_exit(int status, void *) {
    std::fflush(nullptr);
    ::_exit(status);
}

// The rank's: registered at the first MPI_Init, so it runs before the
// handlers registered earlier and the libraries' destructors.
void rank_exit(int status, void *) {
    if (g_armed.load()) child_exit(status, nullptr);
}

void in_child() {
    if (!g_armed.exchange(false)) return;
    if (g_on_child != nullptr) g_on_child();
    ::on_exit(child_exit, nullptr);
}

}  // namespace

void arm_fork_guard(void (*on_child)()) {
    static const bool registered =
        ::pthread_atfork(nullptr, nullptr, in_child) == 0 && ::on_exit(rank_exit, nullptr) == 0;
    if (!registered) return;
    g_on_child = on_child;
    g_armed = true;
}

void disarm_fork_guard() { g_armed = false; }

}  // namespace ftmpi::runtime
