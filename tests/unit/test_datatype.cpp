// Derived datatypes: flattening, bounds, signatures, pack/unpack.
//
// The constructors are called through the C API: with valid arguments they
// never raise, so they need no MPI_Init. Everything else tests mpi/dt's
// internal functions.
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mpi/dt/derived.hpp"

using namespace ftmpi::mpi;

namespace {

struct Case {
    std::string name;
    std::function<MPI_Datatype()> make;
    std::size_t size;
    MPI_Aint lb, extent, true_lb, true_extent;
    std::vector<Block> blocks;
    bool contiguous;
};

MPI_Datatype keep(int rc, MPI_Datatype t) {
    REQUIRE(rc == MPI_SUCCESS);
    return t;
}

#define MAKE(expr)                 \
    [] {                           \
        MPI_Datatype t_ = nullptr; \
        const int rc_ = (expr);    \
        return keep(rc_, t_);      \
    }

struct CharDouble {
    char c;
    double d;
};
struct DoubleChar {
    double d;
    char c;
};

// Built once and shared by the cases that derive from it (kept, not leaked).
MPI_Datatype vector_of_int() {
    static MPI_Datatype t = [] {
        MPI_Datatype v = nullptr;
        REQUIRE(MPI_Type_vector(3, 2, 4, MPI_INT, &v) == MPI_SUCCESS);
        return v;
    }();
    return t;
}

const int idx_lens[] = {2, 1, 3}, idx_disps[] = {4, 0, 7};
const int blk_disps[] = {0, 3, 5};
const MPI_Aint hidx_disps[] = {8, 0}, hblk_disps[] = {4, 12};
const int one_one[] = {1, 1};
const int sa_sizes[] = {4, 5}, sa_sub[] = {2, 3}, sa_starts[] = {1, 2};

// clang-format off
std::vector<Case> cases() {
    return {
        {"contiguous(3, int)", MAKE(MPI_Type_contiguous(3, MPI_INT, &t_)), 12, 0, 12, 0, 12, {{0, 12}}, true},
        {"contiguous(0, int)", MAKE(MPI_Type_contiguous(0, MPI_INT, &t_)), 0, 0, 0, 0, 0, {}, true},
        {"vector(3, 2, 4, int)", MAKE(MPI_Type_vector(3, 2, 4, MPI_INT, &t_)), 24, 0, 40, 0, 40,
         {{0, 8}, {16, 8}, {32, 8}}, false},
        {"vector(2, 2, 2, int) merges", MAKE(MPI_Type_vector(2, 2, 2, MPI_INT, &t_)), 16, 0, 16, 0, 16, {{0, 16}},
         true},
        {"vector(3, 1, -2, double)", MAKE(MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &t_)), 24, -32, 40, -32, 40,
         {{0, 8}, {-16, 8}, {-32, 8}}, false},
        {"hvector(2, 3, 20, char)", MAKE(MPI_Type_create_hvector(2, 3, 20, MPI_CHAR, &t_)), 6, 0, 23, 0, 23,
         {{0, 3}, {20, 3}}, false},
        {"indexed({2,1,3}, {4,0,7}, int)", MAKE(MPI_Type_indexed(3, idx_lens, idx_disps, MPI_INT, &t_)), 24, 0, 40,
         0, 40, {{16, 8}, {0, 4}, {28, 12}}, false},
        {"hindexed({1,1}, {8,0}, double)", MAKE(MPI_Type_create_hindexed(2, one_one, hidx_disps, MPI_DOUBLE, &t_)),
         16, 0, 16, 0, 16, {{8, 8}, {0, 8}}, false},
        {"indexed_block(2, {0,3,5}, short)",
         MAKE(MPI_Type_create_indexed_block(3, 2, blk_disps, MPI_SHORT, &t_)), 12, 0, 14, 0, 14,
         {{0, 4}, {6, 8}}, false},
        {"hindexed_block(1, {4,12}, int)", MAKE(MPI_Type_create_hindexed_block(2, 1, hblk_disps, MPI_INT, &t_)), 8,
         4, 12, 4, 12, {{4, 4}, {12, 4}}, false},
        {"struct {char; double} (padding inside)",
         [] {
             const int lens[] = {1, 1};
             const MPI_Aint disps[] = {offsetof(CharDouble, c), offsetof(CharDouble, d)};
             const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE};
             MPI_Datatype t = nullptr;
             REQUIRE(MPI_Type_create_struct(2, lens, disps, types, &t) == MPI_SUCCESS);
             return t;
         },
         9, 0, 16, 0, 16, {{0, 1}, {8, 8}}, false},
        {"struct {double; char} (padding at the end)",
         [] {
             const int lens[] = {1, 1};
             const MPI_Aint disps[] = {offsetof(DoubleChar, d), offsetof(DoubleChar, c)};
             const MPI_Datatype types[] = {MPI_DOUBLE, MPI_CHAR};
             MPI_Datatype t = nullptr;
             REQUIRE(MPI_Type_create_struct(2, lens, disps, types, &t) == MPI_SUCCESS);
             return t;
         },
         9, 0, sizeof(DoubleChar), 0, 9, {{0, 9}}, false},
        {"resized(int, -4, 12)", MAKE(MPI_Type_create_resized(MPI_INT, -4, 12, &t_)), 4, -4, 12, 0, 4, {{0, 4}},
         false},
        {"resized(vector, 0, 8) of a dense vector", MAKE(MPI_Type_create_resized(vector_of_int(), 4, 8, &t_)), 24, 4,
         8, 0, 40, {{0, 8}, {16, 8}, {32, 8}}, false},
        {"contiguous(2, resized(int, 0, 8))",
         [] {
             MPI_Datatype r = nullptr, t = nullptr;
             REQUIRE(MPI_Type_create_resized(MPI_INT, 0, 8, &r) == MPI_SUCCESS);
             REQUIRE(MPI_Type_contiguous(2, r, &t) == MPI_SUCCESS);
             MPI_Type_free(&r);  // t does not need r any more
             return t;
         },
         8, 0, 16, 0, 12, {{0, 4}, {8, 4}}, false},
        {"subarray C {4,5} {2,3} @ {1,2}",
         MAKE(MPI_Type_create_subarray(2, sa_sizes, sa_sub, sa_starts, MPI_ORDER_C, MPI_INT, &t_)), 24, 0, 80, 28,
         32, {{28, 12}, {48, 12}}, false},
        {"subarray Fortran {4,5} {2,3} @ {1,2}",
         MAKE(MPI_Type_create_subarray(2, sa_sizes, sa_sub, sa_starts, MPI_ORDER_FORTRAN, MPI_INT, &t_)), 24, 0, 80,
         36, 40, {{36, 8}, {52, 8}, {68, 8}}, false},
        {"dup(vector)", MAKE(MPI_Type_dup(vector_of_int(), &t_)), 24, 0, 40, 0, 40, {{0, 8}, {16, 8}, {32, 8}},
         false},
    };
}
// clang-format on

}  // namespace

