// Fault injection at exact protocol points, for tests (FTMPI_TEST_KILL_AT).
//
// Sites: agree.contribute (a member, right after sending its contribution),
// agree.decide (a coordinator, after sending its decision to half the members),
// coll.round (any rank, before posting a round of a collective's schedule).
#pragma once

namespace ftmpi::runtime {

// SIGKILLs this process if FTMPI_TEST_KILL_AT names `site`, this job rank and
// this visit. One string compare per visit when the knob is set, nothing otherwise.
void test_kill_point(const char *site, int job_rank);

}  // namespace ftmpi::runtime
