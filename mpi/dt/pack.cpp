// MPI_Pack, MPI_Unpack, MPI_Pack_size. The packed format is the raw bytes of
// the typemap in order (no header): a homogeneous job needs no conversion.
#include "mpi/dt/checks.hpp"
#include "mpi/dt/derived.hpp"

using namespace ftmpi::mpi;

namespace {

int check_position(const char *call, MPI_Comm comm, const int *position, int limit, const char *limit_arg) {
    FTMPI_CHECK(check_nonnull(call, comm, position, "position"));
    if (*position >= 0 && *position <= limit) return MPI_SUCCESS;
    return raise(comm, MPI_ERR_ARG, call, "*position is %d (must be in 0..%s = %d)", *position, limit_arg, limit);
}

}  // namespace

extern "C" {

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
             MPI_Comm comm) {
    const char *call = "MPI_Pack";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_count(call, comm, incount, "incount"));
    FTMPI_CHECK(check_comm_type(call, comm, datatype));
    FTMPI_CHECK(check_typed_buffer(call, comm, inbuf, incount, datatype, "inbuf"));
    FTMPI_CHECK(check_count(call, comm, outsize, "outsize"));
    FTMPI_CHECK(check_position(call, comm, position, outsize, "outsize"));
    const std::size_t need = static_cast<std::size_t>(incount) * datatype->size;
    if (need > static_cast<std::size_t>(outsize - *position))
        return raise(comm, MPI_ERR_TRUNCATE, call, "%zu bytes do not fit in outbuf (outsize %d, *position %d)", need,
                     outsize, *position);
    if (need > 0) FTMPI_CHECK(check_nonnull(call, comm, outbuf, "outbuf"));
    if (need > 0) pack(inbuf, static_cast<std::size_t>(incount), datatype, static_cast<char *>(outbuf) + *position);
    *position += static_cast<int>(need);
    return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
               MPI_Comm comm) {
    const char *call = "MPI_Unpack";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_count(call, comm, insize, "insize"));
    FTMPI_CHECK(check_count(call, comm, outcount, "outcount"));
    FTMPI_CHECK(check_comm_type(call, comm, datatype));
    FTMPI_CHECK(check_typed_buffer(call, comm, outbuf, outcount, datatype, "outbuf"));
    FTMPI_CHECK(check_position(call, comm, position, insize, "insize"));
    const std::size_t need = static_cast<std::size_t>(outcount) * datatype->size;
    if (need > static_cast<std::size_t>(insize - *position))
        return raise(comm, MPI_ERR_TRUNCATE, call, "%zu bytes wanted but inbuf has %d left (insize %d, *position %d)",
                     need, insize - *position, insize, *position);
    if (need > 0) FTMPI_CHECK(check_nonnull(call, comm, inbuf, "inbuf"));
    if (need > 0) unpack(static_cast<const char *>(inbuf) + *position, need, outbuf, datatype);
    *position += static_cast<int>(need);
    return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size) {
    const char *call = "MPI_Pack_size";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_count(call, comm, incount, "incount"));
    FTMPI_CHECK(check_comm_type(call, comm, datatype));
    FTMPI_CHECK(check_nonnull(call, comm, size, "size"));
    const std::size_t need = static_cast<std::size_t>(incount) * datatype->size;
    if (need > static_cast<std::size_t>(INT32_MAX))
        return raise(comm, MPI_ERR_COUNT, call, "%zu bytes do not fit in an int", need);
    *size = static_cast<int>(need);
    return MPI_SUCCESS;
}

}  // extern "C"
