// Balanced factorization of MPI_Dims_create (mpi/topo/dims.cpp): a table of
// cases (fixed entries and impossible ones included), and for every nnodes up
// to 300 in 1..4 free dimensions a check against an exhaustive search for the
// smallest spread.
#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "mpi/topo/topology.hpp"

using namespace ftmpi::mpi;

namespace {

struct DimsCase {
    int nnodes;
    std::vector<int> in, want;  // want empty: impossible
};

// Smallest max-min over all factorizations of m into k factors.
int best_spread(int m, int k, int lo, int hi_seen) {
    if (k == 0) return m == 1 ? hi_seen - lo : 1 << 30;
    int best = 1 << 30;
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
    for (int n = 1; n <= 300; ++n)
        for (int k = 1; k <= 4; ++k) {
            std::vector<int> d(static_cast<std::size_t>(k), 0);
            INFO("nnodes " << n << " ndims " << k);
            REQUIRE(balanced_dims(n, k, d.data()));
            long long product = 1;
            for (int x : d) product *= x;
            REQUIRE(product == n);
            REQUIRE(std::is_sorted(d.begin(), d.end(), std::greater<int>()));
            REQUIRE(d.front() - d.back() == best_spread(n, k, 0, 0));
        }
}
