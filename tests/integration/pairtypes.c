/*
 * The MINLOC/MAXLOC pair types and the external32 sizes. Needs nprocs >= 2.
 *
 *   A. Size, extent, true extent of every pair type (MPI_DOUBLE_INT: size 12,
 *      the bytes of its members, extent 16; as MPICH 4.0.2 and Open MPI 4.1).
 *   B. MPI_Pack/MPI_Unpack: packed data is the members back to back (no
 *      padding), unpacking leaves the padding of the buffer alone; derived
 *      types built from pair types (vector, contiguous, struct).
 *   C. Send/receive (eager and rendezvous): no padding on the wire (a pair
 *      type's message received as MPI_BYTE is count * size bytes), the
 *      padding of the receive buffer untouched; MPI_Get_count and
 *      MPI_Get_elements (a pair is two basic elements: 20 bytes received as
 *      MPI_DOUBLE_INT are 3 elements); a {double, int, double} struct sent
 *      and received as MPI_DOUBLE_INT.
 *   D. MINLOC/MAXLOC (Allreduce: short and long; Reduce; a derived type of
 *      pairs; a one-sided Accumulate) on every pair type.
 *   E. MPI_Pack_external_size of every predefined type against MPI 3.1
 *      Table 13.2 (MPI_LONG and MPI_UNSIGNED_LONG 4 bytes, MPI_WCHAR 2, as
 *      MPICH), and the external32 bytes of MPI_LONG, MPI_UNSIGNED_LONG,
 *      MPI_WCHAR, MPI_DOUBLE_INT and MPI_LONG_INT, packed and unpacked.
 */
#include <stddef.h>
#include <wchar.h>

#include "testlib.h"

static int rank, size;

struct pair_info {
    MPI_Datatype t;
    const char *name;
    int size;
    MPI_Aint extent, true_extent;
    int ext32;
};

/* clang-format off */
struct di { double v; int i; };
struct li { long v; int i; };
struct si { short v; int i; };
struct ldi { long double v; int i; };
/* clang-format on */

#define NPAIRS 9
static struct pair_info pairs[NPAIRS];

static void init_pairs(void) {
    const struct pair_info p[NPAIRS] = {
        {MPI_FLOAT_INT, "MPI_FLOAT_INT", 8, 8, 8, 8},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, 16, 12, 12},
        {MPI_LONG_INT, "MPI_LONG_INT", 12, 16, 12, 8},
        {MPI_2INT, "MPI_2INT", 8, 8, 8, 8},
        {MPI_SHORT_INT, "MPI_SHORT_INT", 6, 8, 8, 6},
        {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 20, 32, 20, 20},
        {MPI_2INTEGER, "MPI_2INTEGER", 8, 8, 8, 8},
        {MPI_2REAL, "MPI_2REAL", 8, 8, 8, 8},
        {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16, 16, 16, 16},
    };
    memcpy(pairs, p, sizeof p);
}

/* ---- A ---- */
static void part_a(void) {
    for (int k = 0; k < NPAIRS; ++k) {
        const struct pair_info *p = &pairs[k];
        int sz = -1;
        MPI_Count szx = -1;
        MPI_Aint lb = -1, ext = -1, tlb = -1, text = -1;
        MPI_OK(MPI_Type_size(p->t, &sz));
        MPI_OK(MPI_Type_size_x(p->t, &szx));
        MPI_OK(MPI_Type_get_extent(p->t, &lb, &ext));
        MPI_OK(MPI_Type_get_true_extent(p->t, &tlb, &text));
        CHECK(sz == p->size && szx == p->size, "A %s: size %d (size_x %lld), expected %d", p->name, sz, (long long)szx,
              p->size);
        CHECK(lb == 0 && ext == p->extent, "A %s: lb %ld extent %ld, expected 0 %ld", p->name, (long)lb, (long)ext,
              (long)p->extent);
        CHECK(tlb == 0 && text == p->true_extent, "A %s: true lb %ld true extent %ld, expected 0 %ld", p->name,
              (long)tlb, (long)text, (long)p->true_extent);
        int psize = -1;
        MPI_OK(MPI_Pack_size(3, p->t, MPI_COMM_WORLD, &psize));
        CHECK(psize == 3 * p->size, "A %s: Pack_size(3) %d, expected %d", p->name, psize, 3 * p->size);
    }
}

