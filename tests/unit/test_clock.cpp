// MPI_Wtime's clock (runtime/clock.hpp): monotonic, and on CLOCK_MONOTONIC
// before and after it moves to the time-stamp counter.
#include <time.h>

#include <catch2/catch.hpp>

#include "runtime/clock.hpp"

namespace {
double monotonic() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

TEST_CASE("wtime: monotonic, and within microseconds of CLOCK_MONOTONIC across calibration", "[runtime][clock]") {
    using ftmpi::runtime::wtime;
    // As MPI_Init: the first sample, 50 ms of work, the second, and from then
    // on the counter (where the kernel keeps time with it, on x86-64).
    ftmpi::runtime::start_clock();
    ftmpi::runtime::settle_clock(0.02);
    CHECK_FALSE(ftmpi::runtime::clock_reads_counter());  // too soon
    const double begin = monotonic();
    while (monotonic() - begin < 0.05) {}
    ftmpi::runtime::settle_clock(0.02);
#if defined(__x86_64__)
    CHECK(ftmpi::runtime::clock_reads_counter() == ftmpi::runtime::kernel_keeps_time_with_tsc());
#endif
    double prev = wtime(), worst = 0;
    long backwards = 0;
    const double start = monotonic();
    // On the counter alone for a while.
    while (monotonic() - start < 0.5) {
        const double before = monotonic();
        const double w = wtime();
        const double after = monotonic();
        if (w < prev) ++backwards;
        prev = w;
        // Off by at most the calibration's error over half a second.
        const double off = w < before ? before - w : (w > after ? w - after : 0.0);
        if (off > worst) worst = off;
    }
    CHECK(backwards == 0);
    CHECK(worst < 50e-6);
}
