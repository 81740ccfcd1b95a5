// Reduction kernels (mpi/coll/ops.cpp): every predefined op on one type of
// each class it is defined for, the (op, type) pairs it is not defined for,
// MINLOC/MAXLOC ties, user ops and rank order of non-commutative ops.
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "mpi/coll/ops.hpp"
#include "mpi/dt/predefined.hpp"

using namespace ftmpi::mpi;

namespace {

template <typename T>
std::vector<T> run(MPI_Op op, MPI_Datatype t, std::vector<T> in, std::vector<T> io) {
    REQUIRE(op_supports(op, t) == MPI_SUCCESS);
    op_apply(*op, in.data(), io.data(), static_cast<int>(in.size()), t);
    return io;
}

struct IntCase {
    MPI_Op op;
    const char *name;
    std::vector<long long> in, io, want;
};

}  // namespace

TEST_CASE("integer kernels: every op defined on C integers", "[mpi][ops]") {
    const std::vector<IntCase> cases = {
        {MPI_MAX, "MAX", {1, -5, 7}, {3, -2, 7}, {3, -2, 7}},
        {MPI_MIN, "MIN", {1, -5, 7}, {3, -2, 7}, {1, -5, 7}},
        {MPI_SUM, "SUM", {1, -5, 7}, {3, -2, 7}, {4, -7, 14}},
        {MPI_PROD, "PROD", {1, -5, 7}, {3, -2, 7}, {3, 10, 49}},
        {MPI_LAND, "LAND", {0, 2, 3}, {5, 0, 1}, {0, 0, 1}},
        {MPI_LOR, "LOR", {0, 2, 0}, {0, 0, 1}, {0, 1, 1}},
        {MPI_LXOR, "LXOR", {0, 2, 3}, {0, 0, 4}, {0, 1, 0}},
        {MPI_BAND, "BAND", {6, 12, -1}, {3, 10, 5}, {2, 8, 5}},
        {MPI_BOR, "BOR", {6, 12, 0}, {3, 10, 5}, {7, 14, 5}},
        {MPI_BXOR, "BXOR", {6, 12, 0}, {3, 10, 5}, {5, 6, 5}},
        {MPI_REPLACE, "REPLACE", {6, 12, 0}, {3, 10, 5}, {6, 12, 0}},
        {MPI_NO_OP, "NO_OP", {6, 12, 0}, {3, 10, 5}, {3, 10, 5}},
    };
    for (const auto &c : cases) {
        INFO("op " << c.name);
        CHECK(run<long long>(c.op, MPI_LONG_LONG, c.in, c.io) == c.want);
        std::vector<int> in(c.in.begin(), c.in.end()), io(c.io.begin(), c.io.end()), want(c.want.begin(), c.want.end());
        CHECK(run<int>(c.op, MPI_INT, in, io) == want);
        std::vector<std::int16_t> in16(c.in.begin(), c.in.end()), io16(c.io.begin(), c.io.end()),
            want16(c.want.begin(), c.want.end());
        CHECK(run<std::int16_t>(c.op, MPI_INT16_T, in16, io16) == want16);
    }
}

