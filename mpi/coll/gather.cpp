// Gather(v), Scatter(v), Allgather(v), Alltoall(v,w) and their nonblocking
// versions.
//
// Algorithms: linear gather/scatter at the root (all transfers in one round),
// ring allgather (size-1 rounds), linear alltoall (every pair in one round,
// posted in pairwise order me+k / me-k so no rank is everybody's first peer).
#include <string>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mpi/coll/common.hpp"
#include "mpi/coll/direct.hpp"
#include "mpi/coll/inter.hpp"
#include "mpi/dt/derived.hpp"

namespace ftmpi::mpi {

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
            s.add_send(block(i), scounts[i], ty(i), i);
        }
        if (recvbuf != MPI_IN_PLACE) s.add_copy(block(me), scounts[me], ty(me), recvbuf, rcount, rtype);
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
    if (sendbuf != MPI_IN_PLACE) {
        s.add_copy(sendbuf, scount, stype, block(me), rcounts[me], ty(me));
        s.next_round();
    }
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int st = 0; st < n - 1; ++st) {
        const int sb = ((me - st) % n + n) % n;
        const int rb = ((me - st - 1) % n + n) % n;
        // Its own block goes first from sendbuf, which the copy above only
        // read: the peer does not wait for lines this core just wrote.
        if (st == 0 && sendbuf != MPI_IN_PLACE) s.add_send(sendbuf, scount, stype, right);
        else s.add_send(block(sb), rcounts[sb], ty(sb), right);
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
    s.add_copy(sp(me), scounts[me], stypes[me], rp(me), rcounts[me], rtypes[me]);
    for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n, from = (me - k + n) % n;
        s.add_recv(rp(from), rcounts[from], rtypes[from], from);
        s.add_send(sp(to), scounts[to], stypes[to], to);
    }
    s.next_round();
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

