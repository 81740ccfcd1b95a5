/* dtcontents, part G: error classes of the datatype calls, a table (see
   dtcontents.c). */
#include "dtcontents.h"

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
static int darray_block_darg_exact(void) {
    return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_BLOCK, 3, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_grid_mismatch(void) {
    return darray_with(5, 1, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_rank_big(void) {
    return darray_with(6, 6, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_rank_neg(void) {
    return darray_with(6, -1, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_size_zero(void) {
    return darray_with(0, 0, 2, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_ndims_zero(void) {
    return darray_with(6, 1, 0, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_none_psize(void) {
    return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_bad_distrib(void) {
    return darray_with(6, 1, 2, 6, 4242, MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_darg_zero(void) { return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_CYCLIC, 0, 2, MPI_ORDER_C, MPI_INT); }
static int darray_gsize_zero(void) {
    return darray_with(6, 1, 2, 0, MPI_DISTRIBUTE_CYCLIC, 1, 2, MPI_ORDER_C, MPI_INT);
}
static int darray_psize_zero(void) {
    return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_CYCLIC, 1, 0, MPI_ORDER_C, MPI_INT);
}
static int darray_bad_order(void) { return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_CYCLIC, 1, 2, 99, MPI_INT); }
static int darray_null_old(void) {
    return darray_with(6, 1, 2, 6, MPI_DISTRIBUTE_CYCLIC, 1, 2, MPI_ORDER_C, MPI_DATATYPE_NULL);
}

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
/* wider than the widest kind: INTEGER(16)'s 38 digits, else INTEGER(8)'s 18 */
static int f90_int_too_wide(void) {
    MPI_Datatype t;
#ifdef MPI_INTEGER16
    return MPI_Type_create_f90_integer(39, &t);
#else
    return MPI_Type_create_f90_integer(19, &t);
#endif
}
static int f90_int_undefined(void) {
    MPI_Datatype t;
    return MPI_Type_create_f90_integer(MPI_UNDEFINED, &t);
}
/* more precise than the most precise kind: COMPLEX(16)'s 33 digits, else COMPLEX(8)'s 15 */
static int f90_complex_too_precise(void) {
    MPI_Datatype t;
#ifdef MPI_COMPLEX32
    return MPI_Type_create_f90_complex(34, MPI_UNDEFINED, &t);
#else
    return MPI_Type_create_f90_complex(16, MPI_UNDEFINED, &t);
#endif
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
    {"Type_create_f90_integer beyond the widest kind", f90_int_too_wide, MPI_ERR_ARG},
    {"Type_create_f90_integer MPI_UNDEFINED", f90_int_undefined, MPI_ERR_ARG},
    {"Type_create_f90_complex beyond the most precise kind", f90_complex_too_precise, MPI_ERR_ARG},
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

void part_g(void) {
    MPI_OK(MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &g_vec));
    MPI_OK(MPI_Type_create_hvector(2, 1, 64, MPI_INT, &g_hvec));
    MPI_OK(
        MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &g_struct));
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
