/*
 * Buffered sends: MPI_Buffer_attach / MPI_Bsend / MPI_Ibsend / MPI_Buffer_detach.
 *
 * Any nprocs >= 2. Ranks are paired (0,1), (2,3), ...: the even rank sends,
 * the odd one receives; with an odd size the last rank only runs the local
 * parts.
 *   1. (every rank, MPI_ERRORS_RETURN on MPI_COMM_WORLD) a Bsend with no
 *      buffer attached returns MPI_ERR_BUFFER; with a buffer attached, a
 *      Bsend/Ibsend bigger than the buffer returns MPI_ERR_BUFFER; neither
 *      delivers anything.
 *   2. (pairs) a buffer of exactly NR * (RNDV_LEN + MPI_BSEND_OVERHEAD) bytes
 *      holds NR rendezvous Bsends of RNDV_LEN (an odd size) at the same time
 *      (the receiver posts nothing until all are sent).
 *   3. (pairs, twice) the sender attaches a buffer of exactly
 *      sum(message size + MPI_BSEND_OVERHEAD) for NR rendezvous messages, NE
 *      eager messages (odd sizes) and NI Ibsends, sends them all before the
 *      receiver posts anything, each Ibsend request completes (the user buffer
 *      is then overwritten), then detaches: the address and size are the ones
 *      attached. The receiver checks every message, in order per tag.
 *   4. (pairs) the buffer is reused with a smaller size: 30 Bsends through a
 *      buffer holding two at a time (the receiver acknowledges each one).
 */
#include "testlib.h"

#define NE 20
#define NR 4
#define NI 6
#define EAGER_LEN 1001
#define RNDV_LEN 100003
#define IB_LEN(k) ((k) % 2 ? (size_t)(40000 + 7 * (k)) : (size_t)(500 + 13 * (k)))
#define TAG_E 1
#define TAG_R 2
#define TAG_I 3
#define TAG_READY 4
#define TAG_BAD 5
#define TAG_REUSE 6

static int rank, size, partner;

static int err_class(int rc) {
    int cls = -1;
    MPI_OK(MPI_Error_class(rc, &cls));
    return cls;
}

static size_t total_len(void) {
    size_t t = (size_t)NE * EAGER_LEN + (size_t)NR * RNDV_LEN;
    for (int k = 0; k < NI; ++k) t += IB_LEN(k);
    return t;
}

static uint64_t seed_of(int kind, int k, int src) {
    return ((uint64_t)kind << 40) ^ ((uint64_t)k << 20) ^ (uint64_t)src;
}

