// MPI_Pack, MPI_Unpack, MPI_Pack_size, and their external32 twins
// MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size.
//
// MPI_Pack's format is the raw bytes of the typemap in order (no header): a
// homogeneous job needs no conversion. The external calls take the datarep
// "external32" only (mpi/dt/external32.cpp); any other is
// MPI_ERR_UNSUPPORTED_DATAREP, the standard's class for an unsupported
// datarep (Open MPI and MPICH do not look at the argument). Both kinds share
// the argument checks below; the external ones report on MPI_COMM_NULL.
#include <cstring>

#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"

using namespace ftmpi::mpi;

namespace {

// A packed representation: the bytes of one element of t, and the copies.
struct Rep {
    std::size_t (*size)(MPI_Datatype t);
    void (*pack)(const void *buf, std::size_t count, MPI_Datatype t, void *out);
    void (*unpack)(const void *in, std::size_t count, void *buf, MPI_Datatype t);
};

std::size_t native_size(MPI_Datatype t) { return t->size; }
void native_unpack(const void *in, std::size_t count, void *buf, MPI_Datatype t) {
    unpack(in, count * t->size, buf, t);
}

const Rep k_native{native_size, pack, native_unpack};
const Rep k_external32{external32_size, pack_external32, unpack_external32};

// `Size` is int (MPI_Pack) or MPI_Aint (MPI_Pack_external).
template <typename Size>
int check_size(const char *call, MPI_Comm comm, Size size, const char *arg) {
    if (size >= 0) return MPI_SUCCESS;
    return raise(comm, MPI_ERR_COUNT, call, "negative %s %lld", arg, static_cast<long long>(size));
}

template <typename Size>
int check_position(const char *call, MPI_Comm comm, const Size *position, Size limit, const char *limit_arg) {
    FTMPI_CHECK(check_nonnull(call, comm, position, "position"));
    if (*position >= 0 && *position <= limit) return MPI_SUCCESS;
    return raise(comm, MPI_ERR_ARG, call, "*position is %lld (must be in 0..%s = %lld)",
                 static_cast<long long>(*position), limit_arg, static_cast<long long>(limit));
}

// The checks every pack, unpack and size call makes on its element count and type.
int check_elements(const char *call, MPI_Comm comm, int count, const char *count_arg, MPI_Datatype datatype,
                   const void *buf, const char *buf_arg) {
    FTMPI_CHECK(check_count(call, comm, count, count_arg));
    FTMPI_CHECK(check_comm_type(call, comm, datatype));
    if (buf_arg != nullptr) FTMPI_CHECK(check_typed_buffer(call, comm, buf, count, datatype, buf_arg));
    return MPI_SUCCESS;
}

template <typename Size>
int pack_with(const Rep &rep, const char *call, MPI_Comm comm, const void *inbuf, int incount, MPI_Datatype datatype,
              void *outbuf, Size outsize, Size *position) {
    FTMPI_TRY(check_elements(call, comm, incount, "incount", datatype, inbuf, "inbuf"));
    FTMPI_CHECK(check_size(call, comm, outsize, "outsize"));
    FTMPI_CHECK(check_position(call, comm, position, outsize, "outsize"));
    const std::size_t need = static_cast<std::size_t>(incount) * rep.size(datatype);
    if (need > static_cast<std::size_t>(outsize - *position))
        return raise(comm, MPI_ERR_TRUNCATE, call, "%zu bytes do not fit in outbuf (outsize %lld, *position %lld)",
                     need, static_cast<long long>(outsize), static_cast<long long>(*position));
    if (need > 0) FTMPI_CHECK(check_nonnull(call, comm, outbuf, "outbuf"));
    if (need > 0) rep.pack(inbuf, static_cast<std::size_t>(incount), datatype, static_cast<char *>(outbuf) + *position);
    *position += static_cast<Size>(need);
    return MPI_SUCCESS;
}

template <typename Size>
int unpack_with(const Rep &rep, const char *call, MPI_Comm comm, const void *inbuf, Size insize, Size *position,
                void *outbuf, int outcount, MPI_Datatype datatype) {
    FTMPI_CHECK(check_size(call, comm, insize, "insize"));
    FTMPI_TRY(check_elements(call, comm, outcount, "outcount", datatype, outbuf, "outbuf"));
    FTMPI_CHECK(check_position(call, comm, position, insize, "insize"));
    const std::size_t need = static_cast<std::size_t>(outcount) * rep.size(datatype);
    if (need > static_cast<std::size_t>(insize - *position))
        return raise(comm, MPI_ERR_TRUNCATE, call,
                     "%zu bytes wanted but inbuf has %lld left (insize %lld, *position %lld)", need,
                     static_cast<long long>(insize - *position), static_cast<long long>(insize),
                     static_cast<long long>(*position));
    if (need > 0) FTMPI_CHECK(check_nonnull(call, comm, inbuf, "inbuf"));
    if (need > 0)
        rep.unpack(static_cast<const char *>(inbuf) + *position, static_cast<std::size_t>(outcount), outbuf, datatype);
    *position += static_cast<Size>(need);
    return MPI_SUCCESS;
}

int check_datarep(const char *call, const char *datarep) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, datarep, "datarep"));
    if (std::strcmp(datarep, "external32") == 0) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_DATAREP, call,
                 "datarep is \"%.64s\" (argument datarep; only \"external32\" is supported)", datarep);
}

}  // namespace

extern "C" {

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
             MPI_Comm comm) {
    FTMPI_TRY(check_init("MPI_Pack"));
    FTMPI_CHECK(check_comm("MPI_Pack", comm));
    return pack_with(k_native, "MPI_Pack", comm, inbuf, incount, datatype, outbuf, outsize, position);
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
               MPI_Comm comm) {
    FTMPI_TRY(check_init("MPI_Unpack"));
    FTMPI_CHECK(check_comm("MPI_Unpack", comm));
    return unpack_with(k_native, "MPI_Unpack", comm, inbuf, insize, position, outbuf, outcount, datatype);
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size) {
    const char *call = "MPI_Pack_size";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_TRY(check_elements(call, comm, incount, "incount", datatype, nullptr, nullptr));
    FTMPI_CHECK(check_nonnull(call, comm, size, "size"));
    const std::size_t need = static_cast<std::size_t>(incount) * datatype->size;
    if (need > static_cast<std::size_t>(INT32_MAX))
        return raise(comm, MPI_ERR_COUNT, call, "%zu bytes do not fit in an int", need);
    *size = static_cast<int>(need);
    return MPI_SUCCESS;
}

int MPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                      MPI_Aint outsize, MPI_Aint *position) {
    FTMPI_TRY(check_datarep("MPI_Pack_external", datarep));
    return pack_with(k_external32, "MPI_Pack_external", MPI_COMM_NULL, inbuf, incount, datatype, outbuf, outsize,
                     position);
}

int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                        int outcount, MPI_Datatype datatype) {
    FTMPI_TRY(check_datarep("MPI_Unpack_external", datarep));
    return unpack_with(k_external32, "MPI_Unpack_external", MPI_COMM_NULL, inbuf, insize, position, outbuf, outcount,
                       datatype);
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size) {
    const char *call = "MPI_Pack_external_size";
    FTMPI_TRY(check_datarep(call, datarep));
    FTMPI_TRY(check_elements(call, MPI_COMM_NULL, incount, "incount", datatype, nullptr, nullptr));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, size, "size"));
    *size = static_cast<MPI_Aint>(static_cast<std::size_t>(incount) * external32_size(datatype));
    return MPI_SUCCESS;
}

}  // extern "C"
