/*
 * Attribute caching (MPI-3.1 §6.7) on communicators, datatypes and windows:
 * keyvals freed while attributes use them; copy callbacks (flag, errors,
 * the predefined ones); delete callbacks on set, delete and free, their
 * errors and order; MPI_Finalize deleting MPI_COMM_SELF's attributes first,
 * the last set first, with MPI still usable in the callbacks, then
 * MPI_COMM_WORLD's.
 */
#include "testlib.h"

static int rank, size;

/* Every delete callback appends its attribute value here. */
static long deleted[64];
static int ndeleted;
static int delete_error; /* the code delete callbacks return */
static int copy_error;   /* the code copy callbacks return */

static void reset(void) {
    ndeleted = 0;
    delete_error = MPI_SUCCESS;
    copy_error = MPI_SUCCESS;
}

static int comm_del(MPI_Comm c, int k, void *v, void *extra) {
    (void)c;
    (void)k;
    (void)extra;
    deleted[ndeleted++] = (long)v;
    return delete_error;
}
static int comm_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    (void)c;
    (void)k;
    (void)extra;
    *(void **)out = (void *)((long)in + 1000);
    *flag = 1;
    return copy_error;
}
static int comm_copy_not(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    (void)c;
    (void)k;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}
static int type_del(MPI_Datatype t, int k, void *v, void *extra) {
    (void)t;
    (void)k;
    (void)extra;
    deleted[ndeleted++] = (long)v;
    return delete_error;
}
static int type_copy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag) {
    (void)t;
    (void)k;
    (void)extra;
    *(void **)out = in;
    *flag = 1;
    return copy_error;
}
static int win_del(MPI_Win w, int k, void *v, void *extra) {
    (void)w;
    (void)k;
    (void)extra;
    deleted[ndeleted++] = (long)v;
    return delete_error;
}

static void expect_deleted(int n, const long *want, const char *what) {
    CHECK(ndeleted == n, "%s: %d delete callbacks ran, expected %d", what, ndeleted, n);
    for (int i = 0; i < n; ++i)
        CHECK(deleted[i] == want[i], "%s: delete %d got value %ld, expected %ld", what, i, deleted[i], want[i]);
}

static void freed_keyvals(void) {
    /* Communicator: the attribute keeps the freed keyval alive. */
    reset();
    MPI_Comm dup;
    int k, saved, flag = 0;
    void *v = NULL;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_del, &k, NULL));
    saved = k;
    MPI_OK(MPI_Comm_set_attr(dup, k, (void *)7L));
    MPI_OK(MPI_Comm_free_keyval(&k));
    CHECK(k == MPI_KEYVAL_INVALID, "free_keyval left %d", k);
    MPI_OK(MPI_Comm_get_attr(dup, saved, &v, &flag));
    CHECK(flag && v == (void *)7L, "attribute of a freed keyval lost (flag %d)", flag);
    MPI_OK(MPI_Comm_delete_attr(dup, saved));
    expect_deleted(1, (long[]){7}, "comm delete_attr after free_keyval");
    /* The last use gone, the keyval is gone. */
    int rc = MPI_Comm_delete_attr(dup, saved);
    CHECK(tl_class_of(rc) == MPI_ERR_KEYVAL, "keyval still usable after its last attribute (class %d)",
          tl_class_of(rc));
    /* Freed keyval, attribute deleted by Comm_free. */
    reset();
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_del, &k, NULL));
    MPI_OK(MPI_Comm_set_attr(dup, k, (void *)8L));
    MPI_OK(MPI_Comm_free_keyval(&k));
    MPI_OK(MPI_Comm_free(&dup));
    expect_deleted(1, (long[]){8}, "comm free after free_keyval");

    /* Datatype. */
    reset();
    MPI_Datatype t;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_del, &k, NULL));
    saved = k;
    MPI_OK(MPI_Type_set_attr(t, k, (void *)9L));
    MPI_OK(MPI_Type_free_keyval(&k));
    MPI_OK(MPI_Type_get_attr(t, saved, &v, &flag));
    CHECK(flag && v == (void *)9L, "type attribute of a freed keyval lost");
    MPI_OK(MPI_Type_delete_attr(t, saved));
    expect_deleted(1, (long[]){9}, "type delete_attr after free_keyval");
    MPI_OK(MPI_Type_free(&t));

    /* Window. */
    reset();
    int buf[2];
    MPI_Win w;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_del, &k, NULL));
    saved = k;
    MPI_OK(MPI_Win_set_attr(w, k, (void *)10L));
    MPI_OK(MPI_Win_free_keyval(&k));
    MPI_OK(MPI_Win_get_attr(w, saved, &v, &flag));
    CHECK(flag && v == (void *)10L, "window attribute of a freed keyval lost");
    MPI_OK(MPI_Win_delete_attr(w, saved));
    expect_deleted(1, (long[]){10}, "win delete_attr after free_keyval");
    MPI_OK(MPI_Win_free(&w));
}

