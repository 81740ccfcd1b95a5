// Gather(v), Scatter(v), Allgather(v), Alltoall(v,w) and their nonblocking
// versions.
//
// Algorithms: linear gather/scatter at the root (all transfers in one round),
// ring allgather (size-1 rounds), linear alltoall (every pair in one round,
// posted in pairwise order me+k / me-k so no rank is everybody's first peer).
#include <string>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "mpi/coll/common.hpp"
#include "mpi/coll/direct.hpp"
#include "mpi/coll/gather_checks.hpp"
#include "mpi/coll/inter.hpp"
#include "mpi/dt/derived.hpp"
#include "runtime/config.hpp"

namespace ftmpi::mpi {
namespace {

// A rank's own block in an exchange (allgather, alltoall): copied while the
// peers take theirs, except on a crowded node (4 ranks on 2 cores: 5-15%
// slower that way at 64-256 KiB, where scatter's root, which only sends,
// gains 6-25%).
void exchange_own_copy(Sched &s, const void *src, int scount, MPI_Datatype st, void *dst, int dcount, MPI_Datatype dt) {
    if (runtime::config().crowded) s.add_copy(src, scount, st, dst, dcount, dt);
    else s.add_own_copy(src, scount, st, dst, dcount, dt);
}

}  // namespace

void build_gatherv(Sched &s, MPI_Comm, const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                   const int *rcounts, const int *displs, MPI_Datatype rtype, int root, const MPI_Datatype *types) {
    const int n = s.size(), me = s.rank();
    root = s.root(root);
    if (root < 0) return s.next_round();
    if (me == root) {
        rcounts = s.per_rank(rcounts);  // significant at the root only
        displs = s.per_rank(displs);
        types = s.per_rank(types);
        const auto ty = [&](int i) { return types != nullptr ? types[i] : rtype; };
        const auto block = [&](int i) { return at(recvbuf, static_cast<std::size_t>(displs[i]), ty(i)); };
        for (int k = 1; k < n; ++k) {
            const int i = (root + k) % n;
            s.add_recv(block(i), rcounts[i], ty(i), i);
        }
        if (sendbuf != MPI_IN_PLACE) s.add_copy(sendbuf, scount, stype, block(me), rcounts[me], ty(me));
    } else {
        s.add_send(sendbuf, scount, stype, root);
    }
    s.next_round();
}

void build_scatterv(Sched &s, MPI_Comm, const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype stype,
                    void *recvbuf, int rcount, MPI_Datatype rtype, int root, const MPI_Datatype *types) {
    const int n = s.size(), me = s.rank();
    root = s.root(root);
    if (root < 0) return s.next_round();
    if (me == root) {
        scounts = s.per_rank(scounts);  // significant at the root only
        displs = s.per_rank(displs);
        types = s.per_rank(types);
        const auto ty = [&](int i) { return types != nullptr ? types[i] : stype; };
        const auto block = [&](int i) { return at(sendbuf, static_cast<std::size_t>(displs[i]), ty(i)); };
        for (int k = 1; k < n; ++k) {
            const int i = (root + k) % n;
            s.add_pulled_send(block(i), scounts[i], ty(i), i, true);
        }
        if (recvbuf != MPI_IN_PLACE) s.add_own_copy(block(me), scounts[me], ty(me), recvbuf, rcount, rtype);
    } else {
        s.add_recv(recvbuf, rcount, rtype, root);
    }
    s.next_round();
}

void build_allgatherv(Sched &s, MPI_Comm, const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                      const int *rcounts, const int *displs, MPI_Datatype rtype, const MPI_Datatype *types) {
    const int n = s.size(), me = s.rank();
    rcounts = s.per_rank(rcounts);
    displs = s.per_rank(displs);
    types = s.per_rank(types);
    const auto ty = [&](int i) { return types != nullptr ? types[i] : rtype; };
    const auto block = [&](int i) { return at(recvbuf, static_cast<std::size_t>(displs[i]), ty(i)); };
    if (n <= k_direct_peers) {
        // A small group sends every block at once, in one round: the bytes
        // of the ring below, without its n-1 steps that each wait for the
        // neighbour (a turn of its process at a core, on a crowded node).
        const bool in_place = sendbuf == MPI_IN_PLACE;
        if (!in_place) exchange_own_copy(s, sendbuf, scount, stype, block(me), rcounts[me], ty(me));
        for (int k = 1; k < n; ++k) {
            const int to = (me + k) % n, from = (me - k + n) % n;
            s.add_recv(block(from), rcounts[from], ty(from), from);
            if (in_place) s.add_pulled_send(block(me), rcounts[me], ty(me), to);
            else s.add_pulled_send(sendbuf, scount, stype, to);
        }
        s.next_round();
        return;
    }
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int st = 0; st < n - 1; ++st) {
        const int sb = ((me - st) % n + n) % n;
        const int rb = ((me - st - 1) % n + n) % n;
        // Its own block goes first from sendbuf, and is copied into place
        // while the neighbour takes it: no later step sends it from there.
        if (st == 0 && sendbuf != MPI_IN_PLACE) {
            s.add_send(sendbuf, scount, stype, right);
            exchange_own_copy(s, sendbuf, scount, stype, block(me), rcounts[me], ty(me));
        } else {
            s.add_send(block(sb), rcounts[sb], ty(sb), right);
        }
        s.add_recv(block(rb), rcounts[rb], ty(rb), left);
        s.next_round();
    }
    s.next_round();
}

