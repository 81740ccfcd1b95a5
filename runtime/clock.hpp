// MPI_Wtime's clock: CLOCK_MONOTONIC, read through the CPU's time-stamp
// counter once it is calibrated against it.
//
// A vDSO clock_gettime costs about 25 ns here (a VM), a time-stamp counter
// read about 8: benchmarks that time each call of a 0.1 µs operation (OSU's
// one-sided latencies) pay two of them per iteration, and Open MPI reads
// the counter too. Where the kernel itself keeps time with the counter
// (clocksource "tsc": invariant and synchronized across CPUs), the first
// calls read CLOCK_MONOTONIC and note the counter; once k_calibration has
// passed (or MPI_Init's own span, when it took long enough: settle_clock),
// the counter's rate is known to about a part per million and the clock
// continues from that point on the counter alone. Elsewhere
// (another clocksource, another architecture) it stays clock_gettime.
#pragma once

namespace ftmpi::runtime {

// Seconds, monotonic, process-local (MPI_WTIME_IS_GLOBAL is false).
double wtime();

// MPI_Init's start and end: the calibration's first sample, and its second
// once `span` seconds have passed since the first, if the two samples give
// the rate to a couple of parts per million (else the calibration goes on
// as without it). A benchmark's first timings come right after MPI_Init,
// long before k_calibration.
void start_clock();
void settle_clock(double span);
// The kernel's clocksource is the time-stamp counter.
bool kernel_keeps_time_with_tsc();
// Calibrated: wtime() reads the counter alone.
bool clock_reads_counter();

}  // namespace ftmpi::runtime
