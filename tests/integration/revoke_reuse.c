/*
 * Correctness after revoke (issue 10): no message of one communicator ever
 * matches on another, and pending operations on a revoked communicator
 * complete, whatever their protocol stage.
 *
 *   revoke_reuse free R BYTES
 *       R rounds of: MPI_Comm_dup(MPI_COMM_WORLD, &f); allreduce of BYTES
 *       (doubles) on f; barrier on MPI_COMM_WORLD; on odd rounds the last
 *       rank revokes f and every rank's second allreduce on f must fail with
 *       MPI_ERR_REVOKED; on even rounds it must succeed; MPI_Comm_free(&f).
 *       Contributions carry the round number, so a message of an earlier
 *       communicator matched on a later one (same context) shows as a wrong
 *       value or MPI_ERR_TRUNCATE. Every result is checked.
 *   revoke_reuse exchange R BYTES shrink|free
 *       R rounds of: every rank posts receives from and sends of BYTES to its
 *       two neighbours, plus a receive from the round's revoker that it never
 *       sends; the revoker revokes after posting its own transfers. Every
 *       request must end with MPI_SUCCESS (and the right data) or
 *       MPI_ERR_REVOKED, the never-matched receive with MPI_ERR_REVOKED. Then
 *       the communicator is shrunk (or freed and MPI_COMM_WORLD dup'ed again)
 *       and checked with an allreduce.
 *   revoke_reuse cycle R BYTES
 *       R cycles of: allreduce of BYTES on the communicator (checked), an
 *       agree (so that no revoke interrupts a rank still in the allreduce),
 *       one rank revokes it, everyone shrinks it and frees the old one.
 */
#include "ftlib.h"

static int me, size;

static void fill_doubles(double *v, size_t n, double x) {
    for (size_t i = 0; i < n; ++i) v[i] = x;
}

/* How many of the n doubles differ from x. */
static size_t wrong_doubles(const double *v, size_t n, double x) {
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += v[i] != x;
    return bad;
}

static void free_test(int rounds, size_t bytes) {
    size_t n = bytes / sizeof(double);
    if (n == 0) n = 1;
    double *in = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
    CHECK(in && out, "out of memory");
    long wrong = 0, bad_codes = 0;
    for (int round = 0; round < rounds; ++round) {
        MPI_Comm f;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &f));
        MPI_OK(MPI_Comm_set_errhandler(f, MPI_ERRORS_RETURN));
        fill_doubles(in, n, round);
        fill_doubles(out, n, -1);
        int rc = MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, f);
        if (rc != MPI_SUCCESS) {
            ++bad_codes;
            fprintf(stderr, "rank %d round %d: first allreduce class %d\n", me, round, tl_class(rc));
        } else if (wrong_doubles(out, n, (double)round * size)) {
            ++wrong;
            fprintf(stderr, "rank %d round %d: first allreduce gave %g, expected %g\n", me, round, out[0],
                    (double)round * size);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        fill_doubles(in, n, round + 0.5);
        fill_doubles(out, n, -1);
        if (round % 2) {
            if (me == size - 1) MPI_OK(MPIX_Comm_revoke(f));
            rc = MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, f);
            if (tl_class(rc) != MPIX_ERR_REVOKED) {
                ++bad_codes;
                fprintf(stderr, "rank %d round %d: allreduce on the revoked communicator: class %d\n", me, round,
                        tl_class(rc));
            }
        } else {
            rc = MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, f);
            if (rc != MPI_SUCCESS) {
                ++bad_codes;
                fprintf(stderr, "rank %d round %d: second allreduce class %d\n", me, round, tl_class(rc));
            } else if (wrong_doubles(out, n, (round + 0.5) * size)) {
                ++wrong;
                fprintf(stderr, "rank %d round %d: second allreduce gave %g, expected %g\n", me, round, out[0],
                        (round + 0.5) * size);
            }
        }
        MPI_OK(MPI_Comm_free(&f));
    }
    long mine[2] = {wrong, bad_codes}, all[2];
    MPI_OK(MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (me == 0)
        printf("revoke_reuse free: %d rounds, %zu bytes, %d ranks: %ld wrong results, %ld unexpected codes\n", rounds,
               n * sizeof(double), size, all[0], all[1]);
    CHECK(all[0] == 0 && all[1] == 0, "%ld wrong results, %ld unexpected codes", all[0], all[1]);
    free(in);
    free(out);
}

/* Message from `from` to `to` in round `round` (its seed). */
static uint64_t seed_of(int round, int from, int to) {
    return ((uint64_t)round << 32) ^ ((uint64_t)from << 16) ^ (uint64_t)to;
}

/* Nobody may revoke c while another is still inside a collective on it:
   agree waits for every member and cannot itself be revoked. */
static void quiesce(MPI_Comm c, int round) {
    int go = 1;
    MPI_OK(MPIX_Comm_agree(c, &go));
    CHECK(go == 1, "round %d: agree gave %d", round, go);
}

static void check_new_comm(MPI_Comm c, int want_size, int round) {
    int n, sum = 0, one = 1;
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(n == want_size, "round %d: new communicator has %d ranks, expected %d", round, n, want_size);
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == want_size, "round %d: allreduce on the new communicator gave %d", round, sum);
    quiesce(c, round);
}