TEST_CASE("floating, complex, logical and byte kernels", "[mpi][ops]") {
    CHECK(run<double>(MPI_SUM, MPI_DOUBLE, {1.5, -2}, {0.25, 4}) == std::vector<double>{1.75, 2});
    CHECK(run<double>(MPI_MAX, MPI_DOUBLE, {1.5, -2}, {0.25, 4}) == std::vector<double>{1.5, 4});
    CHECK(run<float>(MPI_MIN, MPI_FLOAT, {1.5f, -2}, {0.25f, 4}) == std::vector<float>{0.25f, -2});
    CHECK(run<double>(MPI_PROD, MPI_DOUBLE, {1.5, -2}, {2, 4}) == std::vector<double>{3, -8});
    using C = std::complex<double>;
    CHECK(run<C>(MPI_PROD, MPI_C_DOUBLE_COMPLEX, {C(0, 1)}, {C(0, 1)}) == std::vector<C>{C(-1, 0)});
    CHECK(run<C>(MPI_SUM, MPI_C_DOUBLE_COMPLEX, {C(1, 2)}, {C(3, -1)}) == std::vector<C>{C(4, 1)});
    {
        bool in[3] = {true, true, false}, land[3] = {true, false, false}, lxor[3] = {true, false, false};
        REQUIRE(op_supports(MPI_LAND, MPI_C_BOOL) == MPI_SUCCESS);
        op_apply(*MPI_LAND, in, land, 3, MPI_C_BOOL);
        CHECK((land[0] && !land[1] && !land[2]));
        op_apply(*MPI_LXOR, in, lxor, 3, MPI_C_BOOL);
        CHECK((!lxor[0] && lxor[1] && !lxor[2]));
    }
    CHECK(run<unsigned char>(MPI_BXOR, MPI_BYTE, {0xf0, 0x0f}, {0xff, 0xff}) == std::vector<unsigned char>{0x0f, 0xf0});
}

TEST_CASE("ops reject the types the standard does not define them on", "[mpi][ops]") {
    struct Bad {
        MPI_Op op;
        MPI_Datatype type;
    };
    const Bad bad[] = {
        {MPI_SUM, MPI_BYTE},    {MPI_MAX, MPI_C_BOOL},     {MPI_MAX, MPI_C_DOUBLE_COMPLEX}, {MPI_BAND, MPI_DOUBLE},
        {MPI_LAND, MPI_DOUBLE}, {MPI_BOR, MPI_C_BOOL},     {MPI_MINLOC, MPI_INT},           {MPI_MAXLOC, MPI_DOUBLE},
        {MPI_SUM, MPI_2INT},    {MPI_PROD, MPI_CHARACTER}, {MPI_LXOR, MPI_FLOAT},           {MPI_MIN, MPI_DOUBLE_INT},
    };
    for (const auto &b : bad) {
        INFO("op id " << b.op->id << " on " << b.type->name);
        CHECK(op_supports(b.op, b.type) == MPI_ERR_OP);
    }
    // A derived datatype: predefined ops are not supported yet.
    ftmpi_datatype_s derived{Magic::datatype, 8, 0, 8, "derived", false};
    CHECK(op_supports(MPI_SUM, &derived) == MPI_ERR_UNSUPPORTED_OPERATION);
}

TEST_CASE("MINLOC and MAXLOC keep the smaller index on ties", "[mpi][ops]") {
    struct DI {
        double v;
        int i;
        bool operator==(const DI &o) const { return v == o.v && i == o.i; }
    };
    const std::vector<DI> in = {{1, 5}, {2, 5}, {3, 5}, {3, 1}};
    const std::vector<DI> io = {{1, 2}, {1, 2}, {4, 9}, {3, 7}};
    CHECK(run<DI>(MPI_MINLOC, MPI_DOUBLE_INT, in, io) == std::vector<DI>{{1, 2}, {1, 2}, {3, 5}, {3, 1}});
    CHECK(run<DI>(MPI_MAXLOC, MPI_DOUBLE_INT, in, io) == std::vector<DI>{{1, 2}, {2, 5}, {4, 9}, {3, 1}});
    struct II {
        int v, i;
        bool operator==(const II &o) const { return v == o.v && i == o.i; }
    };
    CHECK(run<II>(MPI_MAXLOC, MPI_2INT, {{7, 3}}, {{7, 0}}) == std::vector<II>{{7, 0}});
    CHECK(run<II>(MPI_MINLOC, MPI_2INT, {{-7, 3}}, {{7, 0}}) == std::vector<II>{{-7, 3}});
}