TEST_CASE("each constructor flattens to the expected blocks and bounds", "[mpi][datatype]") {
    for (const Case &c : cases()) {
        SECTION(c.name) {
            MPI_Datatype t = c.make();
            REQUIRE(t != nullptr);
            REQUIRE(t->derived != nullptr);
            const Layout &l = t->derived->layout;
            CHECK(t->size == c.size);
            CHECK(t->lb == c.lb);
            CHECK(t->extent == c.extent);
            MPI_Aint tlb = -1, text = -1;
            REQUIRE(MPI_Type_get_true_extent(t, &tlb, &text) == MPI_SUCCESS);
            CHECK(tlb == c.true_lb);
            CHECK(text == c.true_extent);
            CHECK(flat_blocks(l) == c.blocks);
            CHECK(t->contiguous == c.contiguous);
            CHECK_FALSE(t->committed);
            REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
            CHECK(t->committed);
            REQUIRE(MPI_Type_free(&t) == MPI_SUCCESS);
            CHECK(t == MPI_DATATYPE_NULL);
        }
    }
}

TEST_CASE("homogeneous types record their basic type and count", "[mpi][datatype]") {
    MPI_Datatype v = nullptr, c = nullptr;
    REQUIRE(MPI_Type_vector(4, 3, -5, MPI_DOUBLE, &v) == MPI_SUCCESS);
    CHECK(v->derived->layout.basic() == MPI_DOUBLE);
    CHECK(v->derived->layout.basic_count() == 12);
    REQUIRE(MPI_Type_contiguous(2, v, &c) == MPI_SUCCESS);
    CHECK(c->derived->layout.basic() == MPI_DOUBLE);
    CHECK(c->derived->layout.basic_count() == 24);
    MPI_Type_free(&v);
    MPI_Type_free(&c);
}

