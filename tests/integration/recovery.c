/*
 * Revoke, agree and shrink (issue 5), with real failures:
 *
 *   recovery revoke     rank 0 revokes MPI_COMM_WORLD while every other rank
 *                       is blocked in a receive from a live peer: all get
 *                       MPI_ERR_REVOKED, later operations too; agree still
 *                       works on the revoked communicator, and shrink gives a
 *                       working one.
 *   recovery loop N     N rounds of: one rank revokes (MPIX_Comm_revoke or
 *                       MPI_Comm_invalidate), the others' blocked receives
 *                       fail, everyone shrinks (MPIX_Comm_shrink or _ishrink)
 *                       and checks the new communicator with an allreduce
 *                       and an iagree.
 *   recovery agree      agree with no failure, after one, after two more, and
 *                       with the coordinator killed in the middle of sending
 *                       its decision (FTMPI_TEST_KILL_AT): the survivors'
 *                       values always agree, and an unacknowledged failure
 *                       gives MPI_ERR_PROC_FAILED.
 *   recovery stress S   200 iterations of allreduce on a communicator while
 *                       random ranks die (seed S) right before it: every
 *                       iteration agrees whether it succeeded everywhere; if
 *                       not, revoke, shrink and redo it. The survivors end
 *                       with the same total, and the one expected.
 *   recovery agree_random S   60 agreements while random ranks die at random
 *                       protocol steps (FTMPI_TEST_KILL_AT, from seed S):
 *                       every survivor decided the same value in every round.
 *   recovery create     a rank dies; Comm_dup, Comm_split and Comm_create
 *                       then fail at every survivor alike (uniform creation,
 *                       spec 000 §17.8.2), and succeed again on the shrunk
 *                       communicator.
 *   recovery inter      inter-communicators (world split in two halves):
 *                       revoke by one rank interrupts a receive blocked on a
 *                       live peer at every rank of both groups; agree gives
 *                       each group the AND of the other group's flags, also
 *                       after a rank died; shrink gives an inter-communicator
 *                       of the survivors that works (point-to-point, barrier,
 *                       merge); Intercomm_create with a dead member fails in
 *                       both groups, and succeeds over the shrunk groups.
 *   recovery shrink     a rank dies in the middle of shrink (right after it
 *                       contributed): every survivor gets a communicator of
 *                       the same size, and shrinking again gives one without
 *                       failures.
 */
#define _DEFAULT_SOURCE
#include <stdlib.h>

#include "ftlib.h"

static int me, size;

/* Survivors of comm send `value` to the lowest survivor, which checks they agree. */
static void check_same(MPI_Comm comm, int value, const char *what) {
    int failed[256], n = tl_failed(comm, failed, 256), lowest = 0, cme;
    MPI_Comm_rank(comm, &cme);
    int csize;
    MPI_Comm_size(comm, &csize);
    for (;;) {
        int dead = 0;
        for (int i = 0; i < n; ++i) dead |= failed[i] == lowest;
        if (!dead) break;
        ++lowest;
    }
    if (cme != lowest) {
        MPI_OK(MPI_Send(&value, 1, MPI_INT, lowest, 77, comm));
        return;
    }
    for (int r = 0; r < csize; ++r) {
        int dead = 0;
        for (int i = 0; i < n; ++i) dead |= failed[i] == r;
        if (dead || r == cme) continue;
        int theirs;
        /* A member that died after `failed` was read (say, right after it
           contributed to the agreement that made `value`) sends nothing. */
        const int rc = MPI_Recv(&theirs, 1, MPI_INT, r, 77, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS && tl_class(rc) == MPIX_ERR_PROC_FAILED) continue;
        MPI_OK(rc);
        CHECK(theirs == value, "%s: rank %d has %d, rank %d has %d", what, r, theirs, cme, value);
    }
}