TEST_CASE("Fortran types reduce with the ops the standard defines on them", "[mpi][ops]") {
    // INTEGER: arithmetic and bitwise ops, not logical ones.
    CHECK(run<std::int32_t>(MPI_SUM, MPI_INTEGER, {1, -5}, {3, 2}) == std::vector<std::int32_t>{4, -3});
    CHECK(run<std::int32_t>(MPI_BAND, MPI_INTEGER, {6, 12}, {3, 10}) == std::vector<std::int32_t>{2, 8});
    CHECK(run<std::int64_t>(MPI_MAX, MPI_INTEGER8, {1, -5}, {3, -9}) == std::vector<std::int64_t>{3, -5});
    CHECK(run<std::int8_t>(MPI_PROD, MPI_INTEGER1, {3, -2}, {5, 4}) == std::vector<std::int8_t>{15, -8});
    CHECK(op_supports(MPI_LAND, MPI_INTEGER) == MPI_ERR_OP);
    CHECK(op_supports(MPI_LXOR, MPI_INTEGER2) == MPI_ERR_OP);
    // REAL, DOUBLE PRECISION, COMPLEX.
    CHECK(run<float>(MPI_MIN, MPI_REAL, {1.5f, -2}, {0.25f, 4}) == std::vector<float>{0.25f, -2});
    CHECK(run<double>(MPI_PROD, MPI_DOUBLE_PRECISION, {1.5, -2}, {2, 4}) == std::vector<double>{3, -8});
    CHECK(run<double>(MPI_SUM, MPI_REAL8, {1.5}, {2}) == std::vector<double>{3.5});
    using CF = std::complex<float>;
    CHECK(run<CF>(MPI_PROD, MPI_COMPLEX, {CF(0, 1)}, {CF(0, 1)}) == std::vector<CF>{CF(-1, 0)});
    using CD = std::complex<double>;
    CHECK(run<CD>(MPI_SUM, MPI_DOUBLE_COMPLEX, {CD(1, 2)}, {CD(3, -1)}) == std::vector<CD>{CD(4, 1)});
    CHECK(op_supports(MPI_MAX, MPI_COMPLEX16) == MPI_ERR_OP);
    // LOGICAL: nonzero is .TRUE.; results are 1 or 0. No arithmetic.
    CHECK(run<std::int32_t>(MPI_LAND, MPI_LOGICAL, {1, 5, 0}, {-1, 0, 0}) == std::vector<std::int32_t>{1, 0, 0});
    CHECK(run<std::int32_t>(MPI_LOR, MPI_LOGICAL, {0, 5, 0}, {0, 0, 1}) == std::vector<std::int32_t>{0, 1, 1});
    CHECK(run<std::int32_t>(MPI_LXOR, MPI_LOGICAL, {1, 5, 0}, {1, 0, 0}) == std::vector<std::int32_t>{0, 1, 0});
    CHECK(run<std::int8_t>(MPI_LXOR, MPI_LOGICAL1, {1, 0}, {1, 1}) == std::vector<std::int8_t>{0, 1});
    CHECK(op_supports(MPI_SUM, MPI_LOGICAL) == MPI_ERR_OP);
    CHECK(op_supports(MPI_BOR, MPI_LOGICAL8) == MPI_ERR_OP);
    // CHARACTER: no reduction but REPLACE / NO_OP.
    CHECK(op_supports(MPI_MAX, MPI_CHARACTER) == MPI_ERR_OP);
    // MPI_CHAR reduces like a C integer, as in Open MPI and MPICH.
    CHECK(op_supports(MPI_SUM, MPI_CHAR) == MPI_SUCCESS);
    CHECK(run<char>(MPI_SUM, MPI_CHAR, {1, 2}, {10, 20}) == std::vector<char>{11, 22});
    CHECK(run<wchar_t>(MPI_MAX, MPI_WCHAR, {L'a', L'z'}, {L'b', L'y'}) == std::vector<wchar_t>{L'b', L'z'});
    CHECK(run<char>(MPI_REPLACE, MPI_CHARACTER, {'a', 'b'}, {'x', 'y'}) == std::vector<char>{'a', 'b'});
    // The pairs: MINLOC and MAXLOC only; 2REAL and 2DOUBLE_PRECISION hold the index in the value's type.
    struct I2 {
        std::int32_t v, i;
        bool operator==(const I2 &o) const { return v == o.v && i == o.i; }
    };
    CHECK(run<I2>(MPI_MAXLOC, MPI_2INTEGER, {{7, 3}, {8, 1}}, {{7, 0}, {2, 0}}) == std::vector<I2>{{7, 0}, {8, 1}});
    struct R2 {
        float v, i;
        bool operator==(const R2 &o) const { return v == o.v && i == o.i; }
    };
    CHECK(run<R2>(MPI_MINLOC, MPI_2REAL, {{-1, 3}, {2, 1}}, {{1, 0}, {2, 4}}) == std::vector<R2>{{-1, 3}, {2, 1}});
    struct D2 {
        double v, i;
        bool operator==(const D2 &o) const { return v == o.v && i == o.i; }
    };
    CHECK(run<D2>(MPI_MAXLOC, MPI_2DOUBLE_PRECISION, {{5, 2}}, {{4, 1}}) == std::vector<D2>{{5, 2}});
    CHECK(op_supports(MPI_SUM, MPI_2REAL) == MPI_ERR_OP);
#ifdef MPI_REAL16
    // REAL*16 is binary128: 1 + 2^-100 is exact in it (not in double or x87 long double).
    {
        REQUIRE(MPI_REAL16->size == 16);
        Real16 in[1] = {1}, io[1] = {1};
        for (int k = 0; k < 100; ++k) io[0] /= 2;
        REQUIRE(op_supports(MPI_SUM, MPI_REAL16) == MPI_SUCCESS);
        op_apply(*MPI_SUM, in, io, 1, MPI_REAL16);
        CHECK(io[0] > Real16(1));
        Real16 big[1] = {3}, small[1] = {2};
        op_apply(*MPI_MAX, small, big, 1, MPI_REAL16);
        CHECK(big[0] == Real16(3));
        // COMPLEX*32: two of them; (1+2i)(3+4i) = -5+10i
        REQUIRE(MPI_COMPLEX32->size == 32);
        std::complex<Real16> a[1] = {{1, 2}}, b[1] = {{3, 4}};
        REQUIRE(op_supports(MPI_PROD, MPI_COMPLEX32) == MPI_SUCCESS);
        op_apply(*MPI_PROD, a, b, 1, MPI_COMPLEX32);
        CHECK((b[0].real() == Real16(-5) && b[0].imag() == Real16(10)));
        CHECK(op_supports(MPI_MAX, MPI_COMPLEX32) == MPI_ERR_OP);
    }
#endif
#ifdef MPI_INTEGER16
    // INTEGER*16: 2^100 + 2^100 and the bit operations, beyond 64 bits
    {
        REQUIRE(MPI_INTEGER16->size == 16);
        Integer16 in[1] = {Integer16(1) << 100}, io[1] = {Integer16(1) << 100};
        op_apply(*MPI_SUM, in, io, 1, MPI_INTEGER16);
        CHECK(io[0] == (Integer16(1) << 101));
        Integer16 mask[1] = {(Integer16(1) << 101) | 1};
        op_apply(*MPI_BAND, mask, io, 1, MPI_INTEGER16);
        CHECK(io[0] == (Integer16(1) << 101));
    }
#endif
}

