// Shared pieces of the collective entry points: argument checks and the
// blocking / nonblocking drivers around a schedule builder.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>

#include "mpi/checks.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/coll/ops.hpp"
#include "mpi/coll/sched.hpp"

namespace ftmpi::mpi {

// An intra-communicator's root is one of its ranks; an inter-communicator's
// is MPI_ROOT (the root), MPI_PROC_NULL (the rest of the root's group) or the
// root's rank in the remote group (MPI-3.1 §5.2.2).
inline int check_root(const char *call, MPI_Comm c, int root) {
    if (c->inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->size)) return MPI_SUCCESS;
        return raise(c, MPI_ERR_ROOT, call,
                     "invalid root %d (argument root; on the inter-communicator %s: MPI_ROOT, MPI_PROC_NULL or a "
                     "rank of the remote group of %d)",
                     root, comm_label(c), c->size);
    }
    if (root >= 0 && root < c->size) return MPI_SUCCESS;
    return raise(c, MPI_ERR_ROOT, call, "invalid root %d (argument root; %s has %d ranks)", root, comm_label(c),
                 c->size);
}

// Whether this process is the root: its rank (intra), MPI_ROOT (inter).
inline bool at_root(MPI_Comm c, int root) { return c->inter ? root == MPI_ROOT : c->rank == root; }

// The size of the group a process's own per-rank arrays cover: the
// communicator's, or an inter-communicator's local group's.
inline int group_size(MPI_Comm c) { return c->inter ? c->local->size : c->size; }

// MPI_IN_PLACE where it is not allowed; never on an inter-communicator
// (there is no communication from a process to itself, MPI-3.1 §5.2.3).
inline int check_no_in_place(const char *call, MPI_Comm c, const void *buf, const char *arg) {
    if (buf != MPI_IN_PLACE) return MPI_SUCCESS;
    if (c->inter)
        return raise(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is not allowed on an inter-communicator (argument %s)",
                     arg);
    return raise(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is not allowed for argument %s here", arg);
}

// count/type/buffer of one side of a collective.
inline int check_side(const char *call, MPI_Comm c, const void *buf, int count, MPI_Datatype t, const char *buf_arg,
                      const char *count_arg, const char *type_arg) {
    FTMPI_TRY(check_count(call, c, count, count_arg));
    FTMPI_TRY(check_type(call, c, t, type_arg));
    return check_typed_buffer(call, c, buf, count, t, buf_arg);
}

// One side of a collective with a block per rank of c: block i is count(i)
// elements of type(i) (valid types) at buf + disp(i) bytes. With buf NULL
// (MPI_BOTTOM) each block is checked: its displacement or its type may hold
// the absolute address (check_typed_buffer).
template <typename Count, typename Type, typename Disp>
int check_rank_buffers(const char *call, MPI_Comm c, const void *buf, Count count, Type type, Disp disp,
                       const char *arg) {
    if (buf != nullptr) return MPI_SUCCESS;
    for (int i = 0; i < c->size; ++i) FTMPI_TRY(check_typed_buffer(call, c, buf, count(i), type(i), arg, disp(i)));
    return MPI_SUCCESS;
}

// A per-rank count array (and its displacements, when given) of n entries
// (default: c's size; an inter-communicator's remote group).
inline int check_counts(const char *call, MPI_Comm c, const int *counts, const int *displs, const char *counts_arg,
                        const char *displs_arg, int n = -1) {
    FTMPI_TRY(check_nonnull(call, c, counts, counts_arg));
    if (displs_arg != nullptr) FTMPI_TRY(check_nonnull(call, c, displs, displs_arg));
    for (int i = 0; i < (n < 0 ? c->size : n); ++i)
        if (counts[i] < 0) return raise(c, MPI_ERR_COUNT, call, "negative %s[%d] = %d", counts_arg, i, counts[i]);
    return MPI_SUCCESS;
}

// Initialized and a valid communicator (intra or inter).
inline int check_coll_start(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    return MPI_SUCCESS;
}

// The same, for the collectives MPI defines on intra-communicators only
// (scan, exscan, the neighborhood collectives): MPI_ERR_COMM otherwise.
inline int check_intra_coll_start(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_coll_start(call, comm));
    if (comm->inter)
        return raise(comm, MPI_ERR_COMM, call, "%s is an inter-communicator; %s is defined on intra-communicators only",
                     comm_label(comm), call);
    return MPI_SUCCESS;
}