TEST_CASE("counts and basic elements, partial elements undefined", "[mpi][datatype]") {
    const int lens[] = {1, 2};
    const MPI_Aint disps[] = {0, 8};
    const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE};
    MPI_Datatype s = nullptr;
    REQUIRE(MPI_Type_create_struct(2, lens, disps, types, &s) == MPI_SUCCESS);  // size 17: c d d
    CHECK(s->derived->layout.basic() == MPI_DATATYPE_NULL);
    struct Row {
        std::size_t bytes;
        MPI_Count count, elements;
    };
    const Row rows[] = {
        {0, 0, 0},
        {17, 1, 3},
        {34, 2, 6},
        {1, MPI_UNDEFINED, 1},
        {9, MPI_UNDEFINED, 2},
        {26, MPI_UNDEFINED, 5},
        {25, MPI_UNDEFINED, MPI_UNDEFINED},
        {18, MPI_UNDEFINED, 4},
        {4, MPI_UNDEFINED, MPI_UNDEFINED},
        {21, MPI_UNDEFINED, MPI_UNDEFINED},
    };
    for (const Row &r : rows) {
        INFO(r.bytes << " bytes");
        CHECK(whole_elements_of(s, r.bytes) == r.count);
        CHECK(elements_of(s, r.bytes) == r.elements);
    }
    CHECK(elements_of(MPI_INT, 12) == 3);
    CHECK(elements_of(MPI_INT, 13) == MPI_UNDEFINED);
    MPI_Type_free(&s);
}

TEST_CASE("pack/unpack round trip: vector with a negative stride", "[mpi][datatype]") {
    MPI_Datatype v = nullptr;
    REQUIRE(MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &v) == MPI_SUCCESS);  // extent 40: 5 doubles
    double a[10];
    for (int i = 0; i < 10; ++i) a[i] = i;
    double packed[6] = {};
    pack(a + 4, 2, v, packed);  // element 0 at a+4: 4,2,0; element 1 at a+9: 9,7,5
    const double want[6] = {4, 2, 0, 9, 7, 5};
    CHECK(std::memcmp(packed, want, sizeof want) == 0);
    double b[10] = {};
    unpack(packed, sizeof packed, b + 4, v);
    for (int i : {0, 2, 4, 5, 7, 9}) CHECK(b[i] == a[i]);
    for (int i : {1, 3, 6, 8}) CHECK(b[i] == 0);
    MPI_Type_free(&v);
}

TEST_CASE("pack/unpack round trip: struct with padding, partial unpack", "[mpi][datatype]") {
    const int lens[] = {1, 1};
    const MPI_Aint disps[] = {offsetof(CharDouble, c), offsetof(CharDouble, d)};
    const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE};
    MPI_Datatype s = nullptr;
    REQUIRE(MPI_Type_create_struct(2, lens, disps, types, &s) == MPI_SUCCESS);
    REQUIRE(s->extent == static_cast<MPI_Aint>(sizeof(CharDouble)));
    CharDouble in[2] = {{'x', 1.5}, {'y', -2.25}};
    unsigned char packed[18];
    pack(in, 2, s, packed);
    CHECK(packed[0] == 'x');
    CHECK(packed[9] == 'y');
    double d = 0;
    std::memcpy(&d, packed + 1, 8);
    CHECK(d == 1.5);
    std::memcpy(&d, packed + 10, 8);
    CHECK(d == -2.25);
    CharDouble out[2] = {{'-', 0}, {'-', 0}};
    unpack(packed, 10, out, s);  // element 0 and the char of element 1
    CHECK(out[0].c == 'x');
    CHECK(out[0].d == 1.5);
    CHECK(out[1].c == 'y');
    CHECK(out[1].d == 0);
    MPI_Type_free(&s);
}

TEST_CASE("pack: subarray in C and Fortran order", "[mpi][datatype]") {
    int a[20];
    for (int i = 0; i < 20; ++i) a[i] = i;
    MPI_Datatype c = nullptr, f = nullptr;
    REQUIRE(MPI_Type_create_subarray(2, sa_sizes, sa_sub, sa_starts, MPI_ORDER_C, MPI_INT, &c) == MPI_SUCCESS);
    REQUIRE(MPI_Type_create_subarray(2, sa_sizes, sa_sub, sa_starts, MPI_ORDER_FORTRAN, MPI_INT, &f) == MPI_SUCCESS);
    int pc[6], pf[6];
    pack(a, 1, c, pc);
    pack(a, 1, f, pf);
    const int want_c[6] = {7, 8, 9, 12, 13, 14};    // rows 1..2, columns 2..4 of a 4x5 row-major array
    const int want_f[6] = {9, 10, 13, 14, 17, 18};  // (i=1..2, j=2..4) at i + 4j
    CHECK(std::memcmp(pc, want_c, sizeof pc) == 0);
    CHECK(std::memcmp(pf, want_f, sizeof pf) == 0);
    MPI_Type_free(&c);
    MPI_Type_free(&f);
}