static void exchange_test(int rounds, size_t bytes, int shrink) {
    unsigned char *sbuf[2], *rbuf[2];
    for (int i = 0; i < 2; ++i) {
        sbuf[i] = malloc(bytes ? bytes : 1);
        rbuf[i] = malloc(bytes ? bytes : 1);
        CHECK(sbuf[i] && rbuf[i], "out of memory");
    }
    int never = 0;
    long revoked = 0, succeeded = 0;
    MPI_Comm f;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &f));
    MPI_OK(MPI_Comm_set_errhandler(f, MPI_ERRORS_RETURN));
    for (int round = 0; round < rounds; ++round) {
        const int revoker = round % size;
        const int peer[2] = {(me + size - 1) % size, (me + 1) % size};
        MPI_Request req[5];
        int nreq = 0;
        for (int i = 0; i < 2; ++i) {
            memset(rbuf[i], 0, bytes);
            MPI_OK(MPI_Irecv(rbuf[i], (int)bytes, MPI_BYTE, peer[i], 7 + i, f, &req[nreq++]));
        }
        for (int i = 0; i < 2; ++i) {
            tl_fill(sbuf[i], bytes, seed_of(round, me, peer[i]));
            /* To the left with tag 8 (its right receive), to the right with 7. */
            MPI_OK(MPI_Isend(sbuf[i], (int)bytes, MPI_BYTE, peer[i], 8 - i, f, &req[nreq++]));
        }
        if (me != revoker) MPI_OK(MPI_Irecv(&never, 1, MPI_INT, revoker, 9, f, &req[nreq++]));
        else MPI_OK(MPIX_Comm_revoke(f));
        MPI_Status st[5];
        const int rc = MPI_Waitall(nreq, req, st);
        CHECK(rc == MPI_SUCCESS || tl_class(rc) == MPI_ERR_IN_STATUS || tl_class(rc) == MPIX_ERR_REVOKED,
              "round %d: Waitall class %d", round, tl_class(rc));
        for (int i = 0; i < nreq; ++i) {
            const int c = rc == MPI_SUCCESS ? MPI_SUCCESS : tl_class(st[i].MPI_ERROR);
            if (i == 4) {
                CHECK(c == MPIX_ERR_REVOKED, "round %d: the receive nobody sends ended with class %d", round, c);
                continue;
            }
            CHECK(c == MPI_SUCCESS || c == MPIX_ERR_REVOKED, "round %d: request %d ended with class %d", round, i, c);
            if (c == MPIX_ERR_REVOKED) {
                ++revoked;
                continue;
            }
            ++succeeded;
            if (i < 2) {
                const size_t at = tl_verify(rbuf[i], bytes, seed_of(round, peer[i], me));
                CHECK(at == (size_t)-1, "round %d: data from %d wrong at byte %zu", round, peer[i], at);
            }
        }
        int is = 0;
        MPI_OK(MPIX_Comm_is_revoked(f, &is));
        CHECK(is, "round %d: communicator not revoked after Waitall", round);
        MPI_Comm next;
        if (shrink) {
            MPI_OK(MPIX_Comm_shrink(f, &next));
        } else {
            MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &next));
        }
        MPI_OK(MPI_Comm_free(&f));
        f = next;
        MPI_OK(MPI_Comm_set_errhandler(f, MPI_ERRORS_RETURN));
        check_new_comm(f, size, round);
    }
    MPI_OK(MPI_Comm_free(&f));
    long mine[2] = {succeeded, revoked}, all[2];
    MPI_OK(MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (me == 0)
        printf("revoke_reuse exchange: %d rounds, %zu bytes, %d ranks (%s): %ld transfers succeeded, %ld revoked\n",
               rounds, bytes, size, shrink ? "shrink" : "free", all[0], all[1]);
    for (int i = 0; i < 2; ++i) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
}

static void cycle_test(int cycles, size_t bytes) {
    size_t n = bytes / sizeof(double);
    if (n == 0) n = 1;
    double *in = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
    CHECK(in && out, "out of memory");
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    for (int k = 0; k < cycles; ++k) {
        fill_doubles(in, n, k);
        fill_doubles(out, n, -1);
        MPI_OK(MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, c));
        CHECK(!wrong_doubles(out, n, (double)k * size), "cycle %d: allreduce gave %g, expected %g", k, out[0],
              (double)k * size);
        quiesce(c, k);
        if (me == k % size) MPI_OK(MPIX_Comm_revoke(c));
        MPI_Comm next;
        MPI_OK(MPIX_Comm_shrink(c, &next));
        MPI_OK(MPI_Comm_free(&c));
        c = next;
        MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    }
    MPI_OK(MPI_Comm_free(&c));
    if (me == 0) printf("revoke_reuse cycle: %d cycles, %zu bytes, %d ranks\n", cycles, n * sizeof(double), size);
    free(in);
    free(out);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &me, &size, 2);
    const char *mode = argc > 1 ? argv[1] : "free";
    const int rounds = argc > 2 ? atoi(argv[2]) : 50;
    const size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : 8;
    if (!strcmp(mode, "free")) free_test(rounds, bytes);
    else if (!strcmp(mode, "exchange")) exchange_test(rounds, bytes, argc > 4 && !strcmp(argv[4], "shrink"));
    else if (!strcmp(mode, "cycle")) cycle_test(rounds, bytes);
    else CHECK(0, "usage: revoke_reuse free|exchange|cycle ROUNDS BYTES [shrink|free]");
    MPI_OK(MPI_Finalize());
    return 0;
}
