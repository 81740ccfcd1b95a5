// The one table of predefined datatypes. Internal to libftmpi.
//
// FTMPI_PREDEFINED_TYPES(X) calls X(symbol, ctype, label, category) once per
// predefined datatype:
//   symbol    the object behind the handle is ftmpi_dt_<symbol>, declared in
//             mpi.h (which also maps the MPI_ name to it);
//   ctype     the C++ type of one element: its size, extent and alignment,
//             and the type the reduction kernels compute in;
//   label     what MPI_Type_get_name returns;
//   category  the TypeClass naming the predefined ops that may reduce it.
// mpi/dt/predefined.cpp defines the objects from it and mpi/coll/ops.cpp
// dispatches reductions on it. A new predefined type is one row here plus its
// declaration in mpi.h.
//
// Fortran types are those of gfortran's defaults (INTEGER and LOGICAL 4 bytes,
// REAL 4, DOUBLE PRECISION 8, COMPLEX 8, DOUBLE COMPLEX 16). A LOGICAL is an
// integer whose nonzero values are true; logical ops store 1 or 0.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ftmpi::mpi {

// The classes of predefined types that decide which predefined ops apply
// (MPI 4.1 §6.9.2): C integers take every arithmetic, logical and bitwise op;
// Fortran integers the arithmetic and bitwise ones, not the logical ones.
enum class TypeClass { none, c_integer, f_integer, floating, complex, logical, byte, pair };

// The element of MPI_MINLOC/MPI_MAXLOC's pair types: a value and its index.
template <typename V, typename I = int>
struct ValueIndex {
    V v;
    I i;
};
// Fortran's pair types hold the index in the value's type.
using Integer2 = ValueIndex<std::int32_t, std::int32_t>;
using Real2 = ValueIndex<float, float>;
using DoublePrecision2 = ValueIndex<double, double>;

// The data of one element of a predefined type: its members, each a basic
// element (MPI_Get_elements counts them), at their offsets in the C++ object.
// A scalar or a complex is one member; a pair type two, the value then the
// index, and the padding after them is no part of the data: MPI_DOUBLE_INT's
// size is 8 + 4 = 12 bytes, its extent 16 (MPI 3.1 §4.1.7 defines the pair
// types as structs of their two members; MPICH and Open MPI agree). Data
// never includes padding: packed, on the wire and in files a pair is its
// members back to back.
template <typename T>
struct MembersOf {
    static constexpr int n = 1;
    static constexpr std::size_t off[2] = {0, 0};
    static constexpr std::size_t size[2] = {sizeof(T), 0};
};
template <typename V, typename I>
struct MembersOf<ValueIndex<V, I>> {
    using Pair = ValueIndex<V, I>;
    static constexpr int n = 2;
    static constexpr std::size_t off[2] = {offsetof(Pair, v), offsetof(Pair, i)};
    static constexpr std::size_t size[2] = {sizeof(V), sizeof(I)};
};
// The bytes of data in one element (MPI_Type_size).
template <typename T>
inline constexpr std::size_t data_size_v = MembersOf<T>::size[0] + MembersOf<T>::size[1];

// One predefined type's members at run time (from the table below).
struct Members {
    int n;
    std::size_t off[2];
    std::size_t size[2];
};

// REAL*16: IEEE binary128, as gfortran's REAL(16). x86-64 has it as
// __float128; where long double is binary128 (aarch64, ...) that is it.
// Elsewhere MPI_REAL16 does not exist (mpi.h tests the same macros).
#if defined(__SIZEOF_FLOAT128__)
#define FTMPI_HAVE_REAL16_CTYPE 1
using Real16 = __float128;
#elif defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 113
#define FTMPI_HAVE_REAL16_CTYPE 1
using Real16 = long double;
#endif

// INTEGER*16: gfortran's INTEGER(16), where the compiler has __int128.
#if defined(__SIZEOF_INT128__)
#define FTMPI_HAVE_INTEGER16_CTYPE 1
__extension__ using Integer16 = __int128;
#endif

// Integer element types: std::is_integral_v, plus __int128 (which libstdc++
// leaves out in strict ISO mode).
template <typename T>
inline constexpr bool is_integer_v =
#if defined(__SIZEOF_INT128__)
    std::is_same_v<T, Integer16> ||
#endif
    std::is_integral_v<T>;

