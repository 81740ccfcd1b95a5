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
#include "dtcontents.h"

int rank, size;

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
    CHECK(sa == sb && la == lb && ea == eb, "%s: size/lb/extent %lld/%lld/%lld vs %lld/%lld/%lld", what, sa, la, ea, sb,
          lb, eb);
}

/* t's envelope and contents are exactly (combiner; ints; addrs; types). A
   returned type must be the expected one itself when that is predefined (or an
   f90 type), else an equivalent new handle, which is freed here. */
static void expect_contents(const char *what, MPI_Datatype t, int combiner, int ni, const int *ints, int na,
                            const MPI_Aint *addrs, int nd, const MPI_Datatype *types) {
    int gi = -1, ga = -1, gd = -1, gc = -1;
    MPI_OK(MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc));
    CHECK(gc == combiner, "%s: combiner %d, expected %d", what, gc, combiner);
    CHECK(gi == ni && ga == na && gd == nd, "%s: envelope counts %d %d %d, expected %d %d %d", what, gi, ga, gd, ni, na,
          nd);
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
        CHECK(c == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "named type %zu: %d %d %d combiner %d", i, ni,
              na, nd, c);
    }

    MPI_Datatype contig, vec, hvec, idx, hidx, iblk, hiblk, st, sub, dar, res, dup, dup_int, empty;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &contig));
    expect_contents("contiguous", contig, MPI_COMBINER_CONTIGUOUS, 1, (int[]){3}, 0, NULL, 1,
                    (MPI_Datatype[]){MPI_INT});

    MPI_OK(MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &vec));
    expect_contents("vector", vec, MPI_COMBINER_VECTOR, 3, (int[]){2, 3, 5}, 0, NULL, 1, (MPI_Datatype[]){MPI_DOUBLE});

    MPI_OK(MPI_Type_create_hvector(4, 1, 24, contig, &hvec));
    expect_contents("hvector of a derived type", hvec, MPI_COMBINER_HVECTOR, 2, (int[]){4, 1}, 1, (MPI_Aint[]){24}, 1,
                    (MPI_Datatype[]){contig});

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
    expect_contents("hindexed_block", hiblk, MPI_COMBINER_HINDEXED_BLOCK, 2, (int[]){2, 3}, 2, (MPI_Aint[]){8, -64}, 1,
                    (MPI_Datatype[]){MPI_FLOAT});

    MPI_OK(MPI_Type_create_struct(3, (int[]){1, 2, 1}, (MPI_Aint[]){0, 8, 200},
                                  (MPI_Datatype[]){MPI_CHAR, vec, MPI_LONG_DOUBLE}, &st));
    expect_contents("struct", st, MPI_COMBINER_STRUCT, 4, (int[]){3, 1, 2, 1}, 3, (MPI_Aint[]){0, 8, 200}, 3,
                    (MPI_Datatype[]){MPI_CHAR, vec, MPI_LONG_DOUBLE});

    MPI_OK(MPI_Type_create_subarray(2, (int[]){6, 7}, (int[]){2, 3}, (int[]){1, 4}, MPI_ORDER_FORTRAN, MPI_INT, &sub));
    expect_contents("subarray", sub, MPI_COMBINER_SUBARRAY, 8, (int[]){2, 6, 7, 2, 3, 1, 4, MPI_ORDER_FORTRAN}, 0, NULL,
                    1, (MPI_Datatype[]){MPI_INT});

    MPI_OK(MPI_Type_create_darray(6, 4, 2, (int[]){9, 8}, (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
                                  (int[]){MPI_DISTRIBUTE_DFLT_DARG, 2}, (int[]){2, 3}, MPI_ORDER_C, hvec, &dar));
    expect_contents("darray", dar, MPI_COMBINER_DARRAY, 12,
                    (int[]){6, 4, 2, 9, 8, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG, 2, 2,
                            3, MPI_ORDER_C},
                    0, NULL, 1, (MPI_Datatype[]){hvec});

    MPI_OK(MPI_Type_create_resized(vec, -8, 100, &res));
    expect_contents("resized", res, MPI_COMBINER_RESIZED, 0, NULL, 2, (MPI_Aint[]){-8, 100}, 1, (MPI_Datatype[]){vec});

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

    MPI_Datatype all[] = {contig, vec, hvec, idx,     hidx,  iblk,   hiblk,  st,  sub,
                          dar,    res, dup,  dup_int, empty, l_hvec, l_hidx, l_st};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) MPI_OK(MPI_Type_free(&all[i]));
}

static void part_b(void) {
    /* inner: ints 0, 2, 4; mid: two of those (extent 5 ints each); outer: mid then a double at 200. */
    MPI_Datatype inner, mid, outer;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &inner));
    MPI_OK(MPI_Type_contiguous(2, inner, &mid));
    MPI_OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 200}, (MPI_Datatype[]){mid, MPI_DOUBLE}, &outer));
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
    expect_contents("inner, from a freed type's freed input", inner2, MPI_COMBINER_VECTOR, 3, (int[]){3, 1, 2}, 0, NULL,
                    1, (MPI_Datatype[]){MPI_INT});

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
        {'i', 0, 1, 1},
        {'i', 0, 2, 1},
        {'i', 0, 3, 2},
        {'i', 0, 4, 2},
        {'i', 0, 9, 4},
        {'i', 0, 10, 8},
        {'i', 0, 18, 8},
        {'i', 0, -3, 1},
        {'r', 6, 37, 4},
        {'r', 3, MPI_UNDEFINED, 4},
        {'r', MPI_UNDEFINED, 38, 8},
        {'r', 7, MPI_UNDEFINED, 8},
        {'r', 15, 307, 8},
        {'c', 6, MPI_UNDEFINED, 8},
        {'c', MPI_UNDEFINED, 300, 16},
        {'c', 15, 10, 16},
#ifdef MPI_REAL16
        {'r', 16, MPI_UNDEFINED, 16},
        {'r', 33, 4931, 16},
        {'r', MPI_UNDEFINED, 308, 16},
        {'c', 16, MPI_UNDEFINED, 32},
        {'c', 33, 4931, 32},
#endif
#ifdef MPI_INTEGER16
        {'i', 0, 19, 16},
        {'i', 0, 38, 16},
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