static void local_errors(void) {
    unsigned char msg[256], small[200];
    void *addr = NULL;
    int sz = -1, rc;
    MPI_Request req = MPI_REQUEST_NULL;
    const int dest = (rank + 1) % size;
    memset(msg, 1, sizeof msg);

    rc = MPI_Bsend(msg, 10, MPI_BYTE, dest, TAG_BAD, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_BUFFER, "Bsend without a buffer: rc %d (class %d)", rc,
          err_class(rc));
    rc = MPI_Ibsend(msg, 10, MPI_BYTE, dest, TAG_BAD, MPI_COMM_WORLD, &req);
    CHECK(rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_BUFFER, "Ibsend without a buffer: rc %d", rc);

    MPI_OK(MPI_Buffer_attach(small, (int)sizeof small));
    /* The message alone is as big as the buffer: no room for the overhead. */
    rc = MPI_Bsend(msg, (int)sizeof small, MPI_BYTE, dest, TAG_BAD, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_BUFFER, "Bsend bigger than the buffer: rc %d", rc);
    rc = MPI_Bsend(msg, (int)sizeof msg, MPI_BYTE, dest, TAG_BAD, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_BUFFER, "Bsend of 256 B into a 200 B buffer: rc %d", rc);
    rc = MPI_Ibsend(msg, (int)sizeof msg, MPI_BYTE, dest, TAG_BAD, MPI_COMM_WORLD, &req);
    CHECK(rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_BUFFER, "Ibsend bigger than the buffer: rc %d", rc);
    /* A send to MPI_PROC_NULL needs no buffer space and succeeds. */
    MPI_OK(MPI_Bsend(msg, (int)sizeof msg, MPI_BYTE, MPI_PROC_NULL, TAG_BAD, MPI_COMM_WORLD));
    MPI_OK(MPI_Buffer_detach(&addr, &sz));
    CHECK(addr == (void *)small && sz == (int)sizeof small, "detach gave %p/%d, attached %p/%d", addr, sz,
          (void *)small, (int)sizeof small);

    /* Still no buffer after the detach. */
    rc = MPI_Bsend(msg, 1, MPI_BYTE, dest, TAG_BAD, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_BUFFER, "Bsend after detach: rc %d", rc);

    /* None of the failed sends delivered anything. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        int flag = -1;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_BAD, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a failed buffered send delivered a message");
    }
}

static void sender(unsigned char *data, unsigned char *buffer, int bufsize) {
    void *addr = NULL;
    int sz = -1, ready = 0;
    MPI_Request ireqs[NI];
    size_t off = 0;

    MPI_OK(MPI_Buffer_attach(buffer, bufsize));
    /* The receiver posts nothing until it gets TAG_READY, so every message
     * (rendezvous ones especially) is held in the attached buffer at once. */
    for (int k = 0; k < NR; ++k) {
        tl_fill(data + off, RNDV_LEN, seed_of(TAG_R, k, rank));
        MPI_OK(MPI_Bsend(data + off, RNDV_LEN, MPI_BYTE, partner, TAG_R, MPI_COMM_WORLD));
        off += RNDV_LEN;
    }
    for (int k = 0; k < NE; ++k) {
        tl_fill(data + off, EAGER_LEN, seed_of(TAG_E, k, rank));
        MPI_OK(MPI_Bsend(data + off, EAGER_LEN, MPI_BYTE, partner, TAG_E, MPI_COMM_WORLD));
        off += EAGER_LEN;
    }
    for (int k = 0; k < NI; ++k) {
        int flag = 0;
        tl_fill(data + off, IB_LEN(k), seed_of(TAG_I, k, rank));
        MPI_OK(MPI_Ibsend(data + off, (int)IB_LEN(k), MPI_BYTE, partner, TAG_I, MPI_COMM_WORLD, &ireqs[k]));
        /* The data is in the attached buffer: the user buffer may be reused
         * once the request completes; scribble over it after completion. */
        if (k % 2) {
            MPI_Status st;
            while (!flag) MPI_OK(MPI_Test(&ireqs[k], &flag, &st));
        } else {
            MPI_OK(MPI_Wait(&ireqs[k], MPI_STATUS_IGNORE));
        }
        CHECK(ireqs[k] == MPI_REQUEST_NULL, "Ibsend request %d not freed on completion", k);
        memset(data + off, 0x77, IB_LEN(k));
        off += IB_LEN(k);
    }
    /* Bsend buffers are reusable at once, too. */
    memset(data, 0x55, off);
    MPI_OK(MPI_Send(&ready, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD));
    MPI_OK(MPI_Buffer_detach(&addr, &sz)); /* waits until everything is delivered */
    CHECK(addr == (void *)buffer, "Buffer_detach returned %p, attached %p", addr, (void *)buffer);
    CHECK(sz == bufsize, "Buffer_detach returned size %d, attached %d", sz, bufsize);
}

