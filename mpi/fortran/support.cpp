// The Fortran wrappers' shared conversions (support.hpp).
#include "mpi/fortran/support.hpp"

#include <algorithm>
#include <cstring>


extern "C" {
alignas(16) MPI_Fint ftmpi_fc_bottom_;
alignas(16) MPI_Fint ftmpi_fc_in_place_;
alignas(16) MPI_Fint ftmpi_fc_status_ignore_[6];
alignas(16) MPI_Fint ftmpi_fc_statuses_ignore_[6];
alignas(16) MPI_Fint ftmpi_fc_errcodes_ignore_;
alignas(16) char ftmpi_fc_argv_null_;
alignas(16) char ftmpi_fc_argvs_null_;
alignas(16) MPI_Fint ftmpi_fc_unweighted_;
alignas(16) MPI_Fint ftmpi_fc_weights_empty_;
alignas(16) MPI_Fint ftmpi_fc_buffer_automatic_;
}

namespace {

// C code that Fortran calls compares statuses with MPI_F_STATUS(ES)_IGNORE:
// they are the Fortran sentinels' addresses once this library is loaded.
[[gnu::constructor]] void set_status_ignore() {
    MPI_F_STATUS_IGNORE = ftmpi_fc_status_ignore_;
    MPI_F_STATUSES_IGNORE = ftmpi_fc_statuses_ignore_;
}

}  // namespace

namespace ftmpi::fortran {

const void *buffer(const void *p) {
    if (p == &ftmpi_fc_bottom_) return MPI_BOTTOM;
    if (p == &ftmpi_fc_in_place_) return MPI_IN_PLACE;
    if (p == &ftmpi_fc_buffer_automatic_) return MPI_BUFFER_AUTOMATIC;
    return p;
}

void *buffer(void *p) { return const_cast<void *>(buffer(static_cast<const void *>(p))); }

int *weights(MPI_Fint *p) {
    if (p == &ftmpi_fc_unweighted_) return MPI_UNWEIGHTED;
    if (p == &ftmpi_fc_weights_empty_) return MPI_WEIGHTS_EMPTY;
    return p;
}

int remote_size(MPI_Comm comm) {
    int inter = 0, n = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
    if ((inter ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n)) != MPI_SUCCESS) return 0;
    return n;
}

int neighbor_degree(MPI_Comm comm, bool send) {
    int topo = MPI_UNDEFINED, n = 0;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return 0;
    if (topo == MPI_CART) {
        if (PMPI_Cartdim_get(comm, &n) != MPI_SUCCESS) return 0;
        return 2 * n;
    }
    if (topo == MPI_GRAPH) {
        int rank = 0;
        if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Graph_neighbors_count(comm, rank, &n) != MPI_SUCCESS)
            return 0;
        return n;
    }
    if (topo == MPI_DIST_GRAPH) {
        int in = 0, out = 0, weighted = 0;
        if (PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted) != MPI_SUCCESS) return 0;
        return send ? out : in;
    }
    return 0;
}

void one_based(MPI_Fint *indices, int n) {
    for (int i = 0; i < n; ++i) ++indices[i];
}

void logicals(MPI_Fint *v, int n) {
    for (int i = 0; i < n; ++i) v[i] = v[i] != 0;
}

StatusIn::StatusIn(const MPI_Fint *f) { std::memcpy(&c_, f, sizeof c_); }

StatusOut::StatusOut(MPI_Fint *f) : f_(f == ftmpi_fc_status_ignore_ ? nullptr : f) {
    // MPI_ERROR is left alone by calls that complete one request: keep it.
    if (f_ != nullptr) std::memcpy(&c_, f_, sizeof c_);
}

void StatusOut::back() const {
    if (f_ != nullptr) std::memcpy(f_, &c_, sizeof c_);
}

Statuses::Statuses(MPI_Fint *f, int n)
    : f_(f == ftmpi_fc_statuses_ignore_ ? nullptr : f), c_(n > 0 && f_ != nullptr ? static_cast<std::size_t>(n) : 0) {
    if (!c_.empty()) std::memcpy(c_.data(), f_, c_.size() * sizeof(MPI_Status));
}

void Statuses::back() const {
    if (!c_.empty()) std::memcpy(f_, c_.data(), c_.size() * sizeof(MPI_Status));
}

StringIn::StringIn(const char *f, std::size_t len) {
    std::size_t b = 0, e = len;
    while (b < e && f[b] == ' ') ++b;
    while (e > b && f[e - 1] == ' ') --e;
    s_.assign(f + b, e - b);
}

StringOut::StringOut(char *f, std::size_t len, int max)
    : f_(f), len_(len), c_(std::max(len, static_cast<std::size_t>(max > 0 ? max : 0)) + 1, '\0') {}

void StringOut::back() const { to_fortran(c_.data(), f_, len_); }

void to_fortran(const char *c, char *f, std::size_t len) {
    const std::size_t n = std::min(std::strlen(c), len);
    std::memcpy(f, c, n);
    std::memset(f + n, ' ', len - n);
}

}  // namespace ftmpi::fortran
