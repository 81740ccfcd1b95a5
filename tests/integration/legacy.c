/*
 * The deprecated MPI-1 calls (as the calls that replaced them), the
 * communicator info calls, the status setters, MPI_Type_match_size and
 * MPI_Pcontrol.
 */
#include "testlib.h"

static int copies, deletes;
static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    (void)c, (void)k, (void)extra;
    ++copies;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int k, void *val, void *extra) {
    (void)c, (void)k, (void)val, (void)extra;
    ++deletes;
    return MPI_SUCCESS;
}
static int handled;
static void handler(MPI_Comm *c, int *code, ...) {
    (void)c, (void)code;
    ++handled;
}

/* Keyvals and attributes. */
static void keyvals_and_attributes(void) {
    int key, flag = 0, value = 42, *got = NULL;
    MPI_OK(MPI_Keyval_create(copy_fn, delete_fn, &key, NULL));
    MPI_OK(MPI_Attr_put(MPI_COMM_WORLD, key, &value));
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, key, &got, &flag));
    CHECK(flag && got == &value, "Attr_get: flag %d", flag);
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(copies == 1, "copy callback ran %d times", copies);
    MPI_OK(MPI_Attr_delete(MPI_COMM_WORLD, key));
    CHECK(deletes == 1, "delete callback ran %d times", deletes);
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, key, &got, &flag));
    CHECK(!flag, "attribute still there after Attr_delete");
    MPI_OK(MPI_Comm_free(&dup));
    CHECK(deletes == 2, "freeing the dup ran delete %d times in all", deletes);
    MPI_OK(MPI_Keyval_free(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "Keyval_free left %d", key);
}

/* Error handlers. */
static void error_handlers(int size) {
    MPI_Errhandler eh, cur;
    MPI_OK(MPI_Errhandler_create(handler, &eh));
    MPI_OK(MPI_Errhandler_set(MPI_COMM_WORLD, eh));
    MPI_OK(MPI_Errhandler_get(MPI_COMM_WORLD, &cur));
    CHECK(cur == eh, "Errhandler_get returned another handler");
    MPI_Errhandler_free(&cur);
    int x = 0;
    MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD); /* invalid rank: to the handler */
    CHECK(handled == 1, "handler ran %d times", handled);
    MPI_OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_Errhandler_free(&eh);
}

/* Datatypes. */
static void datatypes(void) {
    MPI_Aint extent = 0, lb = -1, ub = 0, a0, a1;
    MPI_Datatype hv, st, resized;
    MPI_OK(MPI_Type_hvector(3, 2, 16, MPI_INT, &hv));
    MPI_OK(MPI_Type_extent(hv, &extent));
    CHECK(extent == 2 * 16 + 2 * (MPI_Aint)sizeof(int), "hvector extent %ld", (long)extent);
    MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 16, &resized));
    MPI_OK(MPI_Type_lb(resized, &lb));
    MPI_OK(MPI_Type_ub(resized, &ub));
    CHECK(lb == -4 && ub == 12, "lb %ld ub %ld", (long)lb, (long)ub);
    struct {
        int i;
        double d;
    } s;
    MPI_OK(MPI_Address(&s.i, &a0));
    MPI_OK(MPI_Address(&s.d, &a1));
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, a1 - a0};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_OK(MPI_Type_struct(2, bl, disp, types, &st));
    int sz = 0;
    MPI_OK(MPI_Type_size(st, &sz));
    CHECK(sz == (int)(sizeof(int) + sizeof(double)), "struct size %d", sz);
    MPI_Type_free(&hv);
    MPI_Type_free(&st);
    MPI_Type_free(&resized);
}

/* Communicator info. */
static void communicator_info(int size) {
    int flag = 0;
    MPI_Comm dup;
    MPI_Info info, used;
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup));
    MPI_OK(MPI_Comm_get_info(dup, &used));
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "true") == 0, "dup_with_info: '%s'", v);
    MPI_Info_free(&used);
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    MPI_OK(MPI_Comm_set_info(dup, info));
    MPI_OK(MPI_Comm_get_info(dup, &used));
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "false") == 0, "set_info: '%s'", v);
    MPI_Info_free(&used);
    MPI_Info_free(&info);
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == size, "allreduce on the dup: %d", sum);
    MPI_OK(MPI_Comm_free(&dup));
}

/* Status setters and Type_match_size. */
static void status_setters_and_match_size(void) {
    MPI_Status st_;
    int cnt = -1, cancelled = -1;
    MPI_OK(MPI_Status_set_elements(&st_, MPI_DOUBLE, 5));
    MPI_OK(MPI_Get_count(&st_, MPI_DOUBLE, &cnt));
    CHECK(cnt == 5, "Status_set_elements then Get_count: %d", cnt);
    MPI_OK(MPI_Status_set_elements_x(&st_, MPI_INT, 3));
    MPI_OK(MPI_Get_elements(&st_, MPI_INT, &cnt));
    CHECK(cnt == 3, "Status_set_elements_x then Get_elements: %d", cnt);
    MPI_OK(MPI_Status_set_cancelled(&st_, 1));
    MPI_OK(MPI_Test_cancelled(&st_, &cancelled));
    CHECK(cancelled == 1, "Status_set_cancelled: %d", cancelled);
    MPI_Datatype m;
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &m));
    CHECK(m == MPI_INTEGER8, "match_size integer 8");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    CHECK(m == MPI_REAL8, "match_size real 8");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    CHECK(m == MPI_DOUBLE_COMPLEX, "match_size complex 16");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = -1;
    MPI_Error_class(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m), &cls);
    CHECK(cls == MPI_ERR_ARG, "match_size integer 3: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 1);
    keyvals_and_attributes();
    error_handlers(size);
    datatypes();
    communicator_info(size);
    status_setters_and_match_size();
    MPI_OK(MPI_Pcontrol(1));
    MPI_OK(MPI_Pcontrol(0, "ignored"));
    if (rank == 0) printf("legacy: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
