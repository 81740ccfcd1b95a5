/*
 * Datatype introspection and the other MPI-3.1 datatype calls. Any nprocs.
 *
 *   A. MPI_Type_get_envelope / MPI_Type_get_contents for every combiner a C
 *      program can make (and the legacy MPI-1 constructors).
 *   B. Returned handles: a nested type's inputs, freed by the user, come back
 *      from get_contents as working types that must be freed themselves; a
 *      second free of a handle is MPI_ERR_TYPE.
 *   C. MPI_Type_create_darray against a sequential reference: for every rank
 *      of several grids, distributions, dargs and both orders, MPI_Pack of the
 *      darray type extracts exactly the global elements that rank owns (in
 *      storage order), the ranks' pieces partition the array, MPI_Unpack puts
 *      them back, and the bounds are the whole array.
 *   D. MPI_Type_create_f90_integer / _real / _complex: sizes, envelopes, the
 *      same handle for the same arguments, use in a reduction.
 *   E. external32: MPI_Pack_external_size against the standard's sizes,
 *      byte-exact packing and unpacking of hand-built big-endian buffers, and
 *      a round trip of a struct holding every kind of basic type.
 *   F. The MPI_Count (_x) calls.
 *   G. Error classes (a table).
 *   H. A global array scattered from rank 0 with one darray type per rank of a
 *      process grid of all ranks, checked at each rank, and gathered back.
 */
#include <complex.h>
#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "testlib.h"

static int rank, size;

static int combiner_of(MPI_Datatype t) {
    int ni, na, nd, c;
    MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &c));
    return c;
}

/* ---- A, B: envelope and contents ---- */

/* a and b are interchangeable: the same envelope, size and bounds. */
static void check_equivalent(const char *what, MPI_Datatype a, MPI_Datatype b) {
    int ia, aa, da, ca, ib, ab, db, cb;
    MPI_OK(MPI_Type_get_envelope(a, &ia, &aa, &da, &ca));
    MPI_OK(MPI_Type_get_envelope(b, &ib, &ab, &db, &cb));
    CHECK(ia == ib && aa == ab && da == db && ca == cb, "%s: envelopes (%d %d %d %d) vs (%d %d %d %d)", what, ia, aa,
          da, ca, ib, ab, db, cb);
    MPI_Count sa, sb, la, lb, ea, eb;
    MPI_OK(MPI_Type_size_x(a, &sa));
    MPI_OK(MPI_Type_size_x(b, &sb));
    MPI_OK(MPI_Type_get_extent_x(a, &la, &ea));
    MPI_OK(MPI_Type_get_extent_x(b, &lb, &eb));
    CHECK(sa == sb && la == lb && ea == eb, "%s: size/lb/extent %lld/%lld/%lld vs %lld/%lld/%lld", what, sa, la, ea,
          sb, lb, eb);
}

/* t's envelope and contents are exactly (combiner; ints; addrs; types). A
   returned type must be the expected one itself when that is predefined (or an
   f90 type), else an equivalent new handle, which is freed here. */
static void expect_contents(const char *what, MPI_Datatype t, int combiner, int ni, const int *ints, int na,
                            const MPI_Aint *addrs, int nd, const MPI_Datatype *types) {
    int gi = -1, ga = -1, gd = -1, gc = -1;
    MPI_OK(MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc));
    CHECK(gc == combiner, "%s: combiner %d, expected %d", what, gc, combiner);
    CHECK(gi == ni && ga == na && gd == nd, "%s: envelope counts %d %d %d, expected %d %d %d", what, gi, ga, gd, ni,
          na, nd);
    int ri[64];
    MPI_Aint ra[16];
    MPI_Datatype rd[16];
    CHECK(ni <= 64 && na <= 16 && nd <= 16, "%s: test arrays too small", what);
    for (int i = 0; i < 64; ++i) ri[i] = -12345;
    MPI_OK(MPI_Type_get_contents(t, ni, na, nd, ri, ra, rd));
    for (int i = 0; i < ni; ++i) CHECK(ri[i] == ints[i], "%s: integer %d is %d, expected %d", what, i, ri[i], ints[i]);
    CHECK(ri[ni] == -12345, "%s: get_contents wrote past max_integers", what);
    for (int i = 0; i < na; ++i)
        CHECK(ra[i] == addrs[i], "%s: address %d is %ld, expected %ld", what, i, (long)ra[i], (long)addrs[i]);
    for (int i = 0; i < nd; ++i) {
        const int c = combiner_of(types[i]);
        if (c == MPI_COMBINER_NAMED || c == MPI_COMBINER_F90_REAL || c == MPI_COMBINER_F90_COMPLEX ||
            c == MPI_COMBINER_F90_INTEGER) {
            CHECK(rd[i] == types[i], "%s: datatype %d is not the predefined type passed in", what, i);
        } else {
            check_equivalent(what, rd[i], types[i]);
            MPI_OK(MPI_Type_free(&rd[i]));
        }
    }
}