namespace {
// inout = in "then" inout for strings of digits: inout = in * 10 + inout (one digit each).
void concat(void *in, void *inout, int *len, MPI_Datatype *) {
    auto *a = static_cast<int *>(in);
    auto *b = static_cast<int *>(inout);
    for (int k = 0; k < *len; ++k) b[k] = a[k] * 10 + b[k] % 10 + (b[k] / 10) * 100;
}
}  // namespace

TEST_CASE("user ops get (in, inout) in rank order and any type", "[mpi][ops]") {
    ftmpi_op_s user{Magic::op, op_user, &concat, false, false};
    CHECK(op_supports(&user, MPI_INT) == MPI_SUCCESS);
    ftmpi_datatype_s derived{Magic::datatype, 8, 0, 8, "derived", false};
    CHECK(op_supports(&user, &derived) == MPI_SUCCESS);
    // Rank 0 holds 1, rank 1 holds 2: reduce(0, 1) = "12", never "21".
    std::vector<int> lo = {1, 3}, hi = {2, 4};
    op_apply(user, lo.data(), hi.data(), 2, MPI_INT);
    CHECK(hi == std::vector<int>{12, 34});
    // out = lo op hi, into a third buffer: the same order.
    std::vector<int> lo2 = {1, 3}, hi2 = {2, 4}, out = {0, 0};
    op_combine(user, lo2.data(), hi2.data(), out.data(), 2, MPI_INT);
    CHECK(out == std::vector<int>{12, 34});
    CHECK(hi2 == std::vector<int>{2, 4});
    // Zero elements: the function is not called.
    std::vector<int> untouched = {9};
    op_apply(user, lo.data(), untouched.data(), 0, MPI_INT);
    CHECK(untouched == std::vector<int>{9});
}

