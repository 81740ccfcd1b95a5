/* intercomm_coll: MPI_Comm_split, MPI_Comm_split_type and MPI_Comm_create on
   the inter-communicator (see intercomm_coll.c). */
#include "intercomm_coll.h"

/* A new inter-communicator `c` whose local group is local_w[0..nl) and remote
   group remote_w[0..nr) (world ranks, in rank order): checked through its
   groups and through an allgather on it. */
static void check_newinter(MPI_Comm c, const int *local_w, int nl, const int *remote_w, int nr, const char *what) {
    int flag = 0, n = 0, r = 0;
    MPI_OK(MPI_Comm_test_inter(c, &flag));
    CHECK(flag, "%s: not an inter-communicator", what);
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(n == nl, "%s: local size %d, expected %d", what, n, nl);
    MPI_OK(MPI_Comm_remote_size(c, &n));
    CHECK(n == nr, "%s: remote size %d, expected %d", what, n, nr);
    MPI_OK(MPI_Comm_rank(c, &r));
    CHECK(local_w[r] == world, "%s: local rank %d is world rank %d, not me (%d)", what, r, local_w[r], world);
    MPI_Group wg, lg, rg;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Comm_group(c, &lg));
    MPI_OK(MPI_Comm_remote_group(c, &rg));
    int idx[64], tr[64];
    for (int i = 0; i < 64; ++i) idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(lg, nl, idx, wg, tr));
    for (int i = 0; i < nl; ++i)
        CHECK(tr[i] == local_w[i], "%s: local rank %d is world %d, expected %d", what, i, tr[i], local_w[i]);
    MPI_OK(MPI_Group_translate_ranks(rg, nr, idx, wg, tr));
    for (int i = 0; i < nr; ++i)
        CHECK(tr[i] == remote_w[i], "%s: remote rank %d is world %d, expected %d", what, i, tr[i], remote_w[i]);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    int got[64];
    MPI_OK(MPI_Allgather(&world, 1, MPI_INT, got, 1, MPI_INT, c));
    for (int i = 0; i < nr; ++i)
        CHECK(got[i] == remote_w[i], "%s: allgather [%d] = %d, expected %d", what, i, got[i], remote_w[i]);
    MPI_OK(MPI_Barrier(c));
}

/* Split colors: A: local rank % 2. B: local rank 0 MPI_UNDEFINED, then
   (local rank - 1) % 3, so with 5 in B color 2 is in B only. Keys: A
   reverses its order, B ties (rank order). */
static int split_color(int s, int lr) {
    if (s == 0) return lr % 2;
    return lr == 0 ? MPI_UNDEFINED : (lr - 1) % 3;
}
static int split_key(int s, int lr) { return s == 0 ? -lr : 0; }

/* World ranks of group s with color `color`, in new rank order. */
static int members(int s, int color, int *out) {
    const int n = s == 0 ? a_size : wsize - a_size;
    int m = 0;
    for (int i = 0; i < n; ++i) {
        const int lr = s == 0 ? n - 1 - i : i; /* key order: A reversed, B as is */
        if (split_color(s, lr) == color) out[m++] = s == 0 ? lr : a_size + lr;
    }
    return m;
}

void test_split(void) {
    const int color = split_color(side, lrank);
    MPI_Comm c = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_split(inter, color, split_key(side, lrank), &c));
    int lw[64], rw[64], nl = 0, nr = 0;
    if (color != MPI_UNDEFINED) {
        nl = members(side, color, lw);
        nr = members(1 - side, color, rw);
    }
    if (color == MPI_UNDEFINED || nr == 0) {
        CHECK(c == MPI_COMM_NULL, "split: color %d (remote members %d) gave a communicator", color, nr);
        return;
    }
    CHECK(c != MPI_COMM_NULL, "split: color %d gave MPI_COMM_NULL", color);
    check_newinter(c, lw, nl, rw, nr, "split");
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(c, &d));
    check_newinter(d, lw, nl, rw, nr, "dup of a split");
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&c));
}

/* split_type: MPI_COMM_TYPE_SHARED joins the processes of a node across the
   groups (MPICH's behaviour): one node here, so the whole inter-communicator. */
void test_split_type(void) {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, lrank, MPI_INFO_NULL, &c));
    int lw[64], rw[64];
    for (int i = 0; i < lsize; ++i) lw[i] = local_world(i);
    for (int i = 0; i < rsize; ++i) rw[i] = remote_world(i);
    check_newinter(c, lw, lsize, rw, rsize, "split_type shared");
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
}

/* Group of local ranks sel[0..n) of the inter-communicator's local group. */
static MPI_Group local_subgroup(const int *sel, int n) {
    MPI_Group lg, g;
    MPI_OK(MPI_Comm_group(inter, &lg));
    MPI_OK(MPI_Group_incl(lg, n, sel, &g));
    MPI_Group_free(&lg);
    return g;
}

/* Create: A passes its group without local rank 0 (all of it when alone),
   B its odd local ranks in decreasing order. Then an empty group on A's
   side (all get MPI_COMM_NULL), then both whole groups. */
void test_create(void) {
    int sel[2][64], n[2] = {0, 0};
    const int asz = a_size, bsz = wsize - a_size;
    for (int i = asz > 1 ? 1 : 0; i < asz; ++i) sel[0][n[0]++] = i;
    for (int i = bsz - 1; i >= 0; --i)
        if (i % 2 == 1) sel[1][n[1]++] = i;
    MPI_Group g = local_subgroup(sel[side], n[side]);
    MPI_Comm c = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_create(inter, g, &c));
    MPI_Group_free(&g);
    int in = 0;
    for (int i = 0; i < n[side]; ++i) in |= sel[side][i] == lrank;
    if (!in) {
        CHECK(c == MPI_COMM_NULL, "create: a process outside its group got a communicator");
    } else {
        int lw[64], rw[64];
        for (int i = 0; i < n[side]; ++i) lw[i] = side == 0 ? sel[0][i] : asz + sel[1][i];
        for (int i = 0; i < n[1 - side]; ++i) rw[i] = side == 1 ? sel[0][i] : asz + sel[1][i];
        check_newinter(c, lw, n[side], rw, n[1 - side], "create");
        MPI_OK(MPI_Comm_free(&c));
    }
    /* An empty group on one side: nobody gets a communicator. */
    g = side == 0 ? MPI_GROUP_EMPTY : local_subgroup(sel[1], n[1]);
    MPI_OK(MPI_Comm_create(inter, g, &c));
    CHECK(c == MPI_COMM_NULL, "create with an empty group on side 0 gave a communicator");
    if (side == 1) MPI_Group_free(&g);
    /* Both whole groups. */
    MPI_OK(MPI_Comm_group(inter, &g));
    MPI_OK(MPI_Comm_create(inter, g, &c));
    MPI_Group_free(&g);
    int lw[64], rw[64];
    for (int i = 0; i < lsize; ++i) lw[i] = local_world(i);
    for (int i = 0; i < rsize; ++i) rw[i] = remote_world(i);
    check_newinter(c, lw, lsize, rw, rsize, "create (whole groups)");
    MPI_OK(MPI_Comm_free(&c));
}
