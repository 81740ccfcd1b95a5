// MPI_Wtime's clock (clock.hpp).
#include "runtime/clock.hpp"

#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace ftmpi::runtime {
namespace {

double monotonic() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

#if defined(__x86_64__)
constexpr double k_calibration = 0.2;    // seconds of clock_gettime before the counter alone
constexpr double k_settle_error = 2e-6;  // settle_clock's tolerance (calibrating_wtime)

enum State : int { unknown, no_counter, calibrating, busy, ready };

struct Sample {
    std::uint64_t tsc = 0;
    double t = 0;
    std::uint64_t spread = 0;  // ticks between the counter reads around the clock's
};

// The counter and the clock at one moment: of 20 tries (well under a
// microsecond each), the one whose two counter reads around the clock's are
// closest (no interruption). None within k_sample_ticks (a few
// microseconds): no counter, rather than a calibration off by what an
// interruption took.
constexpr std::uint64_t k_sample_ticks = 20000;

bool sample(Sample &s) {
    std::uint64_t best = UINT64_MAX;
    for (int i = 0; i < 20; ++i) {
        const std::uint64_t a = __rdtsc();
        const double t = monotonic();
        const std::uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            s = {a + (b - a) / 2, t, b - a};
        }
    }
    return best < k_sample_ticks;
}

struct Counter {
    std::atomic<int> state{unknown};
    Sample first, anchor;
    double per_tick = 0;  // seconds per counter tick
};
Counter g_counter;

// Not calibrated yet, or no counter to use: CLOCK_MONOTONIC, and the
// calibration's steps (one thread at a time takes each: `busy`), the second
// once `span` seconds have passed since the first. `tolerance`: the rate's
// largest relative error that ends the calibration (the two samples'
// spreads over the ticks between them); a worse second sample, or one an
// interruption spoiled, leaves it calibrating, for a later try. 0: any
// usable sample ends it, and an unusable one leaves clock_gettime.
double calibrating_wtime(double span, double tolerance) {
    Counter &c = g_counter;
    int s = c.state.load(std::memory_order_acquire);
    if (s == unknown && c.state.compare_exchange_strong(s, busy, std::memory_order_acq_rel)) {
        Sample f;
        const bool ok = kernel_keeps_time_with_tsc() && sample(f);
        c.first = f;
        c.state.store(ok ? calibrating : no_counter, std::memory_order_release);
        return f.t > 0 ? f.t : monotonic();
    }
    const double now = monotonic();
    if (s != calibrating || now - c.first.t < span) return now;
    if (!c.state.compare_exchange_strong(s, busy, std::memory_order_acq_rel)) return now;
    Sample a;
    const bool usable = sample(a) && a.tsc > c.first.tsc;
    const double error =
        usable ? static_cast<double>(c.first.spread + a.spread) / 2.0 / static_cast<double>(a.tsc - c.first.tsc) : 1.0;
    if (tolerance > 0 && error > tolerance) {
        c.state.store(calibrating, std::memory_order_release);
        return now;
    }
    if (!usable) {
        c.state.store(no_counter, std::memory_order_release);
        return now;
    }
    c.per_tick = (a.t - c.first.t) / static_cast<double>(a.tsc - c.first.tsc);
    c.anchor = a;
    c.state.store(ready, std::memory_order_release);
    return a.t;
}
#endif

}  // namespace

bool kernel_keeps_time_with_tsc() {
    std::FILE *f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
    if (f == nullptr) return false;
    char buf[32] = {};
    const bool tsc = std::fgets(buf, sizeof buf, f) != nullptr && std::strcmp(buf, "tsc\n") == 0;
    std::fclose(f);
    return tsc;
}

double wtime() {
#if defined(__x86_64__)
    const Counter &c = g_counter;
    if (c.state.load(std::memory_order_acquire) == ready)
        return c.anchor.t + static_cast<double>(__rdtsc() - c.anchor.tsc) * c.per_tick;
    return calibrating_wtime(k_calibration, 0);
#else
    return monotonic();
#endif
}

void start_clock() { (void)wtime(); }

bool clock_reads_counter() {
#if defined(__x86_64__)
    return g_counter.state.load(std::memory_order_acquire) == ready;
#else
    return false;
#endif
}

void settle_clock(double span) {
#if defined(__x86_64__)
    if (g_counter.state.load(std::memory_order_acquire) == calibrating) (void)calibrating_wtime(span, k_settle_error);
#else
    (void)span;
#endif
}

}  // namespace ftmpi::runtime