/* ---- B ---- */
static void part_b(void) {
    /* MPI_DOUBLE_INT: 3 elements pack to 36 bytes, members back to back. */
    struct di d[3], back[3];
    unsigned char packed[128], want[128];
    for (int e = 0; e < 3; ++e) {
        memset(&d[e], 0xAB, sizeof d[e]);
        d[e].v = 1.5 + e;
        d[e].i = -7 * e;
        memcpy(want + 12 * e, &d[e].v, 8);
        memcpy(want + 12 * e + 8, &d[e].i, 4);
    }
    int pos = 0;
    MPI_OK(MPI_Pack(d, 3, MPI_DOUBLE_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 36, "B Pack(3 x MPI_DOUBLE_INT) wrote %d bytes, expected 36", pos);
    CHECK(memcmp(packed, want, 36) == 0, "B packed MPI_DOUBLE_INT is not the members back to back");
    memset(back, 0xEE, sizeof back);
    pos = 0;
    MPI_OK(MPI_Unpack(packed, 36, &pos, back, 3, MPI_DOUBLE_INT, MPI_COMM_WORLD));
    CHECK(pos == 36, "B Unpack read %d bytes", pos);
    for (int e = 0; e < 3; ++e) {
        CHECK(back[e].v == 1.5 + e && back[e].i == -7 * e, "B unpacked element %d: %g %d", e, back[e].v, back[e].i);
        const unsigned char *pad = (const unsigned char *)&back[e] + 12;
        for (int j = 0; j < 4; ++j) CHECK(pad[j] == 0xEE, "B Unpack wrote padding byte %d of element %d", j, e);
    }

    /* MPI_SHORT_INT: 2 bytes, 2 of padding, 4; size 6. */
    struct si s[2] = {{3, 30}, {-4, 40}};
    pos = 0;
    MPI_OK(MPI_Pack(s, 2, MPI_SHORT_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 12, "B Pack(2 x MPI_SHORT_INT) wrote %d bytes, expected 12", pos);
    for (int e = 0; e < 2; ++e) {
        short v;
        int i;
        memcpy(&v, packed + 6 * e, 2);
        memcpy(&i, packed + 6 * e + 2, 4);
        CHECK(v == s[e].v && i == s[e].i, "B packed MPI_SHORT_INT %d: %d %d", e, v, i);
    }

    /* Derived types of pair types. */
    MPI_Datatype vec, con, st;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE_INT, &vec));
    MPI_OK(MPI_Type_contiguous(2, MPI_SHORT_INT, &con));
    int bl[2] = {1, 2};
    MPI_Aint disp[2] = {0, 16};
    MPI_Datatype types[2] = {MPI_CHAR, MPI_LONG_DOUBLE_INT};
    MPI_OK(MPI_Type_create_struct(2, bl, disp, types, &st));
    /* clang-format off */
    struct { MPI_Datatype t; const char *name; int size; MPI_Aint lb, extent, tlb, text; int elems; } dv[3] = {
        {vec, "vector(3,1,2,DOUBLE_INT)", 36, 0, 80, 0, 76, 6},
        {con, "contiguous(2,SHORT_INT)", 12, 0, 16, 0, 16, 4},
        {st, "struct{char, 2 x LONG_DOUBLE_INT@16}", 41, 0, 80, 0, 68, 5},
    };
    /* clang-format on */
    for (int k = 0; k < 3; ++k) {
        int sz;
        MPI_Aint lb, ext, tlb, text;
        MPI_OK(MPI_Type_commit(&dv[k].t));
        MPI_OK(MPI_Type_size(dv[k].t, &sz));
        MPI_OK(MPI_Type_get_extent(dv[k].t, &lb, &ext));
        MPI_OK(MPI_Type_get_true_extent(dv[k].t, &tlb, &text));
        CHECK(sz == dv[k].size && lb == dv[k].lb && ext == dv[k].extent && tlb == dv[k].tlb && text == dv[k].text,
              "B %s: size %d lb %ld extent %ld true %ld %ld", dv[k].name, sz, (long)lb, (long)ext, (long)tlb,
              (long)text);
    }
    /* vector of MPI_DOUBLE_INT: elements 0, 2, 4 of 5, packed without padding. */
    struct di v5[5], v5b[5];
    for (int e = 0; e < 5; ++e) {
        v5[e].v = 10.0 * e;
        v5[e].i = e;
    }
    pos = 0;
    MPI_OK(MPI_Pack(v5, 1, vec, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 36, "B Pack(vector of DOUBLE_INT) wrote %d bytes", pos);
    for (int e = 0; e < 3; ++e) {
        double v;
        int i;
        memcpy(&v, packed + 12 * e, 8);
        memcpy(&i, packed + 12 * e + 8, 4);
        CHECK(v == 20.0 * e && i == 2 * e, "B packed vector element %d: %g %d", e, v, i);
    }
    memset(v5b, 0xEE, sizeof v5b);
    pos = 0;
    MPI_OK(MPI_Unpack(packed, 36, &pos, v5b, 1, vec, MPI_COMM_WORLD));
    for (int e = 0; e < 5; ++e) {
        const unsigned char *b = (const unsigned char *)&v5b[e];
        if (e % 2 == 0) {
            CHECK(v5b[e].v == 10.0 * e && v5b[e].i == e, "B unpacked vector element %d", e);
            for (int j = 12; j < 16; ++j) CHECK(b[j] == 0xEE, "B vector: padding of element %d written", e);
        } else {
            for (int j = 0; j < 16; ++j) CHECK(b[j] == 0xEE, "B vector: gap element %d written", e);
        }
    }
    /* external32 of the struct: char, then 2 x (binary128 + int) = 1 + 40. */
    MPI_Aint xs = -1;
    MPI_OK(MPI_Pack_external_size("external32", 2, st, &xs));
    CHECK(xs == 82, "B Pack_external_size(2 x struct) %ld, expected 82", (long)xs);
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&con));
    MPI_OK(MPI_Type_free(&st));
}

