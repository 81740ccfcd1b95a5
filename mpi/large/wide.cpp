// The v and w collectives' large-count forms beyond INT_MAX (wide.hpp).
#include "mpi/large/wide.hpp"

#include <cstdio>
#include <vector>

#include "mpi/dt/derived.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/large/count_as.hpp"

namespace ftmpi::mpi {
namespace {

// One side's blocks as typed blocks: block i is counts()[i] (0 or 1)
// elements of types()[i] at the buffer itself (the type holds the
// displacement). Insignificant (never built): null arrays.
class Typed {
public:
    Typed() = default;
    Typed(const Typed &) = delete;
    Typed &operator=(const Typed &) = delete;
    ~Typed() {
        for (MPI_Datatype &t : owned_) MPI_Type_free(&t);
    }

    // n blocks of counts[i] elements of type at displs[i] extents of it, or
    // (w) of types[i] at displs[i] bytes.
    int build(const char *call, MPI_Comm comm, int n, const MPI_Count *counts, const MPI_Aint *displs,
              MPI_Datatype type, const MPI_Datatype *types, bool w, const char *side) {
        char arg[48];
        std::snprintf(arg, sizeof arg, "%scounts", side);
        FTMPI_TRY(check_nonnull(call, comm, counts, arg));
        std::snprintf(arg, sizeof arg, "%sdispls", side);
        FTMPI_TRY(check_nonnull(call, comm, displs, arg));
        if (w) {
            std::snprintf(arg, sizeof arg, "%stypes", side);
            FTMPI_TRY(check_nonnull(call, comm, types, arg));
        } else {
            std::snprintf(arg, sizeof arg, "%stype", side);
            FTMPI_TRY(check_comm_type(call, comm, type, arg));
        }
        size(n);
        for (int i = 0; i < n; ++i) {
            const MPI_Datatype t = w ? types[i] : type;
            if (w) {
                std::snprintf(arg, sizeof arg, "%stypes[%d]", side, i);
                FTMPI_TRY(check_comm_type(call, comm, t, arg));
            }
            if (counts[i] < 0)
                return raise(comm, MPI_ERR_COUNT, call, "negative %scounts[%d] = %lld", side, i,
                             static_cast<long long>(counts[i]));
            const MPI_Aint at = w ? displs[i] : displs[i] * t->extent;
            FTMPI_TRY(set(call, comm, i, counts[i], t, at));
        }
        return MPI_SUCCESS;
    }

    // n blocks, each `count` elements of `type` at the buffer (allgather's send side).
    int repeat(const char *call, MPI_Comm comm, int n, MPI_Count count, MPI_Datatype type) {
        FTMPI_TRY(check_comm_type(call, comm, type, "sendtype"));
        if (count < 0)
            return raise(comm, MPI_ERR_COUNT, call, "negative sendcount %lld", static_cast<long long>(count));
        size(n);
        if (n > 0) FTMPI_TRY(set(call, comm, 0, count, type, 0));
        for (int i = 1; i < n; ++i) {
            counts_[static_cast<std::size_t>(i)] = counts_[0];
            types_[static_cast<std::size_t>(i)] = types_[0];
        }
        return MPI_SUCCESS;
    }

    const int *counts() const { return built_ ? counts_.data() : nullptr; }
    const int *zeros() const { return built_ ? zeros_.data() : nullptr; }
    const MPI_Aint *byte_zeros() const { return built_ ? byte_zeros_.data() : nullptr; }
    const MPI_Datatype *types() const { return built_ ? types_.data() : nullptr; }

private:
    void size(int n) {
        const auto m = static_cast<std::size_t>(n < 0 ? 0 : n) + 1;  // + 1: never a null data()
        counts_.assign(m, 0);
        zeros_.assign(m, 0);
        byte_zeros_.assign(m, 0);
        types_.assign(m, MPI_BYTE);
        built_ = true;
    }

    int set(const char *call, MPI_Comm comm, int i, MPI_Count count, MPI_Datatype t, MPI_Aint at) {
        const auto k = static_cast<std::size_t>(i);
        types_[k] = t;
        if (count == 0) return MPI_SUCCESS;
        const MPI_Datatype block = elements_type(count, t, at);
        if (block == MPI_DATATYPE_NULL)
            return raise(comm, MPI_ERR_NO_MEM, call, "out of memory for the datatype of a block beyond INT_MAX");
        owned_.push_back(block);
        counts_[k] = 1;
        types_[k] = block;
        return MPI_SUCCESS;
    }

