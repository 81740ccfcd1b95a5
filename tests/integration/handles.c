/*
 * Datatype and window attributes (keyvals with copy and delete callbacks),
 * the C <-> Fortran handle conversions, and generalized requests (completed
 * before the wait, by another thread during the wait, freed before
 * completion, cancelled, failing).
 */
#include <pthread.h>

#include "testlib.h"

/* The error class of a return code (MPI libraries may return richer codes). */
static int cls(int rc) {
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* ---- attributes ---- */
static int type_copies, type_deletes, win_deletes;
static void *last_deleted;
static int type_copy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag) {
    (void)t, (void)k;
    CHECK(extra == &type_copies, "type copy callback got extra_state %p", extra);
    ++type_copies;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int type_delete(MPI_Datatype t, int k, void *val, void *extra) {
    (void)t, (void)k, (void)extra;
    ++type_deletes;
    last_deleted = val;
    return MPI_SUCCESS;
}
static int win_delete(MPI_Win w, int k, void *val, void *extra) {
    (void)w, (void)k, (void)extra;
    ++win_deletes;
    last_deleted = val;
    return MPI_SUCCESS;
}

static void type_attributes(void) {
    int key, key_nocopy, comm_key, flag = 0, a = 1, b = 2, *got = NULL;
    MPI_OK(MPI_Type_create_keyval(type_copy, type_delete, &key, &type_copies));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &key_nocopy, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_key, NULL));
    CHECK(key != key_nocopy, "two keyvals share the value %d", key);

    MPI_Datatype vec, dup;
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    MPI_OK(MPI_Type_get_attr(vec, key, &got, &flag));
    CHECK(flag == 0, "a new type has an attribute");
    MPI_OK(MPI_Type_set_attr(vec, key, &a));
    MPI_OK(MPI_Type_set_attr(vec, key_nocopy, &b));
    MPI_OK(MPI_Type_get_attr(vec, key, &got, &flag));
    CHECK(flag && got == &a, "Type_get_attr: flag %d", flag);
    /* Replacing a value deletes the old one. */
    MPI_OK(MPI_Type_set_attr(vec, key, &b));
    CHECK(type_deletes == 1 && last_deleted == &a, "replace: %d deletes", type_deletes);
    /* Type_dup copies through the callbacks: key copied, key_nocopy not. */
    MPI_OK(MPI_Type_dup(vec, &dup));
    CHECK(type_copies == 1, "copy callback ran %d times", type_copies);
    MPI_OK(MPI_Type_get_attr(dup, key, &got, &flag));
    CHECK(flag && got == &b, "the dup lacks the copied attribute");
    MPI_OK(MPI_Type_get_attr(dup, key_nocopy, &got, &flag));
    CHECK(flag == 0, "MPI_TYPE_NULL_COPY_FN attribute was copied");
    /* Type_free runs the delete callbacks; delete_attr too. */
    MPI_OK(MPI_Type_free(&dup));
    CHECK(type_deletes == 2, "Type_free ran %d deletes", type_deletes);
    MPI_OK(MPI_Type_delete_attr(vec, key));
    CHECK(type_deletes == 3, "Type_delete_attr ran %d deletes", type_deletes);
    MPI_OK(MPI_Type_get_attr(vec, key, &got, &flag));
    CHECK(flag == 0, "attribute still there after delete");
    /* Predefined types carry attributes too. */
    MPI_OK(MPI_Type_set_attr(MPI_INT, key, &a));
    MPI_OK(MPI_Type_get_attr(MPI_INT, key, &got, &flag));
    CHECK(flag && got == &a, "attribute on MPI_INT");
    MPI_OK(MPI_Type_get_attr(MPI_DOUBLE, key, &got, &flag));
    CHECK(flag == 0, "MPI_DOUBLE has MPI_INT's attribute");
    MPI_OK(MPI_Type_delete_attr(MPI_INT, key));
    CHECK(type_deletes == 4 && last_deleted == &a, "delete on MPI_INT: %d deletes", type_deletes);

    /* Errors: a communicator keyval on a type, deleting what is not set, a bad type. */
    CHECK(cls(MPI_Type_set_attr(vec, comm_key, &a)) == MPI_ERR_KEYVAL, "comm keyval accepted on a type");
    CHECK(cls(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &a)) == MPI_ERR_KEYVAL, "type keyval accepted on a comm");
    CHECK(cls(MPI_Type_delete_attr(vec, key)) == MPI_ERR_KEYVAL, "deleting an unset attribute");
    CHECK(cls(MPI_Type_set_attr(MPI_DATATYPE_NULL, key, &a)) == MPI_ERR_TYPE, "set_attr on MPI_DATATYPE_NULL");
    /* A freed keyval lives on while attributes use it: freeing the type still deletes. */
    MPI_OK(MPI_Type_set_attr(vec, key, &a));
    int freed_key = key;
    MPI_OK(MPI_Type_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval left %d", key);
    CHECK(cls(MPI_Type_set_attr(vec, freed_key, &a)) == MPI_ERR_KEYVAL, "a freed keyval accepted");
    MPI_OK(MPI_Type_free(&vec));
    CHECK(type_deletes == 5 && last_deleted == &a, "freeing the type after free_keyval: %d deletes", type_deletes);
    MPI_OK(MPI_Type_free_keyval(&key_nocopy));
    MPI_OK(MPI_Comm_free_keyval(&comm_key));
}

