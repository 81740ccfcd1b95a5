// The external32 data representation (MPI 3.1 §13.5.2): every basic element
// big-endian, in IEEE formats, with the standard's sizes (Table 13.2) and no
// padding between the parts of a pair type (MPI_DOUBLE_INT is 8 + 4 bytes).
//
// The native representation of each predefined type follows from its C++ type
// (the ctype column of mpi/dt/predefined.hpp): a scalar is one part, a complex
// two, a value-index pair its value then its index (packed natively, a pair
// has no padding either). Most parts only change byte order; a long double
// (x87 extended on x86-64) is converted to and from IEEE binary128, rounding
// to nearest on the way back; long and wchar_t are narrowed (below).
#include <bit>
#include <complex>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "mpi/dt/derived.hpp"
#include "mpi/dt/predefined.hpp"

namespace ftmpi::mpi {
namespace {

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "external32 conversion needs a little- or big-endian host");
// Table 13.2's sizes are this platform's (LP64) sizes of the same types, but
// for MPI_LONG and MPI_UNSIGNED_LONG (4 bytes) and MPI_WCHAR (2): those are
// narrowed (the low-order bytes; a value that does not fit loses its high
// bytes, as in MPICH 4.0.2) and widened back (sign-extended for MPI_LONG).
static_assert(sizeof(long) == 8 && sizeof(unsigned long) == 8 && sizeof(wchar_t) == 4 && sizeof(bool) == 1 &&
                  sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8 &&
                  sizeof(long double) == 16,
              "external32 sizes (MPI 3.1 Table 13.2) assume an LP64 platform");

// order: byte order only; quad: long double <-> IEEE binary128; narrow_signed,
// narrow_unsigned: an integer with fewer external bytes than native ones.
enum class Conv : unsigned char { order, quad, narrow_signed, narrow_unsigned };

struct Part {
    std::size_t off;     // in the packed native element (no padding)
    std::size_t native;  // bytes
    std::size_t ext;     // bytes in external32
    Conv conv;
};

// One predefined type's element: its parts, in external order.
struct External {
    int nparts;
    Part parts[2];
    std::size_t size() const { return parts[0].ext + (nparts == 2 ? parts[1].ext : 0); }
};

template <typename T>
constexpr Part part_at(std::size_t off) {
    return {off, sizeof(T), sizeof(T), std::is_same_v<T, long double> ? Conv::quad : Conv::order};
}

template <typename T>
struct ExternalOf {
    static constexpr External value{1, {part_at<T>(0), {}}};
};
template <typename T>
struct ExternalOf<std::complex<T>> {
    static constexpr External value{2, {part_at<T>(0), part_at<T>(sizeof(T))}};
};
template <typename V, typename I>
struct ExternalOf<ValueIndex<V, I>> {
    static constexpr External value{2, {part_at<V>(0), part_at<I>(sizeof(V))}};
};

// Every predefined type's external form, by predefined_index.
const std::vector<External> &externals() {
    static const std::vector<External> table = [] {
#define FTMPI_EXTERNAL_ROW(symbol, ctype, label, category) ExternalOf<ctype>::value,
        std::vector<External> t = {FTMPI_PREDEFINED_TYPES(FTMPI_EXTERNAL_ROW)};
#undef FTMPI_EXTERNAL_ROW
        // The narrower ones of Table 13.2 (the C++ types cannot tell them:
        // MPI_LONG's long is also MPI_INT64_T's and MPI_AINT's).
        auto narrow = [&t](MPI_Datatype type, int part, std::size_t ext, Conv conv) {
            Part &p = t[static_cast<std::size_t>(predefined_index(type))].parts[part];
            p.ext = ext;
            p.conv = conv;
        };
        narrow(MPI_LONG, 0, 4, Conv::narrow_signed);
        narrow(MPI_UNSIGNED_LONG, 0, 4, Conv::narrow_unsigned);
        narrow(MPI_LONG_INT, 0, 4, Conv::narrow_signed);
        narrow(MPI_WCHAR, 0, 2, Conv::narrow_unsigned);
        return t;
    }();
    return table;
}

// Copies n bytes, reversing them on a little-endian host.
void big_endian(const unsigned char *from, unsigned char *to, std::size_t n) {
    if constexpr (std::endian::native == std::endian::big) {
        std::memcpy(to, from, n);
    } else {
        for (std::size_t i = 0; i < n; ++i) to[i] = from[n - 1 - i];
    }
}

#if defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 113
// long double is binary128 already.
void quad_out(const unsigned char *native, unsigned char *ext) { big_endian(native, ext, 16); }
void quad_in(const unsigned char *ext, unsigned char *native) { big_endian(ext, native, 16); }
#elif defined(__SIZEOF_FLOAT128__)
void quad_out(const unsigned char *native, unsigned char *ext) {
    long double v;
    std::memcpy(&v, native, sizeof v);
    const __float128 q = v;  // exact: binary128 holds every x87 extended value
    unsigned char b[16];
    std::memcpy(b, &q, sizeof b);
    big_endian(b, ext, sizeof b);
}
void quad_in(const unsigned char *ext, unsigned char *native) {
    unsigned char b[16];
    big_endian(ext, b, sizeof b);
    __float128 q;
    std::memcpy(&q, b, sizeof q);
    const long double v = static_cast<long double>(q);
    std::memset(native, 0, sizeof v);  // the padding of an x87 value
    std::memcpy(native, &v, sizeof v);
}
#else
#error "external32 MPI_LONG_DOUBLE needs long double or __float128 to be IEEE binary128"
#endif

// The external form of each basic type in t's signature, with how many of it
// one element of t has, in typemap order.
struct Step {
    const External *ext;
    std::size_t native;  // bytes of one native element
    std::size_t count;
};

std::vector<Step> steps_of(MPI_Datatype t) {
    std::vector<Step> steps;
    auto add = [&steps](MPI_Datatype basic, std::size_t count) {
        steps.push_back({&externals()[static_cast<std::size_t>(predefined_index(basic))], basic->size, count});
    };
    if (t->derived == nullptr) add(t, 1);
    else
        for (const SigRun &s : t->derived->layout.sig) add(s.type, s.count);
    return steps;
}

// Walks `count` elements of t, calling f(part, native bytes, external bytes)
// for every part of every basic element.
template <typename Native, typename Ext, typename F>
void walk(MPI_Datatype t, std::size_t count, Native *native, Ext *ext, F f) {
    const std::vector<Step> steps = steps_of(t);
    for (std::size_t e = 0; e < count; ++e) {
        for (const Step &s : steps) {
            for (std::size_t k = 0; k < s.count; ++k) {
                for (int p = 0; p < s.ext->nparts; ++p) {
                    const Part &part = s.ext->parts[p];
                    f(part, native + part.off, ext);
                    ext += part.ext;
                }
                native += s.native;
            }
        }
    }
}

}  // namespace

