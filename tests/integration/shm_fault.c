/*
 * Deaths in the middle of shared-memory transfers (issue 17). The victim v,
 * the last rank, dies (SIGKILL) at a chosen point of the shm fast path, and
 * every survivor gets an error or the exact data: never garbage, never a hang.
 *
 *   shm_fault record  v dies after writing an eager message into its ring to
 *                     rank 0, before publishing it (kill point shm.record):
 *                     rank 0's receive fails with MPI_ERR_PROC_FAILED and its
 *                     buffer is untouched.
 *   shm_fault push    v sends 8 MiB to rank 0 and dies once it has claimed a
 *                     chunk to copy into rank 0's buffer, before copying it
 *                     (shm.push; should rank 0 have taken every chunk, v
 *                     dies once its send returns): rank 0's receive fails
 *                     with MPI_ERR_PROC_FAILED, or holds every byte right.
 *   shm_fault pull    rank 0 sends 8 MiB to v, which dies once it has copied
 *                     its share (shm.pull): rank 0's send succeeds or fails
 *                     with MPI_ERR_PROC_FAILED.
 *   shm_fault stream  without single copy (FTMPI_SHM_CMA=0), rank 0 sends
 *                     8 MiB to v, which dies once it has asked for the data
 *                     (shm.cts): rank 0's send, whose pieces wait for room
 *                     in a ring that v no longer reads, fails with
 *                     MPI_ERR_PROC_FAILED.
 *
 * Then every survivor knows exactly {v} failed, the survivors shrink
 * MPI_COMM_WORLD and pass 8 MiB and 1 KiB messages around a ring of the
 * result, checking every byte, and allreduce over it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "ftlib.h"

enum { BIG = 8 << 20, SMALL = 1024, TAG = 5 };

/* The mode's transfer with the victim v, which dies in it (every rank calls it). */
static void transfer(const char *mode, int me, int v, unsigned char *big, unsigned char *small) {
    if (strcmp(mode, "record") == 0) {
        if (me == v) {
            tl_fill(small, SMALL, 1);
            MPI_Send(small, SMALL, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
            CHECK(0, "the victim survived its send");
        } else if (me == 0) {
            memset(small, 0xab, SMALL);
            CHECK_CLASS(MPI_Recv(small, SMALL, MPI_BYTE, v, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                        MPI_ERR_PROC_FAILED);
            for (int i = 0; i < SMALL; ++i)
                if (small[i] != 0xab) {
                    CHECK(0, "the receive buffer was written at byte %d", i);
                    break;
                }
        }
    } else if (strcmp(mode, "push") == 0) {
        if (me == v) {
            tl_fill(big, BIG, 2);
            MPI_Send(big, BIG, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
            tl_die(SIGKILL); /* rank 0 copied it all: v never reached shm.push */
        } else if (me == 0) {
            memset(big, 0, BIG);
            const int c = tl_class(MPI_Recv(big, BIG, MPI_BYTE, v, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(c == MPI_SUCCESS || c == MPI_ERR_PROC_FAILED, "receive from the dying sender: class %d", c);
            if (c == MPI_SUCCESS) CHECK(tl_verify(big, BIG, 2) == (size_t)-1, "the data is wrong");
            printf("push: receive %s\n", c == MPI_SUCCESS ? "complete" : "failed");
        }
    } else if (strcmp(mode, "stream") == 0) {
        if (me == v) {
            MPI_Recv(big, BIG, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(0, "the victim survived its receive");
        } else if (me == 0) {
            tl_fill(big, BIG, 4);
            CHECK_CLASS(MPI_Send(big, BIG, MPI_BYTE, v, TAG, MPI_COMM_WORLD), MPI_ERR_PROC_FAILED);
        }
    } else {
        if (me == v) {
            MPI_Recv(big, BIG, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(0, "the victim survived its receive");
        } else if (me == 0) {
            tl_fill(big, BIG, 3);
            const int c = tl_class(MPI_Send(big, BIG, MPI_BYTE, v, TAG, MPI_COMM_WORLD));
            CHECK(c == MPI_SUCCESS || c == MPI_ERR_PROC_FAILED, "send to the dying receiver: class %d", c);
            printf("pull: send %s\n", c == MPI_SUCCESS ? "complete" : "failed");
        }
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    const char *r = getenv("PMIX_RANK"), *n = getenv("PMI_SIZE");
    if (r == NULL || n == NULL) {
        fprintf(stderr, "run under ftmpirun\n");
        return 2;
    }
    /* The victim, the last rank, dies at its first visit of the mode's kill
       point (set before MPI_Init reads it). */
    const char *site = strcmp(mode, "record") == 0   ? "shm.record"
                       : strcmp(mode, "push") == 0   ? "shm.push"
                       : strcmp(mode, "pull") == 0   ? "shm.pull"
                       : strcmp(mode, "stream") == 0 ? "shm.cts"
                                                     : NULL;
    if (site == NULL) {
        fprintf(stderr, "usage: shm_fault record|push|pull|stream\n");
        return 2;
    }
    int me = 0, size = 0;
    const int job_rank = r ? atoi(r) : 0, v_job = (n ? atoi(n) : 0) - 1;
    char spec[64];
    snprintf(spec, sizeof spec, "%s:%d:1", site, v_job);
    if (job_rank == v_job) setenv("FTMPI_TEST_KILL_AT", spec, 1);
    /* push and pull are single-copy points, which a node with more ranks
       than cores (3 on CI's 2) leaves out by default. */
    if (strcmp(mode, "push") == 0 || strcmp(mode, "pull") == 0) setenv("FTMPI_SHM_CMA", "1", 1);
    if (strcmp(mode, "stream") == 0) setenv("FTMPI_SHM_CMA", "0", 1);

    tl_init(&argc, &argv, &me, &size, 3);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int v = size - 1;
    CHECK(v == v_job, "victim %d, job size says %d", v, v_job);
    unsigned char *big = malloc(BIG), *small = malloc(SMALL);

    transfer(mode, me, v, big, small);

    /* Every survivor learns of exactly v, and the survivors carry on. */
    CHECK(tl_wait_failed(MPI_COMM_WORLD, 1, 30) == 1, "rank %d never learned of the failure", me);
    const int expect[1] = {v};
    tl_check_agreement(MPI_COMM_WORLD, expect, 1);
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    int sme, sn;
    MPI_Comm_rank(s, &sme);
    MPI_Comm_size(s, &sn);
    CHECK(sn == size - 1, "shrunk to %d ranks", sn);
    const int right = (sme + 1) % sn, left = (sme - 1 + sn) % sn;
    unsigned char *in = malloc(BIG);
    for (int round = 0; round < 3; ++round) {
        tl_fill(big, BIG, 100 + (uint64_t)sme * 7 + round);
        MPI_OK(MPI_Sendrecv(big, BIG, MPI_BYTE, right, TAG, in, BIG, MPI_BYTE, left, TAG, s, MPI_STATUS_IGNORE));
        CHECK(tl_verify(in, BIG, 100 + (uint64_t)left * 7 + round) == (size_t)-1, "ring of 8 MiB, round %d", round);
        tl_fill(small, SMALL, 200 + (uint64_t)sme + round);
        MPI_OK(MPI_Sendrecv(small, SMALL, MPI_BYTE, right, TAG, in, SMALL, MPI_BYTE, left, TAG, s, MPI_STATUS_IGNORE));
        CHECK(tl_verify(in, SMALL, 200 + (uint64_t)left + round) == (size_t)-1, "ring of 1 KiB, round %d", round);
    }
    int one = 1, total = 0;
    MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, s));
    CHECK(total == sn, "allreduce over the survivors: %d", total);
    MPI_Comm_free(&s);
    free(in);
    free(big);
    free(small);
    if (me == 0) printf("shm_fault %s: the survivors agree that rank %d failed and carry on\n", mode, v);
    MPI_OK(MPI_Finalize());
    return 0;
}
