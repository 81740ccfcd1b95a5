/*
 * The multi-request completion calls: MPI_Waitany, MPI_Waitsome,
 * MPI_Testany, MPI_Testsome, MPI_Testall, MPI_Request_get_status.
 *
 * Any nprocs >= 2. In each round rank 0 posts one Irecv per other rank r
 * (tag 1000 + r; odd ranks send a rendezvous size, even ranks an eager size)
 * into an array whose even slots are MPI_REQUEST_NULL (receive from rank r sits
 * at index 2r - 1). The senders go in reverse rank order: rank size-1 first,
 * each passing a token to the next lower rank after its send.
 *   1. Waitany returns every active index exactly once, with the right status.
 *   2. Waitsome: every call returns >= 1 completions; all indices collected once,
 *      status k belongs to index k.
 *   3. Testsome (polling): same.
 *   4. Testany and Testall report flag 0 while the senders are held back (and
 *      leave the requests alone), then collect everything once released.
 *   5. All-null (and zero-length) arrays: Waitany/Testany give MPI_UNDEFINED,
 *      Waitsome/Testsome outcount MPI_UNDEFINED, Testall flag 1.
 *   6. MPI_Request_get_status reports completion without freeing the request
 *      (receive on rank 0, send on the sender), and MPI_REQUEST_NULL gives
 *      flag 1 with an empty status.
 */
#include "testlib.h"

#define TAG_BASE 1000
#define TAG_TOKEN 7
#define TAG_GO 8
#define TAG_GETSTATUS 9

static int rank, size;
static int nslots; /* 2 * (size - 1) + 1 */

static size_t len_of(int src) { return (src % 2) ? (size_t)(20000 + 97 * src) : (size_t)(64 * src + 3); }
static uint64_t seed_of(int round, int src) { return ((uint64_t)round << 32) | (uint64_t)src; }
static int src_of_index(int i) { return (i + 1) / 2; }
static int is_real_index(int i) { return i % 2 == 1; }