// Arithmetic element types: std::is_arithmetic_v, plus __float128 and __int128.
template <typename T>
inline constexpr bool is_scalar_number_v =
#if defined(__SIZEOF_FLOAT128__)
    std::is_same_v<T, __float128> ||
#endif
    is_integer_v<T> || std::is_arithmetic_v<T>;

#if defined(FTMPI_HAVE_REAL16_CTYPE) != defined(MPI_REAL16)
#error "mpi.h and mpi/dt/predefined.hpp disagree on whether MPI_REAL16 exists"
#endif
#if defined(FTMPI_HAVE_REAL16_CTYPE)
#define FTMPI_REAL16_ROW(X)                                 \
    X(real16, ::ftmpi::mpi::Real16, "MPI_REAL16", floating) \
    X(complex32, std::complex<::ftmpi::mpi::Real16>, "MPI_COMPLEX32", complex)
#else
#define FTMPI_REAL16_ROW(X)
#endif
#if defined(FTMPI_HAVE_INTEGER16_CTYPE) != defined(MPI_INTEGER16)
#error "mpi.h and mpi/dt/predefined.hpp disagree on whether MPI_INTEGER16 exists"
#endif
#if defined(FTMPI_HAVE_INTEGER16_CTYPE)
#define FTMPI_INTEGER16_ROW(X) X(integer16, ::ftmpi::mpi::Integer16, "MPI_INTEGER16", f_integer)
#else
#define FTMPI_INTEGER16_ROW(X)
#endif

