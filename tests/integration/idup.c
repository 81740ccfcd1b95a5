/*
 * MPI_Comm_idup, truly nonblocking, many in flight (the scenarios of MPICH's
 * comm_idup*.c tests): several idups of one parent completed by Waitall in
 * any order; overlapping idups of pair communicators in a ring (deadlock if
 * idup blocked); idup overlapped with Iallreduce/Ibarrier on the parent and
 * with blocking creations (dup, split, create, create_group,
 * intercomm_create/merge); idup of a communicator being duped; idup of
 * inter-communicators; MPI_Comm_idup_with_info's hints. Every new
 * communicator is checked with traffic.
 */
#include "testlib.h"

#define N 10
#define STEP(s)                                                              \
    do {                                                                     \
        if (getenv("IDUP_TRACE")) fprintf(stderr, "rank %d: %s\n", rank, s); \
    } while (0)

static int rank, size;

/* The communicator works: an allreduce and a ring exchange on it. */
static void check_comm(MPI_Comm c, const char *what) {
    int inter = 0, n, me, sum = 0, one = 1;
    MPI_OK(MPI_Comm_test_inter(c, &inter));
    MPI_OK(MPI_Comm_rank(c, &me));
    if (inter) {
        MPI_OK(MPI_Comm_remote_size(c, &n));
        MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == n, "%s: inter allreduce %d, remote size %d", what, sum, n);
        if (me == 0) { /* the two leaders swap */
            int got = -1;
            MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, c, MPI_STATUS_IGNORE));
            CHECK(got >= 0, "%s: leader swap", what);
        }
        return;
    }
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n, "%s: allreduce %d of %d", what, sum, n);
    int got = -1;
    MPI_OK(MPI_Sendrecv(&me, 1, MPI_INT, (me + 1) % n, 7, &got, 1, MPI_INT, (me + n - 1) % n, 7, c, MPI_STATUS_IGNORE));
    CHECK(got == (me + n - 1) % n, "%s: ring got %d", what, got);
}

static void idup_many(void) {
    MPI_Comm comms[N];
    MPI_Request reqs[2 * N];
    /* 1. Many idups of one parent, completed in reverse order one by one,
          then many completed by one Waitall. */
    for (int i = 0; i < N; ++i) MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &comms[i], &reqs[i]));
    for (int i = N - 1; i >= 0; --i) MPI_OK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) check_comm(comms[i], "idup of world (reverse waits)");
    for (int i = 0; i < N; ++i) MPI_OK(MPI_Comm_free(&comms[i]));
    for (int i = 0; i < N; ++i) MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &comms[i], &reqs[i]));
    MPI_OK(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; ++i) check_comm(comms[i], "idup of world (waitall)");
    for (int i = 0; i < N; ++i) MPI_OK(MPI_Comm_free(&comms[i]));
}

static void idup_pairs(void) {
    MPI_Request reqs[2];
    /* 2. Overlapping idups of pair communicators around a ring: with a
          blocking dup, rank i would wait in {i,i+1} while i+1 waits in {i+1,i+2}. */
    MPI_Comm primary[2] = {MPI_COMM_NULL, MPI_COMM_NULL}, secondary[2] = {MPI_COMM_NULL, MPI_COMM_NULL}, tmp;
    for (int i = 0; i < size; ++i) {
        if (rank == i) MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &primary[0]));
        else if (rank == (i + 1) % size) MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &secondary[0]));
        else {
            MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 1, 0, &tmp));
            MPI_OK(MPI_Comm_free(&tmp));
        }
    }
    if (size > 2) {
        MPI_OK(MPI_Comm_idup(primary[0], &primary[1], &reqs[0]));
        MPI_OK(MPI_Comm_idup(secondary[0], &secondary[1], &reqs[1]));
        MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        /* Even ranks use their primary pair first, odd ones their secondary:
           every pair's two members meet in the same order. */
        for (int k = 0; k < 2; ++k)
            check_comm((k == 0) == (rank % 2 == 0) ? primary[1] : secondary[1], "idup of a pair");
        for (int i = 0; i < 2; ++i) {
            MPI_OK(MPI_Comm_free(&primary[i]));
            MPI_OK(MPI_Comm_free(&secondary[i]));
        }
    } else {
        MPI_OK(MPI_Comm_free(&primary[0]));
        MPI_OK(MPI_Comm_free(&secondary[0]));
    }
}

static void idup_overlapping(void) {
    MPI_Comm comms[N];
    MPI_Request reqs[2 * N];
    /* 3. Idup overlapped with Iallreduce and Ibarrier on the same parent,
          in either order at different ranks on different communicators. */
    int in = 1, out[N];
    for (int i = 0; i < N; ++i) {
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &comms[i], &reqs[i]));
        MPI_OK(MPI_Iallreduce(&in, &out[i], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[N + i]));
    }
    MPI_OK(MPI_Waitall(2 * N, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; ++i) CHECK(out[i] == size, "iallreduce %d gave %d", i, out[i]);
    for (int i = 0; i < N; ++i) MPI_OK(MPI_Comm_free(&comms[i]));
    MPI_Comm dup, newc;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (rank == 0) {
        MPI_OK(MPI_Iallreduce(&in, &out[0], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]));
        MPI_OK(MPI_Ibarrier(dup, &reqs[2]));
        MPI_OK(MPI_Comm_idup(dup, &newc, &reqs[1]));
    } else {
        MPI_OK(MPI_Ibarrier(dup, &reqs[2]));
        MPI_OK(MPI_Comm_idup(dup, &newc, &reqs[1]));
        MPI_OK(MPI_Iallreduce(&in, &out[0], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]));
    }
    MPI_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    CHECK(out[0] == size, "iallreduce gave %d", out[0]);
    check_comm(newc, "idup overlapping iallreduce");

    STEP("section 4");
    /* 4. Idup of a communicator that is itself being duped (its idup not
          yet complete when the next starts): a chain. */
    MPI_Comm chain[3];
    MPI_OK(MPI_Comm_idup(newc, &chain[0], &reqs[0]));
    MPI_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_idup(chain[0], &chain[1], &reqs[0]));
    MPI_OK(MPI_Comm_idup(newc, &chain[2], &reqs[1]));
    MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; ++i) check_comm(chain[i], "idup chain");
    for (int i = 0; i < 3; ++i) MPI_OK(MPI_Comm_free(&chain[i]));
    MPI_OK(MPI_Comm_free(&newc));
    MPI_OK(MPI_Comm_free(&dup));
}