namespace {

// Per-rank arrays for the regular (non-v) versions.
struct Regular {
    std::vector<int> counts, displs;
    Regular(int n, int count) : counts(static_cast<std::size_t>(n), count), displs(static_cast<std::size_t>(n)) {
        for (int i = 0; i < n; ++i) displs[static_cast<std::size_t>(i)] = i * count;
    }
};

// Byte displacements and per-peer types for alltoall/alltoallv.
struct AsW {
    std::vector<MPI_Aint> sd, rd;
    std::vector<MPI_Datatype> st, rt;
    AsW(int n, const void *sendbuf, const int *sdispls, MPI_Datatype stype, const int *rdispls, MPI_Datatype rtype)
        : sd(static_cast<std::size_t>(n)), rd(static_cast<std::size_t>(n)), st(static_cast<std::size_t>(n), stype),
          rt(static_cast<std::size_t>(n), rtype) {
        for (int i = 0; i < n; ++i) {
            if (sendbuf != MPI_IN_PLACE) sd[static_cast<std::size_t>(i)] = sdispls[i] * stype->extent;
            rd[static_cast<std::size_t>(i)] = rdispls[i] * rtype->extent;
        }
    }
};

// Gather and scatter mirror each other: every rank has a "single" side (the
// send side of gather, the receive side of scatter) and the root a "many" side
// with one count per rank (or one count for all).
struct RootedSide {
    const void *buf;
    const char *buf_arg, *count_arg, *type_arg;
};

int check_rooted(const char *call, MPI_Comm comm, int root, RootedSide single, int single_count,
                 MPI_Datatype single_type, RootedSide many, const int *many_counts, const int *displs,
                 MPI_Datatype many_type, bool v, const MPI_Datatype *types) {
    FTMPI_TRY(check_coll_start(call, comm));
#if FTMPI_ARG_CHECKS
    FTMPI_TRY(check_root(call, comm, root));
    const bool root_here = at_root(comm, root);
    // The single side is used at every member of an intra-communicator (the
    // root may pass MPI_IN_PLACE) and in the root's remote group of an
    // inter-communicator; nothing but root is significant at MPI_PROC_NULL.
    const bool single_used = !comm->inter || root >= 0;
    if (single_used && !(root_here && !comm->inter)) {
        const std::string where = std::string(single.buf_arg) + (comm->inter ? "" : " (not at the root)");
        FTMPI_TRY(check_no_in_place(call, comm, single.buf, where.c_str()));
    }
    if (single_used && single.buf != MPI_IN_PLACE)
        FTMPI_TRY(check_side(call, comm, single.buf, single_count, single_type, single.buf_arg, single.count_arg,
                             single.type_arg));
    if (root_here) {
        FTMPI_TRY(check_no_in_place(call, comm, many.buf, many.buf_arg));
        FTMPI_TRY(check_type(call, comm, many_type, many.type_arg));
        if (v) FTMPI_TRY(check_counts(call, comm, many_counts, displs, many.count_arg, "displs"));
        else FTMPI_TRY(check_count(call, comm, many_counts[0], many.count_arg));
        const auto ty = [&](int i) { return types != nullptr ? types[i] : many_type; };
        FTMPI_TRY(check_rank_buffers(
            call, comm, many.buf, [&](int i) { return many_counts[v ? i : 0]; }, ty,
            [&](int i) { return static_cast<MPI_Aint>(v ? displs[i] : i * many_counts[0]) * ty(i)->extent; },
            many.buf_arg));
    }
#else
    (void)root, (void)single, (void)single_count, (void)single_type, (void)many, (void)many_counts, (void)displs,
        (void)many_type, (void)v, (void)types;
#endif
    return MPI_SUCCESS;
}

int check_gather(const char *call, MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype stype,
                 const void *recvbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, int root, bool v,
                 const MPI_Datatype *types = nullptr) {
    return check_rooted(call, comm, root, {sendbuf, "sendbuf", "sendcount", "sendtype"}, scount, stype,
                        {recvbuf, "recvbuf", v ? "recvcounts" : "recvcount", "recvtype"}, rcounts, displs, rtype, v,
                        types);
}

int check_scatter(const char *call, MPI_Comm comm, const void *sendbuf, const int *scounts, const int *displs,
                  MPI_Datatype stype, const void *recvbuf, int rcount, MPI_Datatype rtype, int root, bool v,
                  const MPI_Datatype *types = nullptr) {
    return check_rooted(call, comm, root, {recvbuf, "recvbuf", "recvcount", "recvtype"}, rcount, rtype,
                        {sendbuf, "sendbuf", v ? "sendcounts" : "sendcount", "sendtype"}, scounts, displs, stype, v,
                        types);
}

int check_allgather(const char *call, MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype stype,
                    const void *recvbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, bool v,
                    const MPI_Datatype *types = nullptr) {
    FTMPI_TRY(check_coll_start(call, comm));
#if FTMPI_ARG_CHECKS
    if (comm->inter) FTMPI_TRY(check_no_in_place(call, comm, sendbuf, "sendbuf"));
    if (sendbuf != MPI_IN_PLACE)
        FTMPI_TRY(check_side(call, comm, sendbuf, scount, stype, "sendbuf", "sendcount", "sendtype"));
    FTMPI_TRY(check_no_in_place(call, comm, recvbuf, "recvbuf"));
    FTMPI_TRY(check_type(call, comm, rtype, "recvtype"));
    if (v) FTMPI_TRY(check_counts(call, comm, rcounts, displs, "recvcounts", "displs"));
    else FTMPI_TRY(check_count(call, comm, rcounts[0], "recvcount"));
    const auto ty = [&](int i) { return types != nullptr ? types[i] : rtype; };
    FTMPI_TRY(check_rank_buffers(
        call, comm, recvbuf, [&](int i) { return rcounts[v ? i : 0]; }, ty,
        [&](int i) { return static_cast<MPI_Aint>(v ? displs[i] : i * rcounts[0]) * ty(i)->extent; }, "recvbuf"));
#else
    (void)sendbuf, (void)scount, (void)stype, (void)recvbuf, (void)rcounts, (void)displs, (void)rtype, (void)v,
        (void)types;
#endif
    return MPI_SUCCESS;
}

// Alltoall family: counts/displacements per peer (v: arrays; otherwise one
// count), types per peer when w.
int check_alltoall(const char *call, MPI_Comm comm, const void *sendbuf, const int *scounts, const void *sdispls,
                   const MPI_Datatype *stypes, const void *recvbuf, const int *rcounts, const void *rdispls,
                   const MPI_Datatype *rtypes, bool v, bool w) {
    FTMPI_TRY(check_coll_start(call, comm));
#if FTMPI_ARG_CHECKS
    const int n = comm->size;  // an inter-communicator's arrays cover the remote group
    if (comm->inter) FTMPI_TRY(check_no_in_place(call, comm, sendbuf, "sendbuf"));
    FTMPI_TRY(check_no_in_place(call, comm, recvbuf, "recvbuf"));
    for (int side = 0; side < 2; ++side) {
        const bool send = side == 0;
        if (send && sendbuf == MPI_IN_PLACE) continue;
        const int *counts = send ? scounts : rcounts;
        const MPI_Datatype *types = send ? stypes : rtypes;
        if (v)
            FTMPI_TRY(check_counts(call, comm, counts, static_cast<const int *>(send ? sdispls : rdispls),
                                   send ? "sendcounts" : "recvcounts", send ? "sdispls" : "rdispls"));
        else FTMPI_TRY(check_count(call, comm, counts[0], send ? "sendcount" : "recvcount"));
        if (w) FTMPI_TRY(check_nonnull(call, comm, types, send ? "sendtypes" : "recvtypes"));
        for (int i = 0; i < n; ++i) {
            if (w || i == 0) {
                char arg[32];
                std::snprintf(arg, sizeof arg, w ? "%s[%d]" : "%s",
                              send ? (w ? "sendtypes" : "sendtype") : (w ? "recvtypes" : "recvtype"), i);
                if (!valid_type(types[w ? i : 0])) FTMPI_TRY(check_type(call, comm, types[w ? i : 0], arg));
            }
        }
        // Displacements: in bytes for w (int, as MPI_Alltoallw takes them), in
        // extents for v, implied otherwise.
        const auto *displs = static_cast<const int *>(send ? sdispls : rdispls);
        FTMPI_TRY(check_rank_buffers(
            call, comm, send ? sendbuf : recvbuf, [&](int i) { return counts[v ? i : 0]; },
            [&](int i) { return types[w ? i : 0]; },
            [&](int i) {
                if (w) return static_cast<MPI_Aint>(displs[i]);
                return static_cast<MPI_Aint>(v ? displs[i] : i * counts[0]) * types[0]->extent;
            },
            send ? "sendbuf" : "recvbuf"));
    }
#else
    (void)sendbuf, (void)scounts, (void)sdispls, (void)stypes, (void)recvbuf, (void)rcounts, (void)rdispls,
        (void)rtypes, (void)v, (void)w;
#endif
    return MPI_SUCCESS;
}

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
    if (!nb && direct_fits_rooted(comm, root, sendbuf, sendcount, sendtype, recvcount, recvtype))
        return coll_result(call, comm,
                           direct_gather(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
    Regular reg(comm->size, recvcount);
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
    if (!nb && direct_fits_rooted(comm, root, recvbuf, recvcount, recvtype, sendcount, sendtype))
        return coll_result(call, comm,
                           direct_scatter(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
    Regular reg(comm->size, sendcount);
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
    if (!nb && direct_fits_pair(comm, sendbuf, sendcount, sendtype, recvcount, recvtype, true))
        return coll_result(call, comm,
                           direct_allgather(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
    Regular reg(comm->size, recvcount);
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
    if (!nb && direct_fits_pair(comm, sendbuf, sendcount, sendtype, recvcount, recvtype, false))
        return coll_result(call, comm,
                           direct_alltoall(comm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
    const int n = comm->size;
    Regular sreg(n, sendcount), rreg(n, recvcount);
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
