/*
 * The 2011 draft's collectives over recognized failures (spec 000 §17.7-17.8,
 * spec 004), with real failures:
 *
 *   validate barrier   Example 17.6: a rank is SIGKILLed inside a barrier
 *                      (FTMPI_TEST_KILL_AT coll.round). The example's loop of
 *                      barrier + MPI_Comm_validate runs exactly twice at every
 *                      survivor, all with the same failed group; barriers
 *                      then succeed.
 *   validate bcast     Example 17.7 (recovery blocks): a rank dies between two
 *                      broadcasts; the survivors redo that block exactly once,
 *                      and every broadcast that returned success delivered
 *                      the root's value.
 *   validate exscan    Example 17.8 (5 ranks): ranks 2, then 0, die between
 *                      the example's loops; the lines it prints are checked
 *                      against the spec by the harness (validate_exscan.expected).
 *   validate colls     two ranks die and MPI_Comm_validate recognizes them;
 *                      then every collective (blocking and not) runs over the
 *                      survivors with the expected values, a failed root
 *                      fails the call at everyone, Comm_dup and Comm_create
 *                      keep the failures recognized and Comm_split leaves
 *                      them out.
 *   validate inactive  after a validate, a new failure makes the communicator
 *                      collectively inactive: collectives_enabled is 0, every
 *                      collective fails with MPI_ERR_RANK_FAIL_STOP (the
 *                      nonblocking ones at completion) and Comm_dup fails at
 *                      every survivor, until the next validate. Also the
 *                      counting calls: validate_local/global, get_failed_local/
 *                      global, and MPI_Icomm_validate.
 *   validate many      (no failure) 300 rounds on one communicator of
 *                      MPI_Comm_validate, a broadcast from a rotating root
 *                      (whose message often arrives while the others are
 *                      still in the validate), an agreement and a
 *                      Comm_dup/free: every internal tag field must survive
 *                      more validations, agreements and creations than its
 *                      width would hold if miscounted.
 */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>

#include "ftlib.h"

static int me, size;
static MPI_Comm comm;

/* Comm ranks of the members of g (a group of processes of comm), ascending. */
static int group_ranks(MPI_Group g, int *out) {
    int n = 0;
    MPI_OK(MPI_Group_size(g, &n));
    if (n == 0) return 0;
    MPI_Group all;
    MPI_OK(MPI_Comm_group(comm, &all));
    int idx[256];
    for (int i = 0; i < n; ++i) idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, n, idx, all, out));
    MPI_Group_free(&all);
    qsort(out, (size_t)n, sizeof(int), tl_int_cmp);
    return n;
}

static int in_list(int r, const int *list, int n) {
    for (int i = 0; i < n; ++i)
        if (list[i] == r) return 1;
    return 0;
}

/* The validated failed group is exactly `want` (sorted) here, and the same at
   every survivor (checked over point-to-point by the lowest survivor). */
static void check_failed_group(MPI_Group g, const int *want, int nwant) {
    int got[256], n = group_ranks(g, got);
    CHECK(n == nwant, "rank %d: failed group of %d, expected %d", me, n, nwant);
    for (int i = 0; i < n; ++i)
        CHECK(got[i] == want[i], "rank %d: failed[%d] = %d, expected %d", me, i, got[i], want[i]);
    int lowest = 0;
    while (in_list(lowest, got, n)) ++lowest;
    if (me != lowest) {
        int msg[257] = {n};
        memcpy(msg + 1, got, sizeof(int) * (size_t)n);
        MPI_OK(MPI_Send(msg, n + 1, MPI_INT, lowest, 515, comm));
        return;
    }
    for (int r = 0; r < size; ++r) {
        if (r == me || in_list(r, got, n)) continue;
        int msg[257];
        MPI_OK(MPI_Recv(msg, 257, MPI_INT, r, 515, comm, MPI_STATUS_IGNORE));
        CHECK(msg[0] == n && memcmp(msg + 1, got, sizeof(int) * (size_t)n) == 0,
              "rank %d's validated group differs from rank %d's", r, me);
    }
}