static void check_recv_status(const MPI_Status *st, int src, const char *what) {
    int cnt = -1;
    CHECK(st->MPI_SOURCE == src, "%s: MPI_SOURCE %d, expected %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == TAG_BASE + src, "%s: MPI_TAG %d, expected %d", what, st->MPI_TAG, TAG_BASE + src);
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
    CHECK(cnt == (int)len_of(src), "%s: count %d, expected %zu", what, cnt, len_of(src));
}

static void check_recv_data(unsigned char **bufs, int round, int src, const char *what) {
    size_t bad = tl_verify(bufs[src], len_of(src), seed_of(round, src));
    CHECK(bad == (size_t)-1, "%s: data from rank %d wrong at offset %zu", what, src, bad);
}

/* Rank 0: posts the receives of a round into reqs (null in the even slots). */
static void post_round(MPI_Request *reqs, unsigned char **bufs) {
    for (int i = 0; i < nslots; ++i) reqs[i] = MPI_REQUEST_NULL;
    for (int src = 1; src < size; ++src) {
        memset(bufs[src], 0, len_of(src));
        MPI_OK(
            MPI_Irecv(bufs[src], (int)len_of(src), MPI_BYTE, src, TAG_BASE + src, MPI_COMM_WORLD, &reqs[2 * src - 1]));
    }
}

/* Senders: wait for the token from the rank above, send, pass the token down. */
static void send_round(int round, unsigned char *buf) {
    int token = 0;
    if (rank < size - 1) {
        MPI_OK(MPI_Recv(&token, 1, MPI_INT, rank + 1, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == round, "token %d in round %d", token, round);
    }
    tl_fill(buf, len_of(rank), seed_of(round, rank));
    MPI_OK(MPI_Send(buf, (int)len_of(rank), MPI_BYTE, 0, TAG_BASE + rank, MPI_COMM_WORLD));
    token = round;
    if (rank > 1) MPI_OK(MPI_Send(&token, 1, MPI_INT, rank - 1, TAG_TOKEN, MPI_COMM_WORLD));
}

static void check_all_null(MPI_Request *reqs, const char *what) {
    for (int i = 0; i < nslots; ++i) CHECK(reqs[i] == MPI_REQUEST_NULL, "%s: slot %d not freed", what, i);
}

/* Records index i as completed once; checks its status and data. */
static void collect(int i, const MPI_Status *st, char *seen, unsigned char **bufs, int round, const char *what) {
    CHECK(i >= 0 && i < nslots, "%s: index %d out of range", what, i);
    CHECK(is_real_index(i), "%s: index %d is a MPI_REQUEST_NULL slot", what, i);
    CHECK(!seen[i], "%s: index %d returned twice", what, i);
    seen[i] = 1;
    check_recv_status(st, src_of_index(i), what);
    check_recv_data(bufs, round, src_of_index(i), what);
}

static void round_waitany(int round, MPI_Request *reqs, unsigned char **bufs, char *seen) {
    post_round(reqs, bufs);
    memset(seen, 0, (size_t)nslots);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* receives posted before any send */
    for (int n = 1; n < size; ++n) {
        int idx = -1;
        MPI_Status st;
        MPI_OK(MPI_Waitany(nslots, reqs, &idx, &st));
        collect(idx, &st, seen, bufs, round, "Waitany");
        CHECK(reqs[idx] == MPI_REQUEST_NULL, "Waitany did not free request %d", idx);
    }
    check_all_null(reqs, "Waitany");
    {
        int idx = -1;
        MPI_Status st;
        MPI_OK(MPI_Waitany(nslots, reqs, &idx, &st));
        CHECK(idx == MPI_UNDEFINED, "Waitany on all-null array: index %d", idx);
    }
}

static void round_some(int round, int use_test, MPI_Request *reqs, unsigned char **bufs, char *seen, int *indices,
                       MPI_Status *sts) {
    const char *what = use_test ? "Testsome" : "Waitsome";
    int got = 0;
    post_round(reqs, bufs);
    memset(seen, 0, (size_t)nslots);
    if (round % 2) MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* odd rounds: receives posted first */
    while (got < size - 1) {
        int out = -1;
        for (int i = 0; i < nslots; ++i) indices[i] = -1, sts[i].MPI_ERROR = -7;
        if (use_test) MPI_OK(MPI_Testsome(nslots, reqs, &out, indices, sts));
        else MPI_OK(MPI_Waitsome(nslots, reqs, &out, indices, sts));
        CHECK(out != MPI_UNDEFINED, "%s: MPI_UNDEFINED with %d requests left", what, size - 1 - got);
        CHECK(out >= (use_test ? 0 : 1) && out <= size - 1 - got, "%s: outcount %d", what, out);
        for (int k = 0; k < out; ++k) {
            collect(indices[k], &sts[k], seen, bufs, round, what);
            CHECK(sts[k].MPI_ERROR == -7, "%s: status %d MPI_ERROR %d written on success", what, k, sts[k].MPI_ERROR);
            CHECK(reqs[indices[k]] == MPI_REQUEST_NULL, "%s: request %d not freed", what, indices[k]);
        }
        got += out;
    }
    check_all_null(reqs, what);
    {
        int out = -1;
        if (use_test) MPI_OK(MPI_Testsome(nslots, reqs, &out, indices, sts));
        else MPI_OK(MPI_Waitsome(nslots, reqs, &out, indices, sts));
        CHECK(out == MPI_UNDEFINED, "%s on all-null array: outcount %d", what, out);
    }
    if (!(round % 2)) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Testany (use_testall = 0) or Testall (1): flag 0 while the senders wait for "go". */
static void round_test(int round, int use_testall, MPI_Request *reqs, unsigned char **bufs, char *seen,
                       MPI_Status *sts) {
    const char *what = use_testall ? "Testall" : "Testany";
    int flag = -1, idx = -2;
    post_round(reqs, bufs);
    memset(seen, 0, (size_t)nslots);
    for (int rep = 0; rep < 3; ++rep) {
        if (use_testall) {
            MPI_OK(MPI_Testall(nslots, reqs, &flag, sts));
            CHECK(flag == 0, "Testall before any send: flag %d", flag);
        } else {
            MPI_OK(MPI_Testany(nslots, reqs, &idx, &flag, MPI_STATUS_IGNORE));
            CHECK(flag == 0, "Testany before any send: flag %d", flag);
            CHECK(idx == MPI_UNDEFINED, "Testany with flag 0: index %d, expected MPI_UNDEFINED", idx);
        }
        for (int i = 0; i < nslots; ++i)
            CHECK(is_real_index(i) == (reqs[i] != MPI_REQUEST_NULL), "%s with flag 0 changed slot %d", what, i);
    }
    {
        const int go = round;
        MPI_OK(MPI_Send(&go, 1, MPI_INT, size - 1, TAG_GO, MPI_COMM_WORLD));
    }
    if (use_testall) {
        flag = 0;
        while (!flag) {
            MPI_OK(MPI_Testall(nslots, reqs, &flag, sts));
            if (!flag)
                for (int i = 0; i < nslots; ++i)
                    CHECK(is_real_index(i) == (reqs[i] != MPI_REQUEST_NULL), "Testall with flag 0 freed slot %d", i);
        }
        for (int i = 0; i < nslots; ++i) {
            if (is_real_index(i)) {
                collect(i, &sts[i], seen, bufs, round, what);
            } else {
                /* A null slot's status is empty. */
                CHECK(sts[i].MPI_SOURCE == MPI_ANY_SOURCE && sts[i].MPI_TAG == MPI_ANY_TAG,
                      "Testall: null slot %d status source %d tag %d", i, sts[i].MPI_SOURCE, sts[i].MPI_TAG);
            }
        }
    } else {
        int got = 0;
        while (got < size - 1) {
            MPI_Status st;
            flag = -1;
            idx = -2;
            MPI_OK(MPI_Testany(nslots, reqs, &idx, &flag, &st));
            CHECK(flag == 0 || flag == 1, "Testany flag %d", flag);
            if (!flag) {
                CHECK(idx == MPI_UNDEFINED, "Testany with flag 0: index %d", idx);
                continue;
            }
            collect(idx, &st, seen, bufs, round, what);
            CHECK(reqs[idx] == MPI_REQUEST_NULL, "Testany did not free request %d", idx);
            ++got;
        }
        flag = 0;
        idx = -2;
        MPI_OK(MPI_Testany(nslots, reqs, &idx, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 1 && idx == MPI_UNDEFINED, "Testany on all-null array: flag %d index %d", flag, idx);
    }
    check_all_null(reqs, what);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void null_arrays(void) {
    MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[3];
    int idx = -2, out = -2, flag = -1, indices[3];
    MPI_Status st;

    MPI_OK(MPI_Waitany(3, nulls, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany(all null): index %d", idx);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "Waitany(all null): status not empty");
    MPI_OK(MPI_Waitany(0, nulls, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany(count 0): index %d", idx);
    MPI_OK(MPI_Waitsome(3, nulls, &out, indices, sts));
    CHECK(out == MPI_UNDEFINED, "Waitsome(all null): outcount %d", out);
    out = -2;
    MPI_OK(MPI_Waitsome(0, nulls, &out, indices, sts));
    CHECK(out == MPI_UNDEFINED, "Waitsome(count 0): outcount %d", out);
    out = -2;
    MPI_OK(MPI_Testsome(3, nulls, &out, indices, sts));
    CHECK(out == MPI_UNDEFINED, "Testsome(all null): outcount %d", out);
    MPI_OK(MPI_Testall(3, nulls, &flag, sts));
    CHECK(flag == 1, "Testall(all null): flag %d", flag);
    for (int i = 0; i < 3; ++i)
        CHECK(sts[i].MPI_SOURCE == MPI_ANY_SOURCE && sts[i].MPI_TAG == MPI_ANY_TAG,
              "Testall(all null): status %d not empty", i);
    flag = -1;
    MPI_OK(MPI_Testall(0, nulls, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag == 1, "Testall(count 0): flag %d", flag);
    flag = -1;
    idx = -2;
    MPI_OK(MPI_Testany(3, nulls, &idx, &flag, &st));
    CHECK(flag == 1 && idx == MPI_UNDEFINED, "Testany(all null): flag %d index %d", flag, idx);
    MPI_OK(MPI_Waitall(3, nulls, sts));
    for (int i = 0; i < 3; ++i) CHECK(nulls[i] == MPI_REQUEST_NULL, "Waitall changed a null slot");
}

/* MPI_Request_get_status does not free; later Wait returns the same status. */
static void get_status(unsigned char *buf) {
    MPI_Status st;
    int flag = -1;
    MPI_Request nul = MPI_REQUEST_NULL;
    MPI_OK(MPI_Request_get_status(nul, &flag, &st));
    CHECK(flag == 1, "Request_get_status(MPI_REQUEST_NULL): flag %d", flag);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "Request_get_status(MPI_REQUEST_NULL): status not empty (source %d tag %d)", st.MPI_SOURCE, st.MPI_TAG);

    for (int s = 0; s < 2; ++s) {
        const size_t len = s ? 50000 : 300;
        const uint64_t seed = 777 + (uint64_t)s;
        if (rank == 0) {
            MPI_Request r;
            int cnt = -1;
            memset(buf, 0, len);
            MPI_OK(MPI_Irecv(buf, (int)len, MPI_BYTE, 1, TAG_GETSTATUS, MPI_COMM_WORLD, &r));
            flag = 0;
            while (!flag) {
                MPI_OK(MPI_Request_get_status(r, &flag, &st));
                CHECK(r != MPI_REQUEST_NULL, "Request_get_status freed the request");
            }
            CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == TAG_GETSTATUS, "Request_get_status: source %d tag %d",
                  st.MPI_SOURCE, st.MPI_TAG);
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            CHECK(cnt == (int)len, "Request_get_status: count %d", cnt);
            flag = 0;
            MPI_OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
            CHECK(flag == 1 && r != MPI_REQUEST_NULL, "second Request_get_status: flag %d", flag);
            memset(&st, 0, sizeof st);
            MPI_OK(MPI_Wait(&r, &st));
            CHECK(r == MPI_REQUEST_NULL, "Wait after Request_get_status did not free");
            CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == TAG_GETSTATUS, "Wait after get_status: source %d tag %d",
                  st.MPI_SOURCE, st.MPI_TAG);
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            CHECK(cnt == (int)len, "Wait after get_status: count %d", cnt);
            CHECK(tl_verify(buf, len, seed) == (size_t)-1, "Request_get_status: data wrong");
        } else if (rank == 1) {
            MPI_Request r;
            tl_fill(buf, len, seed);
            MPI_OK(MPI_Isend(buf, (int)len, MPI_BYTE, 0, TAG_GETSTATUS, MPI_COMM_WORLD, &r));
            flag = 0;
            while (!flag) {
                MPI_OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
                CHECK(r != MPI_REQUEST_NULL, "Request_get_status freed the send request");
            }
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(r == MPI_REQUEST_NULL, "Wait after Request_get_status did not free the send request");
        }
    }
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    nslots = 2 * (size - 1) + 1;

    unsigned char **bufs = calloc((size_t)size, sizeof *bufs);
    MPI_Request *reqs = malloc((size_t)nslots * sizeof *reqs);
    MPI_Status *sts = malloc((size_t)nslots * sizeof *sts);
    int *indices = malloc((size_t)nslots * sizeof *indices);
    char *seen = malloc((size_t)nslots);
    CHECK(bufs && reqs && sts && indices && seen, "malloc");
    for (int r = 0; r < size; ++r) {
        bufs[r] = malloc(len_of(r) > 50000 ? len_of(r) : 50000);
        CHECK(bufs[r] != NULL, "malloc");
    }

    null_arrays();
    int round = 1;
    for (int rep = 0; rep < 3; ++rep) {
        /* 1. Waitany (barrier inside: receives posted first). */
        if (rank == 0) round_waitany(round, reqs, bufs, seen);
        else {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            send_round(round, bufs[rank]);
        }
        ++round;
        /* 2. Waitsome, 3. Testsome: odd rounds post receives first, even ones after the sends started. */
        for (int t = 0; t < 2; ++t) {
            if (rank == 0) round_some(round, t, reqs, bufs, seen, indices, sts);
            else {
                if (round % 2) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                send_round(round, bufs[rank]);
                if (!(round % 2)) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            }
            ++round;
        }
        /* 4. Testany, Testall: the senders wait for "go" (to rank size-1). */
        for (int t = 0; t < 2; ++t) {
            if (rank == 0) round_test(round, t, reqs, bufs, seen, sts);
            else {
                if (rank == size - 1) {
                    int go = -1;
                    MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    CHECK(go == round, "go %d in round %d", go, round);
                }
                send_round(round, bufs[rank]);
                MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            }
            ++round;
        }
    }
    null_arrays();
    get_status(bufs[rank]);

    for (int r = 0; r < size; ++r) free(bufs[r]);
    free(bufs);
    free(reqs);
    free(sts);
    free(indices);
    free(seen);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("waitany: OK (%d ranks)\n", size);
    return 0;
}