namespace {

// Every op defined on T, over n elements (a length no vector width divides),
// against the same op computed one element at a time here.
template <typename T>
void check_long(MPI_Datatype t, bool integer) {
    constexpr int n = 1037;
    std::vector<T> in(n), io(n);
    for (int k = 0; k < n; ++k) {
        in[k] = static_cast<T>((k * 7) % 23 - 11);
        io[k] = static_cast<T>((k * 5) % 19 - 9);
    }
    struct Case {
        MPI_Op op;
        T (*f)(T, T);
    };
    std::vector<Case> cases = {
        {MPI_SUM, [](T a, T b) { return static_cast<T>(a + b); }},
        {MPI_PROD, [](T a, T b) { return static_cast<T>(a * b); }},
        {MPI_MAX, [](T a, T b) { return a > b ? a : b; }},
        {MPI_MIN, [](T a, T b) { return a < b ? a : b; }},
        {MPI_REPLACE, [](T a, T) { return a; }},
    };
    if constexpr (std::is_integral_v<T>) {
        if (integer) {
            cases.push_back({MPI_BAND, [](T a, T b) { return static_cast<T>(a & b); }});
            cases.push_back({MPI_BOR, [](T a, T b) { return static_cast<T>(a | b); }});
            cases.push_back({MPI_BXOR, [](T a, T b) { return static_cast<T>(a ^ b); }});
            cases.push_back({MPI_LAND, [](T a, T b) { return static_cast<T>(a && b); }});
            cases.push_back({MPI_LOR, [](T a, T b) { return static_cast<T>(a || b); }});
            cases.push_back({MPI_LXOR, [](T a, T b) { return static_cast<T>(!a != !b); }});
        }
    }
    for (const auto &c : cases) {
        std::vector<T> want(n);
        for (int k = 0; k < n; ++k) want[k] = c.f(in[k], io[k]);
        CHECK(run<T>(c.op, t, in, io) == want);
        // A combining receive's form: out = in op src, both left as they were
        // (one pass for sum, prod, max and min; a copy and op_apply else).
        std::vector<T> out(n, T{}), in_copy = in, src = io;
        op_combine(*c.op, in.data(), src.data(), out.data(), n, t);
        CHECK(out == want);
        CHECK(in == in_copy);
        CHECK(src == io);
    }
}

}  // namespace

TEST_CASE("every vector unit's loops give the element-by-element results", "[mpi][ops]") {
    const OpIsa before = op_isa();
    for (OpIsa isa : {OpIsa::base, OpIsa::avx2, OpIsa::avx512}) {
        const OpIsa used = op_use_isa(isa);
        INFO("vector unit " << static_cast<int>(used));
        check_long<signed char>(MPI_SIGNED_CHAR, true);
        check_long<std::int16_t>(MPI_INT16_T, true);
        check_long<int>(MPI_INT, true);
        check_long<long long>(MPI_LONG_LONG, true);
        check_long<unsigned>(MPI_UNSIGNED, true);
        check_long<float>(MPI_FLOAT, false);
        check_long<double>(MPI_DOUBLE, false);
    }
    op_use_isa(before);
}
