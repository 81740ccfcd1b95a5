// Fault injection at exact protocol points, for tests (FTMPI_TEST_KILL_AT).
//
// Sites: agree.contribute (a member, right after sending its contribution),
// agree.decide (a coordinator, after sending its decision to half the members),
// coll.round (any rank, before posting a round of a collective's schedule),
// io.collective (a member of a blocking collective file access, after its own
// access and before the exchange), io.shared (after reserving at the shared
// file pointer, before the access).
#pragma once

namespace ftmpi::runtime {

namespace detail {
extern bool g_test_hooks_armed;
void test_kill_point_slow(const char *site);
}  // namespace detail

// Init, after load_config(): arms the hooks when FTMPI_TEST_KILL_AT is set.
void arm_test_hooks(int job_rank);

// SIGKILLs this process if FTMPI_TEST_KILL_AT names `site`, this job rank and
// this visit. One load of a flag when the knob is unset (the normal case).
inline void test_kill_point(const char *site) {
    if (detail::g_test_hooks_armed) detail::test_kill_point_slow(site);
}

}  // namespace ftmpi::runtime