/* ---- C ---- */
static void part_c(int n) {
    struct si *a = malloc(sizeof *a * (size_t)n);
    if (rank == 0) {
        for (int e = 0; e < n; ++e) {
            memset(&a[e], 0x55, sizeof a[e]);
            a[e].v = (short)(e % 30000);
            a[e].i = 3 * e;
        }
        MPI_OK(MPI_Send(a, n, MPI_SHORT_INT, 1, 1, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(a, n, MPI_SHORT_INT, 1, 2, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_Status st;
        int cnt = -1;
        memset(a, 0xEE, sizeof *a * (size_t)n);
        MPI_OK(MPI_Recv(a, n, MPI_SHORT_INT, 0, 1, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, MPI_SHORT_INT, &cnt));
        CHECK(cnt == n, "C n=%d: Get_count %d", n, cnt);
        MPI_OK(MPI_Get_elements(&st, MPI_SHORT_INT, &cnt));
        CHECK(cnt == 2 * n, "C n=%d: Get_elements %d, expected %d", n, cnt, 2 * n);
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == 6 * n, "C n=%d: %d bytes on the wire, expected %d", n, cnt, 6 * n);
        for (int e = 0; e < n; ++e) {
            CHECK(a[e].v == (short)(e % 30000) && a[e].i == 3 * e, "C n=%d element %d: %d %d", n, e, a[e].v, a[e].i);
            const unsigned char *pad = (const unsigned char *)&a[e] + 2;
            CHECK(pad[0] == 0xEE && pad[1] == 0xEE, "C n=%d: padding of element %d written", n, e);
        }
        /* The same message as bytes: members back to back. */
        unsigned char *raw = malloc(6 * (size_t)n);
        MPI_OK(MPI_Recv(raw, 6 * n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == 6 * n, "C n=%d: raw message %d bytes", n, cnt);
        for (int e = 0; e < n; e += 97) {
            short v;
            int i;
            memcpy(&v, raw + 6 * e, 2);
            memcpy(&i, raw + 6 * e + 2, 4);
            CHECK(v == (short)(e % 30000) && i == 3 * e, "C n=%d raw element %d: %d %d", n, e, v, i);
        }
        free(raw);
    }
    free(a);
}

/* {double, int, double} sent as a struct, received as 2 x MPI_DOUBLE_INT:
   20 bytes, 3 basic elements, no whole count (MPICH's get-elements-pairtype). */
static void part_c_partial(void) {
    struct {
        double a;
        int b;
        double c;
    } foo = {1.25, 17, -2.5};
    struct di bar[2];
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {0, offsetof(__typeof__(foo), b), offsetof(__typeof__(foo), c)};
    MPI_Datatype types[3] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE}, st;
    MPI_OK(MPI_Type_create_struct(3, bl, disp, types, &st));
    MPI_OK(MPI_Type_commit(&st));
    MPI_Status status;
    memset(bar, 0xEE, sizeof bar);
    MPI_OK(MPI_Sendrecv(&foo, 1, st, 0, 5, bar, 2, MPI_DOUBLE_INT, 0, 5, MPI_COMM_SELF, &status));
    int cnt = -2;
    MPI_OK(MPI_Get_elements(&status, MPI_DOUBLE_INT, &cnt));
    CHECK(cnt == 3, "C partial: Get_elements %d, expected 3", cnt);
    MPI_OK(MPI_Get_count(&status, MPI_DOUBLE_INT, &cnt));
    CHECK(cnt == MPI_UNDEFINED, "C partial: Get_count %d, expected MPI_UNDEFINED", cnt);
    CHECK(bar[0].v == 1.25 && bar[0].i == 17 && bar[1].v == -2.5, "C partial: data %g %d %g", bar[0].v, bar[0].i,
          bar[1].v);
    MPI_OK(MPI_Type_free(&st));
}

/* ---- D ---- */
/* Whether the padding of a pair (the bytes of neither member) is still 0xEE. */
static int pad_untouched(const void *p, size_t total, size_t vsize, size_t ioff, size_t isize) {
    const unsigned char *b = p;
    for (size_t j = vsize; j < total; ++j)
        if ((j < ioff || j >= ioff + isize) && b[j] != 0xEE) return 0;
    return 1;
}

#define REDUCE_CHECK(T, pt, n)                                                                             \
    do {                                                                                                   \
        T *in = malloc(sizeof(T) * (n)), *out = malloc(sizeof(T) * (n));                                   \
        for (int e = 0; e < (n); ++e) {                                                                    \
            in[e].v = (e % 3 == 0) ? rank : size - rank; /* min at rank 0 or size-1 */                     \
            in[e].i = rank;                                                                                \
        }                                                                                                  \
        for (int op = 0; op < 2; ++op) {                                                                   \
            memset(out, 0xEE, sizeof(T) * (n));                                                            \
            MPI_OK(MPI_Allreduce(in, out, (n), pt, op ? MPI_MAXLOC : MPI_MINLOC, MPI_COMM_WORLD));         \
            for (int e = 0; e < (n); ++e) {                                                                \
                int want_v, want_i;                                                                        \
                if (e % 3 == 0) {                                                                          \
                    want_v = op ? size - 1 : 0;                                                            \
                    want_i = op ? size - 1 : 0;                                                            \
                } else {                                                                                   \
                    want_v = op ? size : 1;                                                                \
                    want_i = op ? 0 : size - 1;                                                            \
                }                                                                                          \
                CHECK(out[e].v == want_v && out[e].i == want_i, "D %s %s n=%d element %d: (%g, %g)", #pt,  \
                      op ? "MAXLOC" : "MINLOC", (n), e, (double)out[e].v, (double)out[e].i);               \
                CHECK(pad_untouched(&out[e], sizeof(T), sizeof out[e].v, offsetof(T, i), sizeof out[e].i), \
                      "D %s n=%d: padding of element %d written", #pt, (n), e);                            \
            }                                                                                              \
        }                                                                                                  \
        free(in);                                                                                          \
        free(out);                                                                                         \
    } while (0)

/* clang-format off */
struct fi { float v; int i; };
struct ii { int v; int i; };
struct ff { float v; float i; };
struct dd { double v; double i; };
/* clang-format on */

static void part_d(int n) {
    REDUCE_CHECK(struct fi, MPI_FLOAT_INT, n);
    REDUCE_CHECK(struct di, MPI_DOUBLE_INT, n);
    REDUCE_CHECK(struct li, MPI_LONG_INT, n);
    REDUCE_CHECK(struct ii, MPI_2INT, n);
    REDUCE_CHECK(struct si, MPI_SHORT_INT, n);
    REDUCE_CHECK(struct ldi, MPI_LONG_DOUBLE_INT, n);
    REDUCE_CHECK(struct ii, MPI_2INTEGER, n);
    REDUCE_CHECK(struct ff, MPI_2REAL, n);
    REDUCE_CHECK(struct dd, MPI_2DOUBLE_PRECISION, n);
}

/* A derived type of pair types (contiguous of 3 MPI_SHORT_INT) reduced, and
   MPI_Reduce to a root; a one-sided MINLOC Accumulate of MPI_DOUBLE_INT. */
static void part_d_derived(void) {
    MPI_Datatype c3;
    MPI_OK(MPI_Type_contiguous(3, MPI_SHORT_INT, &c3));
    MPI_OK(MPI_Type_commit(&c3));
    struct si in[6], out[6];
    for (int e = 0; e < 6; ++e) {
        in[e].v = (short)((rank + e) % size);
        in[e].i = rank;
    }
    memset(out, 0xEE, sizeof out);
    MPI_OK(MPI_Reduce(in, out, 2, c3, MPI_MINLOC, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int e = 0; e < 6; ++e) {
            /* value 0 at the rank r with (r + e) % size == 0 */
            const int want_i = (size - e % size) % size;
            CHECK(out[e].v == 0 && out[e].i == want_i, "D derived MINLOC element %d: (%d, %d), expected (0, %d)", e,
                  out[e].v, out[e].i, want_i);
            const unsigned char *pad = (const unsigned char *)&out[e] + 2;
            CHECK(pad[0] == 0xEE && pad[1] == 0xEE, "D derived: padding of element %d written", e);
        }
    MPI_OK(MPI_Type_free(&c3));

    struct di win_mem[4], mine[4];
    for (int e = 0; e < 4; ++e) {
        memset(&win_mem[e], 0xEE, sizeof win_mem[e]);
        win_mem[e].v = 1e9;
        win_mem[e].i = -1;
        mine[e].v = (double)((rank * 7 + e * 3) % (size + 1)) - 0.5;
        mine[e].i = rank;
    }
    MPI_Win win;
    MPI_OK(MPI_Win_create(win_mem, sizeof win_mem, sizeof win_mem[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Accumulate(mine, 4, MPI_DOUBLE_INT, 0, 0, 4, MPI_DOUBLE_INT, MPI_MINLOC, win));
    MPI_OK(MPI_Win_fence(0, win));
    if (rank == 0)
        for (int e = 0; e < 4; ++e) {
            double want_v = 1e9;
            int want_i = -1;
            for (int r = 0; r < size; ++r) {
                const double v = (double)((r * 7 + e * 3) % (size + 1)) - 0.5;
                if (v < want_v) {
                    want_v = v;
                    want_i = r;
                }
            }
            CHECK(win_mem[e].v == want_v && win_mem[e].i == want_i,
                  "D Accumulate MINLOC element %d: (%g, %d), expected (%g, %d)", e, win_mem[e].v, win_mem[e].i, want_v,
                  want_i);
            const unsigned char *pad = (const unsigned char *)&win_mem[e] + 12;
            for (int j = 0; j < 4; ++j) CHECK(pad[j] == 0xEE, "D Accumulate: padding of element %d written", e);
        }
    MPI_OK(MPI_Win_free(&win));
}

/* ---- E ---- */
static void part_e(void) {
    /* clang-format off */
    struct { MPI_Datatype t; const char *name; MPI_Aint size; } table[] = {
        {MPI_PACKED, "MPI_PACKED", 1}, {MPI_BYTE, "MPI_BYTE", 1}, {MPI_CHAR, "MPI_CHAR", 1},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1}, {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1},
        {MPI_WCHAR, "MPI_WCHAR", 2}, {MPI_SHORT, "MPI_SHORT", 2}, {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2},
        {MPI_INT, "MPI_INT", 4}, {MPI_UNSIGNED, "MPI_UNSIGNED", 4}, {MPI_LONG, "MPI_LONG", 4},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 4}, {MPI_LONG_LONG, "MPI_LONG_LONG", 8},
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8}, {MPI_FLOAT, "MPI_FLOAT", 4},
        {MPI_DOUBLE, "MPI_DOUBLE", 8}, {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16}, {MPI_C_BOOL, "MPI_C_BOOL", 1},
        {MPI_INT8_T, "MPI_INT8_T", 1}, {MPI_INT16_T, "MPI_INT16_T", 2}, {MPI_INT32_T, "MPI_INT32_T", 4},
        {MPI_INT64_T, "MPI_INT64_T", 8}, {MPI_UINT8_T, "MPI_UINT8_T", 1}, {MPI_UINT16_T, "MPI_UINT16_T", 2},
        {MPI_UINT32_T, "MPI_UINT32_T", 4}, {MPI_UINT64_T, "MPI_UINT64_T", 8}, {MPI_AINT, "MPI_AINT", 8},
        {MPI_COUNT, "MPI_COUNT", 8}, {MPI_OFFSET, "MPI_OFFSET", 8},
        {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8}, {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16},
        {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32}, {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1},
        {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8}, {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32}, {MPI_CHARACTER, "MPI_CHARACTER", 1},
        {MPI_LOGICAL, "MPI_LOGICAL", 4}, {MPI_INTEGER, "MPI_INTEGER", 4}, {MPI_REAL, "MPI_REAL", 4},
        {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8}, {MPI_COMPLEX, "MPI_COMPLEX", 8},
        {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16}, {MPI_INTEGER1, "MPI_INTEGER1", 1},
        {MPI_INTEGER2, "MPI_INTEGER2", 2}, {MPI_INTEGER4, "MPI_INTEGER4", 4}, {MPI_INTEGER8, "MPI_INTEGER8", 8},
        {MPI_REAL4, "MPI_REAL4", 4}, {MPI_REAL8, "MPI_REAL8", 8}, {MPI_COMPLEX8, "MPI_COMPLEX8", 8},
        {MPI_COMPLEX16, "MPI_COMPLEX16", 16},
    };
    /* clang-format on */
    for (size_t k = 0; k < sizeof table / sizeof table[0]; ++k) {
        MPI_Aint xs = -1;
        MPI_OK(MPI_Pack_external_size("external32", 3, table[k].t, &xs));
        CHECK(xs == 3 * table[k].size, "E Pack_external_size(3 x %s) %ld, expected %ld", table[k].name, (long)xs,
              (long)(3 * table[k].size));
    }
    /* Pair types: the external sizes of their members (MPI_LONG_INT: 4 + 4). */
    for (int k = 0; k < NPAIRS; ++k) {
        MPI_Aint xs = -1;
        MPI_OK(MPI_Pack_external_size("external32", 2, pairs[k].t, &xs));
        CHECK(xs == 2 * pairs[k].ext32, "E Pack_external_size(2 x %s) %ld, expected %d", pairs[k].name, (long)xs,
              2 * pairs[k].ext32);
    }

    unsigned char x[64];
    MPI_Aint pos = 0;
    long l[2] = {-2, 0x12345678L};
    MPI_OK(MPI_Pack_external("external32", l, 2, MPI_LONG, x, sizeof x, &pos));
    const unsigned char want_l[8] = {0xff, 0xff, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78};
    CHECK(pos == 8 && memcmp(x, want_l, 8) == 0, "E external32 MPI_LONG: %ld bytes %02x %02x %02x %02x", (long)pos,
          x[0], x[1], x[2], x[3]);
    long lb[2] = {0, 0};
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", x, 8, &pos, lb, 2, MPI_LONG));
    CHECK(pos == 8 && lb[0] == -2 && lb[1] == 0x12345678L, "E external32 MPI_LONG back: %ld %ld", lb[0], lb[1]);

    unsigned long ul = 0xfffffffeUL, ulb = 0;
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", &ul, 1, MPI_UNSIGNED_LONG, x, sizeof x, &pos));
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", x, 4, &pos, &ulb, 1, MPI_UNSIGNED_LONG));
    CHECK(pos == 4 && ulb == 0xfffffffeUL && x[0] == 0xff && x[3] == 0xfe, "E external32 MPI_UNSIGNED_LONG: %lx", ulb);

    wchar_t w[2] = {L'A', 0x263A}, wb[2] = {0, 0};
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", w, 2, MPI_WCHAR, x, sizeof x, &pos));
    CHECK(pos == 4 && x[0] == 0 && x[1] == 0x41 && x[2] == 0x26 && x[3] == 0x3A, "E external32 MPI_WCHAR: %ld bytes",
          (long)pos);
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", x, 4, &pos, wb, 2, MPI_WCHAR));
    CHECK(wb[0] == L'A' && wb[1] == 0x263A, "E external32 MPI_WCHAR back");

    /* MPI_DOUBLE_INT: 8-byte big-endian IEEE double, then 4-byte int. */
    struct di d = {-1.0, 0x01020304}, db;
    memset(&db, 0xEE, sizeof db);
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE_INT, x, sizeof x, &pos));
    const unsigned char want_d[12] = {0xbf, 0xf0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
    CHECK(pos == 12 && memcmp(x, want_d, 12) == 0, "E external32 MPI_DOUBLE_INT: %ld bytes", (long)pos);
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", x, 12, &pos, &db, 1, MPI_DOUBLE_INT));
    CHECK(db.v == -1.0 && db.i == 0x01020304 && ((unsigned char *)&db)[12] == 0xEE, "E external32 MPI_DOUBLE_INT back");

    /* MPI_LONG_INT: a 4-byte long, then a 4-byte int. */
    struct li li = {-300, 9}, lib;
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", &li, 1, MPI_LONG_INT, x, sizeof x, &pos));
    const unsigned char want_li[8] = {0xff, 0xff, 0xfe, 0xd4, 0, 0, 0, 9};
    CHECK(pos == 8 && memcmp(x, want_li, 8) == 0, "E external32 MPI_LONG_INT: %ld bytes", (long)pos);
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", x, 8, &pos, &lib, 1, MPI_LONG_INT));
    CHECK(lib.v == -300 && lib.i == 9, "E external32 MPI_LONG_INT back: %ld %d", lib.v, lib.i);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    init_pairs();
    part_a();
    part_b();
    part_c(5);
    part_c(20000); /* 120 KB: rendezvous */
    part_c_partial();
    part_d(3);    /* the direct path of short reductions */
    part_d(5000); /* scheduled */
    part_d_derived();
    part_e();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("pairtypes: all checks passed on %d ranks\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
