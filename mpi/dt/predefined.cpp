// Predefined datatypes and the datatype queries (size, extent, name, counts).
#include <complex>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"

namespace {
template <typename V, typename I>
struct Pair {
    V v;
    I i;
};
}  // namespace
using FloatInt = Pair<float, int>;
using DoubleInt = Pair<double, int>;
using LongInt = Pair<long, int>;
using IntInt = Pair<int, int>;
using ShortInt = Pair<short, int>;
using LongDoubleInt = Pair<long double, int>;

#define FTMPI_DEFINE_TYPE(name, ctype, label) \
    ftmpi_predefined_datatype_s ftmpi_dt_##name{{{ftmpi::mpi::Magic::datatype, sizeof(ctype), 0, sizeof(ctype), \
                                                  label, true, true, true, alignof(ctype), nullptr}}};

extern "C" {
FTMPI_DEFINE_TYPE(char, char, "MPI_CHAR")
FTMPI_DEFINE_TYPE(signed_char, signed char, "MPI_SIGNED_CHAR")
FTMPI_DEFINE_TYPE(unsigned_char, unsigned char, "MPI_UNSIGNED_CHAR")
FTMPI_DEFINE_TYPE(byte, unsigned char, "MPI_BYTE")
FTMPI_DEFINE_TYPE(wchar, wchar_t, "MPI_WCHAR")
FTMPI_DEFINE_TYPE(short, short, "MPI_SHORT")
FTMPI_DEFINE_TYPE(unsigned_short, unsigned short, "MPI_UNSIGNED_SHORT")
FTMPI_DEFINE_TYPE(int, int, "MPI_INT")
FTMPI_DEFINE_TYPE(unsigned, unsigned, "MPI_UNSIGNED")
FTMPI_DEFINE_TYPE(long, long, "MPI_LONG")
FTMPI_DEFINE_TYPE(unsigned_long, unsigned long, "MPI_UNSIGNED_LONG")
FTMPI_DEFINE_TYPE(long_long, long long, "MPI_LONG_LONG")
FTMPI_DEFINE_TYPE(unsigned_long_long, unsigned long long, "MPI_UNSIGNED_LONG_LONG")
FTMPI_DEFINE_TYPE(float, float, "MPI_FLOAT")
FTMPI_DEFINE_TYPE(double, double, "MPI_DOUBLE")
FTMPI_DEFINE_TYPE(long_double, long double, "MPI_LONG_DOUBLE")
FTMPI_DEFINE_TYPE(int8, std::int8_t, "MPI_INT8_T")
FTMPI_DEFINE_TYPE(int16, std::int16_t, "MPI_INT16_T")
FTMPI_DEFINE_TYPE(int32, std::int32_t, "MPI_INT32_T")
FTMPI_DEFINE_TYPE(int64, std::int64_t, "MPI_INT64_T")
FTMPI_DEFINE_TYPE(uint8, std::uint8_t, "MPI_UINT8_T")
FTMPI_DEFINE_TYPE(uint16, std::uint16_t, "MPI_UINT16_T")
FTMPI_DEFINE_TYPE(uint32, std::uint32_t, "MPI_UINT32_T")
FTMPI_DEFINE_TYPE(uint64, std::uint64_t, "MPI_UINT64_T")
FTMPI_DEFINE_TYPE(c_bool, bool, "MPI_C_BOOL")
FTMPI_DEFINE_TYPE(c_float_complex, std::complex<float>, "MPI_C_FLOAT_COMPLEX")
FTMPI_DEFINE_TYPE(c_double_complex, std::complex<double>, "MPI_C_DOUBLE_COMPLEX")
FTMPI_DEFINE_TYPE(c_long_double_complex, std::complex<long double>, "MPI_C_LONG_DOUBLE_COMPLEX")
FTMPI_DEFINE_TYPE(packed, unsigned char, "MPI_PACKED")
FTMPI_DEFINE_TYPE(aint, MPI_Aint, "MPI_AINT")
FTMPI_DEFINE_TYPE(offset, MPI_Offset, "MPI_OFFSET")
FTMPI_DEFINE_TYPE(count, MPI_Count, "MPI_COUNT")
FTMPI_DEFINE_TYPE(float_int, FloatInt, "MPI_FLOAT_INT")
FTMPI_DEFINE_TYPE(double_int, DoubleInt, "MPI_DOUBLE_INT")
FTMPI_DEFINE_TYPE(long_int, LongInt, "MPI_LONG_INT")
FTMPI_DEFINE_TYPE(2int, IntInt, "MPI_2INT")
FTMPI_DEFINE_TYPE(short_int, ShortInt, "MPI_SHORT_INT")
FTMPI_DEFINE_TYPE(long_double_int, LongDoubleInt, "MPI_LONG_DOUBLE_INT")
FTMPI_DEFINE_TYPE(cxx_bool, bool, "MPI_CXX_BOOL")
FTMPI_DEFINE_TYPE(cxx_float_complex, std::complex<float>, "MPI_CXX_FLOAT_COMPLEX")
FTMPI_DEFINE_TYPE(cxx_double_complex, std::complex<double>, "MPI_CXX_DOUBLE_COMPLEX")
FTMPI_DEFINE_TYPE(cxx_long_double_complex, std::complex<long double>, "MPI_CXX_LONG_DOUBLE_COMPLEX")

int MPI_Type_size(MPI_Datatype datatype, int *size) {
    FTMPI_CHECK(ftmpi::mpi::check_type("MPI_Type_size", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_size", MPI_COMM_NULL, size, "size"));
    *size = static_cast<int>(datatype->size);
    return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size) {
    FTMPI_CHECK(ftmpi::mpi::check_type("MPI_Type_size_x", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_size_x", MPI_COMM_NULL, size, "size"));
    *size = static_cast<MPI_Count>(datatype->size);
    return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent) {
    FTMPI_CHECK(ftmpi::mpi::check_type("MPI_Type_get_extent", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_get_extent", MPI_COMM_NULL, lb, "lb"));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_get_extent", MPI_COMM_NULL, extent, "extent"));
    *lb = datatype->lb;
    *extent = datatype->extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char *name, int *resultlen) {
    FTMPI_CHECK(ftmpi::mpi::check_type("MPI_Type_get_name", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_get_name", MPI_COMM_NULL, name, "name"));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_get_name", MPI_COMM_NULL, resultlen, "resultlen"));
    std::strncpy(name, datatype->name, MPI_MAX_OBJECT_NAME - 1);
    name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    *resultlen = static_cast<int>(std::strlen(name));
    return MPI_SUCCESS;
}

// Get_count counts whole elements of `datatype`; Get_elements counts basic
// elements (a derived type's signature). Either is MPI_UNDEFINED when the
// message ends inside one.
static int counted(const char *call, const MPI_Status *status, MPI_Datatype datatype, bool basic, MPI_Count *out) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull(call, MPI_COMM_NULL, status, "status"));
    FTMPI_CHECK(ftmpi::mpi::check_type(call, MPI_COMM_NULL, datatype));
    *out = basic ? ftmpi::mpi::elements_of(datatype, status->ftmpi_count)
                 : ftmpi::mpi::whole_elements_of(datatype, status->ftmpi_count);
    return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Get_count", MPI_COMM_NULL, count, "count"));
    MPI_Count n = 0;
    FTMPI_TRY(counted("MPI_Get_count", status, datatype, false, &n));
    *count = n > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(n);
    return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Get_elements", MPI_COMM_NULL, count, "count"));
    MPI_Count n = 0;
    FTMPI_TRY(counted("MPI_Get_elements", status, datatype, true, &n));
    *count = n > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(n);
    return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Get_elements_x", MPI_COMM_NULL, count, "count"));
    return counted("MPI_Get_elements_x", status, datatype, true, count);
}

}  // extern "C"