static void part_a(void) {
    static const MPI_Datatype named[] = {MPI_INT, MPI_DOUBLE_INT, MPI_PACKED, MPI_REAL4, MPI_LONG_DOUBLE, MPI_BYTE};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; ++i) {
        int ni = -1, na = -1, nd = -1, c = -1;
        MPI_OK(MPI_Type_get_envelope(named[i], &ni, &na, &nd, &c));
        CHECK(c == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "named type %zu: %d %d %d combiner %d", i,
              ni, na, nd, c);
    }

    MPI_Datatype contig, vec, hvec, idx, hidx, iblk, hiblk, st, sub, dar, res, dup, dup_int, empty;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &contig));
    expect_contents("contiguous", contig, MPI_COMBINER_CONTIGUOUS, 1, (int[]){3}, 0, NULL, 1,
                    (MPI_Datatype[]){MPI_INT});

    MPI_OK(MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &vec));
    expect_contents("vector", vec, MPI_COMBINER_VECTOR, 3, (int[]){2, 3, 5}, 0, NULL, 1,
                    (MPI_Datatype[]){MPI_DOUBLE});

    MPI_OK(MPI_Type_create_hvector(4, 1, 24, contig, &hvec));
    expect_contents("hvector of a derived type", hvec, MPI_COMBINER_HVECTOR, 2, (int[]){4, 1}, 1, (MPI_Aint[]){24},
                    1, (MPI_Datatype[]){contig});

    MPI_OK(MPI_Type_indexed(3, (int[]){1, 2, 3}, (int[]){0, 5, 9}, MPI_SHORT, &idx));
    expect_contents("indexed", idx, MPI_COMBINER_INDEXED, 7, (int[]){3, 1, 2, 3, 0, 5, 9}, 0, NULL, 1,
                    (MPI_Datatype[]){MPI_SHORT});

    MPI_OK(MPI_Type_create_hindexed(2, (int[]){2, 1}, (MPI_Aint[]){0, 400}, vec, &hidx));
    expect_contents("hindexed", hidx, MPI_COMBINER_HINDEXED, 3, (int[]){2, 2, 1}, 2, (MPI_Aint[]){0, 400}, 1,
                    (MPI_Datatype[]){vec});

    MPI_OK(MPI_Type_create_indexed_block(3, 2, (int[]){1, 4, 8}, MPI_CHAR, &iblk));
    expect_contents("indexed_block", iblk, MPI_COMBINER_INDEXED_BLOCK, 5, (int[]){3, 2, 1, 4, 8}, 0, NULL, 1,
                    (MPI_Datatype[]){MPI_CHAR});

    MPI_OK(MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){8, -64}, MPI_FLOAT, &hiblk));
    expect_contents("hindexed_block", hiblk, MPI_COMBINER_HINDEXED_BLOCK, 2, (int[]){2, 3}, 2, (MPI_Aint[]){8, -64},
                    1, (MPI_Datatype[]){MPI_FLOAT});

    MPI_OK(MPI_Type_create_struct(3, (int[]){1, 2, 1}, (MPI_Aint[]){0, 8, 200},
                                  (MPI_Datatype[]){MPI_CHAR, vec, MPI_LONG_DOUBLE}, &st));
    expect_contents("struct", st, MPI_COMBINER_STRUCT, 4, (int[]){3, 1, 2, 1}, 3, (MPI_Aint[]){0, 8, 200}, 3,
                    (MPI_Datatype[]){MPI_CHAR, vec, MPI_LONG_DOUBLE});

    MPI_OK(MPI_Type_create_subarray(2, (int[]){6, 7}, (int[]){2, 3}, (int[]){1, 4}, MPI_ORDER_FORTRAN, MPI_INT, &sub));
    expect_contents("subarray", sub, MPI_COMBINER_SUBARRAY, 8, (int[]){2, 6, 7, 2, 3, 1, 4, MPI_ORDER_FORTRAN}, 0,
                    NULL, 1, (MPI_Datatype[]){MPI_INT});

    MPI_OK(MPI_Type_create_darray(6, 4, 2, (int[]){9, 8}, (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
                                  (int[]){MPI_DISTRIBUTE_DFLT_DARG, 2}, (int[]){2, 3}, MPI_ORDER_C, hvec, &dar));
    expect_contents("darray", dar, MPI_COMBINER_DARRAY, 12,
                    (int[]){6, 4, 2, 9, 8, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG, 2, 2,
                            3, MPI_ORDER_C},
                    0, NULL, 1, (MPI_Datatype[]){hvec});

    MPI_OK(MPI_Type_create_resized(vec, -8, 100, &res));
    expect_contents("resized", res, MPI_COMBINER_RESIZED, 0, NULL, 2, (MPI_Aint[]){-8, 100}, 1,
                    (MPI_Datatype[]){vec});

    MPI_OK(MPI_Type_dup(st, &dup));
    expect_contents("dup of a struct", dup, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, (MPI_Datatype[]){st});
    MPI_OK(MPI_Type_dup(MPI_INT, &dup_int));
    expect_contents("dup of MPI_INT", dup_int, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, (MPI_Datatype[]){MPI_INT});

    MPI_OK(MPI_Type_create_struct(0, NULL, NULL, NULL, &empty));
    expect_contents("empty struct", empty, MPI_COMBINER_STRUCT, 1, (int[]){0}, 0, NULL, 0, NULL);

    /* The MPI-1 constructors are their MPI-2 replacements' combiners in C. */
    MPI_Datatype l_hvec, l_hidx, l_st;
    MPI_OK(MPI_Type_hvector(2, 1, 16, MPI_INT, &l_hvec));
    expect_contents("MPI_Type_hvector", l_hvec, MPI_COMBINER_HVECTOR, 2, (int[]){2, 1}, 1, (MPI_Aint[]){16}, 1,
                    (MPI_Datatype[]){MPI_INT});
    MPI_OK(MPI_Type_hindexed(1, (int[]){4}, (MPI_Aint[]){12}, MPI_SHORT, &l_hidx));
    expect_contents("MPI_Type_hindexed", l_hidx, MPI_COMBINER_HINDEXED, 2, (int[]){1, 4}, 1, (MPI_Aint[]){12}, 1,
                    (MPI_Datatype[]){MPI_SHORT});
    MPI_OK(MPI_Type_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_INT, l_hvec}, &l_st));
    expect_contents("MPI_Type_struct", l_st, MPI_COMBINER_STRUCT, 3, (int[]){2, 1, 1}, 2, (MPI_Aint[]){0, 8}, 2,
                    (MPI_Datatype[]){MPI_INT, l_hvec});

    /* Larger max_* than needed is fine, and leaves the rest alone. */
    int ints[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    MPI_Aint addrs[2] = {-1, -1};
    MPI_Datatype types[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    MPI_OK(MPI_Type_get_contents(vec, 8, 2, 2, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[2] == 5 && ints[3] == -1 && addrs[0] == -1 && types[0] == MPI_DOUBLE &&
              types[1] == MPI_DATATYPE_NULL,
          "get_contents with room to spare");

    MPI_Datatype all[] = {contig, vec, hvec, idx, hidx, iblk, hiblk, st, sub, dar, res, dup, dup_int, empty, l_hvec,
                          l_hidx, l_st};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) MPI_OK(MPI_Type_free(&all[i]));
}

static void part_b(void) {
    /* inner: ints 0, 2, 4; mid: two of those (extent 5 ints each); outer: mid then a double at 200. */
    MPI_Datatype inner, mid, outer;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &inner));
    MPI_OK(MPI_Type_contiguous(2, inner, &mid));
    MPI_OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 200}, (MPI_Datatype[]){mid, MPI_DOUBLE},
                                  &outer));
    MPI_OK(MPI_Type_free(&inner));
    MPI_OK(MPI_Type_free(&mid));
    CHECK(inner == MPI_DATATYPE_NULL && mid == MPI_DATATYPE_NULL, "Type_free reset the handles");

    int ints[4];
    MPI_Aint addrs[2];
    MPI_Datatype types[2], mid2, inner2;
    MPI_OK(MPI_Type_get_contents(outer, 4, 2, 2, ints, addrs, types));
    CHECK(ints[0] == 2 && addrs[1] == 200 && types[1] == MPI_DOUBLE, "outer's contents");
    mid2 = types[0];
    CHECK(combiner_of(mid2) == MPI_COMBINER_CONTIGUOUS, "outer's first type is the contiguous one");
    MPI_OK(MPI_Type_get_contents(mid2, 1, 0, 1, ints, addrs, &inner2));
    CHECK(ints[0] == 2, "mid's count %d", ints[0]);
    expect_contents("inner, from a freed type's freed input", inner2, MPI_COMBINER_VECTOR, 3, (int[]){3, 1, 2}, 0,
                    NULL, 1, (MPI_Datatype[]){MPI_INT});

    /* The returned handles are usable types. */
    int data[10], out[6];
    for (int i = 0; i < 10; ++i) data[i] = 100 + i;
    MPI_OK(MPI_Type_commit(&inner2));
    int pos = 0;
    MPI_OK(MPI_Pack(data, 1, inner2, out, (int)sizeof out, &pos, MPI_COMM_WORLD));
    CHECK(pos == 12 && out[0] == 100 && out[1] == 102 && out[2] == 104, "pack through the returned inner type");
    MPI_OK(MPI_Type_commit(&mid2));
    pos = 0;
    MPI_OK(MPI_Pack(data, 1, mid2, out, (int)sizeof out, &pos, MPI_COMM_WORLD));
    CHECK(pos == 24 && out[3] == 105 && out[5] == 109, "pack through the returned mid type");
    MPI_OK(MPI_Type_free(&inner2));
    MPI_OK(MPI_Type_free(&mid2));

    /* outer still works after every other handle is gone. */
    MPI_OK(MPI_Type_commit(&outer));
    MPI_Count sz;
    MPI_OK(MPI_Type_size_x(outer, &sz));
    CHECK(sz == 6 * 4 + 8, "outer's size %lld", sz);
    MPI_OK(MPI_Type_free(&outer));

    /* A second MPI_Type_free of a handle (the type itself still alive inside
       another type) is caught. */
    MPI_Datatype t, copy, holder;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_contiguous(3, t, &holder));
    copy = t;
    MPI_OK(MPI_Type_free(&t));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(tl_class_of(MPI_Type_free(&copy)) == MPI_ERR_TYPE, "second free of a handle");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_OK(MPI_Type_free(&holder));
}

/* ---- C: darray against a reference ---- */

struct darray_case {
    int ndims;
    int gsizes[3], distribs[3], dargs[3], psizes[3];
};

