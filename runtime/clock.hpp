// MPI_Wtime's clock: CLOCK_MONOTONIC, read through the CPU's time-stamp
// counter once it is calibrated against it.
//
// A vDSO clock_gettime costs about 25 ns here (a VM), a time-stamp counter
// read about 8: benchmarks that time each call of a 0.1 µs operation (OSU's
// one-sided latencies) pay two of them per iteration, and Open MPI reads
// the counter too. Where the kernel itself keeps time with the counter
// (clocksource "tsc": invariant and synchronized across CPUs), the first
// calls read CLOCK_MONOTONIC and note the counter; once k_calibration has
// passed, the counter's rate is known to better than a part per million
// and the clock continues from that point on the counter alone. Elsewhere
// (another clocksource, another architecture) it stays clock_gettime.
#pragma once

namespace ftmpi::runtime {

// Seconds, monotonic, process-local (MPI_WTIME_IS_GLOBAL is false).
double wtime();

}  // namespace ftmpi::runtime
