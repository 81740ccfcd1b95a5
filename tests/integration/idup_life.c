/*
 * MPI_Comm_idup and the lifetime of what it touches.
 *  copy:   the attribute copy callbacks run at the call, on the values the
 *          parent has then (MPI-3.1 §6.4.2: as if MPI_Comm_dup ran at the
 *          call); a value set on the parent after the call is not copied.
 *  fail:   a copy callback that fails (at every rank): the idup's request
 *          completes with its error and no communicator; the attribute
 *          copied before it is deleted again.
 *  free:   the parent freed right after the call, with idups, an Iallreduce
 *          and an Ibarrier pending on it (MPI-3.1 §6.4.3: they complete
 *          normally); the duplicates work and carry the copied attribute.
 *  nbc:    the same with collectives only (nonblocking ones of several
 *          rounds, whose later receives are posted after the free).
 *  inter:  the same with an inter-communicator parent (and its local
 *          communicator) freed at once.
 *  stress: rounds of idups overlapping large Iallreduces on the parent, so
 *          that the later steps of the idups run from completions while
 *          the transport has sends backlogged (before progress() refused
 *          to nest, a SIGSEGV in the shm transport in 8 runs of 8 at 5
 *          ranks).
 * An argument names one section to run alone.
 */
#include "testlib.h"

static int rank, size;
static int copies, deletes, fail_copies;
static MPI_Comm copied_from;

static int count_copy(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)key, (void)extra;
    ++copies;
    copied_from = old;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm c, int key, void *value, void *extra) {
    (void)c, (void)key, (void)value, (void)extra;
    ++deletes;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old, (void)key, (void)extra, (void)in, (void)out;
    ++fail_copies;
    *flag = 0;
    return MPI_ERR_OTHER;
}

/* The communicator works: an allreduce (over the remote group for an
   inter-communicator) and, intra, a ring exchange. */
static void check_comm(MPI_Comm c, const char *what) {
    int inter = 0, n, me, sum = 0, one = 1;
    MPI_OK(MPI_Comm_test_inter(c, &inter));
    MPI_OK(MPI_Comm_rank(c, &me));
    if (inter) MPI_OK(MPI_Comm_remote_size(c, &n));
    else MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n, "%s: allreduce %d of %d", what, sum, n);
    if (inter) return;
    int got = -1;
    MPI_OK(MPI_Sendrecv(&me, 1, MPI_INT, (me + 1) % n, 7, &got, 1, MPI_INT, (me + n - 1) % n, 7, c, MPI_STATUS_IGNORE));
    CHECK(got == (me + n - 1) % n, "%s: ring got %d", what, got);
}

static void *attr_of(MPI_Comm c, int key) {
    void *v = NULL;
    int flag = 0;
    MPI_OK(MPI_Comm_get_attr(c, key, &v, &flag));
    return flag ? v : NULL;
}

static const char *only; /* argv[1]: run that section alone */
static int section(const char *name) {
    if (only != NULL && strcmp(only, name) != 0) return 0;
    copies = deletes = fail_copies = 0;
    return 1;
}

static int v1, v2; /* attribute values */

static void section_copy(int key) {
    MPI_Comm parent, c[2];
    MPI_Request reqs[4];
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    MPI_OK(MPI_Comm_set_attr(parent, key, &v1));
    MPI_OK(MPI_Comm_idup(parent, &c[0], &reqs[0]));
    CHECK(copies == 1 && copied_from == parent, "copy callbacks at the call: %d", copies);
    MPI_OK(MPI_Comm_set_attr(parent, key, &v2)); /* after the call: not the duplicate's */
    CHECK(deletes == 1, "replacing the parent's value: %d deletes", deletes);
    MPI_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    CHECK(copies == 1, "copy callbacks ran again at completion: %d", copies);
    CHECK(attr_of(c[0], key) == &v1, "the duplicate has %p, not the value at the call", attr_of(c[0], key));
    check_comm(c[0], "copy");
    MPI_OK(MPI_Comm_free(&c[0]));
    CHECK(deletes == 2, "freeing the duplicate: %d deletes", deletes);
    MPI_OK(MPI_Comm_free(&parent));
}

static void section_fail(int key, int bad_key) {
    MPI_Comm parent, c[2];
    MPI_Request reqs[4];
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    MPI_OK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_attr(parent, key, &v2));
    MPI_OK(MPI_Comm_set_attr(parent, bad_key, &v1)); /* after `key`: copied second */
    MPI_OK(MPI_Comm_idup(parent, &c[0], &reqs[0]));
    CHECK(copies == 1 && fail_copies == 1, "copy callbacks at the call: %d, %d", copies, fail_copies);
    const int rc = MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    CHECK(tl_class_of(rc) == MPI_ERR_OTHER, "idup with a failing copy callback: class %d", tl_class_of(rc));
    CHECK(c[0] == MPI_COMM_NULL, "a failed idup left a communicator");
    CHECK(deletes == 1, "the attribute copied before the failure: %d deletes", deletes);
    MPI_OK(MPI_Comm_delete_attr(parent, bad_key));
    check_comm(parent, "parent after a failed idup");
    MPI_OK(MPI_Comm_free(&parent));
}