/* local and inter: made here, used by idup_inter. */
static void idup_pending(MPI_Comm *local, MPI_Comm *inter) {
    MPI_Comm comms[N];
    MPI_Request reqs[2 * N];
    /* 5. Idups pending while blocking creations run on the same parent. */
    for (int i = 0; i < 5; ++i) MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &comms[i], &reqs[i]));
    MPI_Comm out_comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &out_comm));
    check_comm(out_comm, "dup with idups pending");
    MPI_OK(MPI_Comm_free(&out_comm));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &out_comm));
    check_comm(out_comm, "split with idups pending");
    MPI_OK(MPI_Comm_free(&out_comm));
    MPI_Group wg, half;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int range[1][3] = {{size / 2, size - 1, 1}};
    MPI_OK(MPI_Group_range_incl(wg, 1, range, &half));
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, half, &out_comm));
    if (rank >= size / 2) {
        check_comm(out_comm, "create with idups pending");
        MPI_OK(MPI_Comm_free(&out_comm));
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, half, 3, &out_comm));
        check_comm(out_comm, "create_group with idups pending");
        MPI_OK(MPI_Comm_free(&out_comm));
    }
    MPI_OK(MPI_Group_free(&half));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, local));
    MPI_OK(MPI_Intercomm_create(*local, 0, MPI_COMM_WORLD, rank < size / 2 ? size / 2 : 0, 99, inter));
    MPI_OK(MPI_Intercomm_merge(*inter, rank < size / 2, &out_comm));
    check_comm(*inter, "intercomm with idups pending");
    check_comm(out_comm, "merge with idups pending");
    MPI_OK(MPI_Comm_free(&out_comm));
    MPI_OK(MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 5; ++i) check_comm(comms[i], "idup pending across blocking creations");
    for (int i = 0; i < 5; ++i) MPI_OK(MPI_Comm_free(&comms[i]));
}

static void idup_inter(MPI_Comm inter) {
    MPI_Request reqs[5];
    /* 6. Idups of an inter-communicator, several in flight, overlapping an
          Iallreduce on it; then the duplicates are used. */
    MPI_Comm idups[4];
    for (int i = 0; i < 3; ++i) MPI_OK(MPI_Comm_idup(inter, &idups[i], &reqs[i]));
    int rsize, got = -1;
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    /* A message on the inter-communicator in flight meanwhile. */
    int lrank;
    MPI_OK(MPI_Comm_rank(inter, &lrank));
    const int partner = lrank == 0 ? 0 : MPI_PROC_NULL; /* the two leaders */
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, partner, 9, inter, &reqs[3]));
    MPI_OK(MPI_Isend(&rank, 1, MPI_INT, partner, 9, inter, &reqs[4]));
    MPI_OK(MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE));
    CHECK(lrank != 0 || got >= 0, "inter message gave %d", got);
    for (int i = 0; i < 3; ++i) {
        int flag = 0;
        MPI_OK(MPI_Comm_test_inter(idups[i], &flag));
        CHECK(flag, "idup of an inter-communicator is not one");
        check_comm(idups[i], "idup of an inter-communicator");
    }
    MPI_OK(MPI_Comm_idup(idups[0], &idups[3], &reqs[0])); /* and of a duplicate */
    MPI_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    check_comm(idups[3], "idup of an idup'd inter-communicator");
    for (int i = 0; i < 4; ++i) MPI_OK(MPI_Comm_free(&idups[i]));
}

/* MPI_Comm_idup_with_info: the new communicator takes info's hints (the
   ones communicators know), not the parent's, and works. */
static void idup_with_info(void) {
    MPI_Info info, used;
    MPI_Comm c[2];
    MPI_Request reqs[3];
    int nkeys = -1, flag = 0;
    char value[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Info_set(info, "no_such_hint", "x"));
    MPI_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c[0], &reqs[0]));
    MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c[1], &reqs[2]));
    MPI_OK(MPI_Info_free(&info)); /* the call took what it needs */
    MPI_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Comm_get_info(c[0], &used));
    MPI_OK(MPI_Info_get_nkeys(used, &nkeys));
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(nkeys == 1 && flag && strcmp(value, "true") == 0, "idup_with_info's hints: %d keys, flag %d", nkeys, flag);
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Comm_get_info(c[1], &used));
    MPI_OK(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys == 0, "idup_with_info(MPI_INFO_NULL): %d keys", nkeys);
    MPI_OK(MPI_Info_free(&used));
    for (int i = 0; i < 2; ++i) {
        check_comm(c[i], "idup_with_info of world");
        MPI_OK(MPI_Comm_free(&c[i]));
    }
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    idup_many();

    STEP("section 2");
    idup_pairs();

    STEP("section 3");
    idup_overlapping();

    STEP("section 5");
    MPI_Comm local, inter;
    idup_pending(&local, &inter);

    STEP("section 6");
    idup_inter(inter);
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&local));

    STEP("section 7");
    idup_with_info();

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("idup: OK\n");
    MPI_Finalize();
    return 0;
}