void build_alltoallw(Sched &s, MPI_Comm, const void *sendbuf, const int *scounts, const MPI_Aint *sdispls,
                     const MPI_Datatype *stypes, void *recvbuf, const int *rcounts, const MPI_Aint *rdispls,
                     const MPI_Datatype *rtypes) {
    const int n = s.size(), me = s.rank();
    scounts = s.per_rank(scounts);
    sdispls = s.per_rank(sdispls);
    stypes = s.per_rank(stypes);
    rcounts = s.per_rank(rcounts);
    rdispls = s.per_rank(rdispls);
    rtypes = s.per_rank(rtypes);
    const char *sbase = static_cast<const char *>(sendbuf);
    if (sendbuf == MPI_IN_PLACE) {
        // The data to send is what recvbuf holds now: copy the bytes its
        // blocks span first, from the first data byte to one past the last.
        MPI_Aint lo = 0, hi = 0;
        bool any = false;
        for (int i = 0; i < n; ++i) {
            if (rcounts[i] == 0) continue;
            const MPI_Datatype t = rtypes[i];
            const Layout &l = type_layout(t);
            const MPI_Aint first = rdispls[i] + std::min<MPI_Aint>(0, (rcounts[i] - 1) * t->extent) + l.true_lb;
            const MPI_Aint end = rdispls[i] + std::max<MPI_Aint>(0, (rcounts[i] - 1) * t->extent) + l.true_ub;
            lo = any ? std::min(lo, first) : first;
            hi = any ? std::max(hi, end) : end;
            any = true;
        }
        const auto span = static_cast<std::size_t>(hi - lo);
        char *copy = static_cast<char *>(s.scratch_bytes(span));
        const char *from = byte_at(recvbuf, lo);
        if (span > 0) s.add_local([=] { std::memcpy(copy, from, span); });
        sbase = byte_at(copy, -lo);
        sendbuf = copy;
        sdispls = rdispls;
        scounts = rcounts;
        stypes = rtypes;
    }
    auto sp = [&](int i) { return byte_at(sbase, sdispls[i]); };  // integer arithmetic: sbase may lie outside the copy
    auto rp = [&](int i) { return static_cast<char *>(recvbuf) + rdispls[i]; };
    exchange_own_copy(s, sp(me), scounts[me], stypes[me], rp(me), rcounts[me], rtypes[me]);
    for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n, from = (me - k + n) % n;
        s.add_recv(rp(from), rcounts[from], rtypes[from], from);
        s.add_pulled_send(sp(to), scounts[to], stypes[to], to);
    }
    s.next_round();
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

