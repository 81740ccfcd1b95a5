// Argument checks shared by every MPI entry point.
//
// Each check returns MPI_SUCCESS or the result of raise(): the right class,
// with a message naming the call and the argument. With -Darg_checks=false
// FTMPI_CHECK compiles to nothing (the initialized check stays).
#pragma once

#include "ftmpi_config.h"
#include "mpi/errors.hpp"
#include "mpi/objects.hpp"
#include "mpi/state.hpp"
#include "transport/match_bits.hpp"

namespace ftmpi::mpi {

inline bool valid_comm(MPI_Comm c) { return c != MPI_COMM_NULL && c->magic == Magic::comm; }
inline bool valid_type(MPI_Datatype t) { return t != MPI_DATATYPE_NULL && t->magic == Magic::datatype; }

inline int check_init(const char *call) {
    if (g.initialized && !g.finalized) return MPI_SUCCESS;
    if (g.forked) return raise(MPI_COMM_NULL, MPI_ERR_OTHER, call, "called in a process forked after MPI_Init");
    return raise(MPI_COMM_NULL, MPI_ERR_OTHER, call, "called %s MPI_Init",
                 g.finalized ? "after MPI_Finalize" : "before");
}

inline int check_comm(const char *call, MPI_Comm c) {
    if (valid_comm(c)) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_COMM, call, "invalid communicator (argument comm is %s)",
                 c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a communicator");
}

inline int check_count(const char *call, MPI_Comm c, int count, const char *arg = "count") {
    if (count >= 0) return MPI_SUCCESS;
    return raise(c, MPI_ERR_COUNT, call, "negative %s %d", arg, count);
}

inline int check_type(const char *call, MPI_Comm c, MPI_Datatype t, const char *arg = "datatype") {
    if (valid_type(t)) return MPI_SUCCESS;
    return raise(c, MPI_ERR_TYPE, call, "invalid datatype (argument %s is %s)", arg,
                 t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a datatype");
}

inline int check_dest(const char *call, MPI_Comm c, int rank, const char *arg = "dest") {
    if (rank == MPI_PROC_NULL || (rank >= 0 && rank < c->size)) return MPI_SUCCESS;
    return raise(c, MPI_ERR_RANK, call, "invalid rank %d (argument %s; %s has %d ranks)", rank, arg, comm_label(c),
                 c->size);
}

inline int check_source(const char *call, MPI_Comm c, int rank, const char *arg = "source") {
    if (rank == MPI_ANY_SOURCE) return MPI_SUCCESS;
    return check_dest(call, c, rank, arg);
}

inline int check_send_tag(const char *call, MPI_Comm c, int tag, const char *arg = "tag") {
    if (tag >= 0 && tag <= transport::max_tag) return MPI_SUCCESS;
    return raise(c, MPI_ERR_TAG, call, "invalid tag %d (argument %s; valid tags are 0..%d)", tag, arg,
                 transport::max_tag);
}

inline int check_recv_tag(const char *call, MPI_Comm c, int tag, const char *arg = "tag") {
    if (tag == MPI_ANY_TAG) return MPI_SUCCESS;
    return check_send_tag(call, c, tag, arg);
}

// An info argument: MPI_INFO_NULL or an info object.
inline int check_info_arg(const char *call, MPI_Comm c, MPI_Info info) {
    if (info == MPI_INFO_NULL || info->magic == Magic::info) return MPI_SUCCESS;
    return raise(c, MPI_ERR_INFO, call, "invalid info (argument info)");
}

inline int check_nonnull(const char *call, MPI_Comm c, const void *p, const char *arg) {
    if (p != nullptr) return MPI_SUCCESS;
    return raise(c, MPI_ERR_ARG, call, "argument %s is NULL", arg);
}

// MPI_ERR_REVOKED raised on c when c was revoked (ULFM: every operation on it
// that is not local fails, MPI_PROC_NULL and one-member communicators
// included), else MPI_SUCCESS: one load. Not an argument check (it stays
// with -Darg_checks=false): use it with FTMPI_TRY.
inline int check_not_revoked(const char *call, MPI_Comm c) {
    if (!c->revoked) [[likely]]
        return MPI_SUCCESS;
    return raise(c, MPI_ERR_REVOKED, call, "%s was revoked", comm_label(c));
}

}  // namespace ftmpi::mpi

#define FTMPI_TRY(expr)                                         \
    do {                                                        \
        if (int ftmpi_rc_ = (expr); ftmpi_rc_ != MPI_SUCCESS) { \
            return ftmpi_rc_;                                   \
        }                                                       \
    } while (0)

#if FTMPI_ARG_CHECKS
#define FTMPI_CHECK(expr) FTMPI_TRY(expr)
#else
#define FTMPI_CHECK(expr) \
    do {                  \
    } while (0)
#endif