#define B MPI_DISTRIBUTE_BLOCK
#define C MPI_DISTRIBUTE_CYCLIC
#define N MPI_DISTRIBUTE_NONE
#define D MPI_DISTRIBUTE_DFLT_DARG
static const struct darray_case dcases[] = {
    {1, {10}, {B}, {D}, {3}},
    {1, {10}, {B}, {4}, {3}},
    {1, {10}, {B}, {5}, {3}}, /* the last process owns nothing */
    {1, {10}, {C}, {D}, {3}},
    {1, {11}, {C}, {2}, {3}}, /* a partial last block */
    {1, {7}, {N}, {D}, {1}},
    {1, {5}, {C}, {7}, {2}}, /* one block longer than the array */
    {2, {7, 5}, {B, C}, {D, 2}, {2, 3}},
    {2, {6, 9}, {C, B}, {3, D}, {2, 2}},
    {2, {5, 8}, {N, C}, {D, 3}, {1, 4}},
    {2, {4, 4}, {B, B}, {D, D}, {1, 1}},
    {3, {4, 5, 6}, {C, N, B}, {1, D, 4}, {2, 1, 2}},
    {3, {3, 7, 4}, {B, C, C}, {2, 2, D}, {2, 3, 2}},
};
#undef B
#undef C
#undef N
#undef D

/* Does grid coordinate `coord` own index `idx` of a dimension? Written from
   the standard's definition, independently of the library. */
static int owns(int idx, int gsize, int distrib, int darg, int psize, int coord) {
    if (distrib == MPI_DISTRIBUTE_NONE) return 1;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        return idx / b == coord;
    }
    int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (idx / b) % psize == coord;
}

/* The linear offsets (storage order) of the elements rank r owns, ascending. */
static int reference_piece(const struct darray_case *dc, int order, int r, int *offsets) {
    int coords[3], total = 1, n = 0;
    for (int d = dc->ndims - 1, q = r; d >= 0; --d) { /* the grid is row-major */
        coords[d] = q % dc->psizes[d];
        q /= dc->psizes[d];
    }
    for (int d = 0; d < dc->ndims; ++d) total *= dc->gsizes[d];
    for (int l = 0; l < total; ++l) {
        int rem = l, mine = 1;
        for (int k = 0; k < dc->ndims; ++k) {
            int d = order == MPI_ORDER_C ? dc->ndims - 1 - k : k;
            int idx = rem % dc->gsizes[d];
            rem /= dc->gsizes[d];
            mine = mine && owns(idx, dc->gsizes[d], dc->distribs[d], dc->dargs[d], dc->psizes[d], coords[d]);
        }
        if (mine) offsets[n++] = l;
    }
    return n;
}

static int grid_size(const struct darray_case *dc) {
    int p = 1;
    for (int d = 0; d < dc->ndims; ++d) p *= dc->psizes[d];
    return p;
}

static int array_size(const struct darray_case *dc) {
    int n = 1;
    for (int d = 0; d < dc->ndims; ++d) n *= dc->gsizes[d];
    return n;
}

/* oldtype: `per` ints per array element (MPI_INT, or a contiguous pair). */
static void check_darray(int ci, const struct darray_case *dc, int order, int per) {
    const int total = array_size(dc), procs = grid_size(dc);
    MPI_Datatype old = MPI_INT;
    if (per > 1) MPI_OK(MPI_Type_contiguous(per, MPI_INT, &old));
    int *global = malloc(sizeof(int) * (size_t)(total * per));
    int *rebuilt = calloc((size_t)(total * per), sizeof(int));
    int *owner_count = calloc((size_t)total, sizeof(int));
    int *offsets = malloc(sizeof(int) * (size_t)total);
    int *packed = malloc(sizeof(int) * (size_t)(total * per) + 1);
    for (int i = 0; i < total * per; ++i) global[i] = 1000 + i;
    for (int r = 0; r < procs; ++r) {
        MPI_Datatype t;
        MPI_OK(MPI_Type_create_darray(procs, r, dc->ndims, dc->gsizes, dc->distribs, dc->dargs, dc->psizes, order,
                                      old, &t));
        MPI_OK(MPI_Type_commit(&t));
        const int n = reference_piece(dc, order, r, offsets);
        MPI_Count sz, lb, ext, tlb, text;
        MPI_OK(MPI_Type_size_x(t, &sz));
        MPI_OK(MPI_Type_get_extent_x(t, &lb, &ext));
        CHECK(sz == (MPI_Count)n * per * 4, "darray case %d order %d per %d rank %d: size %lld, reference %d elements",
              ci, order, per, r, sz, n);
        CHECK(lb == 0 && ext == (MPI_Count)total * per * 4, "darray case %d rank %d: lb %lld extent %lld", ci, r, lb,
              ext);
        MPI_OK(MPI_Type_get_true_extent_x(t, &tlb, &text));
        if (n > 0)
            CHECK(tlb == (MPI_Count)offsets[0] * per * 4 && text == (MPI_Count)(offsets[n - 1] - offsets[0] + 1) * per * 4,
                  "darray case %d rank %d: true lb %lld true extent %lld", ci, r, tlb, text);
        int pos = 0;
        MPI_OK(MPI_Pack(global, 1, t, packed, (int)(sizeof(int) * (size_t)(total * per)), &pos, MPI_COMM_WORLD));
        CHECK(pos == n * per * 4, "darray case %d rank %d: packed %d bytes", ci, r, pos);
        for (int k = 0; k < n; ++k)
            for (int j = 0; j < per; ++j)
                CHECK(packed[k * per + j] == global[offsets[k] * per + j],
                      "darray case %d order %s per %d rank %d: packed element %d is %d, expected global[%d] = %d", ci,
                      order == MPI_ORDER_C ? "C" : "Fortran", per, r, k, packed[k * per + j], offsets[k] * per + j,
                      global[offsets[k] * per + j]);
        for (int k = 0; k < n; ++k) owner_count[offsets[k]]++;
        pos = 0;
        MPI_OK(MPI_Unpack(packed, n * per * 4, &pos, rebuilt, 1, t, MPI_COMM_WORLD));
        MPI_OK(MPI_Type_free(&t));
    }
    for (int l = 0; l < total; ++l)
        CHECK(owner_count[l] == 1, "darray case %d: element %d owned by %d ranks", ci, l, owner_count[l]);
    CHECK(memcmp(rebuilt, global, sizeof(int) * (size_t)(total * per)) == 0,
          "darray case %d: unpacking every piece does not rebuild the array", ci);
    free(global);
    free(rebuilt);
    free(owner_count);
    free(offsets);
    free(packed);
    if (per > 1) MPI_OK(MPI_Type_free(&old));
}

