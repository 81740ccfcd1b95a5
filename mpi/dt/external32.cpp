// The external32 data representation (MPI 3.1 §13.5.2): every basic element
// big-endian, in IEEE formats, with the standard's sizes (Table 13.2) and no
// padding between the parts of a pair type (MPI_DOUBLE_INT is 8 + 4 bytes).
//
// The native representation of each predefined type follows from its C++ type
// (the ctype column of mpi/dt/predefined.hpp): a scalar is one part, a complex
// two, a value-index pair its value then its index. Every part but a long
// double only changes byte order; a long double (x87 extended on x86-64) is
// converted to and from IEEE binary128, rounding to nearest on the way back.
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
// Table 13.2's sizes are this platform's (LP64) sizes of the same types: the
// integers only change byte order.
static_assert(sizeof(long) == 8 && sizeof(unsigned long) == 8 && sizeof(wchar_t) == 4 && sizeof(bool) == 1 &&
                  sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8 &&
                  sizeof(long double) == 16,
              "external32 sizes (MPI 3.1 Table 13.2) assume an LP64 platform");

enum class Conv : unsigned char { order, quad };  // quad: long double <-> IEEE binary128

struct Part {
    std::size_t off;   // in the native element
    std::size_t size;  // bytes, native and external alike
    Conv conv;
};

// One predefined type's element: its parts, in external order.
struct External {
    int nparts;
    Part parts[2];
    std::size_t size() const { return parts[0].size + (nparts == 2 ? parts[1].size : 0); }
};

template <typename T>
constexpr Part part_at(std::size_t off) {
    return {off, sizeof(T), std::is_same_v<T, long double> ? Conv::quad : Conv::order};
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
    using Pair = ValueIndex<V, I>;
    static constexpr External value{2, {part_at<V>(offsetof(Pair, v)), part_at<I>(offsetof(Pair, i))}};
};

#define FTMPI_EXTERNAL_ROW(symbol, ctype, label, category) ExternalOf<ctype>::value,
const External k_external[] = {FTMPI_PREDEFINED_TYPES(FTMPI_EXTERNAL_ROW)};
#undef FTMPI_EXTERNAL_ROW

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
        steps.push_back({&k_external[predefined_index(basic)], basic->size, count});
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
                    ext += part.size;
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
             if (part.conv == Conv::quad) quad_out(n, x);
             else big_endian(n, x, part.size);
         });
}

void unpack_external32(const void *in, std::size_t count, void *buf, MPI_Datatype t) {
    std::vector<unsigned char> native(count * t->size);  // zeros: the padding of pair types
    walk(t, count, native.data(), static_cast<const unsigned char *>(in),
         [](const Part &part, unsigned char *n, const unsigned char *x) {
             if (part.conv == Conv::quad) quad_in(x, n);
             else big_endian(x, n, part.size);
         });
    unpack(native.data(), native.size(), buf, t);
}

}  // namespace ftmpi::mpi