/* The step the three examples share: validate, compare the failed group with
   the previous one (the spec writes MPI_Comm_compare, meaning
   MPI_Group_compare), keep the new one. Returns the comparison. */
static int revalidate(MPI_Group failed_grp[2], int *idx) {
    int ret;
    MPI_Comm_validate(comm, &failed_grp[*idx]);
    MPI_Group_compare(failed_grp[(*idx + 1) % 2], failed_grp[*idx], &ret);
    *idx = (*idx + 1) % 2;
    MPI_Group_free(&failed_grp[*idx]);
    return ret;
}

/* ---- Example 17.6 --------------------------------------------------------- */
static void example_barrier(int victim) {
    int ret, idx = 1, comm_size, loops = 0;
    MPI_Group failed_grp[2];
    MPI_Comm_size(comm, &comm_size);

    /* Get a starting set of failures */
    MPI_Comm_validate(comm, &failed_grp[0]);

    do {
        ++loops;
        ret = MPI_Barrier(comm);
        if (tl_class(ret) == MPI_ERR_RANK_FAIL_STOP) {
            printf("Some rank failed during barrier\n");
        }
        ret = revalidate(failed_grp, &idx);
        if (ret != MPI_IDENT) {
            printf("Some process failed, trying again.\n");
        } else {
            break;
        }
    } while (1);

    CHECK(loops == 2, "rank %d: the barrier loop ran %d times, expected 2", me, loops);
    check_failed_group(failed_grp[(idx + 1) % 2], &victim, 1);
    MPI_Group_free(&failed_grp[(idx + 1) % 2]);
    for (int i = 0; i < 3; ++i) MPI_OK(MPI_Barrier(comm));
    int active = 0;
    MPI_OK(MPI_Comm_collectives_enabled(comm, &active));
    CHECK(active == 1, "collectives not enabled after validate");
}

/* ---- Example 17.7 --------------------------------------------------------- */
static void example_bcast(int victim) {
    int ret, idx = 1, comm_size, buffer, redone = 0;
    MPI_Group failed_grp[2];
    MPI_Comm_size(comm, &comm_size);

    /* Get a starting set of failures */
    MPI_Comm_validate(comm, &failed_grp[0]);

    for (int offset = 0; offset < 10; ++offset) {
        for (int i = 0; i < comm_size; ++i) {
            if (me == victim && offset == 3 && i == 1) tl_die(SIGKILL);
            buffer = me == 0 ? offset + i : -1; /* the example sets it everywhere; here only the root's counts */
            ret = MPI_Bcast(&buffer, 1, MPI_INT, 0, comm);
            if (tl_class(ret) == MPI_ERR_RANK_FAIL_STOP) {
                printf("Some rank failed during broadcast.\n");
                break;
            }
            CHECK(ret == MPI_SUCCESS, "MPI_Bcast: %d", ret);
            CHECK(buffer == offset + i, "rank %d: broadcast %d/%d delivered %d", me, offset, i, buffer);
        }
        ret = revalidate(failed_grp, &idx);
        /* Handle any -new- failures and continue */
        if (ret != MPI_IDENT) {
            printf("Some process failed, trying again.\n");
            offset--; /* Redo the last set of broadcasts */
            ++redone;
        }
    }
    CHECK(redone == 1, "rank %d redid %d blocks, expected 1", me, redone);
    check_failed_group(failed_grp[(idx + 1) % 2], &victim, 1);
    MPI_Group_free(&failed_grp[(idx + 1) % 2]);
}

/* ---- Example 17.8 (size 5) ------------------------------------------------ */
static int first_alive(MPI_Group failed) {
    int ranks[256], n = group_ranks(failed, ranks), r = 0;
    while (in_list(r, ranks, n)) ++r;
    return r;
}

