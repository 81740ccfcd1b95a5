// Balanced factorization of MPI_Dims_create (mpi/topo/dims.cpp): a table of
// cases (fixed entries and impossible ones included), and for every nnodes up
// to 400 in 1..4 free dimensions a check against an exhaustive search for the
// smallest spread (ties: the largest smallest entry).
#include <algorithm>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "mpi/topo/topology.hpp"

using namespace ftmpi::mpi;

namespace {

struct DimsCase {
    int nnodes;
    std::vector<int> in, want;  // want empty: impossible
};

// Over all factorizations of m into k factors: the smallest max-min, and
// (second) among those the largest smallest factor, as (spread, -min).
std::pair<int, int> best_spread(int m, int k, int lo, int hi_seen) {
    if (k == 0) return m == 1 ? std::pair{hi_seen - lo, -lo} : std::pair{1 << 30, 0};
    std::pair<int, int> best{1 << 30, 0};
    for (int d = 1; d <= m; ++d)
        if (m % d == 0 && (lo == 0 || d <= lo)) {
            const int first = hi_seen == 0 ? d : hi_seen;
            best = std::min(best, best_spread(m / d, k - 1, d, first));
        }
    return best;
}

}  // namespace

TEST_CASE("balanced_dims: table", "[topo]") {
    const std::vector<DimsCase> cases = {
        {1, {0}, {1}},
        {6, {0, 0}, {3, 2}},
        {12, {0, 0}, {4, 3}},
        {12, {0, 0, 0}, {3, 2, 2}},
        {16, {0, 0, 0}, {4, 2, 2}},
        {7, {0, 0, 0}, {7, 1, 1}},
        {72, {0, 0}, {9, 8}},
        {1 << 20, {0, 0, 0, 0, 0}, {16, 16, 16, 16, 16}},
        {2 * 3 * 5 * 7 * 11, {0, 0}, {55, 42}},
        {12, {0, 3, 0}, {2, 3, 2}},
        {12, {4, 3}, {4, 3}},
        {12, {5, 0}, {}},
        {12, {4, 4}, {}},
        {12, {13}, {}},
        // MPICH 4.0.2's answers where several factorizations have the least
        // spread: the one with the largest smallest factor.
        {5040, {0, 0, 0}, {21, 16, 15}},
        {360, {0, 0, 0}, {10, 6, 6}},
        {3696, {0, 0, 0}, {22, 14, 12}},
        {2160, {0, 0, 0, 0}, {10, 6, 6, 6}},
        {2520, {0, 0, 0, 0}, {10, 7, 6, 6}},
        {2880, {0, 0, 0, 0}, {10, 8, 6, 6}},
        {3240, {0, 0, 0, 0}, {10, 9, 6, 6}},
        // More of MPICH's: primes, 1, powers, fixed entries kept in place.
        {5040, {0, 0}, {72, 70}},
        {5040, {0, 0, 0, 0}, {10, 9, 8, 7}},
        {5040, {0, 7, 0}, {30, 7, 24}},
        {999983, {0, 0, 0}, {999983, 1, 1}},
        {1, {0, 0, 0}, {1, 1, 1}},
        {1, {1, 0}, {1, 1}},
        {97, {0, 0}, {97, 1}},
        {3628800, {0, 0, 0}, {162, 160, 140}},
        {720720, {0, 0, 0, 0, 0}, {20, 18, 14, 13, 11}},
        {1048576, {0, 0, 0}, {128, 128, 64}},
        {1000000, {0, 0, 0, 0, 0, 0}, {10, 10, 10, 10, 10, 10}},
        {100000, {0, 0, 0, 0}, {25, 20, 20, 10}},
        {5040, {0, 4, 0, 3}, {21, 4, 20, 3}},
        {360, {2, 0, 0}, {2, 15, 12}},
    };
    for (const DimsCase &c : cases) {
        std::vector<int> d = c.in;
        INFO("nnodes " << c.nnodes << " ndims " << d.size());
        const bool ok = balanced_dims(c.nnodes, static_cast<int>(d.size()), d.data());
        REQUIRE(ok == !c.want.empty());
        if (ok) REQUIRE(d == c.want);
    }
}

TEST_CASE("balanced_dims: smallest spread, non-increasing, right product", "[topo]") {
    for (int n = 1; n <= 400; ++n)
        for (int k = 1; k <= 4; ++k) {
            std::vector<int> d(static_cast<std::size_t>(k), 0);
            INFO("nnodes " << n << " ndims " << k);
            REQUIRE(balanced_dims(n, k, d.data()));
            long long product = 1;
            for (int x : d) product *= x;
            REQUIRE(product == n);
            REQUIRE(std::is_sorted(d.begin(), d.end(), std::greater<int>()));
            REQUIRE(std::pair{d.front() - d.back(), -d.back()} == best_spread(n, k, 0, 0));
        }
}