static void part_c(void) {
    const int ncases = (int)(sizeof dcases / sizeof dcases[0]);
    for (int ci = 0; ci < ncases; ++ci) {
        check_darray(ci, &dcases[ci], MPI_ORDER_C, 1);
        check_darray(ci, &dcases[ci], MPI_ORDER_FORTRAN, 1);
        check_darray(ci, &dcases[ci], ci % 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN, 2);
    }
    /* Fortran order by hand: a 4x3 array, rows BLOCK over 2, columns not
       distributed; rank 1 owns rows 2..3, stored column by column. */
    MPI_Datatype t;
    int a[12], out[6], pos = 0;
    for (int i = 0; i < 12; ++i) a[i] = i; /* a(i, j) at i + 4j */
    MPI_OK(MPI_Type_create_darray(2, 1, 2, (int[]){4, 3}, (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
                                  (int[]){MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2, 1},
                                  MPI_ORDER_FORTRAN, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Pack(a, 1, t, out, (int)sizeof out, &pos, MPI_COMM_WORLD));
    const int want[6] = {2, 3, 6, 7, 10, 11};
    CHECK(pos == 24 && memcmp(out, want, sizeof want) == 0, "Fortran-order darray by hand: %d %d %d %d %d %d", out[0],
          out[1], out[2], out[3], out[4], out[5]);
    MPI_OK(MPI_Type_free(&t));
}

/* ---- D: f90 types ---- */

static MPI_Datatype f90(int which, int p, int r) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (which == 'i') MPI_OK(MPI_Type_create_f90_integer(r, &t));
    else if (which == 'r') MPI_OK(MPI_Type_create_f90_real(p, r, &t));
    else MPI_OK(MPI_Type_create_f90_complex(p, r, &t));
    return t;
}

static void part_d(void) {
    static const struct {
        int which, p, r, size;
    } rows[] = {
        {'i', 0, 1, 1},  {'i', 0, 2, 1},  {'i', 0, 3, 2},   {'i', 0, 4, 2},
        {'i', 0, 9, 4},  {'i', 0, 10, 8}, {'i', 0, 18, 8},  {'i', 0, -3, 1},
        {'r', 6, 37, 4}, {'r', 3, MPI_UNDEFINED, 4}, {'r', MPI_UNDEFINED, 38, 8}, {'r', 7, MPI_UNDEFINED, 8},
        {'r', 15, 307, 8}, {'c', 6, MPI_UNDEFINED, 8}, {'c', MPI_UNDEFINED, 300, 16}, {'c', 15, 10, 16},
#ifdef MPI_REAL16
        {'r', 16, MPI_UNDEFINED, 16}, {'r', 33, 4931, 16}, {'r', MPI_UNDEFINED, 308, 16},
#endif
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        const int w = rows[i].which, p = rows[i].p, r = rows[i].r;
        MPI_Datatype t = f90(w, p, r);
        int sz = -1;
        MPI_OK(MPI_Type_size(t, &sz));
        CHECK(sz == rows[i].size, "f90 %c(%d, %d): size %d, expected %d", w, p, r, sz, rows[i].size);
        CHECK(f90(w, p, r) == t, "f90 %c(%d, %d): a second call gives another handle", w, p, r);
        if (w == 'i') {
            expect_contents("f90 integer", t, MPI_COMBINER_F90_INTEGER, 1, (int[]){r}, 0, NULL, 0, NULL);
        } else {
            expect_contents("f90 real/complex", t, w == 'r' ? MPI_COMBINER_F90_REAL : MPI_COMBINER_F90_COMPLEX, 2,
                            (int[]){p, r}, 0, NULL, 0, NULL);
        }
        MPI_Aint lb, ext;
        MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
        CHECK(lb == 0 && ext == sz, "f90 %c(%d, %d): extent %ld", w, p, r, (long)ext);
    }
    /* Different arguments for the same kind are different types. */
    CHECK(f90('r', 6, 37) != f90('r', 5, 37), "f90 real (6, 37) and (5, 37) share a handle");
    CHECK(f90('r', 6, 37) != f90('c', 6, 37), "f90 real and complex (6, 37) share a handle");

    /* Usable at once (predefined: committed) in communication and reductions. */
    MPI_Datatype r8 = f90('r', 15, MPI_UNDEFINED), i4 = f90('i', 0, 9);
    double mine = rank + 1.0, sum = 0;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, r8, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size + 1) / 2.0, "allreduce over an f90 real: %g", sum);
    int32_t send[3] = {7, -8, 9}, recv[3] = {0, 0, 0};
    MPI_OK(MPI_Sendrecv(send, 3, i4, 0, 5, recv, 3, i4, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK(recv[0] == 7 && recv[1] == -8 && recv[2] == 9, "sendrecv with an f90 integer");

    /* A type built from an f90 type gives it back as is. */
    MPI_Datatype v;
    MPI_OK(MPI_Type_contiguous(2, r8, &v));
    expect_contents("contiguous of an f90 real", v, MPI_COMBINER_CONTIGUOUS, 1, (int[]){2}, 0, NULL, 1,
                    (MPI_Datatype[]){r8});
    MPI_OK(MPI_Type_free(&v));
}

/* ---- E: external32 ---- */

static void check_bytes(const char *what, const unsigned char *got, const unsigned char *want, size_t n) {
    for (size_t i = 0; i < n; ++i)
        CHECK(got[i] == want[i], "%s: byte %zu is %02x, expected %02x", what, i, got[i], want[i]);
}

/* Packs `count` of t from buf; the bytes must be want[0..n). Then unpacks
   want into a zeroed copy and checks it equals buf over `check_bytes_n` bytes. */
static void external_exact(const char *what, const void *buf, int count, MPI_Datatype t, const unsigned char *want,
                           size_t n, size_t native_n) {
    unsigned char out[128], back[128];
    MPI_Aint pos = 0, need = -1;
    CHECK(n <= sizeof out && native_n <= sizeof back, "%s: test buffer too small", what);
    MPI_OK(MPI_Pack_external_size("external32", count, t, &need));
    CHECK(need == (MPI_Aint)n, "%s: Pack_external_size %ld, expected %zu", what, (long)need, n);
    memset(out, 0xee, sizeof out);
    MPI_OK(MPI_Pack_external("external32", buf, count, t, out, (MPI_Aint)sizeof out, &pos));
    CHECK(pos == (MPI_Aint)n, "%s: position %ld after packing, expected %zu", what, (long)pos, n);
    check_bytes(what, out, want, n);
    CHECK(out[n] == 0xee, "%s: packed past the end", what);
    memset(back, 0, sizeof back);
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", want, (MPI_Aint)n, &pos, back, count, t));
    CHECK(pos == (MPI_Aint)n, "%s: position %ld after unpacking", what, (long)pos);
    CHECK(memcmp(back, buf, native_n) == 0, "%s: unpacking the big-endian bytes does not give the values", what);
}

static void external_sizes(void) {
    static const struct {
        MPI_Datatype t;
        int size;
        const char *name;
    } table[] = {
        /* MPI 3.1 Table 13.2 (MPI_LONG and MPI_UNSIGNED_LONG 4 bytes, MPI_WCHAR 2: as
           MPICH 4.0.2; Open MPI 4.1 gives this platform's 8 and 4) */
        {MPI_PACKED, 1, "MPI_PACKED"}, {MPI_BYTE, 1, "MPI_BYTE"}, {MPI_CHAR, 1, "MPI_CHAR"},
        {MPI_UNSIGNED_CHAR, 1, "MPI_UNSIGNED_CHAR"}, {MPI_SIGNED_CHAR, 1, "MPI_SIGNED_CHAR"},
        {MPI_WCHAR, 2, "MPI_WCHAR"}, {MPI_SHORT, 2, "MPI_SHORT"}, {MPI_UNSIGNED_SHORT, 2, "MPI_UNSIGNED_SHORT"},
        {MPI_INT, 4, "MPI_INT"}, {MPI_UNSIGNED, 4, "MPI_UNSIGNED"}, {MPI_LONG, 4, "MPI_LONG"},
        {MPI_UNSIGNED_LONG, 4, "MPI_UNSIGNED_LONG"}, {MPI_LONG_LONG, 8, "MPI_LONG_LONG"},
        {MPI_UNSIGNED_LONG_LONG, 8, "MPI_UNSIGNED_LONG_LONG"}, {MPI_FLOAT, 4, "MPI_FLOAT"},
        {MPI_DOUBLE, 8, "MPI_DOUBLE"}, {MPI_LONG_DOUBLE, 16, "MPI_LONG_DOUBLE"}, {MPI_C_BOOL, 1, "MPI_C_BOOL"},
        {MPI_INT8_T, 1, "MPI_INT8_T"}, {MPI_INT16_T, 2, "MPI_INT16_T"}, {MPI_INT32_T, 4, "MPI_INT32_T"},
        {MPI_INT64_T, 8, "MPI_INT64_T"}, {MPI_UINT8_T, 1, "MPI_UINT8_T"}, {MPI_UINT16_T, 2, "MPI_UINT16_T"},
        {MPI_UINT32_T, 4, "MPI_UINT32_T"}, {MPI_UINT64_T, 8, "MPI_UINT64_T"}, {MPI_AINT, 8, "MPI_AINT"},
        {MPI_COUNT, 8, "MPI_COUNT"}, {MPI_OFFSET, 8, "MPI_OFFSET"},
        {MPI_C_FLOAT_COMPLEX, 8, "MPI_C_FLOAT_COMPLEX"}, {MPI_C_DOUBLE_COMPLEX, 16, "MPI_C_DOUBLE_COMPLEX"},
        {MPI_C_LONG_DOUBLE_COMPLEX, 32, "MPI_C_LONG_DOUBLE_COMPLEX"}, {MPI_CHARACTER, 1, "MPI_CHARACTER"},
        {MPI_LOGICAL, 4, "MPI_LOGICAL"}, {MPI_INTEGER, 4, "MPI_INTEGER"}, {MPI_REAL, 4, "MPI_REAL"},
        {MPI_DOUBLE_PRECISION, 8, "MPI_DOUBLE_PRECISION"}, {MPI_COMPLEX, 8, "MPI_COMPLEX"},
        {MPI_DOUBLE_COMPLEX, 16, "MPI_DOUBLE_COMPLEX"}, {MPI_INTEGER1, 1, "MPI_INTEGER1"},
        {MPI_INTEGER2, 2, "MPI_INTEGER2"}, {MPI_INTEGER4, 4, "MPI_INTEGER4"}, {MPI_INTEGER8, 8, "MPI_INTEGER8"},
        {MPI_REAL4, 4, "MPI_REAL4"}, {MPI_REAL8, 8, "MPI_REAL8"}, {MPI_COMPLEX8, 8, "MPI_COMPLEX8"},
        {MPI_COMPLEX16, 16, "MPI_COMPLEX16"}, {MPI_CXX_BOOL, 1, "MPI_CXX_BOOL"},
        {MPI_CXX_FLOAT_COMPLEX, 8, "MPI_CXX_FLOAT_COMPLEX"}, {MPI_CXX_DOUBLE_COMPLEX, 16, "MPI_CXX_DOUBLE_COMPLEX"},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, 32, "MPI_CXX_LONG_DOUBLE_COMPLEX"},
#ifdef MPI_REAL16
        {MPI_REAL16, 16, "MPI_REAL16"},
#endif
        /* the pair types: their two parts, without padding */
        {MPI_FLOAT_INT, 8, "MPI_FLOAT_INT"}, {MPI_DOUBLE_INT, 12, "MPI_DOUBLE_INT"},
        {MPI_LONG_INT, 8, "MPI_LONG_INT"}, {MPI_2INT, 8, "MPI_2INT"}, {MPI_SHORT_INT, 6, "MPI_SHORT_INT"},
        {MPI_LONG_DOUBLE_INT, 20, "MPI_LONG_DOUBLE_INT"}, {MPI_2INTEGER, 8, "MPI_2INTEGER"},
        {MPI_2REAL, 8, "MPI_2REAL"}, {MPI_2DOUBLE_PRECISION, 16, "MPI_2DOUBLE_PRECISION"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        MPI_Aint n = -1;
        MPI_OK(MPI_Pack_external_size("external32", 3, table[i].t, &n));
        CHECK(n == 3 * table[i].size, "external32 size of 3 %s: %ld, expected %d", table[i].name, (long)n,
              3 * table[i].size);
    }
}

struct double_int {
    double v;
    int i;
};
struct short_int {
    short v;
    int i;
};

struct rec {
    char c;
    double d;
    int i[2];
};

static MPI_Datatype rec_type(void) {
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_struct(3, (int[]){1, 1, 2},
                                  (MPI_Aint[]){offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)},
                                  (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT}, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

static void external_exact_cases(void) {
    int ints[3] = {0x01020304, -1, 258};
    external_exact("MPI_INT", ints, 3, MPI_INT,
                   (const unsigned char[]){1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff, 0, 0, 1, 2}, 12, sizeof ints);
    short s = -2;
    external_exact("MPI_SHORT", &s, 1, MPI_SHORT, (const unsigned char[]){0xff, 0xfe}, 2, sizeof s);
    long l[2] = {0x01020304L, -2L}; /* 4 bytes in external32: values that fit */
    external_exact("MPI_LONG", l, 2, MPI_LONG, (const unsigned char[]){1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe}, 8,
                   sizeof l);
    unsigned long long ull = 0xfedcba9876543210ULL;
    external_exact("MPI_UNSIGNED_LONG_LONG", &ull, 1, MPI_UNSIGNED_LONG_LONG,
                   (const unsigned char[]){0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10}, 8, sizeof ull);
    float f[2] = {1.5f, -0.0f};
    external_exact("MPI_FLOAT", f, 2, MPI_FLOAT, (const unsigned char[]){0x3f, 0xc0, 0, 0, 0x80, 0, 0, 0}, 8,
                   sizeof f);
    double d = -2.0;
    external_exact("MPI_DOUBLE", &d, 1, MPI_DOUBLE, (const unsigned char[]){0xc0, 0, 0, 0, 0, 0, 0, 0}, 8, sizeof d);
    bool b[2] = {true, false};
    external_exact("MPI_C_BOOL", b, 2, MPI_C_BOOL, (const unsigned char[]){1, 0}, 2, sizeof b);
    wchar_t wc = L'A';
    external_exact("MPI_WCHAR", &wc, 1, MPI_WCHAR, (const unsigned char[]){0, 0x41}, 2, sizeof wc);
    MPI_Aint a = -3;
    external_exact("MPI_AINT", &a, 1, MPI_AINT, (const unsigned char[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd},
                   8, sizeof a);
    float complex fc = 1.0f - 1.0f * I;
    external_exact("MPI_C_FLOAT_COMPLEX", &fc, 1, MPI_C_FLOAT_COMPLEX,
                   (const unsigned char[]){0x3f, 0x80, 0, 0, 0xbf, 0x80, 0, 0}, 8, sizeof fc);
    /* Pair types: the value then the index, without the native padding (which
       unpacking leaves zero, as the test's copies have it). */
    struct double_int di = {2.0, 7};
    external_exact("MPI_DOUBLE_INT", &di, 1, MPI_DOUBLE_INT,
                   (const unsigned char[]){0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}, 12, offsetof(struct double_int, i) + 4);
    struct short_int si;
    memset(&si, 0, sizeof si);
    si.v = -1;
    si.i = 0x10203;
    external_exact("MPI_SHORT_INT", &si, 1, MPI_SHORT_INT, (const unsigned char[]){0xff, 0xff, 0, 1, 2, 3}, 6,
                   sizeof si);

    /* long double: IEEE binary128, big-endian (an x87 value has 10 significant bytes). */
    long double ld = 1.5L;
    external_exact("MPI_LONG_DOUBLE 1.5", &ld, 1, MPI_LONG_DOUBLE,
                   (const unsigned char[]){0x3f, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 16, 10);
    ld = -0.75L;
    external_exact("MPI_LONG_DOUBLE -0.75", &ld, 1, MPI_LONG_DOUBLE,
                   (const unsigned char[]){0xbf, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 16, 10);
#if LDBL_MANT_DIG >= 64
    MPI_Aint pos = 0;
    /* 1 + 2^-63: the last bit of an x87 significand reaches the binary128 fraction. */
    long double fine = 1.0L + 1.0L / 9223372036854775808.0L;
    unsigned char fine_out[16], want_fine[16] = {0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0};
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", &fine, 1, MPI_LONG_DOUBLE, fine_out, 16, &pos));
    check_bytes("MPI_LONG_DOUBLE 1 + 2^-63", fine_out, want_fine, 16);
    long double fine_back = 0;
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", want_fine, 16, &pos, &fine_back, 1, MPI_LONG_DOUBLE));
    CHECK(fine_back == fine, "MPI_LONG_DOUBLE 1 + 2^-63 unpacked as %Lg", fine_back);
#endif

    /* Derived: a struct without its padding, two elements; a strided vector. */
    MPI_Datatype rt = rec_type();
    struct rec r[2];
    memset(r, 0, sizeof r);
    r[0].c = 'x';
    r[0].d = 0.5;
    r[0].i[0] = 1;
    r[0].i[1] = -2;
    r[1].c = 'y';
    r[1].d = 3.0;
    r[1].i[0] = 0x7fffffff;
    r[1].i[1] = 0;
    external_exact("struct {char, double, int[2]}", r, 2, rt,
                   (const unsigned char[]){'x', 0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe,
                                           'y', 0x40, 0x08, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0},
                   34, sizeof r);
    MPI_OK(MPI_Type_free(&rt));
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_SHORT, &v));
    MPI_OK(MPI_Type_commit(&v));
    short sv[5] = {1, 0, 2, 0, 3}; /* the gaps are 0: unpacking leaves them so */
    external_exact("vector of shorts", sv, 1, v, (const unsigned char[]){0, 1, 0, 2, 0, 3}, 6, sizeof sv);
    MPI_OK(MPI_Type_free(&v));
}

/* Every kind of basic type in one struct, packed and unpacked at an offset. */
struct every {
    long double ld;
    long l;
    unsigned short us;
    double complex dc;
    wchar_t wc;
    bool b;
    int8_t i8;
    uint64_t u64;
    MPI_Count cnt;
    struct {
        long double v;
        int i;
    } ldi;
    struct {
        short v;
        int i;
    } si;
    long double complex ldc;
};

static void external_round_trip(void) {
    MPI_Datatype parts[] = {MPI_LONG_DOUBLE, MPI_LONG, MPI_UNSIGNED_SHORT, MPI_C_DOUBLE_COMPLEX, MPI_WCHAR, MPI_C_BOOL,
                            MPI_INT8_T, MPI_UINT64_T, MPI_COUNT, MPI_LONG_DOUBLE_INT, MPI_SHORT_INT,
                            MPI_C_LONG_DOUBLE_COMPLEX};
    MPI_Aint disps[] = {offsetof(struct every, ld), offsetof(struct every, l), offsetof(struct every, us),
                        offsetof(struct every, dc), offsetof(struct every, wc), offsetof(struct every, b),
                        offsetof(struct every, i8), offsetof(struct every, u64), offsetof(struct every, cnt),
                        offsetof(struct every, ldi), offsetof(struct every, si), offsetof(struct every, ldc)};
    int lens[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_struct(12, lens, disps, parts, &t));
    MPI_OK(MPI_Type_commit(&t));
    struct every in[3], out[3];
    memset(in, 0, sizeof in);
    for (int k = 0; k < 3; ++k) {
        in[k].ld = (1.0L + k) / 3.0L;
        in[k].l = -123456789L * (k + 1); /* external32 MPI_LONG has 4 bytes */
        in[k].us = (unsigned short)(65535 - k);
        in[k].dc = (1.25 + k) - 2.5 * I;
        in[k].wc = (wchar_t)(0x263a + k);
        in[k].b = k % 2 == 0;
        in[k].i8 = (int8_t)(-100 + k);
        in[k].u64 = 0xfedcba9876543210ULL + (uint64_t)k;
        in[k].cnt = -((MPI_Count)1 << 40) - k;
        in[k].ldi.v = -1.0L / (7.0L + k);
        in[k].ldi.i = 31 * k - 5;
        in[k].si.v = (short)(-300 - k);
        in[k].si.i = 1 << (k + 20);
        in[k].ldc = (2.0L / 3.0L + k) + (1.0L / 9.0L) * I;
    }
    const MPI_Aint per = 16 + 4 + 2 + 16 + 2 + 1 + 1 + 8 + 8 + 20 + 6 + 32;
    MPI_Aint n = 0;
    MPI_OK(MPI_Pack_external_size("external32", 3, t, &n));
    CHECK(n == 3 * per, "external32 size of the struct: %ld, expected %ld", (long)n, (long)(3 * per));
    const MPI_Aint start = 5; /* packing starts at *position */
    unsigned char *buf = malloc((size_t)(start + 3 * per));
    MPI_Aint pos = start;
    MPI_OK(MPI_Pack_external("external32", in, 1, t, buf, start + 3 * per, &pos));
    CHECK(pos == start + per, "position after one element: %ld", (long)pos);
    MPI_OK(MPI_Pack_external("external32", &in[1], 2, t, buf, start + 3 * per, &pos));
    CHECK(pos == start + 3 * per, "position after three elements: %ld", (long)pos);
    /* The first field of the second element: its long double, big-endian binary128 of 2/3. */
    CHECK(buf[start + per] == 0x3f && buf[start + per + 1] == 0xfe && buf[start + per + 2] == 0x55,
          "external32 of 2/3L starts %02x %02x %02x", buf[start + per], buf[start + per + 1], buf[start + per + 2]);
    memset(out, 0, sizeof out);
    pos = start;
    MPI_OK(MPI_Unpack_external("external32", buf, start + 3 * per, &pos, out, 3, t));
    CHECK(pos == start + 3 * per, "position after unpacking: %ld", (long)pos);
    for (int k = 0; k < 3; ++k) {
        CHECK(out[k].ld == in[k].ld && out[k].l == in[k].l && out[k].us == in[k].us && out[k].dc == in[k].dc &&
                  out[k].wc == in[k].wc && out[k].b == in[k].b && out[k].i8 == in[k].i8 && out[k].u64 == in[k].u64 &&
                  out[k].cnt == in[k].cnt && out[k].ldi.v == in[k].ldi.v && out[k].ldi.i == in[k].ldi.i &&
                  out[k].si.v == in[k].si.v && out[k].si.i == in[k].si.i && out[k].ldc == in[k].ldc,
              "external32 round trip of element %d", k);
    }
    free(buf);
    MPI_OK(MPI_Type_free(&t));
}

/* ---- F: the MPI_Count calls ---- */

static void part_f(void) {
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 20, &t));
    MPI_Count sz = -1, lb = -1, ext = -1, tlb = -1, text = -1, n = -1;
    MPI_OK(MPI_Type_size_x(t, &sz));
    MPI_OK(MPI_Type_get_extent_x(t, &lb, &ext));
    MPI_OK(MPI_Type_get_true_extent_x(t, &tlb, &text));
    CHECK(sz == 4 && lb == -4 && ext == 20 && tlb == 0 && text == 4, "_x queries: %lld %lld %lld %lld %lld", sz, lb,
          ext, tlb, text);
    MPI_Status st;
    MPI_OK(MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)1 << 33));
    MPI_OK(MPI_Get_elements_x(&st, MPI_DOUBLE, &n));
    CHECK(n == (MPI_Count)1 << 33, "Get_elements_x after Status_set_elements_x: %lld", n);
    int small = 0;
    MPI_OK(MPI_Get_elements(&st, MPI_DOUBLE, &small));
    CHECK(small == MPI_UNDEFINED, "Get_elements of 2^33 elements: %d", small);
    MPI_OK(MPI_Type_free(&t));
}

