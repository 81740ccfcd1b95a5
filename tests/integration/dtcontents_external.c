/* dtcontents, parts E and F: external32 packing and the MPI_Count (_x)
   calls (see dtcontents.c). */
#include "dtcontents.h"

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

void external_sizes(void) {
    /* clang-format off */
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
        {MPI_REAL16, 16, "MPI_REAL16"}, {MPI_COMPLEX32, 32, "MPI_COMPLEX32"},
#endif
#ifdef MPI_INTEGER16
        {MPI_INTEGER16, 16, "MPI_INTEGER16"},
#endif
        /* the pair types: their two parts, without padding */
        {MPI_FLOAT_INT, 8, "MPI_FLOAT_INT"}, {MPI_DOUBLE_INT, 12, "MPI_DOUBLE_INT"},
        {MPI_LONG_INT, 8, "MPI_LONG_INT"}, {MPI_2INT, 8, "MPI_2INT"}, {MPI_SHORT_INT, 6, "MPI_SHORT_INT"},
        {MPI_LONG_DOUBLE_INT, 20, "MPI_LONG_DOUBLE_INT"}, {MPI_2INTEGER, 8, "MPI_2INTEGER"},
        {MPI_2REAL, 8, "MPI_2REAL"}, {MPI_2DOUBLE_PRECISION, 16, "MPI_2DOUBLE_PRECISION"},
    };
    /* clang-format on */
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
    MPI_OK(MPI_Type_create_struct(
        3, (int[]){1, 1, 2}, (MPI_Aint[]){offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)},
        (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT}, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

void external_exact_cases(void) {
    int ints[3] = {0x01020304, -1, 258};
    external_exact("MPI_INT", ints, 3, MPI_INT, (const unsigned char[]){1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff, 0, 0, 1, 2},
                   12, sizeof ints);
    short s = -2;
    external_exact("MPI_SHORT", &s, 1, MPI_SHORT, (const unsigned char[]){0xff, 0xfe}, 2, sizeof s);
    long l[2] = {0x01020304L, -2L}; /* 4 bytes in external32: values that fit */
    external_exact("MPI_LONG", l, 2, MPI_LONG, (const unsigned char[]){1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe}, 8,
                   sizeof l);
    unsigned long long ull = 0xfedcba9876543210ULL;
    external_exact("MPI_UNSIGNED_LONG_LONG", &ull, 1, MPI_UNSIGNED_LONG_LONG,
                   (const unsigned char[]){0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10}, 8, sizeof ull);
    float f[2] = {1.5f, -0.0f};
    external_exact("MPI_FLOAT", f, 2, MPI_FLOAT, (const unsigned char[]){0x3f, 0xc0, 0, 0, 0x80, 0, 0, 0}, 8, sizeof f);
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
                   (const unsigned char[]){0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}, 12,
                   offsetof(struct double_int, i) + 4);
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
    external_exact(
        "struct {char, double, int[2]}", r, 2, rt,
        (const unsigned char[]){'x', 0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0,    0,    0,    1,    0xff, 0xff, 0xff, 0xfe,
                                'y', 0x40, 0x08, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0,    0,    0,    0},
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

void external_round_trip(void) {
    MPI_Datatype parts[] = {MPI_LONG_DOUBLE,      MPI_LONG,      MPI_UNSIGNED_SHORT,
                            MPI_C_DOUBLE_COMPLEX, MPI_WCHAR,     MPI_C_BOOL,
                            MPI_INT8_T,           MPI_UINT64_T,  MPI_COUNT,
                            MPI_LONG_DOUBLE_INT,  MPI_SHORT_INT, MPI_C_LONG_DOUBLE_COMPLEX};
    MPI_Aint disps[] = {offsetof(struct every, ld),  offsetof(struct every, l),   offsetof(struct every, us),
                        offsetof(struct every, dc),  offsetof(struct every, wc),  offsetof(struct every, b),
                        offsetof(struct every, i8),  offsetof(struct every, u64), offsetof(struct every, cnt),
                        offsetof(struct every, ldi), offsetof(struct every, si),  offsetof(struct every, ldc)};
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

void part_f(void) {
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