static void exscan_loop(int *send_buffer, int *recv_buffer, MPI_Group *failed_grp, int *idx) {
    int ret;
    do {
        ret = MPI_Exscan(send_buffer, recv_buffer, 1, MPI_INT, MPI_SUM, comm);
        if (tl_class(ret) == MPI_ERR_RANK_FAIL_STOP) {
            printf("Some rank failed during scan\n");
        }
        ret = revalidate(failed_grp, idx);
        /* Handle any -new- failures and continue */
        if (ret != MPI_IDENT) {
            continue;
        } else {
            break;
        }
    } while (1);
    /* The example omits this check: the first alive process's buffer is undefined. */
    if (me != first_alive(failed_grp[(*idx + 1) % 2])) {
        printf("Rank %d) Received %2d\n", me, *recv_buffer);
        fflush(stdout);
    }
}

static void example_exscan(void) {
    int idx = 1, comm_rank, comm_size, send_buffer, recv_buffer = -1;
    MPI_Group failed_grp[2];
    MPI_Comm_rank(comm, &comm_rank);
    MPI_Comm_size(comm, &comm_size); /* Assume size = 5 */
    CHECK(comm_size == 5, "example 17.8 needs 5 ranks, not %d", comm_size);
    send_buffer = comm_rank + 1;

    /* Get a starting set of failures */
    MPI_Comm_validate(comm, &failed_grp[0]);
    exscan_loop(&send_buffer, &recv_buffer, failed_grp, &idx);

    /***** Rank 2 fails *****/
    if (comm_rank == 2) tl_die(SIGKILL);
    exscan_loop(&send_buffer, &recv_buffer, failed_grp, &idx);

    /***** Rank 0 fails *****/
    if (comm_rank == 0) tl_die(SIGKILL);
    exscan_loop(&send_buffer, &recv_buffer, failed_grp, &idx);
    MPI_Group_free(&failed_grp[(idx + 1) % 2]);
}

/* ---- every collective over recognized failures ---------------------------- */

/* Contribution of comm rank r (1-based so that sums see every rank). */
static int val(int r) { return r + 1; }

/* Gather-type: the slots of failed ranks are undefined, the others exact. */
static void colls_gather_type(const int *alive, int na) {
    int x = val(me), y = -1;
    MPI_Request req;
    int *all = malloc(sizeof(int) * (size_t)size * 2), *counts = malloc(sizeof(int) * (size_t)size),
        *displs = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r) counts[r] = 1, displs[r] = size - 1 - r;
    MPI_OK(MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, size - 1, comm));
    if (me == size - 1)
        for (int i = 0; i < na; ++i) CHECK(all[alive[i]] == val(alive[i]), "gather slot %d", alive[i]);
    MPI_OK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, comm));
    for (int i = 0; i < na; ++i) CHECK(all[alive[i]] == val(alive[i]), "allgather slot %d", alive[i]);
    MPI_OK(MPI_Allgatherv(&x, 1, MPI_INT, all, counts, displs, MPI_INT, comm));
    for (int i = 0; i < na; ++i) CHECK(all[size - 1 - alive[i]] == val(alive[i]), "allgatherv slot of %d", alive[i]);
    MPI_OK(MPI_Iallgather(&x, 1, MPI_INT, all, 1, MPI_INT, comm, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < na; ++i) CHECK(all[alive[i]] == val(alive[i]), "iallgather slot %d", alive[i]);
    /* Scatter from rank 0: element r goes to r. */
    for (int r = 0; r < size; ++r) all[r] = 1000 + r;
    y = -1;
    MPI_OK(MPI_Scatter(all, 1, MPI_INT, &y, 1, MPI_INT, 0, comm));
    CHECK(y == 1000 + me, "scatter at %d: %d", me, y);
    y = -1;
    MPI_OK(MPI_Scatterv(all, counts, displs, MPI_INT, &y, 1, MPI_INT, 0, comm));
    CHECK(y == 1000 + size - 1 - me, "scatterv at %d: %d", me, y);
    /* Alltoall: element r of my send buffer is me*1000 + r. */
    int *sb = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r) sb[r] = me * 1000 + r, all[r] = -1;
    MPI_OK(MPI_Alltoall(sb, 1, MPI_INT, all, 1, MPI_INT, comm));
    for (int i = 0; i < na; ++i) CHECK(all[alive[i]] == alive[i] * 1000 + me, "alltoall from %d", alive[i]);
    for (int r = 0; r < size; ++r) all[r] = -1;
    MPI_OK(MPI_Alltoallv(sb, counts, displs, MPI_INT, all, counts, displs, MPI_INT, comm));
    for (int i = 0; i < na; ++i)
        CHECK(all[size - 1 - alive[i]] == alive[i] * 1000 + size - 1 - me, "alltoallv from %d", alive[i]);
    free(sb);
    free(all);
    free(counts);
    free(displs);
}