/* ---- G: errors ---- */

static MPI_Datatype g_vec, g_hvec, g_struct;
static int env_null_type(void) {
    int a, b, c, d;
    return MPI_Type_get_envelope(MPI_DATATYPE_NULL, &a, &b, &c, &d);
}
static int env_null_out(void) {
    int a, b, c;
    return MPI_Type_get_envelope(MPI_INT, &a, &b, &c, NULL);
}
/* MPI_Type_get_contents of t with room for mi integers, ma addresses, md types. */
static int contents_call(MPI_Datatype t, int mi, int ma, int md, int null_addrs) {
    int i[4];
    MPI_Aint a[4];
    MPI_Datatype d[4];
    return MPI_Type_get_contents(t, mi, ma, md, i, null_addrs ? NULL : a, d);
}
static int contents_null_type(void) { return contents_call(MPI_DATATYPE_NULL, 4, 4, 4, 0); }
static int contents_named(void) { return contents_call(MPI_INT, 4, 4, 4, 0); }
static int contents_few_ints(void) { return contents_call(g_vec, 2, 4, 4, 0); }
static int contents_few_addrs(void) { return contents_call(g_hvec, 4, 0, 4, 0); }
static int contents_few_types(void) { return contents_call(g_struct, 4, 4, 1, 0); }
static int contents_null_array(void) { return contents_call(g_hvec, 4, 4, 4, 1); }

