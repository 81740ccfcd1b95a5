/*
 * Fortran datatype handles used from C (MPI_INTEGER, MPI_REAL, ...):
 *   - sizes, extents and names (gfortran's default kinds);
 *   - point-to-point around a ring, also through a derived type;
 *   - reductions with the ops the standard defines on Fortran types: SUM,
 *     PROD, MAX, MIN on INTEGER/REAL/DOUBLE PRECISION, SUM and PROD on COMPLEX,
 *     LAND/LOR/LXOR on LOGICAL, bit ops on INTEGER, MAXLOC/MINLOC on the
 *     2INTEGER/2REAL/2DOUBLE_PRECISION pairs;
 *   - the ops it does not define (LAND on INTEGER, SUM on LOGICAL, MAX on
 *     COMPLEX) fail with MPI_ERR_OP.
 */
#include <complex.h>
#include <string.h>

#include "testlib.h"

static int me, size;

static void check_type(MPI_Datatype t, const char *name, int want_size) {
    int sz = -1, len = 0;
    MPI_Aint lb = -1, extent = -1;
    char got[MPI_MAX_OBJECT_NAME];
    MPI_OK(MPI_Type_size(t, &sz));
    MPI_OK(MPI_Type_get_extent(t, &lb, &extent));
    MPI_OK(MPI_Type_get_name(t, got, &len));
    CHECK(sz == want_size, "%s: size %d, expected %d", name, sz, want_size);
    CHECK(lb == 0 && extent == want_size, "%s: lb %ld extent %ld", name, (long)lb, (long)extent);
    CHECK(strcmp(got, name) == 0 && len == (int)strlen(name), "name %s, expected %s", got, name);
}

static void sizes(void) {
    check_type(MPI_INTEGER, "MPI_INTEGER", 4);
    check_type(MPI_REAL, "MPI_REAL", 4);
    check_type(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8);
    check_type(MPI_LOGICAL, "MPI_LOGICAL", 4);
    check_type(MPI_CHARACTER, "MPI_CHARACTER", 1);
    check_type(MPI_COMPLEX, "MPI_COMPLEX", 8);
    check_type(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16);
    check_type(MPI_2INTEGER, "MPI_2INTEGER", 8);
    check_type(MPI_2REAL, "MPI_2REAL", 8);
    check_type(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16);
    check_type(MPI_INTEGER1, "MPI_INTEGER1", 1);
    check_type(MPI_INTEGER2, "MPI_INTEGER2", 2);
    check_type(MPI_INTEGER4, "MPI_INTEGER4", 4);
    check_type(MPI_INTEGER8, "MPI_INTEGER8", 8);
    check_type(MPI_REAL4, "MPI_REAL4", 4);
    check_type(MPI_REAL8, "MPI_REAL8", 8);
#ifdef MPI_REAL16
    check_type(MPI_REAL16, "MPI_REAL16", 16);
#endif
    check_type(MPI_COMPLEX8, "MPI_COMPLEX8", 8);
    check_type(MPI_COMPLEX16, "MPI_COMPLEX16", 16);
    check_type(MPI_LOGICAL1, "MPI_LOGICAL1", 1);
    check_type(MPI_LOGICAL2, "MPI_LOGICAL2", 2);
    check_type(MPI_LOGICAL4, "MPI_LOGICAL4", 4);
    check_type(MPI_LOGICAL8, "MPI_LOGICAL8", 8);
}