std::size_t external32_size(MPI_Datatype t) {
    std::size_t n = 0;
    for (const Step &s : steps_of(t)) n += s.count * s.ext->size();
    return n;
}

void pack_external32(const void *buf, std::size_t count, MPI_Datatype t, void *out) {
    std::vector<unsigned char> native(count * t->size);
    pack(buf, count, t, native.data());
    walk(t, count, static_cast<const unsigned char *>(native.data()), static_cast<unsigned char *>(out),
         [](const Part &part, const unsigned char *n, unsigned char *x) {
             switch (part.conv) {
             case Conv::quad: quad_out(n, x); break;
             case Conv::order: big_endian(n, x, part.native); break;
             case Conv::narrow_signed:
             case Conv::narrow_unsigned: {
                 // The low-order ext bytes, most significant first.
                 unsigned char b[8];
                 big_endian(n, b, part.native);
                 std::memcpy(x, b + part.native - part.ext, part.ext);
                 break;
             }
             }
         });
}

void unpack_external32(const void *in, std::size_t count, void *buf, MPI_Datatype t) {
    std::vector<unsigned char> native(count * t->size);
    walk(t, count, native.data(), static_cast<const unsigned char *>(in),
         [](const Part &part, unsigned char *n, const unsigned char *x) {
             switch (part.conv) {
             case Conv::quad: quad_in(x, n); break;
             case Conv::order: big_endian(x, n, part.native); break;
             case Conv::narrow_signed:
             case Conv::narrow_unsigned: {
                 unsigned char b[8];
                 const bool negative = part.conv == Conv::narrow_signed && (x[0] & 0x80) != 0;
                 std::memset(b, negative ? 0xff : 0, part.native - part.ext);
                 std::memcpy(b + part.native - part.ext, x, part.ext);
                 big_endian(b, n, part.native);
                 break;
             }
             }
         });
    unpack(native.data(), native.size(), buf, t);
}

}  // namespace ftmpi::mpi