/* MPI_Type_create_darray with one argument changed from a valid 2x3 grid of a 6x6 array. */
static int darray_with(int size_, int rank_, int ndims, int g0, int dist0, int darg0, int p0, int order,
                       MPI_Datatype old) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int gs[2] = {g0, 6}, ds[2] = {dist0, MPI_DISTRIBUTE_CYCLIC}, da[2] = {darg0, MPI_DISTRIBUTE_DFLT_DARG},
        ps[2] = {p0, 3};
    int rc = MPI_Type_create_darray(size_, rank_, ndims, gs, ds, da, ps, order, old, &t);
    if (rc == MPI_SUCCESS) MPI_Type_free(&t);
    return rc;
}
#define DARRAY_OK 6, 1, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT
static int darray_valid(void) { return darray_with(DARRAY_OK); }
static int darray_block_darg_small(void) {
    return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_BLOCK, 2, 2, MPI_ORDER_C, MPI_INT); /* 2 * 2 < 6 */
}
static int darray_block_darg_exact(void) { return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_BLOCK, 3, 2, MPI_ORDER_C, MPI_INT); }
static int darray_grid_mismatch(void) { return darray_with(5, 1, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT); }
static int darray_rank_big(void) { return darray_with(6, 6, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT); }
static int darray_rank_neg(void) { return darray_with(6, -1, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT); }
static int darray_size_zero(void) { return darray_with(0, 0, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT); }
static int darray_ndims_zero(void) { return darray_with(6, 1, 0, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT); }
static int darray_none_psize(void) { return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT); }
static int darray_bad_distrib(void) { return darray_with(6, 1, 2, 6, 4242, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT); }
static int darray_darg_zero(void) { return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_CYCLIC, 0, 2, MPI_ORDER_C, MPI_INT); }
static int darray_gsize_zero(void) { return darray_with(6, 1, 2, 0, MPI_DISTRIBUTE_CYCLIC, 1, 2, MPI_ORDER_C, MPI_INT); }
static int darray_psize_zero(void) { return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_CYCLIC, 1, 0, MPI_ORDER_C, MPI_INT); }
static int darray_bad_order(void) { return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_CYCLIC, 1, 2, 99, MPI_INT); }
static int darray_null_old(void) { return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_CYCLIC, 1, 2, MPI_ORDER_C, MPI_DATATYPE_NULL); }