static void revoke_test(void) {
    int x = 0, flag;
    MPI_Request req;
    /* Start together, on another communicator: a barrier on the one being
       revoked could itself be interrupted at a rank that leaves it last. */
    MPI_Comm sync;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &sync));
    MPI_OK(MPI_Barrier(sync));
    MPI_OK(MPI_Comm_free(&sync));
    if (me == 0) {
        MPI_OK(MPI_Irecv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req));
        MPI_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
        CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_REVOKED);
    } else { /* blocked on a live peer that never sends */
        CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, (me + 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_REVOKED);
    }
    MPI_OK(MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag));
    CHECK(flag == 1, "MPIX_Comm_is_revoked: %d", flag);
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, (me + 1) % size, 8, MPI_COMM_WORLD), MPI_ERR_REVOKED);
    MPI_OK(MPI_Isend(&x, 1, MPI_INT, (me + 1) % size, 8, MPI_COMM_WORLD, &req));
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_REVOKED);
    CHECK_CLASS(MPI_Barrier(MPI_COMM_WORLD), MPI_ERR_REVOKED);
    CHECK_CLASS(MPI_Allreduce(&x, &flag, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_REVOKED);
    flag = me == 1 ? 0 : 1;
    MPI_OK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag)); /* works on a revoked communicator */
    CHECK(flag == (size > 1 ? 0 : 1), "agree on the revoked communicator gave %d", flag);
    flag = 1; /* the 2011 draft's name for the same call */
    MPI_OK(MPI_Comm_agreement(MPI_COMM_WORLD, &flag));
    CHECK(flag == 1, "MPI_Comm_agreement gave %d", flag);
    MPI_Comm shrunk;
    MPI_OK(MPI_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    int n, sum = 0, one = 1;
    MPI_OK(MPI_Comm_size(shrunk, &n));
    CHECK(n == size, "shrunk communicator has %d ranks, expected %d", n, size);
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK(sum == size, "allreduce on the shrunk communicator gave %d", sum);
    /* ishrink does not block: rank 1 joins only after a message rank 0 sends
       once its ishrink has started. */
    MPI_Comm again;
    MPI_Request sreq;
    if (me == 1) MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 3, shrunk, MPI_STATUS_IGNORE));
    MPI_OK(MPIX_Comm_ishrink(shrunk, &again, &sreq));
    if (me == 0 && size > 1) MPI_OK(MPI_Send(&one, 1, MPI_INT, 1, 3, shrunk));
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_size(again, &n));
    CHECK(n == size, "ishrink gave %d ranks, expected %d", n, size);
    MPI_OK(MPI_Comm_free(&again));
    MPI_OK(MPI_Comm_free(&shrunk));
    if (me == 0) printf("recovery revoke: %d ranks interrupted, agreed and shrank\n", size);
}

static void loop_test(int rounds) {
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int it = 0; it < rounds; ++it) {
        const int root = it % size;
        int x = 0;
        if (me == root) MPI_OK(it % 2 ? MPI_Comm_invalidate(comm) : MPIX_Comm_revoke(comm));
        else CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, root, 1, comm, MPI_STATUS_IGNORE), MPI_ERR_REVOKED);
        MPI_Comm next;
        if (it % 2 == 0) {
            MPI_OK(MPIX_Comm_shrink(comm, &next));
        } else {
            MPI_Request req;
            MPI_OK(MPIX_Comm_ishrink(comm, &next, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Comm_free(&comm));
        comm = next;
        int n, sum = 0, v = it + me;
        MPI_OK(MPI_Comm_size(comm, &n));
        CHECK(n == size, "round %d: %d ranks", it, n);
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm));
        CHECK(sum == size * it + size * (size - 1) / 2, "round %d: sum %d", it, sum);
        /* Nobody may revoke while another is still inside the allreduce:
           agree waits for every member and cannot itself be revoked. */
        int go = 1;
        MPI_Request req;
        MPI_OK(MPIX_Comm_iagree(comm, &go, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(go == 1, "round %d: iagree gave %d", it, go);
    }
    MPI_OK(MPI_Comm_free(&comm));
    if (me == 0) printf("recovery loop: %d rounds of revoke + shrink on %d ranks\n", rounds, size);
}

/* agree; the flag each rank passes clears its own bit. */
static int agree_round(int *flag) {
    *flag = ~(1 << (me % 30));
    return MPIX_Comm_agree(MPI_COMM_WORLD, flag);
}

