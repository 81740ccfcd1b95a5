// Fault injection at exact protocol points, for tests (FTMPI_TEST_KILL_AT).
//
//   FTMPI_TEST_KILL_AT=SITE:RANK[:NTH[:HOW]][,SITE:RANK[:NTH[:HOW]]...]
//
// Job rank RANK dies at its NTH visit (default 1) of SITE. HOW is `kill`
// (SIGKILL, the default), `exit` (exit(3), which runs atexit handlers and
// destructors as a program calling exit would) or `stop` (SIGSTOP: the
// process stays, silent, until the failure detector gives up on it and asks
// the launcher to kill it). Several specs kill several ranks, each counting
// its own visits. FTMPI_TEST_KILL_AT=count instead counts every site's
// visits and prints them to stderr at exit ("ftmpi-hooks: rank R SITE=N ..."),
// so that a test driver can pick visits that happen.
//
// Sites: agree.contribute (a member, right after sending its contribution),
// agree.decide (an agreement root, after sending its decision to half its children),
// coll.round (any rank, before posting a round of a collective's schedule),
// p2p.send / p2p.recv (a point-to-point transfer about to start, also inside
// collectives), shm.pull (a receiver of a rendezvous message over shared
// memory that has copied its share of the data, the transfer not over),
// shm.push (a sender that has claimed a chunk of such a message to copy to
// its receiver, before it copies it), shm.record (a sender that has written an eager message into the
// ring, not yet published), shm.cts (a receiver of a message streamed through
// the rings, once it has asked for the data), revoke (after sending the
// revoke notice to half of its neighbours), shrink (after the shrink's
// agreement, before the new communicator exists), dup (inside MPI_Comm_dup,
// before its agreement), finalize (on entry to MPI_Finalize),
// io.collective (a member of a blocking collective file access, after its own
// access and before the exchange), io.shared (after reserving at the shared
// file pointer, before the access), connect.joined (a member of either group
// of a connection between jobs, once it has the other group and before the
// inter-communicator's agreement; MPI_Comm_spawn, accept, connect, join),
// team.result (the root of the exchange inside communicator, window and
// file creation, after sending the result to its first member only),
// rma.fence (in MPI_Win_fence, its operations complete, before the
// exchange), rma.lock (a lock request sent, not yet granted), rma.flush (on
// entry to a flush, before its operations complete), rma.acc (an
// accumulate sent to its target), rma.acc_locked (an accumulate or atomic on
// mapped memory, holding the memory's accumulate lock).
#pragma once

namespace ftmpi::runtime {

namespace detail {
extern bool g_test_hooks_armed;
void test_kill_point_slow(const char *site);
}  // namespace detail

// Init, after load_config(): arms the hooks when FTMPI_TEST_KILL_AT is set.
void arm_test_hooks(int job_rank);

// Kills this process as FTMPI_TEST_KILL_AT says if it names `site`, this job
// rank and this visit. One load of a flag when the knob is unset (the normal case).
inline void test_kill_point(const char *site) {
    if (detail::g_test_hooks_armed) detail::test_kill_point_slow(site);
}

}  // namespace ftmpi::runtime
