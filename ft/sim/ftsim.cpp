// ftsim: the fault-tolerance protocols of ft/ at scale, in one process.
//
//   ftsim scale [--max N] [--csv FILE]
//       Failure-free agreement, revoke, and the detector's failure notice at
//       n = 10, 100, ... N (default 100000): rounds (one round = one message
//       latency) and messages per process (mean, max). Agreement also with
//       one failure: the root killed halfway through its decision.
//   ftsim campaign [--n N] [--trials T] [--seed S] [--max-failures F]
//       T agreements among N processes with up to F random crashes each, at
//       random times or at random sends (mid-broadcast), over a network that
//       reorders; checks termination, agreement and validity. Exit status 1
//       on any violation.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ft/sim/sim.hpp"
#include "ft/topology.hpp"

using namespace ftmpi::ft;
using namespace ftmpi::ft::sim;

namespace {

long arg_long(int argc, char **argv, const char *name, long def) {
    for (int i = 2; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
    return def;
}
const char *arg_str(int argc, char **argv, const char *name) {
    for (int i = 2; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
    return nullptr;
}

struct Stats {
    double rounds = 0, mean = 0;
    long max = 0;
};

// Message counts per process: sends + receives.
Stats traffic(const AgreeSim &s, double rounds) {
    Stats st;
    st.rounds = rounds;
    long total = 0;
    int live = 0;
    for (int p = 0; p < s.size(); ++p) {
        if (!s.alive(p)) continue;
        const long m = s.sends(p) + s.receives(p);
        total += m;
        st.max = std::max(st.max, m);
        ++live;
    }
    st.mean = live ? static_cast<double>(total) / live : 0;
    return st;
}

double last_decision(const AgreeSim &s) {
    double last = 0;
    for (int p = 0; p < s.size(); ++p)
        if (s.alive(p)) last = std::max(last, s.decided_at(p, 0));
    return last;
}

int scale(int argc, char **argv) {
    const long max = arg_long(argc, argv, "--max", 100000);
    FILE *csv = nullptr;
    if (const char *path = arg_str(argc, argv, "--csv")) csv = std::fopen(path, "w");
    if (csv)
        std::fprintf(csv,
                     "n,log2n,agree_rounds,agree_mean,agree_max,agree_fail_rounds,revoke_rounds,revoke_mean,revoke_max,"
                     "notice_rounds,notice_mean,notice_max\n");
    std::printf("%8s %6s | %-24s | %-10s | %-24s | %-24s\n", "n", "log2n", "agree: rounds mean max", "root dies",
                "revoke: rounds mean max", "notice: rounds mean max");
    int bad = 0;
    for (long n = 10; n <= max; n *= 10) {
        const int N = static_cast<int>(n);
        Options opt;  // latency 1, no jitter: time = rounds
        AgreeSim ok(N, opt);
        ok.enter_all(0);
        ok.run();
        const Stats a = traffic(ok, last_decision(ok));
        bad += static_cast<int>(ok.check(0).size());

        // The root decides and dies halfway through sending its decision.
        int root_children = 0;
        for_tree_children(N, 0, [&](int) { ++root_children; });
        AgreeSim f(N, opt);
        f.crash_after_sends(0, root_children / 2);
        f.enter_all(0);
        f.run();
        const double fail_rounds = last_decision(f);
        bad += static_cast<int>(f.check(0).size());

        // Revoke from member n/3. The failure notice: the real detector
        // (heartbeats every 100 latencies, timeout 500); rank n/2 crashes at
        // 250, its observer declares it, and the news spreads.
        const BroadcastResult r = simulate_broadcast(N, N / 3, {}, false, opt);
        const DetectorResult det = simulate_detector(N, {N / 2}, 250, 100, 500, 5000, opt);
        const double notice_rounds = det.last - det.declared;
        if (r.reached != r.live || det.reached != det.live) ++bad;
        const double lg = std::log2(static_cast<double>(n));
        std::printf("%8ld %6.1f | %6.0f %8.2f %6ld   | %6.0f     | %6.0f %8.2f %6ld   | %6.0f %8.2f %6ld\n", n, lg,
                    a.rounds, a.mean, a.max, fail_rounds, r.last, r.mean_sends * 2, r.max_sends * 2, notice_rounds,
                    det.mean_msgs, det.max_msgs);
        if (csv)
            std::fprintf(csv, "%ld,%.2f,%.0f,%.3f,%ld,%.0f,%.0f,%.3f,%ld,%.0f,%.3f,%ld\n", n, lg, a.rounds, a.mean,
                         a.max, fail_rounds, r.last, r.mean_sends * 2, r.max_sends * 2, notice_rounds, det.mean_msgs,
                         det.max_msgs);
        std::fflush(stdout);
    }
    std::printf(
        "(rounds: message latencies until the last live process has it, for the notice from the "
        "observer's declaration; messages: sent + received per process, for the notice the detector's "
        "failure and sync messages after the declaration)\n");
    if (csv) std::fclose(csv);
    if (bad) std::printf("VIOLATIONS: %d\n", bad);
    return bad ? 1 : 0;
}

int campaign(int argc, char **argv) {
    const int n = static_cast<int>(arg_long(argc, argv, "--n", 1000));
    const long trials = arg_long(argc, argv, "--trials", 10000);
    const std::uint64_t seed = static_cast<std::uint64_t>(arg_long(argc, argv, "--seed", 1));
    const int max_failures = static_cast<int>(arg_long(argc, argv, "--max-failures", 8));
    std::mt19937_64 rng(seed);
    long violations = 0, failures = 0;
    double rounds = 0;
    for (long t = 0; t < trials; ++t) {
        Options opt;
        opt.seed = rng();
        opt.jitter = 2.0;  // messages overtake each other
        opt.detect = 1.0 + static_cast<double>(rng() % 8);
        opt.detect_jitter = 6.0;
        AgreeSim s(n, opt);
        const int f = static_cast<int>(rng() % static_cast<std::uint64_t>(max_failures + 1));
        failures += f;
        const double depth = 2.0 * std::log2(static_cast<double>(n)) * (1.0 + opt.jitter);
        for (int i = 0; i < f; ++i) {
            // Victims favour the top of the tree, where failures hurt most.
            const int p = (rng() % 2) ? static_cast<int>(rng() % 16) % n
                                      : static_cast<int>(rng() % static_cast<std::uint64_t>(n));
            switch (rng() % 4) {
            case 0: s.prefail(p); break;
            case 1: s.crash_after_sends(p, static_cast<long>(rng() % 12)); break;
            default: s.crash_at(p, std::uniform_real_distribution<double>(0, depth)(rng)); break;
            }
        }
        for (int p = 0; p < n; ++p) {
            // Random contributions: each clears a bit now and then.
            std::uint64_t w = ~std::uint64_t{0};
            if (rng() % 20 == 0) w &= ~(std::uint64_t{1} << (rng() % 64));
            s.set_words(p, 0, {w});
            if (s.alive(p)) s.enter(p, 0, std::uniform_real_distribution<double>(0, 3)(rng));
        }
        s.run();
        rounds += last_decision(s);
        for (const auto &line : s.check(0)) {
            if (violations < 20)
                std::printf("trial %ld (seed %llu): %s\n", t, static_cast<unsigned long long>(opt.seed), line.c_str());
            ++violations;
        }
    }
    std::printf(
        "campaign: %ld agreements among %d processes, %ld crashes injected, mean completion %.1f time units, "
        "%ld violations\n",
        trials, n, failures, rounds / static_cast<double>(trials), violations);
    return violations ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc >= 2 && std::strcmp(argv[1], "scale") == 0) return scale(argc, argv);
    if (argc >= 2 && std::strcmp(argv[1], "campaign") == 0) return campaign(argc, argv);
    std::fprintf(stderr,
                 "usage: ftsim scale [--max N] [--csv FILE]\n"
                 "       ftsim campaign [--n N] [--trials T] [--seed S] [--max-failures F]\n");
    return 2;
}
