/*
 * Collectives with members killed in the middle of the operation never hang
 * (issue 5). Every rank but 0 may be a victim: before MPI_Init each picks,
 * from the seed, whether and at which collective round it dies
 * (FTMPI_TEST_KILL_AT=coll.round:<rank>:<n>), so ranks die inside different
 * collectives and at different steps of their algorithms. The survivors run
 * every collective (blocking and nonblocking, small and large) in a loop;
 * each call must return MPI_SUCCESS or MPI_ERR_PROC_FAILED, and in the end
 * every survivor reports the same failed set.
 *
 *   coll_midfail SEED
 *
 * Over shm this found a hang, now fixed: libfabric's shm reports a sender's
 * completions in order, so after a peer died with a transfer of this process
 * pending, a later rendezvous send to a live rank never completed (seeds 2
 * and 4 on 8 ranks). Rendezvous sends over shm now complete on the receiver's
 * FIN (transport/ofi/ofi_transport.cpp).
 */
#define _DEFAULT_SOURCE
#include <stdlib.h>

#include "ftlib.h"

static int me, size;

static void ok_or_failed(int rc, const char *what) {
    CHECK(rc == MPI_SUCCESS || tl_class(rc) == MPI_ERR_PROC_FAILED, "%s: class %d", what, tl_class(rc));
}

/* The round (visit of coll.round) at which job rank r dies, 0 if it lives:
   about half the ranks other than 0, each within its first 300 rounds (every
   rank posts more rounds than that in the loop below, so each planned victim dies). */
static unsigned long long death_round(unsigned long long seed, int r) {
    unsigned long long x = seed * 0x9E3779B97F4A7C15ull + (unsigned long long)r; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return r != 0 && (x & 3) < 2 ? 1 + (x >> 8) % 300 : 0;
}

/* A non-commutative op, so that the ordered reduction trees run too. */
static void first_wins(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)in, (void)inout, (void)len, (void)t; /* inout = in op inout = inout: the higher rank's value */
}

int main(int argc, char **argv) {
    unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    const char *r = getenv("PMIX_RANK");
    const int job_rank = r ? atoi(r) : 0;
    if (death_round(seed, job_rank) > 0) {
        char spec[64];
        snprintf(spec, sizeof spec, "coll.round:%d:%llu", job_rank, death_round(seed, job_rank));
        setenv("FTMPI_TEST_KILL_AT", spec, 1);
    }
    tl_init(&argc, &argv, &me, &size, 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    enum { BIG = 1 << 15 };
    int *a = calloc(BIG * (size_t)size, sizeof(int)), *b = calloc(BIG * (size_t)size, sizeof(int));
    int counts[64], displs[64];
    for (int i = 0; i < size; ++i) counts[i] = 2, displs[i] = 2 * i;
    MPI_Request q;
    MPI_Op ordered;
    MPI_OK(MPI_Op_create(first_wins, 0, &ordered));
    for (int iter = 0; iter < 12; ++iter) {
        const int root = iter % size, big = iter % 3 == 2 ? BIG : 2;
        ok_or_failed(MPI_Barrier(MPI_COMM_WORLD), "barrier");
        ok_or_failed(MPI_Bcast(a, big, MPI_INT, root, MPI_COMM_WORLD), "bcast");
        ok_or_failed(MPI_Reduce(a, b, big, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD), "reduce");
        ok_or_failed(MPI_Allreduce(a, b, big, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "allreduce");
        ok_or_failed(MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, root, MPI_COMM_WORLD), "gather");
        ok_or_failed(MPI_Scatter(a, 2, MPI_INT, b, 2, MPI_INT, root, MPI_COMM_WORLD), "scatter");
        ok_or_failed(MPI_Allgather(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD), "allgather");
        ok_or_failed(MPI_Allgatherv(a, 2, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD), "allgatherv");
        ok_or_failed(MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD), "alltoall");
        ok_or_failed(MPI_Reduce_scatter_block(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "reduce_scatter_block");
        ok_or_failed(MPI_Reduce_scatter_block(a, b, 2, MPI_INT, ordered, MPI_COMM_WORLD),
                     "reduce_scatter_block (ordered)");
        ok_or_failed(MPI_Allreduce(a, b, big, MPI_INT, ordered, MPI_COMM_WORLD), "allreduce (ordered)");
        ok_or_failed(MPI_Gatherv(a, 2, MPI_INT, b, counts, displs, MPI_INT, root, MPI_COMM_WORLD), "gatherv");
        ok_or_failed(MPI_Alltoallv(a, counts, displs, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD),
                     "alltoallv");
        ok_or_failed(MPI_Scan(a, b, big, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "scan");
        ok_or_failed(MPI_Exscan(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "exscan");
        MPI_OK(MPI_Iallreduce(a, b, big, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
        ok_or_failed(MPI_Wait(&q, MPI_STATUS_IGNORE), "iallreduce");
        MPI_OK(MPI_Ibcast(a, big, MPI_INT, root, MPI_COMM_WORLD, &q));
        ok_or_failed(MPI_Wait(&q, MPI_STATUS_IGNORE), "ibcast");
        MPI_OK(MPI_Ialltoall(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD, &q));
        ok_or_failed(MPI_Wait(&q, MPI_STATUS_IGNORE), "ialltoall");
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &q));
        ok_or_failed(MPI_Wait(&q, MPI_STATUS_IGNORE), "ibarrier");
    }
    /* Everyone who was going to die has died by now, or never will: agree on
       the failure count until it is stable, then compare the sets. */
    int stable = 0;
    while (!stable) {
        int failed[256], nf = tl_failed(MPI_COMM_WORLD, failed, 256), f1 = nf, f2 = ~nf;
        MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        MPIX_Comm_agree(MPI_COMM_WORLD, &f1);
        MPIX_Comm_agree(MPI_COMM_WORLD, &f2);
        stable = f1 == nf && f2 == ~nf;
        MPIX_Comm_agree(MPI_COMM_WORLD, &stable);
    }
    /* Exactly the planned victims died, and every survivor knows it. */
    int planned[256], np = 0;
    for (int v = 0; v < size; ++v)
        if (death_round(seed, v) > 0) planned[np++] = v;
    tl_check_agreement(MPI_COMM_WORLD, planned, np);
    const int nf = np;
    if (me == 0) printf("coll_midfail: %d of %d ranks died inside collectives; no hang, survivors agree\n", nf, size);
    MPI_Op_free(&ordered);
    free(a);
    free(b);
    MPI_OK(MPI_Finalize());
    return 0;
}