TEST_CASE("a type lives while a reference is held", "[mpi][datatype]") {
    MPI_Datatype t = nullptr;
    REQUIRE(MPI_Type_contiguous(2, MPI_INT, &t) == MPI_SUCCESS);
    MPI_Datatype held = t;
    dt_acquire(held);  // e.g. a request in progress
    REQUIRE(MPI_Type_free(&t) == MPI_SUCCESS);
    CHECK(held->magic == Magic::datatype);
    CHECK(held->derived->refs == 1);
    CHECK(held->size == 8);
    dt_release(held);  // the last reference: destroyed
}

TEST_CASE("names of derived types", "[mpi][datatype]") {
    MPI_Datatype t = nullptr;
    REQUIRE(MPI_Type_contiguous(2, MPI_INT, &t) == MPI_SUCCESS);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    REQUIRE(MPI_Type_get_name(t, name, &len) == MPI_SUCCESS);
    CHECK(len == 0);
    REQUIRE(MPI_Type_set_name(t, "pair") == MPI_SUCCESS);
    REQUIRE(MPI_Type_get_name(t, name, &len) == MPI_SUCCESS);
    CHECK(std::string(name) == "pair");
    CHECK(len == 4);
    MPI_Type_free(&t);
}

namespace {

struct Bounds {
    std::size_t size;
    MPI_Aint lb, extent;
};

Bounds bounds_of(MPI_Datatype t) { return {t->size, t->lb, t->extent}; }

}  // namespace

// Zero-length blocks and members without data place nothing (MPI 3.1
// §4.1.6): they move neither lb nor ub, however deep inside. The values are
// MPICH 4.0.2's, where it agrees with the standard.
TEST_CASE("zero-length blocks do not move the bounds", "[mpi][datatype]") {
    int a[64];
    for (int i = 0; i < 64; ++i) a[i] = i;
    SECTION("indexed with an empty first block (MPICH's zeroblks)") {
        const int bl[2] = {0, 40}, d[2] = {0, 20};
        MPI_Datatype t = nullptr;
        REQUIRE(MPI_Type_indexed(2, bl, d, MPI_INT, &t) == MPI_SUCCESS);
        const Bounds b = bounds_of(t);
        CHECK(b.size == 160);
        CHECK(b.lb == 80);
        CHECK(b.extent == 160);
        int out[40];
        pack(a, 1, t, out);
        for (int i = 0; i < 40; ++i) CHECK(out[i] == 20 + i);
        MPI_Type_free(&t);
    }
    SECTION("indexed, hindexed, indexed_block with empty blocks, in a struct") {
        const int bl[4] = {0, 0, 2, 1}, d[4] = {-4, 9, 2, 6};
        const MPI_Aint hd[4] = {-40, 100, 8, 20};
        const int ibd[3] = {-5, 3, 7};
        MPI_Datatype ix = nullptr, hx = nullptr, ib = nullptr;
        REQUIRE(MPI_Type_indexed(4, bl, d, MPI_INT, &ix) == MPI_SUCCESS);
        REQUIRE(MPI_Type_create_hindexed(4, bl, hd, MPI_INT, &hx) == MPI_SUCCESS);
        REQUIRE(MPI_Type_create_indexed_block(3, 0, ibd, MPI_INT, &ib) == MPI_SUCCESS);
        CHECK(bounds_of(ix).lb == 8);
        CHECK(bounds_of(ix).extent == 20);
        CHECK(bounds_of(hx).lb == 8);
        CHECK(bounds_of(hx).extent == 16);
        CHECK(bounds_of(ib).size == 0);
        CHECK(bounds_of(ib).lb == 0);  // MPICH says -20 and 48: it counts empty blocks here
        CHECK(bounds_of(ib).extent == 0);
        // struct {indexed @0, int @4}: lb 4, ub 28; 2 elements pack ints 2,3,6 | 1 and 8,9,12 | 7.
        const int sbl[2] = {1, 1};
        const MPI_Aint sd[2] = {0, 4};
        const MPI_Datatype st[2] = {ix, MPI_INT};
        MPI_Datatype s = nullptr;
        REQUIRE(MPI_Type_create_struct(2, sbl, sd, st, &s) == MPI_SUCCESS);
        CHECK(bounds_of(s).size == 16);
        CHECK(bounds_of(s).lb == 4);
        CHECK(bounds_of(s).extent == 24);
        int out[8];
        pack(a + 16, 2, s, out);
        const int want[8] = {18, 19, 22, 17, 24, 25, 28, 23};
        CHECK(std::memcmp(out, want, sizeof out) == 0);
        for (MPI_Datatype *t : {&ix, &hx, &ib, &s}) MPI_Type_free(t);
    }
    SECTION("a struct of empty types is empty, and moves nothing when nested") {
        // indexed {0, 0} of MPI_SHORT (empty) at 28 in a struct with two
        // zero-length ints; that in an indexed_block at 3 extents; that at 12
        // next to an int at 16 (found by comparing random types with MPICH).
        const int bl0[2] = {0, 0}, d0[2] = {4, 9};
        MPI_Datatype e = nullptr, s1 = nullptr, ib = nullptr, outer = nullptr;
        REQUIRE(MPI_Type_indexed(2, bl0, d0, MPI_SHORT, &e) == MPI_SUCCESS);
        const int bl1[3] = {1, 0, 0};
        const MPI_Aint d1[3] = {28, 36, 8};
        const MPI_Datatype t1[3] = {e, MPI_INT, MPI_INT};
        REQUIRE(MPI_Type_create_struct(3, bl1, d1, t1, &s1) == MPI_SUCCESS);
        CHECK(bounds_of(s1).size == 0);
        CHECK(bounds_of(s1).lb == 0);
        CHECK(bounds_of(s1).extent == 0);
        const int d2 = 3;
        REQUIRE(MPI_Type_create_indexed_block(1, 1, &d2, s1, &ib) == MPI_SUCCESS);
        CHECK(bounds_of(ib).lb == 0);
        const int bl3[2] = {1, 1};
        const MPI_Aint d3[2] = {12, 16};
        const MPI_Datatype t3[2] = {ib, MPI_INT};
        REQUIRE(MPI_Type_create_struct(2, bl3, d3, t3, &outer) == MPI_SUCCESS);
        CHECK(bounds_of(outer).size == 4);
        CHECK(bounds_of(outer).lb == 12);
        CHECK(bounds_of(outer).extent == 8);
        int out[2];
        pack(a, 2, outer, out);
        CHECK(out[0] == 4);  // bytes 16..19
        CHECK(out[1] == 6);  // bytes 24..27: the second element one extent (8) on
        for (MPI_Datatype *t : {&e, &s1, &ib, &outer}) MPI_Type_free(t);
    }
}

