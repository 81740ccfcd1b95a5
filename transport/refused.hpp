// Input that a channel refused: a datagram from a process that is not one of
// the job's, a message that does not decode. Nothing refused is ever acted on; each is counted (the MPI_T
// counter ftmpi_refused_messages) and logged, per channel the first ten in
// full and then one in 1000, so that a flood of them cannot flood the log.
#pragma once

#include <cstdint>

namespace ftmpi::transport {

// Counts one refusal on `channel` ("detector", "liveness", ...) and logs it
// with the reason (printf-style). Thread-safe.
[[gnu::format(printf, 2, 3)]] void refuse(const char *channel, const char *why_fmt, ...);

// Refusals since the process started, every channel together.
std::uint64_t refused_count();

}  // namespace ftmpi::transport