static void receiver(unsigned char *data) {
    int ready = -1;
    MPI_Status st;
    int cnt = -1;
    MPI_OK(MPI_Recv(&ready, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* Receive in an order different from the sending one; per tag the order holds. */
    for (int k = 0; k < NE; ++k) {
        memset(data, 0, EAGER_LEN);
        MPI_OK(MPI_Recv(data, EAGER_LEN, MPI_BYTE, partner, TAG_E, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == EAGER_LEN, "eager Bsend %d: count %d", k, cnt);
        CHECK(tl_verify(data, EAGER_LEN, seed_of(TAG_E, k, partner)) == (size_t)-1, "eager Bsend %d: data", k);
    }
    for (int k = 0; k < NI; ++k) {
        memset(data, 0, IB_LEN(k));
        MPI_OK(MPI_Recv(data, (int)IB_LEN(k), MPI_BYTE, partner, TAG_I, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == (int)IB_LEN(k), "Ibsend %d: count %d", k, cnt);
        CHECK(tl_verify(data, IB_LEN(k), seed_of(TAG_I, k, partner)) == (size_t)-1, "Ibsend %d: data", k);
    }
    for (int k = 0; k < NR; ++k) {
        memset(data, 0, RNDV_LEN);
        MPI_OK(MPI_Recv(data, RNDV_LEN, MPI_BYTE, partner, TAG_R, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == RNDV_LEN, "rendezvous Bsend %d: count %d", k, cnt);
        CHECK(tl_verify(data, RNDV_LEN, seed_of(TAG_R, k, partner)) == (size_t)-1, "rendezvous Bsend %d: data", k);
    }
}

/* The buffer sized exactly as the standard says (sum of message size +
 * MPI_BSEND_OVERHEAD) holds NR rendezvous messages of an odd size at once. */
static void exact_fit(unsigned char *data, unsigned char *buffer) {
    const int bufsize = NR * (RNDV_LEN + MPI_BSEND_OVERHEAD);
    MPI_Status st;
    int cnt = -1, ready = 0;
    if (rank % 2 == 0) {
        void *addr = NULL;
        int sz = -1;
        MPI_OK(MPI_Buffer_attach(buffer, bufsize));
        for (int k = 0; k < NR; ++k) {
            int rc;
            tl_fill(data, RNDV_LEN, seed_of(TAG_R + 10, k, rank));
            rc = MPI_Bsend(data, RNDV_LEN, MPI_BYTE, partner, TAG_R, MPI_COMM_WORLD);
            CHECK(rc == MPI_SUCCESS,
                  "Bsend %d of %d (%d B each) into a buffer of %d = %d * (%d + MPI_BSEND_OVERHEAD) B: rc %d (class %d)",
                  k, NR, RNDV_LEN, bufsize, NR, RNDV_LEN, rc, err_class(rc));
        }
        MPI_OK(MPI_Send(&ready, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD));
        MPI_OK(MPI_Buffer_detach(&addr, &sz));
        CHECK(addr == (void *)buffer && sz == bufsize, "exact fit: detach gave %p/%d", addr, sz);
    } else {
        MPI_OK(MPI_Recv(&ready, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < NR; ++k) {
            memset(data, 0, RNDV_LEN);
            MPI_OK(MPI_Recv(data, RNDV_LEN, MPI_BYTE, partner, TAG_R, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            CHECK(cnt == RNDV_LEN, "exact fit %d: count %d", k, cnt);
            CHECK(tl_verify(data, RNDV_LEN, seed_of(TAG_R + 10, k, partner)) == (size_t)-1, "exact fit %d: data", k);
        }
    }
}

/* More messages than fit in the buffer at once; the receiver drains meanwhile. */
static void reuse(unsigned char *data, unsigned char *buffer) {
    const int rounds = 30, len = 30000;
    const int bufsize = 2 * (len + MPI_BSEND_OVERHEAD);
    if (rank % 2 == 0) {
        void *addr = NULL;
        int sz = -1;
        MPI_OK(MPI_Buffer_attach(buffer, bufsize));
        for (int k = 0; k < rounds; ++k) {
            tl_fill(data, (size_t)len, seed_of(TAG_REUSE, k, rank));
            /* At most two outstanding: wait for the receiver's ack of message k-2. */
            if (k >= 2) {
                int ack = -1;
                MPI_OK(MPI_Recv(&ack, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(ack == k - 2, "ack %d, expected %d", ack, k - 2);
            }
            MPI_OK(MPI_Bsend(data, len, MPI_BYTE, partner, TAG_REUSE, MPI_COMM_WORLD));
        }
        for (int k = rounds - 2; k < rounds; ++k) {
            int ack = -1;
            MPI_OK(MPI_Recv(&ack, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(ack == k, "ack %d, expected %d", ack, k);
        }
        MPI_OK(MPI_Buffer_detach(&addr, &sz));
        CHECK(addr == (void *)buffer && sz == bufsize, "reuse: detach gave %p/%d", addr, sz);
    } else {
        for (int k = 0; k < rounds; ++k) {
            memset(data, 0, (size_t)len);
            MPI_OK(MPI_Recv(data, len, MPI_BYTE, partner, TAG_REUSE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(tl_verify(data, (size_t)len, seed_of(TAG_REUSE, k, partner)) == (size_t)-1, "reuse %d: data", k);
            MPI_OK(MPI_Send(&k, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD));
        }
    }
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    partner = (rank % 2 == 0) ? (rank + 1 < size ? rank + 1 : -1) : rank - 1;

    const int bufsize = (int)(total_len() + (size_t)(NE + NR + NI) * MPI_BSEND_OVERHEAD);
    unsigned char *data = malloc(total_len());
    unsigned char *buffer = malloc((size_t)bufsize);
    CHECK(data && buffer, "malloc");

    local_errors();
    if (partner >= 0) exact_fit(data, buffer);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int rep = 0; rep < 2; ++rep) {
        if (partner >= 0) {
            if (rank % 2 == 0) sender(data, buffer, bufsize);
            else receiver(data);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (partner >= 0) reuse(data, buffer);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    local_errors();

    free(data);
    free(buffer);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("bsend: OK (%d ranks)\n", size);
    return 0;
}
