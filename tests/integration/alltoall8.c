/*
 * All-to-all point-to-point stress: every rank Isends to every other rank one
 * message of each size (0 B, 1 B, 4 KiB, 16 KiB = the eager limit, 16 KiB + 1,
 * 200 KiB) and receives them with Irecvs from MPI_ANY_SOURCE, one tag per
 * size; Waitall; then every receive is checked: status tag = its size's tag,
 * MPI_Get_count = the size, each source exactly once per size, content = the
 * pattern of (source, destination, size). Repeated 20 times; even iterations
 * post the receives first, odd ones the sends first (unexpected messages,
 * rendezvous included); the send order rotates per rank.
 *
 * Any nprocs >= 2; meant for 8 ranks on 2 cores (oversubscribed).
 */
#include "testlib.h"

#define NSIZES 6
#define ITERS 20
/* Tags differ per iteration: a rank that finished iteration `it` may already
   send iteration it+1's messages, which must not match a wildcard receive that
   another rank still has open for iteration `it`. */
#define TAG0 100

static const size_t sizes[NSIZES] = {0, 1, 4096, 16384, 16385, 200 * 1024};

static uint64_t seed_of(int src, int dst, int k) {
    return ((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ ((uint64_t)k << 8) ^ 0xa11;
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);

    const int npeers = size - 1;
    const int nmsg = npeers * NSIZES;
    size_t per_peer = 0;
    for (int k = 0; k < NSIZES; ++k) per_peer += sizes[k] + 1; /* +1: no zero-size slots */
    unsigned char *sendbuf = malloc(per_peer * (size_t)size);
    unsigned char *recvbuf = malloc(per_peer * (size_t)npeers);
    MPI_Request *reqs = malloc(2 * (size_t)nmsg * sizeof *reqs);
    MPI_Status *sts = malloc(2 * (size_t)nmsg * sizeof *sts);
    unsigned char *seen = malloc((size_t)size * NSIZES);
    CHECK(sendbuf && recvbuf && reqs && sts && seen, "malloc");

    /* Send data: region of destination d, size k; deterministic per (rank, d, k). */
#define SEND_AT(d, k) (sendbuf + (size_t)(d)*per_peer + offs[k])
#define RECV_AT(j, k) (recvbuf + (size_t)(j)*per_peer + offs[k])
    size_t offs[NSIZES];
    {
        size_t o = 0;
        for (int k = 0; k < NSIZES; ++k) {
            offs[k] = o;
            o += sizes[k] + 1;
        }
    }
    for (int d = 0; d < size; ++d)
        for (int k = 0; k < NSIZES; ++k) tl_fill(SEND_AT(d, k), sizes[k], seed_of(rank, d, k));

    for (int it = 0; it < ITERS; ++it) {
        MPI_Request *rreqs = reqs, *sreqs = reqs + nmsg;
        MPI_Status *rsts = sts;
        memset(recvbuf, 0, per_peer * (size_t)npeers);
        memset(seen, 0, (size_t)size * NSIZES);
        for (int phase = 0; phase < 2; ++phase) {
            const int post_recvs = (phase == 0) == (it % 2 == 0);
            if (post_recvs) {
                /* Receive slot (j, k): the j-th receive of size k, from whoever matches. */
                for (int k = 0; k < NSIZES; ++k)
                    for (int j = 0; j < npeers; ++j)
                        MPI_OK(MPI_Irecv(RECV_AT(j, k), (int)sizes[k], MPI_BYTE, MPI_ANY_SOURCE, TAG0 + it * NSIZES + k,
                                         MPI_COMM_WORLD, &rreqs[k * npeers + j]));
            } else {
                int n = 0;
                /* Rotate the destination order with the rank and the iteration. */
                for (int step = 0; step < npeers; ++step) {
                    const int d = (rank + 1 + (step + it) % npeers) % size;
                    for (int kk = 0; kk < NSIZES; ++kk) {
                        const int k = (it % 2) ? NSIZES - 1 - kk : kk;
                        MPI_OK(MPI_Isend(SEND_AT(d, k), (int)sizes[k], MPI_BYTE, d, TAG0 + it * NSIZES + k,
                                         MPI_COMM_WORLD, &sreqs[n++]));
                    }
                }
                CHECK(n == nmsg, "posted %d sends, expected %d", n, nmsg);
            }
        }
        /* A Waitall that succeeds leaves MPI_ERROR alone (MPI-3.1 section 3.2.5). */
        for (int i = 0; i < 2 * nmsg; ++i) sts[i].MPI_ERROR = -7;
        MPI_OK(MPI_Waitall(2 * nmsg, reqs, sts));
        for (int i = 0; i < 2 * nmsg; ++i) CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
        for (int k = 0; k < NSIZES; ++k) {
            for (int j = 0; j < npeers; ++j) {
                const MPI_Status *st = &rsts[k * npeers + j];
                const int src = st->MPI_SOURCE;
                int cnt = -1;
                CHECK(st->MPI_ERROR == -7, "iter %d size %zu: MPI_ERROR %d written", it, sizes[k], st->MPI_ERROR);
                CHECK(src >= 0 && src < size && src != rank, "iter %d size %zu: source %d", it, sizes[k], src);
                CHECK(st->MPI_TAG == TAG0 + it * NSIZES + k, "iter %d size %zu: tag %d", it, sizes[k], st->MPI_TAG);
                CHECK(!seen[src * NSIZES + k], "iter %d size %zu: two messages from %d", it, sizes[k], src);
                seen[src * NSIZES + k] = 1;
                MPI_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
                CHECK(cnt == (int)sizes[k], "iter %d: count %d from %d, expected %zu", it, cnt, src, sizes[k]);
                size_t bad = tl_verify(RECV_AT(j, k), sizes[k], seed_of(src, rank, k));
                CHECK(bad == (size_t)-1, "iter %d: message of %zu B from rank %d wrong at offset %zu", it, sizes[k],
                      src, bad);
            }
        }
    }

    free(sendbuf);
    free(recvbuf);
    free(reqs);
    free(sts);
    free(seen);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("alltoall8: OK (%d ranks, %d iterations)\n", size, ITERS);
    return 0;
}
