/*
 * A 1 GiB message (1 << 30 MPI_BYTE) and back, then 0- and 1-byte messages.
 *
 * Any nprocs >= 2; ranks 0 and 1 work, the others only join the barriers.
 * Rank 0 sends 1 GiB to rank 1, which checks it and sends it back; rank 0
 * checks the echo. Checking is cheap: every 4096th byte and the last byte
 * carry tl_pattern(SEED, offset), and one 1 MiB window (at an unaligned offset
 * in the middle) is filled with tl_fill(SEED2) and checked whole with
 * tl_verify. The receiving buffers are set to the complement of the expected
 * bytes first, so undelivered data cannot pass. One 1 GiB buffer per rank.
 */
#include "testlib.h"

#define BIG ((size_t)1 << 30)
#define STRIDE 4096
#define WIN_OFF ((size_t)512 * 1024 * 1024 + 12345)
#define WIN_LEN ((size_t)1 << 20)
#define SEED 0xb16b00b5ull
#define SEED2 0x5eed2ull
#define TAG_BIG 1
#define TAG_ECHO 2

static int in_window(size_t i) { return i >= WIN_OFF && i < WIN_OFF + WIN_LEN; }

static unsigned char expected(size_t i) { return in_window(i) ? tl_pattern(SEED2, i - WIN_OFF) : tl_pattern(SEED, i); }

static void fill(unsigned char *buf) {
    for (size_t i = 0; i < BIG; i += STRIDE) buf[i] = tl_pattern(SEED, i);
    buf[BIG - 1] = tl_pattern(SEED, BIG - 1);
    tl_fill(buf + WIN_OFF, WIN_LEN, SEED2);
}

/* Makes every checked byte wrong. */
static void spoil(unsigned char *buf) {
    for (size_t i = 0; i < BIG; i += STRIDE) buf[i] = (unsigned char)~expected(i);
    buf[BIG - 1] = (unsigned char)~expected(BIG - 1);
    for (size_t i = 0; i < WIN_LEN; ++i) buf[WIN_OFF + i] = (unsigned char)~tl_pattern(SEED2, i);
}

static void verify(const unsigned char *buf, const char *what) {
    for (size_t i = 0; i < BIG; i += STRIDE)
        CHECK(buf[i] == expected(i), "%s: byte %zu is %u, expected %u", what, i, buf[i], expected(i));
    CHECK(buf[BIG - 1] == expected(BIG - 1), "%s: last byte wrong", what);
    size_t bad = tl_verify(buf + WIN_OFF, WIN_LEN, SEED2);
    CHECK(bad == (size_t)-1, "%s: byte %zu of the 1 MiB window (offset %zu) wrong", what, bad, WIN_OFF + bad);
}

static void check_status(const MPI_Status *st, int src, int tag, int count, const char *what) {
    int cnt = -1;
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag, "%s: source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
    CHECK(cnt == count, "%s: MPI_Get_count %d, expected %d", what, cnt, count);
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);

    if (rank < 2) {
        const int peer = 1 - rank;
        MPI_Status st;
        double t0, t1;
        unsigned char *buf = malloc(BIG);
        CHECK(buf != NULL, "malloc of 1 GiB failed");
        t0 = MPI_Wtime();
        if (rank == 0) {
            fill(buf);
            MPI_OK(MPI_Send(buf, (int)BIG, MPI_BYTE, peer, TAG_BIG, MPI_COMM_WORLD));
            spoil(buf);
            MPI_OK(MPI_Recv(buf, (int)BIG, MPI_BYTE, peer, TAG_ECHO, MPI_COMM_WORLD, &st));
            check_status(&st, peer, TAG_ECHO, (int)BIG, "echo of 1 GiB");
            verify(buf, "echo of 1 GiB");
        } else {
            spoil(buf);
            MPI_OK(MPI_Recv(buf, (int)BIG, MPI_BYTE, peer, TAG_BIG, MPI_COMM_WORLD, &st));
            check_status(&st, peer, TAG_BIG, (int)BIG, "1 GiB");
            verify(buf, "1 GiB");
            MPI_OK(MPI_Send(buf, (int)BIG, MPI_BYTE, peer, TAG_ECHO, MPI_COMM_WORLD));
        }
        t1 = MPI_Wtime();
        if (rank == 0) printf("bigmsg: 1 GiB there and back in %.2f s\n", t1 - t0);
        free(buf);

        /* Count 0 (with a NULL buffer too) and 1 byte, both directions. */
        for (int rep = 0; rep < 2; ++rep) {
            unsigned char one = (unsigned char)(0xa0 + rep), got = 0;
            int zero = 7;
            if (rank == rep) {
                MPI_OK(MPI_Send(&zero, 0, MPI_INT, peer, 10, MPI_COMM_WORLD));
                MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 11, MPI_COMM_WORLD));
                MPI_OK(MPI_Send(&one, 1, MPI_BYTE, peer, 12, MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Recv(&zero, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, &st));
                check_status(&st, peer, 10, 0, "count 0");
                CHECK(zero == 7, "a 0-count message wrote the buffer");
                MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &st));
                check_status(&st, peer, 11, 0, "count 0, NULL buffers");
                MPI_OK(MPI_Recv(&got, 1, MPI_BYTE, peer, 12, MPI_COMM_WORLD, &st));
                check_status(&st, peer, 12, 1, "1 byte");
                CHECK(got == one, "1-byte message: got %u, expected %u", got, one);
            }
        }
    }

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("bigmsg: OK (%d ranks)\n", size);
    return 0;
}