/* Datatypes: Type_dup copies (MPI_TYPE_DUP_FN, a callback), a copy
   error fails it; Type_free runs the delete callbacks. */
static void type_callbacks(void) {
    int rc, flag = 0;
    void *v = NULL;
    MPI_Datatype t, t2 = MPI_DATATYPE_NULL;
    int tk, tdup;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_OK(MPI_Type_create_keyval(type_copy, type_del, &tk, NULL));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_del, &tdup, NULL));
    MPI_OK(MPI_Type_set_attr(t, tdup, (void *)21L));
    MPI_OK(MPI_Type_set_attr(t, tk, (void *)22L));
    MPI_OK(MPI_Type_dup(t, &t2));
    MPI_OK(MPI_Type_get_attr(t2, tdup, &v, &flag));
    CHECK(flag && v == (void *)21L, "MPI_TYPE_DUP_FN did not copy");
    MPI_OK(MPI_Type_free(&t2));
    expect_deleted(2, (long[]){22, 21}, "Type_free of the dup");
    reset();
    copy_error = MPI_ERR_ARG;
    t2 = MPI_DATATYPE_NULL;
    rc = MPI_Type_dup(t, &t2);
    CHECK(tl_class_of(rc) == MPI_ERR_ARG, "Type_dup with a failing copy callback returned class %d", tl_class_of(rc));
    CHECK(t2 == MPI_DATATYPE_NULL, "Type_dup made a type although a copy callback failed");
    expect_deleted(1, (long[]){21}, "failed Type_dup");
    reset();
    MPI_OK(MPI_Type_free(&t));
    expect_deleted(2, (long[]){22, 21}, "Type_free");
    reset();
    MPI_OK(MPI_Type_free_keyval(&tk));
    MPI_OK(MPI_Type_free_keyval(&tdup));
}

/* Windows: Win_free runs the delete callbacks, and returns their error. */
static void win_callbacks(void) {
    int buf[2], wk;
    MPI_Win w;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_del, &wk, NULL));
    MPI_OK(MPI_Win_set_attr(w, wk, (void *)31L));
    MPI_OK(MPI_Win_set_attr(w, wk, (void *)32L));
    expect_deleted(1, (long[]){31}, "Win_set_attr replacing a value");
    reset();
    MPI_OK(MPI_Win_free(&w));
    expect_deleted(1, (long[]){32}, "Win_free");
    reset();
    MPI_OK(MPI_Win_free_keyval(&wk));
}