static void window_attributes(void) {
    int key, flag = 0, a = 7, *got = NULL;
    char mem[64];
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, win_delete, &key, NULL));
    MPI_OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag == 0, "a new window has an attribute");
    MPI_OK(MPI_Win_set_attr(win, key, &a));
    MPI_OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &a, "Win_get_attr: flag %d", flag);
    void *base = NULL;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mem, "MPI_WIN_BASE next to user attributes");
    CHECK(cls(MPI_Win_set_attr(win, MPI_WIN_BASE, &a)) == MPI_ERR_KEYVAL, "a predefined window key was set");
    MPI_OK(MPI_Win_free(&win));
    CHECK(win_deletes == 1 && last_deleted == &a, "Win_free ran %d deletes", win_deletes);
    MPI_OK(MPI_Win_free_keyval(&key));
}

/* ---- handle conversions ---- */
static void conversions(int rank) {
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Fint fw = MPI_Comm_c2f(MPI_COMM_WORLD), fs = MPI_Comm_c2f(MPI_COMM_SELF), fd = MPI_Comm_c2f(dup);
    CHECK(fw != fs && fw != fd && fs != fd, "comm indexes %d %d %d", (int)fw, (int)fs, (int)fd);
    CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == fw, "c2f of a handle changes");
    CHECK(MPI_Comm_f2c(fw) == MPI_COMM_WORLD && MPI_Comm_f2c(fd) == dup, "comm round trip");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "MPI_COMM_NULL round trip");
    CHECK(MPI_Comm_f2c(123456) == MPI_COMM_NULL && MPI_Comm_f2c(-3) == MPI_COMM_NULL, "unknown index");
    /* The Fortran handle works as the C one would. */
    int r = -1;
    MPI_OK(MPI_Comm_rank(MPI_Comm_f2c(fd), &r));
    CHECK(r == rank, "rank through the converted handle: %d", r);
    MPI_OK(MPI_Comm_free(&dup));

    MPI_Datatype vec;
    MPI_OK(MPI_Type_contiguous(4, MPI_SHORT, &vec));
    CHECK(MPI_Type_f2c(MPI_Type_c2f(vec)) == vec && MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE,
          "type round trip");
    CHECK(MPI_Type_c2f(vec) != MPI_Type_c2f(MPI_DOUBLE), "two types share an index");
    MPI_OK(MPI_Type_free(&vec));
    MPI_Group grp;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &grp));
    CHECK(MPI_Group_f2c(MPI_Group_c2f(grp)) == grp, "group round trip");
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "MPI_GROUP_EMPTY round trip");
    MPI_OK(MPI_Group_free(&grp));
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM && MPI_Op_c2f(MPI_SUM) != MPI_Op_c2f(MPI_MAX), "op");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN, "errhandler");
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    CHECK(MPI_Info_f2c(MPI_Info_c2f(info)) == info, "info round trip");
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "MPI_INFO_NULL round trip");
    MPI_OK(MPI_Info_free(&info));
    MPI_Win win;
    MPI_OK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(MPI_Win_f2c(MPI_Win_c2f(win)) == win, "win round trip");
    MPI_OK(MPI_Win_free(&win));
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC, "message");

    /* A request converted while in flight completes through the converted handle. */
    int in = -1, out = 1000 + rank, peer = rank ^ 1;
    MPI_Request req;
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &req));
    MPI_Fint freq = MPI_Request_c2f(req);
    MPI_OK(MPI_Send(&out, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
    MPI_Request back = MPI_Request_f2c(freq);
    CHECK(back == req, "request round trip");
    MPI_Status st;
    MPI_OK(MPI_Wait(&back, &st));
    CHECK(in == 1000 + peer, "received %d through the converted request", in);

    /* Status: MPI_F_STATUS_SIZE integers holding the same status. */
    MPI_Fint fst[MPI_F_STATUS_SIZE];
    MPI_Status st2;
    MPI_OK(MPI_Status_c2f(&st, fst));
    MPI_OK(MPI_Status_f2c(fst, &st2));
    int count = -1;
    MPI_OK(MPI_Get_count(&st2, MPI_INT, &count));
    CHECK(st2.MPI_SOURCE == peer && st2.MPI_TAG == 5 && count == 1, "status round trip: source %d tag %d count %d",
          st2.MPI_SOURCE, st2.MPI_TAG, count);
    CHECK(cls(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &st2)) == MPI_ERR_ARG, "MPI_F_STATUS_IGNORE accepted");
    CHECK(cls(MPI_Status_c2f(MPI_STATUS_IGNORE, fst)) == MPI_ERR_ARG, "MPI_STATUS_IGNORE accepted");
    /* Fortran 2008's status (MPI 4.0): C -> f08 -> Fortran -> f08 -> C. */
    MPI_F08_status f08, f08b;
    MPI_Fint fst2[MPI_F_STATUS_SIZE];
    MPI_OK(MPI_Status_c2f08(&st, &f08));
    CHECK(f08.MPI_SOURCE == peer && f08.MPI_TAG == 5 && f08.MPI_ERROR == st.MPI_ERROR, "c2f08: source %d tag %d",
          (int)f08.MPI_SOURCE, (int)f08.MPI_TAG);
    MPI_OK(MPI_Status_f082f(&f08, fst2));
    MPI_OK(MPI_Status_f2f08(fst2, &f08b));
    MPI_Status st3;
    MPI_OK(MPI_Status_f082c(&f08b, &st3));
    count = -1;
    MPI_OK(MPI_Get_count(&st3, MPI_INT, &count));
    CHECK(st3.MPI_SOURCE == peer && st3.MPI_TAG == 5 && count == 1, "f08 round trip: source %d tag %d count %d",
          st3.MPI_SOURCE, st3.MPI_TAG, count);
    CHECK(cls(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &st3)) == MPI_ERR_ARG, "MPI_F08_STATUS_IGNORE accepted");
    CHECK(cls(MPI_Status_c2f08(&st, NULL)) == MPI_ERR_ARG, "a null f08_status accepted");
    /* MPI 1's MPI_DUP_FN copies the attribute as MPI_COMM_DUP_FN does. */
    int key = MPI_KEYVAL_INVALID, val = 7, *got = NULL, flag = 0;
    MPI_OK(MPI_Comm_create_keyval(MPI_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &val));
    MPI_Comm copy;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &copy));
    MPI_OK(MPI_Comm_get_attr(copy, key, &got, &flag));
    CHECK(flag && got == &val, "MPI_DUP_FN: flag %d", flag);
    MPI_OK(MPI_Comm_free(&copy));
    MPI_OK(MPI_Comm_free_keyval(&key));
}