// A vector of 2^29 blocks is one block repeated, not 2^29 blocks.
TEST_CASE("a huge vector's layout stays small", "[mpi][datatype]") {
    MPI_Datatype v = nullptr, hv = nullptr;
    REQUIRE(MPI_Type_vector((1 << 29) + 8, 1, 2, MPI_INT, &v) == MPI_SUCCESS);
    const Layout &l = v->derived->layout;
    CHECK(l.blocks.size() == 1);
    CHECK(l.reps == (std::size_t{1} << 29) + 8);
    CHECK(l.rep_stride == 8);
    CHECK(v->size == (std::size_t{1} << 31) + 32);
    CHECK(v->extent == 4 * (2 * ((MPI_Aint{1} << 29) + 8) - 1));
    CHECK_FALSE(v->contiguous);
    // One copy of it (a struct of one block, a contiguous of 1) keeps the repetition.
    REQUIRE(MPI_Type_contiguous(1, v, &hv) == MPI_SUCCESS);
    CHECK(hv->derived->layout.blocks.size() == 1);
    CHECK(hv->derived->layout.reps == l.reps);
    MPI_Type_free(&hv);
    MPI_Type_free(&v);
    // Pack/unpack through a repeated layout.
    MPI_Datatype small = nullptr;
    REQUIRE(MPI_Type_vector(5, 2, 3, MPI_INT, &small) == MPI_SUCCESS);
    CHECK(flat_blocks(small->derived->layout) == std::vector<Block>{{0, 8}, {12, 8}, {24, 8}, {36, 8}, {48, 8}});
    int a[15], packed[10], back[15] = {};
    for (int i = 0; i < 15; ++i) a[i] = i + 1;
    pack(a, 1, small, packed);
    const int want[10] = {1, 2, 4, 5, 7, 8, 10, 11, 13, 14};
    CHECK(std::memcmp(packed, want, sizeof packed) == 0);
    unpack(packed, 28, back, small);  // 7 ints: a partial last block
    const int want_back[15] = {1, 2, 0, 4, 5, 0, 7, 8, 0, 10, 0, 0, 0, 0, 0};
    CHECK(std::memcmp(back, want_back, sizeof back) == 0);
    MPI_Type_free(&small);
}
