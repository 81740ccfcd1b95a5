// Process-wide MPI state and the progress engine.
//
// Every blocking wait in libftmpi is `while (!done) progress_wait();` (or a
// look after progress() then end_turn()): one poll of the transport, one
// check of the failure record (a load and a compare when nothing failed),
// then the library lock given up for a moment under MPI_THREAD_MULTIPLE or,
// when ranks outnumber cores, a sched_yield if the poll found nothing.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <memory>

#include "ft/failures.hpp"
#include "mpi/api/api_lock.hpp"
#include "runtime/process_manager.hpp"
#include "transport/transport.hpp"

namespace ftmpi::mpi {

class Engine;

// Point-to-point traffic of this process on the communicators' point-to-point
// context (collectives, one-sided and fault-tolerance messages are not
// counted), for the MPI_T performance variables (mpi/tools/mpit_pvar.cpp). Plain
// counters: one thread at a time runs the data path (under MPI_THREAD_MULTIPLE, the
// one holding the library lock, mpi/api/api_lock.hpp).
struct P2pCounts {
    // Sends handed to the transport: not those to MPI_PROC_NULL, nor those
    // refused or failed before they started; bytes as sent (packed).
    std::uint64_t messages_sent = 0;
    std::uint64_t bytes_sent = 0;
    // Receives completed with a message (truncated ones included; cancelled
    // ones and receives from MPI_PROC_NULL not); bytes as delivered.
    std::uint64_t messages_received = 0;
    std::uint64_t bytes_received = 0;
};

struct State {
    std::unique_ptr<runtime::ProcessManager> pm;
    std::unique_ptr<Engine> engine;
    std::unique_ptr<transport::Transport> transport;
    bool initialized = false;
    bool finalized = false;
    bool forked = false;  // this process was forked by a rank after MPI_Init (runtime/fork_guard.hpp)
    int thread_level = MPI_THREAD_SINGLE;
    pthread_t main_thread{};
    bool yield = false;
    std::uint64_t seen_epoch = 0;
    bool progressing = false;                  // inside progress(): see there
    ft::Failures *failures = &ft::failures();  // the process's record, without a call per poll
    P2pCounts p2p;
};

extern State g;

// Fails what a newly recorded peer failure makes impossible. Failure path only.
void on_new_failures();
// A layer that must act when a failure becomes known (recovery's
// agreements, RMA's windows, ...) subscribes its handler, which
// on_new_failures calls, in subscription order, after point-to-point has
// failed what the failure makes impossible: p2p knows none of them.
// MPI_Init subscribes the layers; a handler subscribed twice runs once.
void subscribe_failures(void (*handler)());

// Returns the number of transport events handled.
//
// Completion callbacks (a request's on_complete, a schedule's next round or
// finish hook, an agreement's decision) run inside progress(), and may start
// the next step of a nonblocking operation. The transport's poll is not
// re-entrant (its callbacks run while it walks its rings and backlogs), so a
// progress() called from inside one returns at once: the outer poll goes on
// when the callback returns. A blocking wait there could never end: it is an
// internal error (nested_wait).
inline int progress() {
    if (g.progressing) return 0;
    g.progressing = true;
    const int events = g.transport ? g.transport->poll() : 0;
    auto &f = *g.failures;
    f.poll();
    if (f.epoch() != g.seen_epoch) on_new_failures();
    g.progressing = false;
    return events;
}

[[noreturn]] void nested_wait();

void yield_cpu();

// The end of a turn of a blocking wait that is not over, after a progress()
// that handled `events`: under MPI_THREAD_MULTIPLE the library lock goes to
// the threads waiting for it, if any (mpi/api/api_lock.hpp), so that one of them
// may post what the wait needs; otherwise, oversubscribed, the CPU goes to
// the other processes when nothing came.
inline void end_turn(int events) {
    if (g_api_locking && api_lock_yield()) return;
    if (g.yield && events == 0) yield_cpu();  // something came: look again at once
}

// One turn of a blocking wait (never from inside progress(): see there).
inline void progress_wait() {
    if (g.progressing) nested_wait();
    end_turn(progress());
}

}  // namespace ftmpi::mpi