static int dead(int r) { return r == size - 1 || r == size - 2 || r == size - 3 || r == 0; }

static void agree_test(void) {
    int flag, expect = ~0;
    for (int r = 0; r < size; ++r) expect &= ~(1 << (r % 30));
    MPI_OK(agree_round(&flag));
    CHECK(flag == expect, "no failure: agreed %#x, expected %#x", flag, expect);

    /* One failure, not acknowledged: PROC_FAILED, same value everywhere. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == size - 1) tl_die(SIGKILL);
    expect = ~0;
    for (int r = 0; r < size - 1; ++r) expect &= ~(1 << (r % 30));
    CHECK_CLASS(agree_round(&flag), MPI_ERR_PROC_FAILED);
    CHECK(flag == expect, "one failure: agreed %#x, expected %#x", flag, expect);
    MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MPI_OK(agree_round(&flag));
    CHECK(flag == expect, "acknowledged: agreed %#x, expected %#x", flag, expect);

    /* Two more at once. */
    if (me == size - 2 || me == size - 3) tl_die(SIGKILL);
    CHECK(tl_wait_failed(MPI_COMM_WORLD, 3, 30) == 3, "the two new failures were not detected");
    int rc = agree_round(&flag);
    CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED, "two more failures: class %d", tl_class(rc));
    MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MPI_OK(agree_round(&flag));
    expect = ~0;
    for (int r = 0; r < size - 3; ++r) expect &= ~(1 << (r % 30));
    CHECK(flag == expect, "three failures: agreed %#x, expected %#x", flag, expect);

    /* The coordinator (rank 0) dies after sending its decision to half the
       members (FTMPI_TEST_KILL_AT=agree.decide:0:6): those that got it and
       those that did not must still decide the same. */
    rc = agree_round(&flag);
    CHECK(rc == MPI_SUCCESS || tl_class(rc) == MPI_ERR_PROC_FAILED, "agree with the coordinator dying: %d", rc);
    CHECK(tl_wait_failed(MPI_COMM_WORLD, 4, 30) == 4, "the coordinator's failure was not detected");
    check_same(MPI_COMM_WORLD, flag, "agreement across a coordinator failure");
    MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MPI_OK(agree_round(&flag));
    expect = ~0;
    for (int r = 0; r < size; ++r)
        if (!dead(r)) expect &= ~(1 << (r % 30));
    CHECK(flag == expect, "after the coordinator failed: agreed %#x, expected %#x", flag, expect);
    if (me == 1) printf("recovery agree: agreed with 0, 1, 3 and 4 failures (one during the agreement)\n");
}

static void create_test(void) {
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == size - 1) tl_die(SIGKILL);
    CHECK(tl_wait_failed(MPI_COMM_WORLD, 1, 30) == 1, "the failure was not detected");
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED && c == MPI_COMM_NULL, "Comm_dup: class %d", tl_class(rc));
    rc = MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &c);
    CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED && c == MPI_COMM_NULL, "Comm_split: class %d", tl_class(rc));
    MPI_Group world_group;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    rc = MPI_Comm_create(MPI_COMM_WORLD, world_group, &c);
    CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED && c == MPI_COMM_NULL, "Comm_create: class %d", tl_class(rc));
    MPI_Group_free(&world_group);
    MPI_Comm s1, d, sp;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s1));
    MPI_OK(MPI_Comm_dup(s1, &d));
    MPI_OK(MPI_Comm_split(s1, me % 2, me, &sp));
    int n = 0;
    MPI_OK(MPI_Comm_size(sp, &n));
    CHECK(n == (size - 1) / 2 + ((size - 1) % 2 && me % 2 == 0), "split of the survivors: %d ranks", n);
    MPI_Comm_free(&sp);
    MPI_Comm_free(&d);
    MPI_Comm_free(&s1);
    if (me == 0) printf("recovery create: dup, split and create failed at all %d survivors, then worked\n", size - 1);
}