static int f90_real_both_undefined(void) {
    MPI_Datatype t;
    return MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t);
}
static int f90_real_too_precise(void) {
    MPI_Datatype t;
    return MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t);
}
static int f90_real_too_wide(void) {
    MPI_Datatype t;
    return MPI_Type_create_f90_real(6, 5000, &t);
}
static int f90_int_too_wide(void) {
    MPI_Datatype t;
    return MPI_Type_create_f90_integer(19, &t);
}
static int f90_int_undefined(void) {
    MPI_Datatype t;
    return MPI_Type_create_f90_integer(MPI_UNDEFINED, &t);
}
static int f90_complex_too_precise(void) {
    MPI_Datatype t;
    return MPI_Type_create_f90_complex(16, MPI_UNDEFINED, &t);
}
static int f90_free(void) {
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
    return MPI_Type_free(&t);
}
static int f90_null_out(void) { return MPI_Type_create_f90_integer(4, NULL); }

static char ext_buf[64];
static int ext_ints[4];
static int ext_native_datarep(void) {
    MPI_Aint pos = 0;
    return MPI_Pack_external("native", ext_ints, 1, MPI_INT, ext_buf, 64, &pos);
}
static int ext_size_internal_datarep(void) {
    MPI_Aint n;
    return MPI_Pack_external_size("internal", 1, MPI_INT, &n);
}
static int ext_unpack_bad_datarep(void) {
    MPI_Aint pos = 0;
    return MPI_Unpack_external("external64", ext_buf, 64, &pos, ext_ints, 1, MPI_INT);
}
static int ext_null_datarep(void) {
    MPI_Aint pos = 0;
    return MPI_Pack_external(NULL, ext_ints, 1, MPI_INT, ext_buf, 64, &pos);
}
static int ext_pack_truncate(void) {
    MPI_Aint pos = 2;
    return MPI_Pack_external("external32", ext_ints, 4, MPI_INT, ext_buf, 17, &pos); /* 16 bytes from 2 */
}
static int ext_unpack_truncate(void) {
    MPI_Aint pos = 0;
    return MPI_Unpack_external("external32", ext_buf, 7, &pos, ext_ints, 2, MPI_INT);
}
static int ext_uncommitted(void) {
    MPI_Datatype t;
    MPI_Aint pos = 0;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    int rc = MPI_Pack_external("external32", ext_ints, 1, t, ext_buf, 64, &pos);
    MPI_Type_free(&t);
    return rc;
}
static int ext_position_past_end(void) {
    MPI_Aint pos = 65;
    return MPI_Pack_external("external32", ext_ints, 1, MPI_INT, ext_buf, 64, &pos);
}
static int ext_count_neg(void) {
    MPI_Aint n;
    return MPI_Pack_external_size("external32", -1, MPI_INT, &n);
}

struct error_case {
    const char *name;
    int (*call)(void);
    int expected; /* an error class, or MPI_SUCCESS */
};