static void callbacks(void) {
    int kc, kn, kd, kz, flag = 0;
    void *v = NULL;
    MPI_Comm base, dup = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    MPI_OK(MPI_Comm_create_keyval(comm_copy, comm_del, &kc, NULL));
    MPI_OK(MPI_Comm_create_keyval(comm_copy_not, comm_del, &kn, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, comm_del, &kd, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kz, NULL));

    /* set_attr on an existing attribute deletes the old value first. */
    reset();
    MPI_OK(MPI_Comm_set_attr(base, kd, (void *)1L));
    MPI_OK(MPI_Comm_set_attr(base, kc, (void *)2L));
    MPI_OK(MPI_Comm_set_attr(base, kn, (void *)3L));
    MPI_OK(MPI_Comm_set_attr(base, kz, (void *)4L));
    MPI_OK(MPI_Comm_set_attr(base, kd, (void *)5L));
    expect_deleted(1, (long[]){1}, "set_attr replacing a value");

    /* Dup: kc copied through its callback, kn not (flag 0), kd by
       MPI_COMM_DUP_FN, kz not (MPI_COMM_NULL_COPY_FN). */
    reset();
    MPI_OK(MPI_Comm_dup(base, &dup));
    MPI_OK(MPI_Comm_get_attr(dup, kc, &v, &flag));
    CHECK(flag && v == (void *)1002L, "copy callback value not copied (flag %d)", flag);
    MPI_OK(MPI_Comm_get_attr(dup, kn, &v, &flag));
    CHECK(!flag, "attribute copied although its callback said flag = 0");
    MPI_OK(MPI_Comm_get_attr(dup, kd, &v, &flag));
    CHECK(flag && v == (void *)5L, "MPI_COMM_DUP_FN did not copy");
    MPI_OK(MPI_Comm_get_attr(dup, kz, &v, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied");
    /* Comm_free deletes the attributes, the last set first. */
    MPI_OK(MPI_Comm_free(&dup));
    expect_deleted(2, (long[]){1002, 5}, "Comm_free of the dup");

    /* A delete callback's error is returned by delete_attr and Comm_free. */
    MPI_OK(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    reset();
    delete_error = MPI_ERR_OTHER;
    int rc = MPI_Comm_delete_attr(base, kn);
    CHECK(tl_class_of(rc) == MPI_ERR_OTHER, "delete_attr with a failing callback returned class %d", tl_class_of(rc));
    reset();

    /* A copy callback's error fails Comm_dup with it; what it copied before
       is deleted again, and no communicator is made. */
    copy_error = MPI_ERR_ARG;
    dup = MPI_COMM_NULL;
    rc = MPI_Comm_dup(base, &dup);
    CHECK(tl_class_of(rc) == MPI_ERR_ARG, "Comm_dup with a failing copy callback returned class %d", tl_class_of(rc));
    CHECK(dup == MPI_COMM_NULL, "Comm_dup made a communicator although a copy callback failed");
    /* kd (set first, copied by MPI_COMM_DUP_FN) was copied before kc failed: deleted again. */
    expect_deleted(1, (long[]){5}, "failed Comm_dup");
    reset();

    /* Comm_free returns a delete callback's error. */
    delete_error = MPI_ERR_OTHER;
    rc = MPI_Comm_free(&base);
    CHECK(tl_class_of(rc) == MPI_ERR_OTHER, "Comm_free with a failing delete callback returned class %d",
          tl_class_of(rc));
    reset();
    MPI_OK(MPI_Comm_free_keyval(&kc));
    MPI_OK(MPI_Comm_free_keyval(&kn));
    MPI_OK(MPI_Comm_free_keyval(&kd));
    MPI_OK(MPI_Comm_free_keyval(&kz));

    type_callbacks();

    win_callbacks();
}

/* MPI_Finalize's callbacks: SELF's (the last set first), then WORLD's. */
static long fin_order[8];
static int nfin;
static int fin_collective_ok = 1;
static int fin_del(MPI_Comm c, int k, void *v, void *extra) {
    (void)k;
    (void)extra;
    int finalized = 1, one = 1, sum = 0;
    MPI_Finalized(&finalized);
    if (finalized) fin_collective_ok = 0;
    if (c == MPI_COMM_SELF) { /* a library's cleanup may still communicate */
        if (MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS || sum != size)
            fin_collective_ok = 0;
        fin_order[nfin++] = (long)v;
    } else {
        fin_order[nfin++] = 100 + (long)v;
    }
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    freed_keyvals();
    callbacks();

    int k1, k2, k3;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fin_del, &k1, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fin_del, &k2, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fin_del, &k3, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k1, (void *)1L));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k2, (void *)2L));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k3, (void *)3L));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k1, (void *)1L));
    MPI_OK(MPI_Comm_free_keyval(&k1)); /* still used: the callbacks run all the same */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("attrs: before MPI_Finalize OK\n");
    fflush(stdout);
    MPI_Finalize();
    const long want[4] = {1, 3, 2, 101};
    int ok = nfin == 4 && fin_collective_ok;
    for (int i = 0; ok && i < 4; ++i) ok = fin_order[i] == want[i];
    if (!ok) {
        fprintf(stderr,
                "rank %d: MPI_Finalize ran %d delete callbacks (order %ld %ld %ld %ld, expected 1 3 2 101), "
                "MPI usable in them: %d\n",
                rank, nfin, fin_order[0], fin_order[1], fin_order[2], fin_order[3], fin_collective_ok);
        return 99;
    }
    if (rank == 0) printf("attrs: OK\n");
    return 0;
}