static void shrink_test(void) {
    /* Rank 2 dies right after contributing to the shrink
       (FTMPI_TEST_KILL_AT=agree.contribute:2). */
    MPI_Comm s1, s2;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s1));
    int n1, n2;
    MPI_OK(MPI_Comm_size(s1, &n1));
    CHECK(n1 == size || n1 == size - 1, "first shrink: %d ranks", n1);
    check_same(MPI_COMM_WORLD, n1, "size of the shrunk communicator");
    MPI_OK(MPIX_Comm_shrink(s1, &s2));
    MPI_Comm_set_errhandler(s2, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Comm_size(s2, &n2));
    CHECK(n2 == size - 1, "second shrink: %d ranks", n2);
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s2));
    CHECK(sum == size - 1, "allreduce over the survivors: %d", sum);
    MPI_OK(MPI_Comm_free(&s1));
    MPI_OK(MPI_Comm_free(&s2));
    if (me == 0) printf("recovery shrink: %d survivors after a failure inside shrink\n", size - 1);
}

/* A small deterministic generator shared by every rank (same seed, same draws). */
static unsigned long long rng_state;
static unsigned rng(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng_state >> 33);
}

enum { STRESS_ITERS = 200, MAX_KILLS = 4 };

/* Who dies when: kills[k] = {iteration, rank}, distinct ranks, never rank 0. */
static int plan_kills(int n, int kills[][2]) {
    int nk = n - 4 < MAX_KILLS ? n - 4 : MAX_KILLS, used[64] = {0};
    for (int k = 0; k < nk; ++k) {
        int r;
        do r = 1 + (int)(rng() % (unsigned)(n - 1));
        while (used[r]);
        used[r] = 1;
        kills[k][0] = (int)(rng() % STRESS_ITERS);
        kills[k][1] = r;
    }
    return nk;
}

static void stress_test(void) {
    int kills[MAX_KILLS][2], nk = plan_kills(size, kills);
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    long long total = 0, expect = 0;
    int redone = 0;
    for (int it = 0; it < STRESS_ITERS; ++it) {
        for (int k = 0; k < nk; ++k)
            if (kills[k][0] == it && kills[k][1] == me) tl_die(SIGKILL);
        int n, v = it, sum = -1;
        MPI_Comm_size(comm, &n);
        const int rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
        int ok = rc == MPI_SUCCESS && sum == it * n;
        CHECK(rc == MPI_SUCCESS || tl_class(rc) == MPI_ERR_PROC_FAILED || tl_class(rc) == MPI_ERR_REVOKED,
              "iteration %d: allreduce returned class %d", it, tl_class(rc));
        const int arc = MPIX_Comm_agree(comm, &ok);
        CHECK(arc == MPI_SUCCESS || tl_class(arc) == MPI_ERR_PROC_FAILED, "iteration %d: agree %d", it, arc);
        if (ok) {
            total += sum;
            expect += (long long)it * n;
            continue;
        }
        MPIX_Comm_revoke(comm);
        MPI_Comm next;
        MPI_OK(MPIX_Comm_shrink(comm, &next));
        MPI_Comm_free(&comm);
        comm = next;
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        ++redone;
        --it; /* redo it on the survivors */
    }
    CHECK(total == expect, "total %lld, expected %lld", total, expect);
    /* Every survivor must hold the same total: compare through the final communicator. */
    long long lo = 0, hi = 0;
    int rc1, rc2;
    do { /* a failure of the last planned victim may still be in flight */
        rc1 = MPI_Allreduce(&total, &lo, 1, MPI_LONG_LONG, MPI_MIN, comm);
        rc2 = MPI_Allreduce(&total, &hi, 1, MPI_LONG_LONG, MPI_MAX, comm);
        int ok = rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS;
        MPIX_Comm_agree(comm, &ok);
        if (ok) break;
        MPI_Comm next;
        MPIX_Comm_revoke(comm);
        MPI_OK(MPIX_Comm_shrink(comm, &next));
        MPI_Comm_free(&comm);
        comm = next;
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    } while (1);
    CHECK(lo == total && hi == total, "survivors disagree: totals from %lld to %lld", lo, hi);
    int n;
    MPI_Comm_size(comm, &n);
    int crank;
    MPI_Comm_rank(comm, &crank);
    if (crank == 0)
        printf("recovery stress: %d iterations, %d failures, %d redone, %d survivors agree on %lld\n", STRESS_ITERS,
               size - n, redone, n, total);
    MPI_Comm_free(&comm);
}