/* ---- generalized requests ---- */
struct greq {
    int queries, frees, cancels, cancel_complete;
    int query_rc;
    MPI_Request req;
};
static int greq_query(void *extra, MPI_Status *status) {
    struct greq *g = extra;
    ++g->queries;
    MPI_Status_set_elements(status, MPI_INT, 3);
    MPI_Status_set_cancelled(status, g->cancels > 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return g->query_rc;
}
static int greq_free(void *extra) {
    ++((struct greq *)extra)->frees;
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra, int complete) {
    struct greq *g = extra;
    ++g->cancels;
    g->cancel_complete = complete;
    if (!complete) MPI_Grequest_complete(g->req); /* cancelling finishes the operation */
    return MPI_SUCCESS;
}
static void *complete_later(void *arg) {
    struct greq *g = arg;
    /* The main thread is waiting: its MPI_Wait returned not before this. */
    MPI_Grequest_complete(g->req);
    return NULL;
}

static void generalized(int rank) {
    /* Completed before the wait: Wait runs query then free. */
    struct greq g = {0};
    MPI_OK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, &g.req));
    MPI_Request req = g.req;
    int flag = 1;
    MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0 && req == g.req && g.queries == 0, "Test of an incomplete generalized request");
    MPI_OK(MPI_Grequest_complete(g.req));
    MPI_Status st;
    MPI_OK(MPI_Request_get_status(req, &flag, &st));
    CHECK(flag == 1 && g.queries == 1 && g.frees == 0, "get_status: flag %d queries %d", flag, g.queries);
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL && g.queries == 2 && g.frees == 1, "Wait: queries %d frees %d", g.queries, g.frees);
    int count = -1, cancelled = 1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(count == 3 && cancelled == 0, "status from the query callback: count %d cancelled %d", count, cancelled);

    /* Completed by another thread while this one waits, among other requests. */
    struct greq t = {0};
    MPI_OK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &t, &t.req));
    int in = -1, out = rank, peer = rank ^ 1;
    MPI_Request reqs[2] = {t.req, MPI_REQUEST_NULL};
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Send(&out, 1, MPI_INT, peer, 9, MPI_COMM_WORLD));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, complete_later, &t) == 0, "pthread_create");
    MPI_Status sts[2];
    MPI_OK(MPI_Waitall(2, reqs, sts));
    pthread_join(th, NULL);
    CHECK(t.queries == 1 && t.frees == 1 && in == peer, "Waitall: queries %d frees %d in %d", t.queries, t.frees, in);
    MPI_OK(MPI_Get_count(&sts[0], MPI_INT, &count));
    CHECK(count == 3, "Waitall status of the generalized request: count %d", count);

    /* Freed before completion: free_fn runs at completion, query never. */
    struct greq f = {0};
    MPI_OK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &f, &f.req));
    req = f.req;
    MPI_OK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL && f.frees == 0, "Request_free ran free_fn before completion");
    MPI_OK(MPI_Grequest_complete(f.req));
    CHECK(f.frees == 1 && f.queries == 0, "completion after free: frees %d queries %d", f.frees, f.queries);

    /* Cancel: the callback learns the request is not complete; the status says cancelled. */
    struct greq c = {0};
    MPI_OK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &c, &c.req));
    req = c.req;
    MPI_OK(MPI_Cancel(&req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(c.cancels == 1 && c.cancel_complete == 0 && cancelled == 1 && c.frees == 1,
          "cancel: cancels %d complete %d cancelled %d", c.cancels, c.cancel_complete, cancelled);

    /* A failing query callback: Wait returns its code. */
    struct greq e = {0};
    e.query_rc = MPI_ERR_OTHER;
    MPI_OK(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &e, &e.req));
    MPI_OK(MPI_Grequest_complete(e.req));
    req = e.req;
    int rc = MPI_Wait(&req, &st);
    CHECK(cls(rc) == MPI_ERR_OTHER && e.frees == 1, "failing query: Wait returned %d, frees %d", rc, e.frees);
    /* Grequest_complete of a request that is not generalized. */
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &req));
    int cls = -1;
    MPI_Error_class(MPI_Grequest_complete(req), &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Grequest_complete of an Irecv: class %d", cls);
    MPI_OK(MPI_Cancel(&req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    CHECK(size % 2 == 0, "needs an even number of ranks, got %d", size);
    /* The error checks below expect codes back (MPI_OK checks every other call). */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    type_attributes();
    window_attributes();
    conversions(rank);
    generalized(rank);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("handles: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