// clang-format off
#define FTMPI_PREDEFINED_TYPES(X)                                                                       \
    /* MPI_CHAR and MPI_WCHAR reduce like C integers: not in the standard's list     */           \
    /* §6.9.2), but Open MPI and MPICH allow it, and programs (OSU's accumulate       */           \
    /* benchmarks) rely on it.                                                         */           \
    X(char, char, "MPI_CHAR", c_integer)                                                                \
    X(signed_char, signed char, "MPI_SIGNED_CHAR", c_integer)                                           \
    X(unsigned_char, unsigned char, "MPI_UNSIGNED_CHAR", c_integer)                                     \
    X(byte, unsigned char, "MPI_BYTE", byte)                                                            \
    X(wchar, wchar_t, "MPI_WCHAR", c_integer) /* like MPI_CHAR: as Open MPI and MPICH */                \
    X(short, short, "MPI_SHORT", c_integer)                                                             \
    X(unsigned_short, unsigned short, "MPI_UNSIGNED_SHORT", c_integer)                                  \
    X(int, int, "MPI_INT", c_integer)                                                                   \
    X(unsigned, unsigned, "MPI_UNSIGNED", c_integer)                                                    \
    X(long, long, "MPI_LONG", c_integer)                                                                \
    X(unsigned_long, unsigned long, "MPI_UNSIGNED_LONG", c_integer)                                     \
    X(long_long, long long, "MPI_LONG_LONG", c_integer)                                                 \
    X(unsigned_long_long, unsigned long long, "MPI_UNSIGNED_LONG_LONG", c_integer)                      \
    X(float, float, "MPI_FLOAT", floating)                                                              \
    X(double, double, "MPI_DOUBLE", floating)                                                           \
    X(long_double, long double, "MPI_LONG_DOUBLE", floating)                                            \
    X(int8, std::int8_t, "MPI_INT8_T", c_integer)                                                       \
    X(int16, std::int16_t, "MPI_INT16_T", c_integer)                                                    \
    X(int32, std::int32_t, "MPI_INT32_T", c_integer)                                                    \
    X(int64, std::int64_t, "MPI_INT64_T", c_integer)                                                    \
    X(uint8, std::uint8_t, "MPI_UINT8_T", c_integer)                                                    \
    X(uint16, std::uint16_t, "MPI_UINT16_T", c_integer)                                                 \
    X(uint32, std::uint32_t, "MPI_UINT32_T", c_integer)                                                 \
    X(uint64, std::uint64_t, "MPI_UINT64_T", c_integer)                                                 \
    X(c_bool, bool, "MPI_C_BOOL", logical)                                                              \
    X(c_float_complex, std::complex<float>, "MPI_C_FLOAT_COMPLEX", complex)                             \
    X(c_double_complex, std::complex<double>, "MPI_C_DOUBLE_COMPLEX", complex)                          \
    X(c_long_double_complex, std::complex<long double>, "MPI_C_LONG_DOUBLE_COMPLEX", complex)           \
    X(packed, unsigned char, "MPI_PACKED", none)                                                        \
    X(aint, MPI_Aint, "MPI_AINT", c_integer)                                                            \
    X(offset, MPI_Offset, "MPI_OFFSET", c_integer)                                                      \
    X(count, MPI_Count, "MPI_COUNT", c_integer)                                                         \
    X(float_int, ::ftmpi::mpi::ValueIndex<float>, "MPI_FLOAT_INT", pair)                                \
    X(double_int, ::ftmpi::mpi::ValueIndex<double>, "MPI_DOUBLE_INT", pair)                             \
    X(long_int, ::ftmpi::mpi::ValueIndex<long>, "MPI_LONG_INT", pair)                                   \
    X(2int, ::ftmpi::mpi::ValueIndex<int>, "MPI_2INT", pair)                                            \
    X(short_int, ::ftmpi::mpi::ValueIndex<short>, "MPI_SHORT_INT", pair)                                \
    X(long_double_int, ::ftmpi::mpi::ValueIndex<long double>, "MPI_LONG_DOUBLE_INT", pair)              \
    X(cxx_bool, bool, "MPI_CXX_BOOL", logical)                                                          \
    X(cxx_float_complex, std::complex<float>, "MPI_CXX_FLOAT_COMPLEX", complex)                         \
    X(cxx_double_complex, std::complex<double>, "MPI_CXX_DOUBLE_COMPLEX", complex)                      \
    X(cxx_long_double_complex, std::complex<long double>, "MPI_CXX_LONG_DOUBLE_COMPLEX", complex)       \
    /* Fortran types, for C code that exchanges Fortran data */                                         \
    X(integer, std::int32_t, "MPI_INTEGER", f_integer)                                                  \
    X(real, float, "MPI_REAL", floating)                                                                \
    X(double_precision, double, "MPI_DOUBLE_PRECISION", floating)                                       \
    X(logical, std::int32_t, "MPI_LOGICAL", logical)                                                    \
    X(character, char, "MPI_CHARACTER", none)                                                           \
    X(complex, std::complex<float>, "MPI_COMPLEX", complex)                                             \
    X(double_complex, std::complex<double>, "MPI_DOUBLE_COMPLEX", complex)                              \
    X(2integer, ::ftmpi::mpi::Integer2, "MPI_2INTEGER", pair)                                           \
    X(2real, ::ftmpi::mpi::Real2, "MPI_2REAL", pair)                                                    \
    X(2double_precision, ::ftmpi::mpi::DoublePrecision2, "MPI_2DOUBLE_PRECISION", pair)                 \
    X(integer1, std::int8_t, "MPI_INTEGER1", f_integer)                                                 \
    X(integer2, std::int16_t, "MPI_INTEGER2", f_integer)                                                \
    X(integer4, std::int32_t, "MPI_INTEGER4", f_integer)                                                \
    X(integer8, std::int64_t, "MPI_INTEGER8", f_integer)                                                \
    FTMPI_INTEGER16_ROW(X)                                                                              \
    X(real4, float, "MPI_REAL4", floating)                                                              \
    X(real8, double, "MPI_REAL8", floating)                                                             \
    FTMPI_REAL16_ROW(X)                                                                                 \
    X(complex8, std::complex<float>, "MPI_COMPLEX8", complex)                                           \
    X(complex16, std::complex<double>, "MPI_COMPLEX16", complex)                                        \
    X(logical1, std::int8_t, "MPI_LOGICAL1", logical)                                                   \
    X(logical2, std::int16_t, "MPI_LOGICAL2", logical)                                                  \
    X(logical4, std::int32_t, "MPI_LOGICAL4", logical)                                                  \
    X(logical8, std::int64_t, "MPI_LOGICAL8", logical)
// clang-format on

// The position of predefined type `t` in the table (the same in every process
// of a job: a type's name on the wire), or -1 for a derived type.
int predefined_index(MPI_Datatype t);
// The predefined type at `index`, or MPI_DATATYPE_NULL.
MPI_Datatype predefined_at(int index);
// The members of predefined type `t` (not a derived one).
const Members &members_of(MPI_Datatype t);

}  // namespace ftmpi::mpi