namespace {

// The counts and displacements of a regular (non-v) collective's blocks,
// for the v forms of the direct path and the schedules alike.
struct Regular {
    PerRank<int> counts, displs;
    Regular(int n, int count) : counts(static_cast<std::size_t>(n), count), displs(static_cast<std::size_t>(n), 0) {
        // Unsigned: where the count is not significant (a gather's non-root)
        // it may be anything, and is never used.
        for (std::size_t i = 0; i < displs.size(); ++i)
            displs[i] = static_cast<int>(static_cast<unsigned>(i) * static_cast<unsigned>(count));
    }
};

// Byte displacements and per-peer types for alltoall/alltoallv.
struct AsW {
    PerRank<MPI_Aint> sd, rd;
    PerRank<MPI_Datatype> st, rt;
    AsW(int n, const void *sendbuf, const int *sdispls, MPI_Datatype stype, const int *rdispls, MPI_Datatype rtype)
        : sd(static_cast<std::size_t>(n), 0), rd(sd.size(), 0), st(sd.size(), stype), rt(sd.size(), rtype) {
        for (std::size_t i = 0; i < sd.size(); ++i) {
            if (sendbuf != MPI_IN_PLACE) sd[i] = sdispls[i] * stype->extent;
            rd[i] = rdispls[i] * rtype->extent;
        }
    }
};

// The alltoallw schedule for either kind of communicator (alltoall and
// alltoallv convert to it).
void alltoallw_sched(Sched &s, MPI_Comm comm, const void *sendbuf, const int *scounts, const MPI_Aint *sdispls,
                     const MPI_Datatype *stypes, void *recvbuf, const int *rcounts, const MPI_Aint *rdispls,
                     const MPI_Datatype *rtypes) {
    if (comm->inter) build_inter_alltoallw(s, sendbuf, scounts, sdispls, stypes, recvbuf, rcounts, rdispls, rtypes);
    else build_alltoallw(s, comm, sendbuf, scounts, sdispls, stypes, recvbuf, rcounts, rdispls, rtypes);
}

}  // namespace

#define FTMPI_COLL(call, nb, request, ...)                                              \
    ((nb) ? (check_nonnull(call, comm, request, "request") != MPI_SUCCESS               \
                 ? MPI_ERR_ARG                                                          \
                 : run_nonblocking(comm, request, run, [&](Sched &s) { __VA_ARGS__; })) \
          : run_blocking(call, comm, [&](Sched &s) { __VA_ARGS__; }))