/* Creation keeps the recognized failures (split leaves them out). */
static void colls_creation(const int *dead, int na, int pos, int sum) {
    int x = val(me), y = -1;
    MPI_Comm dup, split, created;
    MPI_OK(MPI_Comm_dup(comm, &dup));
    int active = 0, nf = 0, nn = 0;
    MPI_OK(MPI_Comm_collectives_enabled(dup, &active));
    CHECK(active == 1, "the dup is not collectively active");
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup));
    CHECK(y == sum, "allreduce on the dup: %d", y);
    int gf[4] = {-1, -1, -1, -1};
    MPI_OK(MPI_Comm_get_failed_global(dup, MPI_FAILED_ALL, gf));
    CHECK(gf[0] == dead[0] && gf[1] == dead[1] && gf[2] == -1, "the dup's G is %d %d %d", gf[0], gf[1], gf[2]);
    MPI_OK(MPI_Comm_split(comm, 7, -me, &split));
    MPI_OK(MPI_Comm_size(split, &nf));
    CHECK(nf == na, "split of %d ranks, expected %d", nf, na);
    MPI_OK(MPI_Comm_rank(split, &nn));
    CHECK(nn == na - 1 - pos, "split rank %d, expected %d", nn, na - 1 - pos);
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, split));
    CHECK(y == sum, "allreduce on the split: %d", y);
    MPI_Group wg;
    MPI_OK(MPI_Comm_group(comm, &wg));
    MPI_OK(MPI_Comm_create(comm, wg, &created));
    MPI_Group_free(&wg);
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, created));
    CHECK(y == sum, "allreduce on the created communicator: %d", y);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Comm_free(&created);
}

static void colls(void) {
    const int dead[2] = {1, size - 2};
    if (me == dead[0] || me == dead[1]) tl_die(SIGKILL);
    MPI_Group failed;
    MPI_OK(MPI_Comm_validate(comm, &failed));
    check_failed_group(failed, dead, 2);
    MPI_Group_free(&failed);
    int alive[256], na = 0, sum = 0;
    for (int r = 0; r < size; ++r)
        if (!in_list(r, dead, 2)) alive[na++] = r, sum += val(r);
    int pos = 0; /* my position among the survivors */
    while (alive[pos] != me) ++pos;

    MPI_OK(MPI_Barrier(comm));
    MPI_Request req;
    MPI_OK(MPI_Ibarrier(comm, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* Bcast from the last survivor; from a failed root it fails everywhere. */
    int b = me == size - 1 ? 4242 : -1;
    MPI_OK(MPI_Bcast(&b, 1, MPI_INT, size - 1, comm));
    CHECK(b == 4242, "bcast gave %d", b);
    CHECK_CLASS(MPI_Bcast(&b, 1, MPI_INT, dead[0], comm), MPI_ERR_RANK_FAIL_STOP);
    /* Every survivor is a non-root there: the root-only arguments are unused. */
    CHECK_CLASS(MPI_Reduce(&b, NULL, 1, MPI_INT, MPI_SUM, dead[1], comm), MPI_ERR_RANK_FAIL_STOP);
    CHECK_CLASS(MPI_Gather(&b, 1, MPI_INT, NULL, 1, MPI_INT, dead[0], comm), MPI_ERR_RANK_FAIL_STOP);
    CHECK_CLASS(MPI_Scatter(NULL, 1, MPI_INT, &b, 1, MPI_INT, dead[1], comm), MPI_ERR_RANK_FAIL_STOP);
    CHECK_CLASS(MPI_Gatherv(&b, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, dead[0], comm), MPI_ERR_RANK_FAIL_STOP);

    int x = val(me), y = -1;
    MPI_OK(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, comm));
    if (me == 0) CHECK(y == sum, "reduce: %d, expected %d", y, sum);
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
    CHECK(y == sum, "allreduce: %d, expected %d", y, sum);
    y = -1;
    MPI_OK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(y == sum, "iallreduce: %d, expected %d", y, sum);

    /* Large allreduce: the ring algorithm over the survivors. */
    const int big = 40000;
    int *bin = malloc(sizeof(int) * big), *bout = malloc(sizeof(int) * big);
    for (int i = 0; i < big; ++i) bin[i] = val(me) * (i % 7);
    MPI_OK(MPI_Allreduce(bin, bout, big, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < big; ++i) CHECK(bout[i] == sum * (i % 7), "big allreduce [%d] = %d", i, bout[i]);
    free(bin);
    free(bout);

    /* Scan and exscan: prefixes over the survivors; exscan is undefined at the first. */
    int prefix = 0;
    for (int i = 0; i < pos; ++i) prefix += val(alive[i]);
    MPI_OK(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, comm));
    CHECK(y == prefix + x, "scan at %d: %d, expected %d", me, y, prefix + x);
    MPI_OK(MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, comm));
    if (pos > 0) CHECK(y == prefix, "exscan at %d: %d, expected %d", me, y, prefix);

    /* Reduce_scatter_block: block r of every survivor's input is r*100 + its value. */
    int *rs = malloc(sizeof(int) * (size_t)size), rout = -1;
    for (int r = 0; r < size; ++r) rs[r] = r * 100 + val(me);
    MPI_OK(MPI_Reduce_scatter_block(rs, &rout, 1, MPI_INT, MPI_SUM, comm));
    CHECK(rout == na * me * 100 + sum, "reduce_scatter_block at %d: %d", me, rout);
    free(rs);

    colls_gather_type(alive, na);
    colls_creation(dead, na, pos, sum);
}