static const struct error_case cases[] = {
    {"Type_get_envelope MPI_DATATYPE_NULL", env_null_type, MPI_ERR_TYPE},
    {"Type_get_envelope combiner NULL", env_null_out, MPI_ERR_ARG},
    {"Type_get_contents MPI_DATATYPE_NULL", contents_null_type, MPI_ERR_TYPE},
    {"Type_get_contents of MPI_INT (named)", contents_named, MPI_ERR_ARG},
    {"Type_get_contents max_integers 2 < 3", contents_few_ints, MPI_ERR_ARG},
    {"Type_get_contents max_addresses 0 < 1", contents_few_addrs, MPI_ERR_ARG},
    {"Type_get_contents max_datatypes 1 < 2", contents_few_types, MPI_ERR_ARG},
    {"Type_get_contents array_of_addresses NULL", contents_null_array, MPI_ERR_ARG},
    {"Type_create_darray valid (control)", darray_valid, MPI_SUCCESS},
    {"Type_create_darray block darg 2 on 2 procs < 6", darray_block_darg_small, MPI_ERR_ARG},
    {"Type_create_darray block darg 3 on 2 procs = 6 (valid)", darray_block_darg_exact, MPI_SUCCESS},
    {"Type_create_darray grid of 6 but size 5", darray_grid_mismatch, MPI_ERR_ARG},
    {"Type_create_darray rank = size", darray_rank_big, MPI_ERR_ARG},
    {"Type_create_darray rank -1", darray_rank_neg, MPI_ERR_ARG},
    {"Type_create_darray size 0", darray_size_zero, MPI_ERR_ARG},
    {"Type_create_darray ndims 0", darray_ndims_zero, MPI_ERR_DIMS},
    {"Type_create_darray NONE on 2 procs", darray_none_psize, MPI_ERR_ARG},
    {"Type_create_darray distrib 4242", darray_bad_distrib, MPI_ERR_ARG},
    {"Type_create_darray cyclic darg 0", darray_darg_zero, MPI_ERR_ARG},
    {"Type_create_darray gsize 0", darray_gsize_zero, MPI_ERR_ARG},
    {"Type_create_darray psize 0", darray_psize_zero, MPI_ERR_ARG},
    {"Type_create_darray order 99", darray_bad_order, MPI_ERR_ARG},
    {"Type_create_darray oldtype MPI_DATATYPE_NULL", darray_null_old, MPI_ERR_TYPE},
    {"Type_create_f90_real (MPI_UNDEFINED, MPI_UNDEFINED)", f90_real_both_undefined, MPI_ERR_ARG},
    {"Type_create_f90_real p 40", f90_real_too_precise, MPI_ERR_ARG},
    {"Type_create_f90_real r 5000", f90_real_too_wide, MPI_ERR_ARG},
    {"Type_create_f90_integer r 19", f90_int_too_wide, MPI_ERR_ARG},
    {"Type_create_f90_integer MPI_UNDEFINED", f90_int_undefined, MPI_ERR_ARG},
    {"Type_create_f90_complex p 16", f90_complex_too_precise, MPI_ERR_ARG},
    {"Type_free of an f90 type", f90_free, MPI_ERR_TYPE},
    {"Type_create_f90_integer newtype NULL", f90_null_out, MPI_ERR_ARG},
    {"Pack_external datarep \"native\"", ext_native_datarep, MPI_ERR_UNSUPPORTED_DATAREP},
    {"Pack_external_size datarep \"internal\"", ext_size_internal_datarep, MPI_ERR_UNSUPPORTED_DATAREP},
    {"Unpack_external datarep \"external64\"", ext_unpack_bad_datarep, MPI_ERR_UNSUPPORTED_DATAREP},
    {"Pack_external datarep NULL", ext_null_datarep, MPI_ERR_ARG},
    {"Pack_external 16 bytes into 15", ext_pack_truncate, MPI_ERR_TRUNCATE},
    {"Unpack_external 8 bytes from 7", ext_unpack_truncate, MPI_ERR_TRUNCATE},
    {"Pack_external uncommitted type", ext_uncommitted, MPI_ERR_TYPE},
    {"Pack_external *position past outsize", ext_position_past_end, MPI_ERR_ARG},
    {"Pack_external_size incount -1", ext_count_neg, MPI_ERR_COUNT},
};

static void part_g(void) {
    MPI_OK(MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &g_vec));
    MPI_OK(MPI_Type_create_hvector(2, 1, 64, MPI_INT, &g_hvec));
    MPI_OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_INT, MPI_DOUBLE},
                                  &g_struct));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        int rc = cases[i].call();
        if (cases[i].expected == MPI_SUCCESS)
            CHECK(rc == MPI_SUCCESS, "case \"%s\": returned %d, expected MPI_SUCCESS", cases[i].name, rc);
        else
            CHECK(rc != MPI_SUCCESS && tl_class_of(rc) == cases[i].expected,
                  "case \"%s\": returned %d (class %d), expected class %d", cases[i].name, rc, tl_class_of(rc),
                  cases[i].expected);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_OK(MPI_Type_free(&g_vec));
    MPI_OK(MPI_Type_free(&g_hvec));
    MPI_OK(MPI_Type_free(&g_struct));
}

/* ---- H: scatter and gather with darray types over all ranks ---- */

static void scatter_gather(const struct darray_case *dc, int order, int tag) {
    const int total = array_size(dc);
    int *offsets = malloc(sizeof(int) * (size_t)total);
    const int n = reference_piece(dc, order, rank, offsets);
    int *piece = malloc(sizeof(int) * (size_t)(n + 1));
    int *global = NULL;
    MPI_Request *reqs = NULL;
    MPI_Datatype *types = NULL;
    if (rank == 0) {
        global = malloc(sizeof(int) * (size_t)total);
        for (int i = 0; i < total; ++i) global[i] = 7 * i + 3;
        reqs = malloc(sizeof(MPI_Request) * (size_t)size);
        types = malloc(sizeof(MPI_Datatype) * (size_t)size);
        for (int r = 0; r < size; ++r) {
            MPI_OK(MPI_Type_create_darray(size, r, dc->ndims, dc->gsizes, dc->distribs, dc->dargs, dc->psizes, order,
                                          MPI_INT, &types[r]));
            MPI_OK(MPI_Type_commit(&types[r]));
            MPI_OK(MPI_Isend(global, 1, types[r], r, tag, MPI_COMM_WORLD, &reqs[r]));
        }
    }
    MPI_Status st;
    int got = -1;
    MPI_OK(MPI_Recv(piece, n, MPI_INT, 0, tag, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == n, "scatter tag %d: rank %d got %d ints, reference %d", tag, rank, got, n);
    for (int k = 0; k < n; ++k)
        CHECK(piece[k] == 7 * offsets[k] + 3, "scatter tag %d: rank %d element %d is %d, expected %d", tag, rank, k,
              piece[k], 7 * offsets[k] + 3);
    if (rank == 0) MPI_OK(MPI_Waitall(size, reqs, MPI_STATUSES_IGNORE));

    /* Back: each rank sends its piece (plus its rank); rank 0 receives into a cleared array. */
    for (int k = 0; k < n; ++k) piece[k] += 1000000 * (rank + 1);
    MPI_Request back;
    MPI_OK(MPI_Isend(piece, n, MPI_INT, 0, tag + 1, MPI_COMM_WORLD, &back));
    if (rank == 0) {
        memset(global, 0, sizeof(int) * (size_t)total);
        for (int r = 0; r < size; ++r) {
            MPI_OK(MPI_Recv(global, 1, types[r], r, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Type_free(&types[r]));
        }
        /* every element came back, from the rank that owns it */
        for (int r = 0; r < size; ++r) {
            const int m = reference_piece(dc, order, r, offsets);
            for (int k = 0; k < m; ++k)
                CHECK(global[offsets[k]] == 7 * offsets[k] + 3 + 1000000 * (r + 1),
                      "gather tag %d: global[%d] is %d, expected it from rank %d", tag, offsets[k],
                      global[offsets[k]], r);
        }
        free(global);
        free(reqs);
        free(types);
    }
    MPI_OK(MPI_Wait(&back, MPI_STATUS_IGNORE));
    free(piece);
    free(offsets);
}

static void part_h(void) {
    int dims[2] = {0, 0};
    MPI_OK(MPI_Dims_create(size, 2, dims));
    /* 2-D grids of all ranks; a 3-D one with a non-distributed dimension. */
    struct darray_case a = {2, {9, 7}, {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, {MPI_DISTRIBUTE_DFLT_DARG, 2},
                            {dims[0], dims[1]}};
    const int block = (11 + dims[1] - 1) / dims[1] + 1; /* an explicit block size larger than the default */
    struct darray_case b = {2, {5, 11}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, {3, block}, {dims[0], dims[1]}};
    struct darray_case c = {3, {4, 3, 10}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK},
                            {1, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, {dims[0], 1, dims[1]}};
    scatter_gather(&a, MPI_ORDER_C, 10);
    scatter_gather(&a, MPI_ORDER_FORTRAN, 20);
    scatter_gather(&b, MPI_ORDER_FORTRAN, 30);
    scatter_gather(&c, MPI_ORDER_C, 40);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 1);
    part_a();
    part_b();
    part_c();
    part_d();
    external_sizes();
    external_exact_cases();
    external_round_trip();
    part_f();
    part_g();
    part_h();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("dtcontents: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
