// The large-count (_c) functions of packing, windows, files and operations.
#include <mpi.h>

#include <cstdint>

#include "mpi/checks.hpp"
#include "mpi/coll/ops.hpp"
#include "mpi/errors.hpp"
#include "mpi/large/count_as.hpp"
#include "mpi/objects.hpp"

using namespace ftmpi::mpi;

namespace {

bool fits(MPI_Count v) { return v >= INT32_MIN && v <= INT32_MAX; }

// A window's displacement unit as its int twin takes it.
int disp_unit_of(MPI_Comm comm, const char *call, MPI_Aint disp_unit, int *out) {
    if (fits(disp_unit)) {
        *out = static_cast<int>(disp_unit);
        return MPI_SUCCESS;
    }
    return raise(comm, MPI_ERR_DISP, call, "disp_unit %lld is larger than ftmpi supports (INT_MAX)",
                 static_cast<long long>(disp_unit));
}

// MPI_Pack_c and MPI_Unpack_c: the twin packs (or unpacks) at buf + *position
// with a window of the buffer that fits in an int, the count as CountAs
// gives it.
template <typename Twin>
int at_position(const char *call, MPI_Comm comm, MPI_Count size, MPI_Count *position, Twin twin) {
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, position, "position"));
    if (*position < 0 || *position > size)
        return raise(comm, MPI_ERR_ARG, call, "position %lld outside the buffer of %lld bytes", *position, size);
    const MPI_Count room = size - *position;
    int pos = 0;
    const int rc =
        twin(static_cast<std::size_t>(*position), room > INT32_MAX ? INT32_MAX : static_cast<int>(room), &pos);
    if (rc == MPI_SUCCESS) *position += pos;
    return rc;
}

}  // namespace

extern "C" {

int MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
               MPI_Count *position, MPI_Comm comm) {
    const char *call = "MPI_Pack_c";
    CallAlias alias(call);
    CountAs n(incount, datatype);
    return at_position(call, comm, outsize, position, [&](std::size_t at, int room, int *pos) {
        return MPI_Pack(inbuf, n.count(), n.type(), static_cast<char *>(outbuf) + at, room, pos, comm);
    });
}

int MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                 MPI_Datatype datatype, MPI_Comm comm) {
    const char *call = "MPI_Unpack_c";
    CallAlias alias(call);
    CountAs n(outcount, datatype);
    return at_position(call, comm, insize, position, [&](std::size_t at, int room, int *pos) {
        return MPI_Unpack(static_cast<const char *>(inbuf) + at, room, pos, outbuf, n.count(), n.type(), comm);
    });
}

int MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size) {
    const char *call = "MPI_Pack_size_c";
    CallAlias alias(call);
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, size, "size"));
    // The twin checks the arguments on one element; the native packed size
    // is the data's size.
    int one = 0;
    const int rc = MPI_Pack_size(incount < 0 ? -1 : (incount > 0 ? 1 : 0), datatype, comm, &one);
    if (rc != MPI_SUCCESS) return rc;
    *size = incount * static_cast<MPI_Count>(datatype->size);
    return MPI_SUCCESS;
}

int MPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                        MPI_Count outsize, MPI_Count *position) {
    CallAlias alias("MPI_Pack_external_c");
    CountAs n(incount, datatype);
    MPI_Aint pos = position != nullptr ? static_cast<MPI_Aint>(*position) : 0;
    const int rc = MPI_Pack_external(datarep, inbuf, n.count(), n.type(), outbuf, static_cast<MPI_Aint>(outsize),
                                     position != nullptr ? &pos : nullptr);
    if (rc == MPI_SUCCESS) *position = pos;
    return rc;
}

int MPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                          MPI_Count outcount, MPI_Datatype datatype) {
    CallAlias alias("MPI_Unpack_external_c");
    CountAs n(outcount, datatype);
    MPI_Aint pos = position != nullptr ? static_cast<MPI_Aint>(*position) : 0;
    const int rc = MPI_Unpack_external(datarep, inbuf, static_cast<MPI_Aint>(insize),
                                       position != nullptr ? &pos : nullptr, outbuf, n.count(), n.type());
    if (rc == MPI_SUCCESS) *position = pos;
    return rc;
}

int MPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count *size) {
    CallAlias alias("MPI_Pack_external_size_c");
    CountAs n(incount, datatype);
    MPI_Aint s = 0;
    const int rc = MPI_Pack_external_size(datarep, n.count(), n.type(), size != nullptr ? &s : nullptr);
    if (rc == MPI_SUCCESS) *size = s;
    return rc;
}

int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    const char *call = "MPI_Win_create_c";
    CallAlias alias(call);
    int du = 0;
    FTMPI_CHECK(disp_unit_of(comm, call, disp_unit, &du));
    return MPI_Win_create(base, size, du, info, comm, win);
}

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    const char *call = "MPI_Win_allocate_c";
    CallAlias alias(call);
    int du = 0;
    FTMPI_CHECK(disp_unit_of(comm, call, disp_unit, &du));
    return MPI_Win_allocate(size, du, info, comm, baseptr, win);
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                              MPI_Win *win) {
    const char *call = "MPI_Win_allocate_shared_c";
    CallAlias alias(call);
    int du = 0;
    FTMPI_CHECK(disp_unit_of(comm, call, disp_unit, &du));
    return MPI_Win_allocate_shared(size, du, info, comm, baseptr, win);
}

int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr) {
    CallAlias alias("MPI_Win_shared_query_c");
    int du = 0;
    const int rc = MPI_Win_shared_query(win, rank, size, disp_unit != nullptr ? &du : nullptr, baseptr);
    if (rc == MPI_SUCCESS) *disp_unit = du;
    return rc;
}

int MPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent) {
    CallAlias alias("MPI_File_get_type_extent_c");
    MPI_Aint e = 0;
    const int rc = MPI_File_get_type_extent(fh, datatype, extent != nullptr ? &e : nullptr);
    if (rc == MPI_SUCCESS) *extent = e;
    return rc;
}

int MPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op) {
    const char *call = "MPI_Op_create_c";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, reinterpret_cast<const void *>(user_fn), "user_fn"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, op, "op"));
    *op = new ftmpi_op_s{Magic::op, op_user, nullptr, commute != 0, false, user_fn};
    return MPI_SUCCESS;
}

}  // extern "C"
