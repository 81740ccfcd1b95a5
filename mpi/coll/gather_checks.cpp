// The argument checks of the gather, scatter and all-to-all families.
#include "mpi/coll/gather_checks.hpp"

#include <cstdio>
#include <string>

#include "mpi/coll/common.hpp"

namespace ftmpi::mpi {

namespace {

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
    if (single_used && !(root_here && !comm->inter) && single.buf == MPI_IN_PLACE) {
        const std::string where = std::string(single.buf_arg) + (comm->inter ? "" : " (not at the root)");
        FTMPI_TRY(check_no_in_place(call, comm, single.buf, where.c_str()));  // the name only for the message
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

}  // namespace

int check_gather(const char *call, MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype stype,
                 const void *recvbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, int root, bool v,
                 const MPI_Datatype *types) {
    return check_rooted(call, comm, root, {sendbuf, "sendbuf", "sendcount", "sendtype"}, scount, stype,
                        {recvbuf, "recvbuf", v ? "recvcounts" : "recvcount", "recvtype"}, rcounts, displs, rtype, v,
                        types);
}

int check_scatter(const char *call, MPI_Comm comm, const void *sendbuf, const int *scounts, const int *displs,
                  MPI_Datatype stype, const void *recvbuf, int rcount, MPI_Datatype rtype, int root, bool v,
                  const MPI_Datatype *types) {
    return check_rooted(call, comm, root, {recvbuf, "recvbuf", "recvcount", "recvtype"}, rcount, rtype,
                        {sendbuf, "sendbuf", v ? "sendcounts" : "sendcount", "sendtype"}, scounts, displs, stype, v,
                        types);
}

int check_allgather(const char *call, MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype stype,
                    const void *recvbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, bool v,
                    const MPI_Datatype *types) {
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
        for (int i = 0; i < (w ? n : 1); ++i) {
            if (!valid_type(types[i])) {  // the argument's name is only written for the message
                char arg[32];
                std::snprintf(arg, sizeof arg, w ? "%s[%d]" : "%s",
                              send ? (w ? "sendtypes" : "sendtype") : (w ? "recvtypes" : "recvtype"), i);
                FTMPI_TRY(check_type(call, comm, types[i], arg));
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

}  // namespace ftmpi::mpi