/* ---- a new failure makes the communicator collectively inactive ----------- */
static void inactive(void) {
    const int v1 = size - 1, v2 = 1;
    if (me == v1) tl_die(SIGKILL);
    int nf = -1, nn = -1, x = val(me), y = -1;
    MPI_OK(MPI_Comm_validate_global(comm, &nf, &nn));
    CHECK(nf == 1 && nn == 1, "validate_global: %d failed, %d new", nf, nn);
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));

    /* v2 dies once every other survivor is done with that allreduce (a word
       from each): none is still inside it when the failure becomes known. */
    int word = 1;
    if (me == v2) {
        for (int r = 0; r < size; ++r)
            if (r != v1 && r != v2) MPI_OK(MPI_Recv(&word, 1, MPI_INT, r, 76, comm, MPI_STATUS_IGNORE));
        tl_die(SIGKILL);
    }
    MPI_OK(MPI_Send(&word, 1, MPI_INT, v2, 76, comm));
    CHECK(tl_wait_failed(comm, 2, 30) == 2, "rank %d never learned of the second failure", me);
    int active = 1;
    MPI_OK(MPI_Comm_collectives_enabled(comm, &active));
    CHECK(active == 0, "collectives still enabled after a new failure");
    CHECK_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm), MPI_ERR_RANK_FAIL_STOP);
    CHECK_CLASS(MPI_Barrier(comm), MPI_ERR_RANK_FAIL_STOP);
    MPI_Request req;
    MPI_OK(MPI_Ibcast(&y, 1, MPI_INT, 0, comm, &req)); /* the error comes at completion */
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_RANK_FAIL_STOP);
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_dup(comm, &dup), MPI_ERR_RANK_FAIL_STOP);
    CHECK(dup == MPI_COMM_NULL, "a failed Comm_dup returned a communicator");

    /* L and G (spec 004). */
    int l[4] = {-1, -1, -1, -1}, g[4] = {-1, -1, -1, -1};
    MPI_OK(MPI_Comm_validate_local(comm, &nf, &nn));
    CHECK(nf == 2 && nn == 1, "validate_local: %d failed, %d new", nf, nn);
    MPI_OK(MPI_Comm_get_failed_local(comm, MPI_FAILED_NEW, l));
    CHECK(l[0] == v2 && l[1] == -1, "L - L' = {%d, %d}", l[0], l[1]);
    MPI_OK(MPI_Comm_get_failed_global(comm, MPI_FAILED_ALL, g));
    CHECK(g[0] == v1 && g[1] == -1, "G = {%d, %d} before the second validate", g[0], g[1]);
    MPI_OK(MPI_Comm_validate_global(comm, &nf, &nn));
    CHECK(nf == 2 && nn == 0, "second validate_global: %d failed, %d new", nf, nn);
    g[0] = g[1] = -1;
    MPI_OK(MPI_Comm_get_failed_global(comm, MPI_FAILED_NEW, g));
    CHECK(g[0] == v2 && g[1] == -1, "G - G' = {%d, %d}", g[0], g[1]);
    MPI_OK(MPI_Comm_get_failed_global(comm, MPI_FAILED_ALL, g));
    CHECK(g[0] == v2 && g[1] == v1, "G = {%d, %d}", g[0], g[1]);
    MPI_OK(MPI_Comm_collectives_enabled(comm, &active));
    CHECK(active == 1, "collectives disabled after validate_global");
    int sum = 0;
    for (int r = 0; r < size; ++r)
        if (r != v1 && r != v2) sum += val(r);
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
    CHECK(y == sum, "allreduce after revalidation: %d, expected %d", y, sum);

    /* The nonblocking validate: nothing new, the same group. */
    MPI_Group failed;
    MPI_OK(MPI_Icomm_validate(comm, &failed, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    const int both[2] = {v2, v1};
    check_failed_group(failed, both, 2);
    MPI_Group_free(&failed);
    MPI_OK(MPI_Comm_dup(comm, &dup));
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup));
    CHECK(y == sum, "allreduce on the dup: %d", y);
    MPI_Comm_free(&dup);
}

