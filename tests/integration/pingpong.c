/*
 * Ping-pong with data verification, 0 B to 64 MiB (and sizes around the eager
 * limit), with MPI_Send and MPI_Ssend. Ranks pair up (0,1), (2,3), ...; an odd
 * last rank sends to itself. Every byte is checked in both directions.
 */
#include "testlib.h"

static void exchange(int me, int peer, size_t n, int sync, unsigned char *buf, uint64_t seed) {
    int count = (int)n;
    MPI_Status st;
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = sync ? MPI_Ssend : MPI_Send;
    if (peer == me) {
        MPI_Request r;
        tl_fill(buf, n, seed);
        unsigned char *in = malloc(n ? n : 1);
        MPI_OK(MPI_Irecv(in, count, MPI_BYTE, me, 5, MPI_COMM_WORLD, &r));
        MPI_OK(send(buf, count, MPI_BYTE, me, 5, MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(tl_verify(in, n, seed) == (size_t)-1, "self message of %zu bytes corrupted", n);
        free(in);
        return;
    }
    if (me < peer) {
        tl_fill(buf, n, seed);
        MPI_OK(send(buf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
        memset(buf, 0, n);
        MPI_OK(MPI_Recv(buf, count, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 2, "bad status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        int got = -1;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &got));
        CHECK(got == count, "pong count %d, expected %d", got, count);
        size_t bad = tl_verify(buf, n, seed + 1);
        CHECK(bad == (size_t)-1, "pong of %zu bytes wrong at byte %zu", n, bad);
    } else {
        memset(buf, 0, n);
        MPI_OK(MPI_Recv(buf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st));
        int got = -1;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &got));
        CHECK(got == count, "ping count %d, expected %d", got, count);
        size_t bad = tl_verify(buf, n, seed);
        CHECK(bad == (size_t)-1, "ping of %zu bytes wrong at byte %zu", n, bad);
        tl_fill(buf, n, seed + 1);
        MPI_OK(send(buf, count, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    if (peer >= size) peer = rank;
    const size_t max = (size_t)64 << 20;
    unsigned char *buf = malloc(max);
    CHECK(buf != NULL, "malloc");
    size_t sizes[64];
    int nsizes = 0;
    sizes[nsizes++] = 0;
    for (size_t s = 1; s <= max; s *= 4) sizes[nsizes++] = s;
    size_t odd[] = {7, 4095, 4096, 4097, 16383, 16384, 16385, 65537, 1000003};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; ++i) sizes[nsizes++] = odd[i];
    sizes[nsizes++] = max;
    for (int sync = 0; sync <= 1; ++sync)
        for (int i = 0; i < nsizes; ++i) exchange(rank, peer, sizes[i], sync, buf, (uint64_t)i * 31 + (uint64_t)sync);
    free(buf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("pingpong: %d sizes x {Send, Ssend} verified on %d ranks\n", nsizes, size);
    MPI_Finalize();
    return 0;
}
