/*
 * Communicators, groups and attributes: dup, split (with keys and
 * MPI_UNDEFINED), split_type, create, create_group, free, compare; group
 * algebra and rank translation; keyvals with copy and delete callbacks.
 * Traffic on each new communicator must stay on it.
 */
#include "testlib.h"

static int rank, size;
static int deletes;

static int count_delete(MPI_Comm c, int k, void *v, void *extra) {
    (void)c;
    (void)k;
    (void)v;
    (*(int *)extra)++;
    return MPI_SUCCESS;
}

/* A ring exchange on `c` that checks every neighbour's job rank. */
static void ring_check(MPI_Comm c, const char *what) {
    int r, n;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_size(c, &n));
    int right = (r + 1) % n, left = (r + n - 1) % n;
    int out = rank, in = -1;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, c, MPI_STATUS_IGNORE));
    MPI_Group cg, wg;
    MPI_OK(MPI_Comm_group(c, &cg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int wleft = -1;
    MPI_OK(MPI_Group_translate_ranks(cg, 1, &left, wg, &wleft));
    CHECK(in == wleft, "%s: got %d from the left, expected world rank %d", what, in, wleft);
    MPI_OK(MPI_Group_free(&cg));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Barrier(c));
}

static void test_dup(void) {
    MPI_Comm d;
    int keyval, cmp;
    int value = 42, *got = NULL, flag = 0;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &keyval, &deletes));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &value));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "dup compares %d, expected MPI_CONGRUENT", cmp);
    MPI_OK(MPI_Comm_compare(d, d, &cmp));
    CHECK(cmp == MPI_IDENT, "self compare %d", cmp);
    MPI_OK(MPI_Comm_get_attr(d, keyval, &got, &flag));
    CHECK(flag && got == &value, "attribute not copied by MPI_COMM_DUP_FN");

    /* A message on d is not received by a receive on MPI_COMM_WORLD. */
    if (size > 1) {
        int v = -1, f = 0;
        if (rank == 0) {
            int one = 1, two = 2;
            MPI_OK(MPI_Send(&one, 1, MPI_INT, 1, 9, d));
            MPI_OK(MPI_Send(&two, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        } else if (rank == 1) {
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == 2, "world receive got %d (message of the dup leaked into world)", v);
            MPI_OK(MPI_Iprobe(0, 9, d, &f, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 9, d, MPI_STATUS_IGNORE));
            CHECK(v == 1, "dup receive got %d", v);
        }
    }
    ring_check(d, "dup");
    int before = deletes;
    MPI_OK(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL, "Comm_free did not reset the handle");
    CHECK(deletes == before + 1, "delete callback ran %d times on free", deletes - before);
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval));
    CHECK(deletes == before + 2, "delete callback not run by MPI_Comm_delete_attr");
    MPI_OK(MPI_Comm_free_keyval(&keyval));
    CHECK(keyval == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
}