/* Sets this rank's kill point before MPI_Init: victims die at a random step of a random agreement. */
static void plan_agree_kills(int job_rank, int n) {
    const char *sites[] = {"agree.contribute", "agree.decide"};
    for (int k = 0; k < n - 3 && k < MAX_KILLS; ++k) {
        const int victim = (int)(rng() % (unsigned)n), site = (int)(rng() % 2u), visit = 1 + (int)(rng() % 40u);
        if (victim != job_rank) continue;
        char spec[64];
        snprintf(spec, sizeof spec, "%s:%d:%d", sites[site], victim, visit);
        setenv("FTMPI_TEST_KILL_AT", spec, 1);
    }
}

enum { AGREE_ROUNDS = 60 };

static void agree_random_test(void) {
    int decided[AGREE_ROUNDS];
    for (int round = 0; round < AGREE_ROUNDS; ++round) {
        int flag = (int)(0x7fffffff & ~(1u << ((unsigned)(me + round) % 31u)));
        const int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        CHECK(rc == MPI_SUCCESS || tl_class(rc) == MPI_ERR_PROC_FAILED, "round %d: agree returned %d", round, rc);
        if (rc != MPI_SUCCESS) MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        decided[round] = flag;
    }
    /* No more kills: wait until every survivor knows every failure, then compare. */
    int failed[256], nf = 0, all_ok = 0;
    while (!all_ok) {
        int flag = 1;
        nf = tl_failed(MPI_COMM_WORLD, failed, 256);
        MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        int mine = nf;
        flag =
            mine; /* agree on the failure count: equal everywhere when AND(count) == count and AND(~count) == ~count */
        MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        int inv = ~mine;
        MPIX_Comm_agree(MPI_COMM_WORLD, &inv);
        all_ok = flag == mine && inv == ~mine;
        MPIX_Comm_agree(MPI_COMM_WORLD, &all_ok);
    }
    for (int round = 0; round < AGREE_ROUNDS; ++round) check_same(MPI_COMM_WORLD, decided[round], "agreed value");
    int lowest = 0; /* the lowest survivor reports */
    for (int i = 0; i < nf; ++i)
        if (failed[i] == lowest) lowest = failed[i] + 1, i = -1;
    if (me == lowest)
        printf("recovery agree_random: %d agreements, %d failures at random steps, all survivors agree\n", AGREE_ROUNDS,
               nf);
}