namespace {

int gather(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, Run run = Run::nonblocking) {
    FTMPI_TRY(
        check_gather(call, comm, sendbuf, sendcount, sendtype, recvbuf, &recvcount, nullptr, recvtype, root, false));
    Regular reg(comm->size, recvcount);
    if (!nb && direct_small(comm) &&
        direct_fits_rooted(comm, root, sendbuf, sendcount, sendtype, reg.counts.data(), recvtype))
        return coll_result(call, comm,
                           direct_gatherv(comm, sendbuf, sendcount, sendtype, recvbuf, reg.counts.data(),
                                          reg.displs.data(), recvtype, root));
    return FTMPI_COLL(call, nb, request,
                      comm->inter ? build_inter_gatherv(s, sendbuf, sendcount, sendtype, recvbuf, reg.counts.data(),
                                                        reg.displs.data(), recvtype, root)
                                  : build_gatherv(s, comm, sendbuf, sendcount, sendtype, recvbuf, reg.counts.data(),
                                                  reg.displs.data(), recvtype, root));
}

int gatherv(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
            void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
            Run run = Run::nonblocking, const MPI_Datatype *types = nullptr) {
    FTMPI_TRY(check_gather(call, comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, true,
                           types));
    if (!nb && types == nullptr && direct_fits_rooted(comm, root, sendbuf, sendcount, sendtype, recvcounts, recvtype))
        return coll_result(
            call, comm,
            direct_gatherv(comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root));
    return FTMPI_COLL(
        call, nb, request,
        comm->inter
            ? build_inter_gatherv(s, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, types)
            : build_gatherv(s, comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, types));
}

int scatter(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, Run run = Run::nonblocking) {
    FTMPI_TRY(
        check_scatter(call, comm, sendbuf, &sendcount, nullptr, sendtype, recvbuf, recvcount, recvtype, root, false));
    Regular reg(comm->size, sendcount);
    if (!nb && direct_small(comm) &&
        direct_fits_rooted(comm, root, recvbuf, recvcount, recvtype, reg.counts.data(), sendtype))
        return coll_result(call, comm,
                           direct_scatterv(comm, sendbuf, reg.counts.data(), reg.displs.data(), sendtype, recvbuf,
                                           recvcount, recvtype, root));
    return FTMPI_COLL(call, nb, request,
                      comm->inter ? build_inter_scatterv(s, sendbuf, reg.counts.data(), reg.displs.data(), sendtype,
                                                         recvbuf, recvcount, recvtype, root)
                                  : build_scatterv(s, comm, sendbuf, reg.counts.data(), reg.displs.data(), sendtype,
                                                   recvbuf, recvcount, recvtype, root));
}

int scatterv(const char *call, bool nb, MPI_Request *request, const void *sendbuf, const int sendcounts[],
             const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
             MPI_Comm comm, Run run = Run::nonblocking, const MPI_Datatype *types = nullptr) {
    FTMPI_TRY(check_scatter(call, comm, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, true,
                            types));
    if (!nb && types == nullptr && direct_fits_rooted(comm, root, recvbuf, recvcount, recvtype, sendcounts, sendtype))
        return coll_result(
            call, comm,
            direct_scatterv(comm, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root));
    return FTMPI_COLL(call, nb, request,
                      comm->inter ? build_inter_scatterv(s, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                                         recvtype, root, types)
                                  : build_scatterv(s, comm, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                                   recvtype, root, types));
}

int allgather(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount,
              MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
              Run run = Run::nonblocking) {
    FTMPI_TRY(check_allgather(call, comm, sendbuf, sendcount, sendtype, recvbuf, &recvcount, nullptr, recvtype, false));
    Regular reg(comm->size, recvcount);
    if (!nb && direct_small(comm) &&
        direct_fits_rooted(comm, comm->rank, sendbuf, sendcount, sendtype, reg.counts.data(), recvtype))
        return coll_result(call, comm,
                           direct_allgatherv(comm, sendbuf, sendcount, sendtype, recvbuf, reg.counts.data(),
                                             reg.displs.data(), recvtype));
    return FTMPI_COLL(call, nb, request,
                      comm->inter ? build_inter_allgatherv(s, sendbuf, sendcount, sendtype, recvbuf, reg.counts.data(),
                                                           reg.displs.data(), recvtype)
                                  : build_allgatherv(s, comm, sendbuf, sendcount, sendtype, recvbuf, reg.counts.data(),
                                                     reg.displs.data(), recvtype));
}

int allgatherv(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount,
               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype,
               MPI_Comm comm, Run run = Run::nonblocking, const MPI_Datatype *types = nullptr) {
    FTMPI_TRY(
        check_allgather(call, comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, true, types));
    if (!nb && types == nullptr &&
        direct_fits_rooted(comm, comm->rank, sendbuf, sendcount, sendtype, recvcounts, recvtype))
        return coll_result(
            call, comm, direct_allgatherv(comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
    return FTMPI_COLL(
        call, nb, request,
        comm->inter
            ? build_inter_allgatherv(s, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, types)
            : build_allgatherv(s, comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, types));
}

int alltoall(const char *call, bool nb, MPI_Request *request, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, Run run = Run::nonblocking) {
    FTMPI_TRY(check_alltoall(call, comm, sendbuf, &sendcount, nullptr, &sendtype, recvbuf, &recvcount, nullptr,
                             &recvtype, false, false));
    const int n = comm->size;
    Regular sreg(n, sendcount), rreg(n, recvcount);
    if (!nb && direct_small(comm) &&
        direct_fits_pair(comm, sendbuf, sreg.counts.data(), sendtype, rreg.counts.data(), recvtype))
        return coll_result(call, comm,
                           direct_alltoallv(comm, sendbuf, sreg.counts.data(), sreg.displs.data(), sendtype, recvbuf,
                                            rreg.counts.data(), rreg.displs.data(), recvtype));
    AsW w(n, sendbuf, sreg.displs.data(), sendtype, rreg.displs.data(), recvtype);
    return FTMPI_COLL(call, nb, request,
                      alltoallw_sched(s, comm, sendbuf, sreg.counts.data(), w.sd.data(), w.st.data(), recvbuf,
                                      rreg.counts.data(), w.rd.data(), w.rt.data()));
}

int alltoallv(const char *call, bool nb, MPI_Request *request, const void *sendbuf, const int sendcounts[],
              const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, Run run = Run::nonblocking) {
    FTMPI_TRY(check_alltoall(call, comm, sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts, rdispls,
                             &recvtype, true, false));
    if (!nb && direct_fits_pair(comm, sendbuf, sendcounts, sendtype, recvcounts, recvtype))
        return coll_result(
            call, comm,
            direct_alltoallv(comm, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype));
    AsW w(comm->size, sendbuf, sdispls, sendtype, rdispls, recvtype);
    return FTMPI_COLL(call, nb, request,
                      alltoallw_sched(s, comm, sendbuf, sendcounts, w.sd.data(), w.st.data(), recvbuf, recvcounts,
                                      w.rd.data(), w.rt.data()));
}

int alltoallw(const char *call, bool nb, MPI_Request *request, const void *sendbuf, const int sendcounts[],
              const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
              const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, Run run = Run::nonblocking) {
    FTMPI_TRY(check_alltoall(call, comm, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                             recvtypes, true, true));
    const auto n = static_cast<std::size_t>(comm->size);
    std::vector<MPI_Aint> sd(n), rd(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (sendbuf != MPI_IN_PLACE) sd[i] = sdispls[i];
        rd[i] = rdispls[i];
    }
    return FTMPI_COLL(
        call, nb, request,
        alltoallw_sched(s, comm, sendbuf, sendcounts, sd.data(), sendtypes, recvbuf, recvcounts, rd.data(), recvtypes));
}

}  // namespace

namespace ftmpi::mpi {

int coll_gatherv(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, int sendcount,
                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm, const MPI_Datatype *types) {
    return gatherv(call, nb, request, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                   run, types);
}

int coll_scatterv(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, const MPI_Datatype *types) {
    return scatterv(call, nb, request, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    run, types);
}

int coll_allgatherv(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm, const MPI_Datatype *types) {
    return allgatherv(call, nb, request, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, run,
                      types);
}

}  // namespace ftmpi::mpi

extern "C" {

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return gather("MPI_Gather", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    return gather("MPI_Igather", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
// MPI 4.0
int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Gather_init", comm, info));
    return gather("MPI_Gather_init", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                  comm, Run::persistent);
}
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return gatherv("MPI_Gatherv", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                   root, comm);
}
int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    return gatherv("MPI_Igatherv", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                   root, comm);
}
// MPI 4.0
int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Gatherv_init", comm, info));
    return gatherv("MPI_Gatherv_init", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, root, comm, Run::persistent);
}
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatter("MPI_Scatter", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                   comm);
}
int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    return scatter("MPI_Iscatter", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                   comm);
}
// MPI 4.0
int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Scatter_init", comm, info));
    return scatter("MPI_Scatter_init", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                   comm, Run::persistent);
}
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatterv("MPI_Scatterv", false, nullptr, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                    root, comm);
}
int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    return scatterv("MPI_Iscatterv", true, request, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                    root, comm);
}
// MPI 4.0
int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Scatterv_init", comm, info));
    return scatterv("MPI_Scatterv_init", true, request, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                    recvtype, root, comm, Run::persistent);
}
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    return allgather("MPI_Allgather", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return allgather("MPI_Iallgather", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
// MPI 4.0
int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Allgather_init", comm, info));
    return allgather("MPI_Allgather_init", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                     comm, Run::persistent);
}
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    return allgatherv("MPI_Allgatherv", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                      recvtype, comm);
}
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return allgatherv("MPI_Iallgatherv", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                      recvtype, comm);
}
// MPI 4.0
int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Allgatherv_init", comm, info));
    return allgatherv("MPI_Allgatherv_init", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                      recvtype, comm, Run::persistent);
}
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall("MPI_Alltoall", false, nullptr, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return alltoall("MPI_Ialltoall", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
// MPI 4.0
int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Alltoall_init", comm, info));
    return alltoall("MPI_Alltoall_init", true, request, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm, Run::persistent);
}
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoallv("MPI_Alltoallv", false, nullptr, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                     rdispls, recvtype, comm);
}
int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request) {
    return alltoallv("MPI_Ialltoallv", true, request, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                     rdispls, recvtype, comm);
}
// MPI 4.0
int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Alltoallv_init", comm, info));
    return alltoallv("MPI_Alltoallv_init", true, request, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                     rdispls, recvtype, comm, Run::persistent);
}
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                  void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                  MPI_Comm comm) {
    return alltoallw("MPI_Alltoallw", false, nullptr, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                     rdispls, recvtypes, comm);
}
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm, MPI_Request *request) {
    return alltoallw("MPI_Ialltoallw", true, request, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                     rdispls, recvtypes, comm);
}
// MPI 4.0
int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                       void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                       MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init_info("MPI_Alltoallw_init", comm, info));
    return alltoallw("MPI_Alltoallw_init", true, request, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                     rdispls, recvtypes, comm, Run::persistent);
}

}  // extern "C"
