// MPI_Reduce_scatter and MPI_Reduce_scatter_block in every form (blocking,
// nonblocking, persistent, large-count): one path with the counts as they
// come (int or MPI_Count). A vector longer than INT_MAX elements goes as one
// reduce per member (or, between the groups of an inter-communicator, as
// types of its blocks): mpi/coll/reduce.cpp's builders do the work.
#include <algorithm>
#include <climits>
#include <type_traits>
#include <vector>

#include "mpi/coll/common.hpp"
#include "mpi/coll/direct.hpp"
#include "mpi/coll/inter.hpp"
#include "runtime/config.hpp"

namespace ftmpi::mpi {
namespace {

// counts: one per member of the process's own group (int, or MPI_Count
// from MPI_Reduce_scatter_c); *total: their sum.
template <typename C>
int check_rs(const char *call, MPI_Comm comm, const void *sendbuf, void *recvbuf, const C *counts, MPI_Datatype t,
             MPI_Op op, MPI_Count *total) {
    FTMPI_TRY(check_coll_start(call, comm));
    const int n = group_size(comm);
    FTMPI_CHECK(check_nonnull(call, comm, counts, "recvcounts"));
    *total = 0;
    for (int i = 0; i < n; ++i) {
        if (counts[i] < 0)
            return raise(comm, MPI_ERR_COUNT, call, "negative recvcounts[%d] = %lld", i,
                         static_cast<long long>(counts[i]));
        *total += counts[i];
    }
    FTMPI_CHECK(check_type(call, comm, t));
    FTMPI_CHECK(check_op_type(call, comm, op, t));
    if (comm->inter) FTMPI_CHECK(check_no_in_place(call, comm, sendbuf, "sendbuf"));
    FTMPI_CHECK(check_no_in_place(call, comm, recvbuf, "recvbuf"));
    const auto some = [](MPI_Count c) { return static_cast<int>(std::min<MPI_Count>(c, 1)); };  // buffers: used or not
    if (sendbuf != MPI_IN_PLACE) FTMPI_CHECK(check_typed_buffer(call, comm, sendbuf, some(*total), t, "sendbuf"));
    FTMPI_CHECK(check_typed_buffer(call, comm, recvbuf, some(sendbuf == MPI_IN_PLACE ? *total : counts[comm->rank]), t,
                                   "recvbuf"));
    return MPI_SUCCESS;
}

// Vectors longer than this go through split_reduce_scatter.
MPI_Count split_above() {
    const int test = ftmpi::runtime::config().TEST_SPLIT_ABOVE;
    return test > 0 ? test : 0x7fffffff;
}

// A reduce-scatter of a vector longer than INT_MAX elements. Intra: one
// reduce per member, of its block to it, the block one element of a type of
// its count (elements_type); inter: build_inter_reduce_scatter_wide. Every
// member knows every count, so all take this path together.
template <typename C>
int split_reduce_scatter(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, void *recvbuf,
                         const C *counts, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    if (nb) FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    const std::vector<MPI_Count> wide(counts, counts + group_size(comm));
    bool no_mem = false;
    const auto build = [&](Sched &s) {
        s.op = *op;
        if (comm->inter) return build_inter_reduce_scatter_wide(s, sendbuf, recvbuf, wide.data(), t);
        const void *input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
        std::size_t off = 0;
        for (std::size_t i = 0; i < wide.size(); ++i) {
            if (wide[i] == 0) continue;  // known to all: no reduce
            const MPI_Datatype block = s.adopt(elements_type(wide[i], t));
            no_mem = no_mem || block == MPI_DATATYPE_NULL;
            const int root = static_cast<int>(i);
            // The root's input may overlap its output (MPI_IN_PLACE): build_reduce
            // reads it once, copying it into the output, front to back.
            if (block != MPI_DATATYPE_NULL)
                build_reduce(s, comm, at(input, off, t), root == comm->rank ? recvbuf : nullptr, 1, block, root);
            off += static_cast<std::size_t>(wide[i]);
        }
    };
    const int err = nb ? run_nonblocking(comm, request, run, build) : run_blocking(call, comm, build);
    if (no_mem) return raise(comm, MPI_ERR_NO_MEM, call, "out of memory for the datatypes of a vector over INT_MAX");
    return err;
}

void reduce_scatter_sched(Sched &s, MPI_Comm comm, const void *sendbuf, void *recvbuf, const int *counts,
                          MPI_Datatype t, MPI_Op op) {
    s.op = *op;
    if (comm->inter) build_inter_reduce_scatter(s, sendbuf, recvbuf, counts, t);
    else build_reduce_scatter(s, comm, sendbuf, recvbuf, counts, t);
}


// MPI_Reduce_scatter and its nonblocking, persistent and large-count forms
// (blocking unless nb): a vector longer than INT_MAX elements splits.
template <typename C>
int reduce_scatter_any(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, void *recvbuf,
                       const C *counts, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    MPI_Count total = 0;
    FTMPI_TRY(check_rs(call, comm, sendbuf, recvbuf, counts, t, op, &total));
    if (total > split_above())
        return split_reduce_scatter(call, nb, run, request, sendbuf, recvbuf, counts, t, op, comm);
    const int *ints = nullptr;
    std::vector<int> converted;  // MPI_Count counts, each within INT_MAX here
    if constexpr (std::is_same_v<C, int>) {
        ints = counts;
    } else {
        converted.assign(counts, counts + group_size(comm));
        ints = converted.data();
    }
    if (!nb && op->commute && direct_small(comm) && total <= INT_MAX && direct_fits(comm, static_cast<int>(total), t))
        return coll_result(call, comm, direct_reduce_scatter(comm, sendbuf, recvbuf, ints, t, *op));
    const auto build = [&](Sched &s) { reduce_scatter_sched(s, comm, sendbuf, recvbuf, ints, t, op); };
    if (!nb) return run_blocking(call, comm, build);
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    return run_nonblocking(comm, request, run, build);
}

// MPI_Reduce_scatter_block's forms: the same, with one count for every member.
template <typename C>
int reduce_scatter_block(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, void *recvbuf,
                         C recvcount, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    FTMPI_TRY(check_coll_start(call, comm));
    if (recvcount < 0)
        return raise(comm, MPI_ERR_COUNT, call, "negative recvcount %lld", static_cast<long long>(recvcount));
    const std::vector<C> counts(static_cast<std::size_t>(group_size(comm)), recvcount);
    return reduce_scatter_any(call, nb, run, request, sendbuf, recvbuf, counts.data(), t, op, comm);
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

// Each in blocking, nonblocking and persistent form, with int counts and
// (suffix _c) MPI_Count ones. MPI_Reduce_scatter_block: each member's vector
// holds (its group's size) * recvcount elements.
#define FTMPI_REDUCE_SCATTER(Count, Sfx)                                                                               \
    int MPI_Reduce_scatter##Sfx(const void *sendbuf, void *recvbuf, const Count recvcounts[], MPI_Datatype datatype,   \
                                MPI_Op op, MPI_Comm comm) {                                                            \
        return reduce_scatter_any("MPI_Reduce_scatter" #Sfx, false, Run::nonblocking, nullptr, sendbuf, recvbuf,       \
                                  recvcounts, datatype, op, comm);                                                     \
    }                                                                                                                  \
    int MPI_Ireduce_scatter##Sfx(const void *sendbuf, void *recvbuf, const Count recvcounts[], MPI_Datatype datatype,  \
                                 MPI_Op op, MPI_Comm comm, MPI_Request *request) {                                     \
        return reduce_scatter_any("MPI_Ireduce_scatter" #Sfx, true, Run::nonblocking, request, sendbuf, recvbuf,       \
                                  recvcounts, datatype, op, comm);                                                     \
    }                                                                                                                  \
    int MPI_Reduce_scatter_init##Sfx(const void *sendbuf, void *recvbuf, const Count recvcounts[],                     \
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,                   \
                                     MPI_Request *request) {                                                           \
        FTMPI_TRY(check_init_info("MPI_Reduce_scatter_init" #Sfx, comm, info));                                        \
        return reduce_scatter_any("MPI_Reduce_scatter_init" #Sfx, true, Run::persistent, request, sendbuf, recvbuf,    \
                                  recvcounts, datatype, op, comm);                                                     \
    }                                                                                                                  \
    int MPI_Reduce_scatter_block##Sfx(const void *sendbuf, void *recvbuf, Count recvcount, MPI_Datatype datatype,      \
                                      MPI_Op op, MPI_Comm comm) {                                                      \
        return reduce_scatter_block("MPI_Reduce_scatter_block" #Sfx, false, Run::nonblocking, nullptr, sendbuf,        \
                                    recvbuf, recvcount, datatype, op, comm);                                           \
    }                                                                                                                  \
    int MPI_Ireduce_scatter_block##Sfx(const void *sendbuf, void *recvbuf, Count recvcount, MPI_Datatype datatype,     \
                                       MPI_Op op, MPI_Comm comm, MPI_Request *request) {                               \
        return reduce_scatter_block("MPI_Ireduce_scatter_block" #Sfx, true, Run::nonblocking, request, sendbuf,        \
                                    recvbuf, recvcount, datatype, op, comm);                                           \
    }                                                                                                                  \
    int MPI_Reduce_scatter_block_init##Sfx(const void *sendbuf, void *recvbuf, Count recvcount, MPI_Datatype datatype, \
                                           MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {            \
        FTMPI_TRY(check_init_info("MPI_Reduce_scatter_block_init" #Sfx, comm, info));                                  \
        return reduce_scatter_block("MPI_Reduce_scatter_block_init" #Sfx, true, Run::persistent, request, sendbuf,     \
                                    recvbuf, recvcount, datatype, op, comm);                                           \
    }

extern "C" {

FTMPI_REDUCE_SCATTER(int, )
FTMPI_REDUCE_SCATTER(MPI_Count, _c)

}  // extern "C"