// A value per member (or neighbour), for a call's arguments while its
// schedule is built: in place up to 64 (no allocation per call), else on
// the heap.
template <class T>
class PerRank {
public:
    PerRank(std::size_t n, T v) : n_(n) {
        if (n > k_inline) {
            heap_ = std::make_unique<T[]>(n);
            p_ = heap_.get();
        }
        std::fill_n(p_, n, v);
    }
    PerRank(const PerRank &) = delete;
    PerRank &operator=(const PerRank &) = delete;
    T *data() { return p_; }
    const T *data() const { return p_; }
    std::size_t size() const { return n_; }
    T &operator[](std::size_t i) { return p_[i]; }
    const T &operator[](std::size_t i) const { return p_[i]; }

private:
    static constexpr std::size_t k_inline = 64;
    std::size_t n_;
    T in_[k_inline];
    std::unique_ptr<T[]> heap_;
    T *p_ = in_;
};

template <typename Build>
int run_blocking(const char *call, MPI_Comm comm, Build &&build) {
    Sched s(comm);
    build(s);
    return coll_result(call, comm, s.run());
}

// How an entry point runs its schedule: MPI_Ixxx's, or MPI_Xxx_init's
// (planned now, run at each MPI_Start).
enum class Run : std::uint8_t { nonblocking, persistent };

template <typename Build>
int run_nonblocking(MPI_Comm comm, MPI_Request *request, Run run, Build &&build) {
    auto *s = new Sched(comm);
    build(*s);
    *request = run == Run::persistent ? s->make_persistent() : s->start_nonblocking();
    return MPI_SUCCESS;
}

// The info argument of a persistent collective's init: MPI_INFO_NULL or an
// info object (no hint changes the plan).
inline int check_init_info(const char *call, MPI_Comm comm, MPI_Info info) {
    return check_info_arg(call, valid_comm(comm) ? comm : MPI_COMM_NULL, info);
}

// Schedule builders (mpi/coll/*.cpp). Each appends rounds to `s` and leaves a
// fresh round open, so builders compose.
void build_ibarrier(Sched &s, MPI_Comm comm);
void build_bcast(Sched &s, MPI_Comm comm, void *buf, int count, MPI_Datatype t, int root);
void build_reduce(Sched &s, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, int root);
void build_allreduce(Sched &s, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t);
void build_reduce_scatter(Sched &s, MPI_Comm comm, const void *sendbuf, void *recvbuf, const int *counts,
                          MPI_Datatype t);
void build_scan(Sched &s, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, bool exclusive);
// The v builders take a type per block on the side with a block per rank
// (`types`, null: `rtype` or `stype` for all), as the large-count functions
// describe a block beyond INT_MAX (mpi/large/wide.cpp).
void build_gatherv(Sched &s, MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                   const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                   const MPI_Datatype *types = nullptr);
void build_scatterv(Sched &s, MPI_Comm comm, const void *sendbuf, const int *scounts, const int *displs,
                    MPI_Datatype stype, void *recvbuf, int rcount, MPI_Datatype rtype, int root,
                    const MPI_Datatype *types = nullptr);
void build_allgatherv(Sched &s, MPI_Comm comm, const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
                      const int *rcounts, const int *displs, MPI_Datatype rtype, const MPI_Datatype *types = nullptr);
// Displacements in bytes, one type per peer (alltoall/alltoallv convert).
void build_alltoallw(Sched &s, MPI_Comm comm, const void *sendbuf, const int *scounts, const MPI_Aint *sdispls,
                     const MPI_Datatype *stypes, void *recvbuf, const int *rcounts, const MPI_Aint *rdispls,
                     const MPI_Datatype *rtypes);

// The v collectives for the large-count functions (mpi/large/wide.cpp),
// with a type per block on the side with a block per rank (`types`, null:
// the one type); blocking unless `nb`, then nonblocking or persistent
// (`run`).
int coll_gatherv(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, int sendcount,
                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm, const MPI_Datatype *types);
int coll_scatterv(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, const MPI_Datatype *types);
int coll_allgatherv(const char *call, bool nb, Run run, MPI_Request *request, const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm, const MPI_Datatype *types);

// Allreduce switches from recursive doubling to ring reduce-scatter +
// allgather at this many bytes per rank (commutative ops, count >= size).
inline constexpr std::size_t k_allreduce_ring_bytes = 64 * 1024;

}  // namespace ftmpi::mpi