static void section_free(int key) {
    MPI_Comm parent, c[2];
    MPI_Request reqs[4];
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    MPI_OK(MPI_Comm_set_attr(parent, key, &v2));
    int in = rank + 1, out = 0, want = size * (size + 1) / 2;
    MPI_OK(MPI_Comm_idup(parent, &c[0], &reqs[0]));
    MPI_OK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, parent, &reqs[1]));
    MPI_OK(MPI_Comm_idup(parent, &c[1], &reqs[2]));
    MPI_OK(MPI_Ibarrier(parent, &reqs[3]));
    MPI_OK(MPI_Comm_free(&parent));
    CHECK(copies == 2 && deletes == 1, "freeing the parent: %d copies, %d deletes", copies, deletes);
    MPI_OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    CHECK(out == want, "iallreduce on the freed parent gave %d, not %d", out, want);
    for (int i = 0; i < 2; ++i) {
        CHECK(attr_of(c[i], key) == &v2, "idup %d of the freed parent: attribute %p", i, attr_of(c[i], key));
        check_comm(c[i], "idup of a freed parent");
    }
    for (int i = 0; i < 2; ++i) MPI_OK(MPI_Comm_free(&c[i]));
    CHECK(deletes == 3, "freeing the duplicates: %d deletes", deletes);
}

/* nbc: the same without idups: collectives only, of several rounds */
static void section_nbc(void) {
    MPI_Comm parent;
    MPI_Request reqs[4];
    enum { N = 4096 };
    int *in = malloc(sizeof(int) * N), *out = malloc(sizeof(int) * N);
    CHECK(in && out, "out of memory");
    for (int i = 0; i < N; ++i) in[i] = rank + i;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    MPI_OK(MPI_Ibarrier(parent, &reqs[0]));
    MPI_OK(MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, parent, &reqs[1]));
    MPI_OK(MPI_Ibarrier(parent, &reqs[2]));
    MPI_OK(MPI_Comm_free(&parent));
    MPI_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; ++i)
        CHECK(out[i] == size * (size - 1) / 2 + size * i, "iallreduce[%d] on a freed communicator: %d", i, out[i]);
    free(in);
    free(out);
}

static void section_inter(int key) {
    MPI_Comm c[2];
    MPI_Request reqs[4];
    MPI_Comm local, inter;
    const int low = rank < size / 2;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 5, &inter));
    MPI_OK(MPI_Comm_set_attr(inter, key, &v1));
    MPI_OK(MPI_Comm_idup(inter, &c[0], &reqs[0]));
    MPI_OK(MPI_Comm_idup(inter, &c[1], &reqs[1]));
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&local));
    MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 2; ++i) {
        int flag = 0;
        MPI_OK(MPI_Comm_test_inter(c[i], &flag));
        CHECK(flag, "idup %d of a freed inter-communicator is not one", i);
        CHECK(attr_of(c[i], key) == &v1, "idup %d of a freed inter-communicator: attribute %p", i, attr_of(c[i], key));
        check_comm(c[i], "idup of a freed inter-communicator");
    }
    for (int i = 0; i < 2; ++i) MPI_OK(MPI_Comm_free(&c[i]));
    CHECK(copies == 2 && deletes == 3, "inter: %d copies, %d deletes", copies, deletes);
}

static void section_stress(void) {
    enum { ROUNDS = 32, IDUPS = 8, COUNT = 1 << 14 };
    int *buf_in = malloc(sizeof(int) * COUNT * IDUPS), *buf_out = malloc(sizeof(int) * COUNT * IDUPS);
    CHECK(buf_in && buf_out, "out of memory");
    for (int i = 0; i < COUNT * IDUPS; ++i) buf_in[i] = rank + i;
    MPI_Comm dups[IDUPS];
    MPI_Request many[2 * IDUPS];
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < IDUPS; ++i) {
            MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &dups[i], &many[2 * i]));
            MPI_OK(MPI_Iallreduce(buf_in + i * COUNT, buf_out + i * COUNT, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                  &many[2 * i + 1]));
        }
        MPI_OK(MPI_Waitall(2 * IDUPS, many, MPI_STATUSES_IGNORE));
        for (int i = 0; i < COUNT * IDUPS; i += 997)
            CHECK(buf_out[i] == size * (size - 1) / 2 + size * i, "round %d: iallreduce[%d] = %d", round, i,
                  buf_out[i]);
        for (int i = 0; i < IDUPS; ++i) MPI_OK(MPI_Comm_free(&dups[i]));
    }
    free(buf_in);
    free(buf_out);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    only = argc > 1 ? argv[1] : NULL;
    int key, bad_key;
    MPI_OK(MPI_Comm_create_keyval(count_copy, count_delete, &key, NULL));
    MPI_OK(MPI_Comm_create_keyval(failing_copy, count_delete, &bad_key, NULL));
    if (section("copy")) section_copy(key);
    if (section("fail")) section_fail(key, bad_key);
    if (section("free")) section_free(key);
    if (section("nbc")) section_nbc();
    if (section("inter")) section_inter(key);
    if (section("stress")) section_stress();

    MPI_OK(MPI_Comm_free_keyval(&key));
    MPI_OK(MPI_Comm_free_keyval(&bad_key));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("idup_life: OK\n");
    MPI_Finalize();
    return 0;
}
