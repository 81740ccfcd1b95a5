/*
 * Inter-communicators: two halves of MPI_COMM_WORLD joined by
 * MPI_Intercomm_create; sizes and remote group; point-to-point across (named
 * and MPI_ANY_SOURCE); Comm_dup of an inter-communicator; Intercomm_merge with
 * and without `high`; free. Needs at least 2 ranks.
 */
#include "testlib.h"

static int rank, size;

static void ring(MPI_Comm c) {
    int r, n, in = -1;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 1, &in, 1, MPI_INT, (r + n - 1) % n, 1, c, MPI_STATUS_IGNORE));
    CHECK(in == (r + n - 1) % n, "merged ring: got %d", in);
}

/* Every process sends its world rank to every remote process; each receives
   from every remote process with MPI_ANY_SOURCE and checks the source. */
static void all_to_remote(MPI_Comm inter, int tag) {
    int lsize, rsize, lrank;
    MPI_OK(MPI_Comm_size(inter, &lsize));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    MPI_OK(MPI_Comm_rank(inter, &lrank));
    MPI_Group rg, wg;
    MPI_OK(MPI_Comm_remote_group(inter, &rg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)rsize);
    for (int j = 0; j < rsize; ++j) MPI_OK(MPI_Isend(&rank, 1, MPI_INT, j, tag, inter, &req[j]));
    for (int j = 0; j < rsize; ++j) {
        int v = -1, w = -1;
        MPI_Status st;
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, inter, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "source %d outside the remote group", st.MPI_SOURCE);
        MPI_OK(MPI_Group_translate_ranks(rg, 1, &st.MPI_SOURCE, wg, &w));
        CHECK(v == w, "message from remote rank %d carries world rank %d, expected %d", st.MPI_SOURCE, v, w);
    }
    MPI_OK(MPI_Waitall(rsize, req, MPI_STATUSES_IGNORE));
    free(req);
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&wg));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    const int half = size / 2;
    const int side = rank < half ? 0 : 1;
    MPI_Comm local, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, side == 0 ? half : 0, 12, &inter));

    int flag, lsize, rsize, lrank;
    MPI_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "Comm_test_inter says intra");
    MPI_OK(MPI_Comm_size(inter, &lsize));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    MPI_OK(MPI_Comm_rank(inter, &lrank));
    CHECK(lsize == (side == 0 ? half : size - half), "local size %d", lsize);
    CHECK(rsize == size - lsize, "remote size %d", rsize);
    CHECK(lrank == (side == 0 ? rank : rank - half), "local rank %d", lrank);

    all_to_remote(inter, 5);

    /* Collectives across the two groups. */
    MPI_OK(MPI_Barrier(inter));
    {
        int v[3] = {-1, -1, -1};
        if (side == 0 && lrank == 0) {
            v[0] = 7;
            v[1] = 8;
            v[2] = 9;
        }
        int root = side == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        MPI_OK(MPI_Bcast(v, 3, MPI_INT, root, inter));
        if (side == 1) CHECK(v[0] == 7 && v[1] == 8 && v[2] == 9, "inter bcast got %d %d %d", v[0], v[1], v[2]);
        /* Group 1 reduces its world ranks to group 0's rank 0. */
        int sum = -1, mine = rank;
        root = side == 1 ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL);
        MPI_OK(MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, root, inter));
        int expect1 = 0, expect0 = 0;
        for (int r = 0; r < size; ++r) {
            if (r < half) expect0 += r;
            else expect1 += r;
        }
        if (side == 0 && lrank == 0) CHECK(sum == expect1, "inter reduce %d, expected %d", sum, expect1);
        /* Allreduce: each side gets the OTHER side's sum. */
        MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
        CHECK(sum == (side == 0 ? expect1 : expect0), "inter allreduce %d", sum);
    }

    MPI_Comm inter2;
    MPI_OK(MPI_Comm_dup(inter, &inter2));
    MPI_OK(MPI_Comm_test_inter(inter2, &flag));
    CHECK(flag, "dup of an inter-communicator is intra");
    all_to_remote(inter2, 6);

    /* high: side 1 first. */
    MPI_Comm merged;
    MPI_OK(MPI_Intercomm_merge(inter, side == 0 ? 1 : 0, &merged));
    int mr, mn;
    MPI_OK(MPI_Comm_rank(merged, &mr));
    MPI_OK(MPI_Comm_size(merged, &mn));
    CHECK(mn == size, "merged size %d", mn);
    int expect = side == 1 ? rank - half : (size - half) + rank;
    CHECK(mr == expect, "merged rank %d, expected %d", mr, expect);
    ring(merged);
    MPI_OK(MPI_Comm_free(&merged));

    /* Same `high` on both sides: some consistent order. */
    MPI_OK(MPI_Intercomm_merge(inter2, 0, &merged));
    MPI_OK(MPI_Comm_size(merged, &mn));
    CHECK(mn == size, "merged size %d", mn);
    ring(merged);
    MPI_OK(MPI_Barrier(merged));
    MPI_OK(MPI_Comm_free(&merged));

    MPI_OK(MPI_Comm_free(&inter2));
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&local));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("intercomm: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
