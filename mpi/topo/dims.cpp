// MPI_Dims_create: a balanced factorization of the number of processes.
//
// The free dimensions get the factorization of nnodes / (product of the
// fixed ones) into k factors whose largest and smallest differ least
// (found by a depth-first search over the divisors, pruned by a bound on
// the spread), in non-increasing order: 12 in 2 -> 4x3, 16 in 3 -> 4x2x2,
// 72 in 2 -> 9x8 (a greedy assignment of prime factors would give 12x6).
// Among those of the least spread, the one whose smallest factor is largest:
// 5040 in 3 -> 21x16x15, not 20x18x14 (both spread 6), as MPICH 4.0.2
// answers (it agrees with this rule on every nnodes <= 6000 in 1..6
// dimensions; tests/unit/test_topo.cpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/topo/topology.hpp"

namespace ftmpi::mpi {

namespace {

// d^k > m, without overflow (d >= 1).
bool pow_exceeds(long long d, int k, long long m) {
    long long p = 1;
    for (int i = 0; i < k; ++i) {
        p *= d;
        if (p > m) return true;
    }
    return false;
}

// Largest d with d^k <= m (k >= 1, m >= 1).
long long floor_root(long long m, int k) {
    long long d = std::max(1LL, std::llround(std::pow(static_cast<double>(m), 1.0 / k)));
    while (d > 1 && pow_exceeds(d, k, m)) --d;
    while (!pow_exceeds(d + 1, k, m)) ++d;
    return d;
}

struct Search {
    explicit Search(const std::vector<int> &d) : divisors(d) {}
    const std::vector<int> &divisors;  // of the free product, ascending
    std::vector<int> cur, best;
    long long best_spread = -1;

    // Factors m into k more factors, each <= hi, appended to cur.
    void run(int m, int k, int hi) {
        if (k == 1) {
            if (m > hi) return;
            const long long spread = cur.empty() ? 0 : cur.front() - m;
            if (best_spread < 0 || spread < best_spread || (spread == best_spread && m > best.back())) {
                best = cur;
                best.push_back(m);
                best_spread = spread;
            }
            return;
        }
        for (int d : divisors) {
            if (d > hi || d > m) break;
            if (m % d != 0 || !pow_exceeds(d, k, m - 1)) continue;  // d^k >= m: the others are <= d
            // The last factor is at most the (k-1)th root of what is left, so
            // the spread is at least this bound, which only grows with d (an
            // equal spread may still have a larger smallest factor).
            const int first = cur.empty() ? d : cur.front();
            if (best_spread >= 0 && first - floor_root(m / d, k - 1) > best_spread) break;
            cur.push_back(d);
            run(m / d, k - 1, d);
            cur.pop_back();
        }
    }
};

}  // namespace

bool balanced_dims(int nnodes, int ndims, int *dims) {
    long long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] == 0) ++nfree;
        else fixed *= dims[i];
        if (fixed > nnodes) return false;
    }
    if (nnodes % fixed != 0) return false;
    const int m = static_cast<int>(nnodes / fixed);
    if (nfree == 0) return m == 1;
    std::vector<int> divisors;
    for (int d = 1; static_cast<long long>(d) * d <= m; ++d)
        if (m % d == 0) {
            divisors.push_back(d);
            if (d != m / d) divisors.push_back(m / d);
        }
    std::sort(divisors.begin(), divisors.end());
    Search s(divisors);
    s.run(m, nfree, m);
    for (int i = 0, j = 0; i < ndims; ++i)
        if (dims[i] == 0) dims[i] = s.best[static_cast<std::size_t>(j++)];
    return true;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Dims_create(int nnodes, int ndims, int dims[]) {
    static constexpr const char *call = "MPI_Dims_create";
    FTMPI_TRY(check_init(call));
    if (nnodes < 1)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "nnodes %d is not positive (argument nnodes)", nnodes);
    if (ndims < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative ndims %d (argument ndims)", ndims);
    if (ndims > 0) FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, dims, "dims"));
    for (int i = 0; i < ndims; ++i)
        if (dims[i] < 0)
            return raise(MPI_COMM_NULL, MPI_ERR_DIMS, call, "negative dims[%d] = %d (argument dims)", i, dims[i]);
    if (ndims == 0) return MPI_SUCCESS;  // nothing to fill (as Open MPI and MPICH do)
    std::vector<int> out(dims, dims + ndims);
    if (!balanced_dims(nnodes, ndims, out.data()))
        return raise(MPI_COMM_NULL, MPI_ERR_DIMS, call,
                     "nnodes %d is not a multiple of the product of the nonzero entries of dims (or, with none "
                     "zero, not equal to it)",
                     nnodes);
    std::copy(out.begin(), out.end(), dims);
    return MPI_SUCCESS;
}

}  // extern "C"