static void many(void) {
    for (int round = 0; round < 300; ++round) {
        MPI_Group failed;
        int num_failed = -1;
        MPI_OK(MPI_Comm_validate(comm, &failed));
        MPI_OK(MPI_Group_size(failed, &num_failed));
        CHECK(num_failed == 0, "round %d: validate found %d failed", round, num_failed);
        MPI_Group_free(&failed);
        int v = me == round % size ? round * 7 + 1 : -1;
        MPI_OK(MPI_Bcast(&v, 1, MPI_INT, round % size, comm));
        CHECK(v == round * 7 + 1, "round %d: bcast gave %d", round, v);
        int flag = 1;
        MPI_OK(MPIX_Comm_agree(comm, &flag));
        CHECK(flag == 1, "round %d: agreed %d", round, flag);
        MPI_Comm dup;
        MPI_OK(MPI_Comm_dup(comm, &dup));
        int sum = 0;
        MPI_OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, dup));
        CHECK(sum == size * (size - 1) / 2, "round %d: allreduce on the dup gave %d", round, sum);
        MPI_OK(MPI_Comm_free(&dup));
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "barrier";
    /* Example 17.6's victim (rank 1) dies in its first collective round: the barrier's. */
    if (strcmp(mode, "barrier") == 0) setenv("FTMPI_TEST_KILL_AT", "coll.round:1:1", 1);
    MPI_Init(&argc, &argv);
    comm = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    if (strcmp(mode, "barrier") == 0) {
        example_barrier(1);
    } else if (strcmp(mode, "bcast") == 0) {
        example_bcast(size - 1);
    } else if (strcmp(mode, "exscan") == 0) {
        example_exscan();
    } else if (strcmp(mode, "colls") == 0) {
        CHECK(size >= 4, "validate colls needs 4 ranks or more");
        colls();
    } else if (strcmp(mode, "inactive") == 0) {
        CHECK(size >= 3, "validate inactive needs 3 ranks or more");
        inactive();
    } else if (strcmp(mode, "many") == 0) {
        many();
    } else {
        CHECK(0, "unknown mode %s", mode);
    }
    MPI_Finalize();
    return 0;
}