static void test_split(void) {
    MPI_Comm s;
    const int color = rank % 2, key = size - rank; /* reversed order within a color */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, key, &s));
    int sr, sn;
    MPI_OK(MPI_Comm_rank(s, &sr));
    MPI_OK(MPI_Comm_size(s, &sn));
    int expect_n = (size + (color == 0)) / 2;
    CHECK(sn == expect_n, "split color %d has %d ranks, expected %d", color, sn, expect_n);
    /* Higher world rank -> lower key -> lower new rank. */
    int expect_r = 0;
    for (int r = rank + 2; r < size; r += 2) expect_r++;
    CHECK(sr == expect_r, "split rank %d, expected %d", sr, expect_r);
    ring_check(s, "split");

    /* Split of a split. */
    MPI_Comm s2;
    MPI_OK(MPI_Comm_split(s, sr < 2 ? 0 : 1, sr, &s2));
    ring_check(s2, "split of split");
    MPI_OK(MPI_Comm_free(&s2));
    MPI_OK(MPI_Comm_free(&s));

    /* MPI_UNDEFINED gives MPI_COMM_NULL. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &s));
    if (rank == 0) {
        CHECK(s == MPI_COMM_NULL, "MPI_UNDEFINED color did not give MPI_COMM_NULL");
    } else {
        MPI_OK(MPI_Comm_size(s, &sn));
        CHECK(sn == size - 1, "split without rank 0 has %d ranks", sn);
        ring_check(s, "split without 0");
        MPI_OK(MPI_Comm_free(&s));
    }

    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Comm_size(s, &sn));
    CHECK(sn == size, "split_type SHARED has %d ranks on one node, expected %d", sn, size);
    MPI_OK(MPI_Comm_free(&s));
}

static void test_create(void) {
    MPI_Group world, evens, firsthalf;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int range[1][3] = {{0, size - 1, 2}};
    MPI_OK(MPI_Group_range_incl(world, 1, range, &evens));
    int gs;
    MPI_OK(MPI_Group_size(evens, &gs));
    CHECK(gs == (size + 1) / 2, "range_incl size %d", gs);
    MPI_Comm c;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
    if (rank % 2 == 0) {
        CHECK(c != MPI_COMM_NULL, "member got MPI_COMM_NULL from Comm_create");
        ring_check(c, "create");
        MPI_OK(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL, "non-member got a communicator from Comm_create");
    }

    int half = (size + 1) / 2;
    int *ranks = malloc(sizeof(int) * (size_t)half);
    for (int i = 0; i < half; ++i) ranks[i] = i;
    MPI_OK(MPI_Group_incl(world, half, ranks, &firsthalf));
    if (rank < half) {
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, firsthalf, 77, &c));
        ring_check(c, "create_group");
        MPI_OK(MPI_Comm_free(&c));
    }
    free(ranks);

    /* Group algebra. */
    MPI_Group u, x, d, odds;
    MPI_OK(MPI_Group_difference(world, evens, &odds));
    MPI_OK(MPI_Group_union(evens, odds, &u));
    int cmp;
    MPI_OK(MPI_Group_compare(u, world, &cmp));
    CHECK(size < 3 ? (cmp == MPI_IDENT || cmp == MPI_SIMILAR) : cmp == MPI_SIMILAR,
          "union of evens and odds compares %d", cmp);
    MPI_OK(MPI_Group_intersection(evens, odds, &x));
    CHECK(x == MPI_GROUP_EMPTY, "evens and odds intersect");
    MPI_OK(MPI_Group_intersection(world, firsthalf, &d));
    MPI_OK(MPI_Group_compare(d, firsthalf, &cmp));
    CHECK(cmp == MPI_IDENT, "world & firsthalf compares %d", cmp);
    int gr;
    MPI_OK(MPI_Group_rank(evens, &gr));
    CHECK(rank % 2 ? gr == MPI_UNDEFINED : gr == rank / 2, "Group_rank %d for world rank %d", gr, rank);
    int excl[1] = {0};
    MPI_Group noroot;
    MPI_OK(MPI_Group_excl(world, 1, excl, &noroot));
    MPI_OK(MPI_Group_size(noroot, &gs));
    CHECK(gs == size - 1, "excl size %d", gs);
    MPI_Group groups[] = {u, x, d, odds, noroot, evens, firsthalf, world};
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; ++i) MPI_OK(MPI_Group_free(&groups[i]));
}

static void test_errors(void) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, flag;
    void *v;
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Error_class(MPI_Comm_free(&c), &cls);
    CHECK(cls == MPI_ERR_COMM, "freeing MPI_COMM_WORLD gave class %d", cls);
    MPI_Error_class(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &v, &flag), &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "bad keyval gave class %d", cls);
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Error_class(MPI_Comm_create(MPI_COMM_WORLD, g, &c), &cls);
    CHECK(cls == MPI_ERR_GROUP, "MPI_GROUP_NULL gave class %d", cls);
    int bad[1] = {size};
    MPI_Group world, out;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Error_class(MPI_Group_incl(world, 1, bad, &out), &cls);
    CHECK(cls == MPI_ERR_RANK, "out-of-range rank in Group_incl gave class %d", cls);
    MPI_Group_free(&world);
    /* A dup inherits the error handler. */
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int dummy = 0;
    MPI_Error_class(MPI_Send(&dummy, 1, MPI_INT, size + 5, 0, d), &cls);
    CHECK(cls == MPI_ERR_RANK, "dup did not inherit MPI_ERRORS_RETURN (class %d)", cls);
    MPI_OK(MPI_Comm_free(&d));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_dup();
    test_split();
    test_create();
    test_errors();
    /* Context ids come back: many dup/free rounds never run out. */
    for (int i = 0; i < 5000; ++i) {
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_OK(MPI_Comm_free(&d));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("comms: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