    std::vector<int> counts_, zeros_;
    std::vector<MPI_Aint> byte_zeros_;
    std::vector<MPI_Datatype> types_, owned_;
    bool built_ = false;
};

int check_info(const char *call, Run run, MPI_Comm comm, MPI_Info info) {
    return run == Run::persistent ? check_init_info(call, comm, info) : MPI_SUCCESS;
}

// MPI_Alltoallw or MPI_Neighbor_alltoallw, in the call's form.
int alltoallw_form(bool neighbor, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                   const Typed &s, void *recvbuf, const Typed &r, MPI_Comm comm) {
    if (neighbor) {
        if (!nb)
            return MPI_Neighbor_alltoallw(sendbuf, s.counts(), s.byte_zeros(), s.types(), recvbuf, r.counts(),
                                          r.byte_zeros(), r.types(), comm);
        if (run == Run::persistent)
            return MPI_Neighbor_alltoallw_init(sendbuf, s.counts(), s.byte_zeros(), s.types(), recvbuf, r.counts(),
                                               r.byte_zeros(), r.types(), comm, info, request);
        return MPI_Ineighbor_alltoallw(sendbuf, s.counts(), s.byte_zeros(), s.types(), recvbuf, r.counts(),
                                       r.byte_zeros(), r.types(), comm, request);
    }
    if (!nb)
        return MPI_Alltoallw(sendbuf, s.counts(), s.zeros(), s.types(), recvbuf, r.counts(), r.zeros(), r.types(),
                             comm);
    if (run == Run::persistent)
        return MPI_Alltoallw_init(sendbuf, s.counts(), s.zeros(), s.types(), recvbuf, r.counts(), r.zeros(), r.types(),
                                  comm, info, request);
    return MPI_Ialltoallw(sendbuf, s.counts(), s.zeros(), s.types(), recvbuf, r.counts(), r.zeros(), r.types(), comm,
                          request);
}

// The alltoall(v,w) and neighborhood alltoall(v,w) forms: both sides typed.
int alltoall_typed(const char *call, bool neighbor, bool w, bool nb, Run run, MPI_Request *request, MPI_Info info,
                   const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                   const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], MPI_Datatype recvtype, const MPI_Datatype recvtypes[], MPI_Comm comm) {
    FTMPI_TRY(check_info(call, run, comm, info));
    const Shape sh = shape_of(comm, neighbor, -1);
    Typed s, r;
    if (sendbuf != MPI_IN_PLACE)
        FTMPI_TRY(s.build(call, comm, sh.out, sendcounts, sdispls, sendtype, sendtypes, w, "send"));
    FTMPI_TRY(r.build(call, comm, sh.in, recvcounts, rdispls, recvtype, recvtypes, w, "recv"));
    return alltoallw_form(neighbor, nb, run, request, info, sendbuf, s, recvbuf, r, comm);
}

}  // namespace

int wide_gatherv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                 MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                 const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    FTMPI_TRY(check_info(call, run, comm, info));
    const Shape sh = shape_of(comm, false, root);
    Typed r;
    if (sh.root_side) FTMPI_TRY(r.build(call, comm, sh.in, recvcounts, displs, recvtype, nullptr, false, "recv"));
    const CountAs n(sendcount, sendtype);
    const int rc = coll_gatherv(call, nb, run, request, sendbuf, n.count(), n.type(), recvbuf, r.counts(), r.zeros(),
                                recvtype, root, comm, r.types());
    n.keep(request, rc);
    return rc;
}

int wide_scatterv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                  const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    FTMPI_TRY(check_info(call, run, comm, info));
    const Shape sh = shape_of(comm, false, root);
    Typed s;
    if (sh.root_side) FTMPI_TRY(s.build(call, comm, sh.out, sendcounts, displs, sendtype, nullptr, false, "send"));
    const CountAs n(recvcount, recvtype);
    const int rc = coll_scatterv(call, nb, run, request, sendbuf, s.counts(), s.zeros(), sendtype, recvbuf, n.count(),
                                 n.type(), root, comm, s.types());
    n.keep(request, rc);
    return rc;
}

int wide_allgatherv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                    MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    FTMPI_TRY(check_info(call, run, comm, info));
    const Shape sh = shape_of(comm, false, -1);
    Typed r;
    FTMPI_TRY(r.build(call, comm, sh.in, recvcounts, displs, recvtype, nullptr, false, "recv"));
    const CountAs n(sendcount, sendtype);
    const int rc = coll_allgatherv(call, nb, run, request, sendbuf, n.count(), n.type(), recvbuf, r.counts(), r.zeros(),
                                   recvtype, comm, r.types());
    n.keep(request, rc);
    return rc;
}

int wide_alltoallv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                   const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall_typed(call, false, false, nb, run, request, info, sendbuf, sendcounts, sdispls, sendtype, nullptr,
                          recvbuf, recvcounts, rdispls, recvtype, nullptr, comm);
}

int wide_alltoallw(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info, const void *sendbuf,
                   const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return alltoall_typed(call, false, true, nb, run, request, info, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                          sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}

int wide_neighbor_allgatherv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info,
                             const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
    FTMPI_TRY(check_info(call, run, comm, info));
    const Shape sh = shape_of(comm, true, -1);
    Typed s, r;
    FTMPI_TRY(s.repeat(call, comm, sh.out, sendcount, sendtype));
    FTMPI_TRY(r.build(call, comm, sh.in, recvcounts, displs, recvtype, nullptr, false, "recv"));
    return alltoallw_form(true, nb, run, request, info, sendbuf, s, recvbuf, r, comm);
}

int wide_neighbor_alltoallv(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info,
                            const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall_typed(call, true, false, nb, run, request, info, sendbuf, sendcounts, sdispls, sendtype, nullptr,
                          recvbuf, recvcounts, rdispls, recvtype, nullptr, comm);
}

int wide_neighbor_alltoallw(const char *call, bool nb, Run run, MPI_Request *request, MPI_Info info,
                            const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return alltoall_typed(call, true, true, nb, run, request, info, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                          sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}

}  // namespace ftmpi::mpi