static void inter_test(void) {
    /* Group A: the lower half of the ranks; B: the upper half. */
    const int half = size / 2, in_a = me < half;
    MPI_Comm local, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, in_a, me, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? half : 0, 31, &inter));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int lrank, lsize, rsize, x = 0, flag;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Revoke: rank 0 of A revokes; everyone else is blocked on a live remote peer. */
    if (me == 0) {
        MPIX_Comm_revoke(inter);
    } else {
        CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE), MPI_ERR_REVOKED);
    }
    MPI_OK(MPIX_Comm_is_revoked(inter, &flag));
    CHECK(flag == 1, "the inter-communicator is not revoked at rank %d", me);
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 6, inter), MPI_ERR_REVOKED);

    /* Agree (on the revoked inter-communicator): each group gets the AND of the other's. */
    flag = in_a ? 0x3 : (lrank == 1 ? 0x4 : 0x5);
    MPI_OK(MPIX_Comm_agree(inter, &flag));
    CHECK(flag == (in_a ? (rsize > 1 ? 0x4 : 0x5) : 0x3), "inter agree at %d gave %#x", me, flag);

    /* The last rank (in B) dies; the survivors acknowledge it and agree again. */
    const int victim = size - 1;
    if (me == victim) tl_die(SIGKILL);
    if (in_a) CHECK(tl_wait_failed(inter, 1, 30) == 1, "rank %d never learned of the failure", me);
    else CHECK(tl_wait_failed(local, 1, 30) == 1, "rank %d never learned of the failure", me);
    MPI_OK(MPIX_Comm_failure_ack(inter));
    flag = in_a ? 0x6 : 0x7;
    MPI_Request req;
    MPI_OK(MPIX_Comm_iagree(inter, &flag, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(flag == (in_a ? 0x7 : 0x6), "inter iagree after a failure at %d gave %#x", me, flag);

    /* Shrink: an inter-communicator of the survivors. */
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(inter, &shrunk));
    int sl, sr;
    MPI_Comm_size(shrunk, &sl);
    MPI_Comm_remote_size(shrunk, &sr);
    CHECK(sl == (in_a ? lsize : lsize - 1) && sr == (in_a ? rsize - 1 : rsize), "shrunk sizes %d/%d at %d", sl, sr, me);
    int peer = -1;
    if (lrank == 0) { /* the two leaders swap a message over the new inter-communicator */
        int out = me;
        MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 9, &peer, 1, MPI_INT, 0, 9, shrunk, MPI_STATUS_IGNORE));
        CHECK(peer == (in_a ? half : 0), "leader %d heard from %d", me, peer);
    }
    MPI_OK(MPI_Barrier(shrunk));
    MPI_Comm merged;
    MPI_OK(MPI_Intercomm_merge(shrunk, !in_a, &merged));
    int msize, mrank;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    CHECK(msize == size - 1 && mrank == me, "merged: rank %d of %d at %d", mrank, msize, me);

    /* Intercomm_create over a group with a dead member fails in both groups... */
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    MPI_Comm again = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Intercomm_create(local, 0, merged, in_a ? half : 0, 32, &again), MPI_ERR_PROC_FAILED);
    CHECK(again == MPI_COMM_NULL, "a failed Intercomm_create returned a communicator");
    /* ... and succeeds over the shrunk group. */
    MPI_Comm local2;
    MPI_OK(MPIX_Comm_shrink(local, &local2));
    MPI_OK(MPI_Intercomm_create(local2, 0, merged, in_a ? half : 0, 33, &again));
    MPI_OK(MPI_Barrier(again));
    MPI_Comm_free(&again);
    MPI_Comm_free(&local2);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&shrunk);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    if (me == 0) printf("recovery inter: revoke, agree, shrink and uniform creation on inter-communicators\n");
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (!strcmp(mode, "agree_random")) {
        const char *r = getenv("PMIX_RANK"), *n = getenv("FTMPI_TEST_NPROCS");
        (void)n;
        int job_rank = r ? atoi(r) : 0;
        plan_agree_kills(job_rank, 8);
    }
    if (!strcmp(mode, "agree")) setenv("FTMPI_TEST_KILL_AT", "agree.decide:0:6", 1);
    if (!strcmp(mode, "shrink")) setenv("FTMPI_TEST_KILL_AT", "agree.contribute:2", 1);
    tl_init(&argc, &argv, &me, &size,
            !strcmp(mode, "agree")    ? 6
            : !strcmp(mode, "shrink") ? 3
            : !strcmp(mode, "stress") ? 5
                                      : 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (!strcmp(mode, "revoke")) revoke_test();
    else if (!strcmp(mode, "loop")) loop_test(argc > 2 ? atoi(argv[2]) : 100);
    else if (!strcmp(mode, "agree")) agree_test();
    else if (!strcmp(mode, "shrink")) shrink_test();
    else if (!strcmp(mode, "create")) create_test();
    else if (!strcmp(mode, "stress")) stress_test();
    else if (!strcmp(mode, "inter")) {
        CHECK(size >= 4, "recovery inter needs 4 ranks or more");
        inter_test();
    } else if (!strcmp(mode, "agree_random")) {
        CHECK(size == 8, "agree_random plans its kills for 8 ranks");
        agree_random_test();
    } else CHECK(0, "usage: recovery revoke|loop [N]|agree|agree_random S|shrink|stress S|inter");
    MPI_OK(MPI_Finalize());
    return 0;
}
