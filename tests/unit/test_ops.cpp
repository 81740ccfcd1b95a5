// Reduction kernels (mpi/coll/ops.cpp): every predefined op on one type of
// each class it is defined for, the (op, type) pairs it is not defined for,
// MINLOC/MAXLOC ties, user ops and rank order of non-commutative ops.
#include <complex>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "mpi/coll/ops.hpp"

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
    CHECK(run<unsigned char>(MPI_BXOR, MPI_BYTE, {0xf0, 0x0f}, {0xff, 0xff}) ==
          std::vector<unsigned char>{0x0f, 0xf0});
}

TEST_CASE("ops reject the types the standard does not define them on", "[mpi][ops]") {
    struct Bad {
        MPI_Op op;
        MPI_Datatype type;
    };
    const Bad bad[] = {
        {MPI_SUM, MPI_BYTE},         {MPI_MAX, MPI_C_BOOL},    {MPI_MAX, MPI_C_DOUBLE_COMPLEX},
        {MPI_BAND, MPI_DOUBLE},      {MPI_LAND, MPI_DOUBLE},   {MPI_BOR, MPI_C_BOOL},
        {MPI_MINLOC, MPI_INT},       {MPI_MAXLOC, MPI_DOUBLE}, {MPI_SUM, MPI_2INT},
        {MPI_PROD, MPI_CHAR},        {MPI_LXOR, MPI_FLOAT},    {MPI_MIN, MPI_DOUBLE_INT},
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
    // Zero elements: the function is not called.
    std::vector<int> untouched = {9};
    op_apply(user, lo.data(), untouched.data(), 0, MPI_INT);
    CHECK(untouched == std::vector<int>{9});
}