/* Each rank sends to the next and receives from the previous one. */
static void ring(void) {
    const int next = (me + 1) % size, prev = (me + size - 1) % size;
    int32_t ints[5], got_ints[5];
    double dbl[3], got_dbl[3];
    float complex cpx[2], got_cpx[2];
    char chars[16], got_chars[8];
    for (int i = 0; i < 5; ++i) ints[i] = me * 100 + i;
    for (int i = 0; i < 3; ++i) dbl[i] = me + i / 4.0;
    for (int i = 0; i < 2; ++i) cpx[i] = (float)me + (float)i * I;
    snprintf(chars, sizeof chars, "rank%03d", me);
    MPI_OK(MPI_Sendrecv(ints, 5, MPI_INTEGER, next, 1, got_ints, 5, MPI_INTEGER, prev, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    MPI_OK(MPI_Sendrecv(dbl, 3, MPI_DOUBLE_PRECISION, next, 2, got_dbl, 3, MPI_DOUBLE_PRECISION, prev, 2,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Sendrecv(cpx, 2, MPI_COMPLEX, next, 3, got_cpx, 2, MPI_COMPLEX, prev, 3, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    MPI_OK(MPI_Sendrecv(chars, 8, MPI_CHARACTER, next, 4, got_chars, 8, MPI_CHARACTER, prev, 4, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    for (int i = 0; i < 5; ++i) CHECK(got_ints[i] == prev * 100 + i, "INTEGER[%d] = %d", i, (int)got_ints[i]);
    for (int i = 0; i < 3; ++i) CHECK(got_dbl[i] == prev + i / 4.0, "DOUBLE PRECISION[%d] = %g", i, got_dbl[i]);
    for (int i = 0; i < 2; ++i)
        CHECK(crealf(got_cpx[i]) == (float)prev && cimagf(got_cpx[i]) == (float)i, "COMPLEX[%d] wrong", i);
    char want[16];
    snprintf(want, sizeof want, "rank%03d", prev);
    CHECK(memcmp(got_chars, want, 8) == 0, "CHARACTER: %.8s, expected %.8s", got_chars, want);

    /* Every other REAL of 8 (a vector type) lands packed in 4 REALs. */
    float reals[8], got_reals[4];
    for (int i = 0; i < 8; ++i) reals[i] = (float)(me * 10 + i);
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_REAL, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    int sz = 0;
    MPI_OK(MPI_Type_size(every_other, &sz));
    CHECK(sz == 16, "vector of 4 REALs: size %d", sz);
    MPI_OK(MPI_Sendrecv(reals, 1, every_other, next, 5, got_reals, 4, MPI_REAL, prev, 5, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; ++i)
        CHECK(got_reals[i] == (float)(prev * 10 + 2 * i), "REAL vector[%d] = %g", i, (double)got_reals[i]);
    MPI_OK(MPI_Type_free(&every_other));
}

typedef struct {
    int32_t v, i;
} integer2;
typedef struct {
    float v, i;
} real2;
typedef struct {
    double v, i;
} double2;

static void reductions(void) {
    const int n = size;
    /* SUM, PROD, MAX, MIN on INTEGER, DOUBLE PRECISION and REAL. */
    int32_t i_in[2] = {me + 1, -(me + 1)}, i_out[2];
    MPI_OK(MPI_Allreduce(i_in, i_out, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
    CHECK(i_out[0] == n * (n + 1) / 2 && i_out[1] == -n * (n + 1) / 2, "INTEGER SUM %d %d", (int)i_out[0],
          (int)i_out[1]);
    MPI_OK(MPI_Allreduce(i_in, i_out, 2, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD));
    CHECK(i_out[0] == n && i_out[1] == -1, "INTEGER MAX %d %d", (int)i_out[0], (int)i_out[1]);
    int32_t fact = 1;
    for (int k = 2; k <= n; ++k) fact *= k;
    MPI_OK(MPI_Allreduce(i_in, i_out, 1, MPI_INTEGER, MPI_PROD, MPI_COMM_WORLD));
    CHECK(i_out[0] == fact, "INTEGER PROD %d, expected %d", (int)i_out[0], (int)fact);
    int32_t bits = 1 << me, all_bits = 0;
    MPI_OK(MPI_Allreduce(&bits, &all_bits, 1, MPI_INTEGER, MPI_BOR, MPI_COMM_WORLD));
    CHECK(all_bits == (1 << n) - 1, "INTEGER BOR %#x", (unsigned)all_bits);
    bits = ~(1 << me);
    MPI_OK(MPI_Allreduce(&bits, &all_bits, 1, MPI_INTEGER, MPI_BAND, MPI_COMM_WORLD));
    CHECK(all_bits == ~((1 << n) - 1), "INTEGER BAND %#x", (unsigned)all_bits);

    double d_in[2] = {me + 0.5, 1.0 / (1 << me)}, d_out[2];
    MPI_OK(MPI_Allreduce(d_in, d_out, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD));
    CHECK(d_out[0] == n * (n - 1) / 2.0 + n * 0.5 && d_out[1] == 2.0 - 1.0 / (1 << (n - 1)),
          "DOUBLE PRECISION SUM %g %g", d_out[0], d_out[1]);
    MPI_OK(MPI_Allreduce(d_in, d_out, 2, MPI_DOUBLE_PRECISION, MPI_MIN, MPI_COMM_WORLD));
    CHECK(d_out[0] == 0.5 && d_out[1] == 1.0 / (1 << (n - 1)), "DOUBLE PRECISION MIN %g %g", d_out[0], d_out[1]);
    float r_in = (float)me, r_out = -1;
    MPI_OK(MPI_Allreduce(&r_in, &r_out, 1, MPI_REAL, MPI_MAX, MPI_COMM_WORLD));
    CHECK(r_out == (float)(n - 1), "REAL MAX %g", (double)r_out);

    /* SUM and PROD on COMPLEX and DOUBLE COMPLEX: i^n. */
    float complex c_in = I, c_out = 0;
    MPI_OK(MPI_Allreduce(&c_in, &c_out, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(crealf(c_out) == 0 && cimagf(c_out) == (float)n, "COMPLEX SUM");
    double complex z_in = I, z_out = 0, z_want = 1;
    for (int k = 0; k < n; ++k) z_want *= I;
    MPI_OK(MPI_Allreduce(&z_in, &z_out, 1, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
    CHECK(creal(z_out) == creal(z_want) && cimag(z_out) == cimag(z_want), "DOUBLE COMPLEX PROD (%g,%g)", creal(z_out),
          cimag(z_out));

    /* LAND, LOR, LXOR on LOGICAL (.TRUE. is 1): rank 0 alone is false. */
    int32_t l_in = me != 0, l_out = -1;
    MPI_OK(MPI_Allreduce(&l_in, &l_out, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    CHECK(l_out == 0, "LOGICAL LAND %d", (int)l_out);
    MPI_OK(MPI_Allreduce(&l_in, &l_out, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
    CHECK(l_out == (n > 1), "LOGICAL LOR %d", (int)l_out);
    MPI_OK(MPI_Allreduce(&l_in, &l_out, 1, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD));
    CHECK(l_out == (n - 1) % 2, "LOGICAL LXOR %d", (int)l_out);
    l_in = 1;
    MPI_OK(MPI_Allreduce(&l_in, &l_out, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    CHECK(l_out == 1, "LOGICAL LAND of all .TRUE. %d", (int)l_out);

    /* MAXLOC and MINLOC on the pair types; ties keep the lowest index. */
    integer2 ii_in = {me % 2, me}, ii_out = {-1, -1};
    MPI_OK(MPI_Allreduce(&ii_in, &ii_out, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(ii_out.v == (n > 1) && ii_out.i == (n > 1), "2INTEGER MAXLOC (%d,%d)", (int)ii_out.v, (int)ii_out.i);
    MPI_OK(MPI_Allreduce(&ii_in, &ii_out, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(ii_out.v == 0 && ii_out.i == 0, "2INTEGER MINLOC (%d,%d)", (int)ii_out.v, (int)ii_out.i);
    real2 rr_in = {(float)-me, (float)me}, rr_out = {0, -1};
    MPI_OK(MPI_Allreduce(&rr_in, &rr_out, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(rr_out.v == (float)-(n - 1) && rr_out.i == (float)(n - 1), "2REAL MINLOC (%g,%g)", (double)rr_out.v,
          (double)rr_out.i);
    double2 dd_in = {me * 1.5, me}, dd_out = {0, -1};
    MPI_OK(MPI_Allreduce(&dd_in, &dd_out, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(dd_out.v == (n - 1) * 1.5 && dd_out.i == n - 1, "2DOUBLE_PRECISION MAXLOC (%g,%g)", dd_out.v, dd_out.i);

    /* A homogeneous derived type of INTEGERs reduces like INTEGER. */
    MPI_Datatype pair_of_integers;
    MPI_OK(MPI_Type_contiguous(2, MPI_INTEGER, &pair_of_integers));
    MPI_OK(MPI_Type_commit(&pair_of_integers));
    int32_t p_in[4] = {1, 2, 3, me}, p_out[4];
    MPI_OK(MPI_Allreduce(p_in, p_out, 2, pair_of_integers, MPI_SUM, MPI_COMM_WORLD));
    CHECK(p_out[0] == n && p_out[1] == 2 * n && p_out[2] == 3 * n && p_out[3] == n * (n - 1) / 2,
          "contiguous INTEGER SUM %d %d %d %d", (int)p_out[0], (int)p_out[1], (int)p_out[2], (int)p_out[3]);
    MPI_OK(MPI_Type_free(&pair_of_integers));

    /* Ops the standard does not define on these types. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls = 0;
    MPI_Error_class(MPI_Allreduce(i_in, i_out, 1, MPI_INTEGER, MPI_LAND, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_OP, "LAND on INTEGER: class %d", cls);
    MPI_Error_class(MPI_Allreduce(&l_in, &l_out, 1, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_OP, "SUM on LOGICAL: class %d", cls);
    MPI_Error_class(MPI_Allreduce(&c_in, &c_out, 1, MPI_COMPLEX, MPI_MAX, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_OP, "MAX on COMPLEX: class %d", cls);
    MPI_Error_class(MPI_Allreduce(&ii_in, &ii_out, 1, MPI_2INTEGER, MPI_SUM, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_OP, "SUM on 2INTEGER: class %d", cls);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &me, &size, 1);
    CHECK(size < 31, "the bit masks need fewer than 31 ranks");
    sizes();
    ring();
    reductions();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("fortran_types: ok on %d ranks\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
