/*
 * Error classes under MPI_ERRORS_RETURN (set on MPI_COMM_WORLD).
 *
 * Any nprocs >= 2. Every rank runs the table of bad calls (each fails in its
 * argument checks, so nothing is sent); each row names the call and the class
 * its return code must have (MPI_Error_class of the code). Then ranks 0 and 1:
 * truncation (10 ints into 5; 100000 into 50000), with Recv and Irecv+Wait:
 * MPI_ERR_TRUNCATE, MPI_Get_count = 5 (50000), the data up to the limit right
 * and nothing written past it; the sender succeeds. Then MPI_Error_string of
 * every class, MPI_Error_class of an unknown code (MPI_ERR_ARG),
 * MPI_Comm_get_errhandler. Finally a ping-pong (eager and rendezvous) and a
 * ring exchange show no state was corrupted by the bad calls.
 */
#include <limits.h>

#include "testlib.h"

static int rank, size, tag_ub;
static int ibuf[16];
static MPI_Request req;
/* Zeroed memory posing as a request/communicator: must be rejected, not crash. */
struct junk {
    long long words[64];
};

/* Stores the address of a junk struct into a handle of any type (pointer
 * handles here, integer handles in other MPIs) without a pointer-to-integer cast. */
static void junk_handle(void *handle, size_t n, struct junk *junk) {
    void *p = (void *)junk;
    memset(handle, 0, n);
    memcpy(handle, &p, n < sizeof p ? n : sizeof p);
}

static int err_class(int rc) {
    int cls = -1;
    MPI_OK(MPI_Error_class(rc, &cls));
    return cls;
}

/* Each case makes one bad call and returns its code. Sends go to this rank
 * itself (or nowhere) so that a wrongly accepted call cannot block. */
static int send_comm_null(void) { return MPI_Send(ibuf, 1, MPI_INT, rank, 0, MPI_COMM_NULL); }
static int send_comm_junk(void) {
    struct junk junk = {{0}};
    MPI_Comm c;
    junk_handle(&c, sizeof c, &junk);
    return MPI_Send(ibuf, 1, MPI_INT, rank, 0, c);
}
static int send_count_neg(void) { return MPI_Send(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD); }
static int send_type_null(void) { return MPI_Send(ibuf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD); }
static int send_dest_size(void) { return MPI_Send(ibuf, 1, MPI_INT, size, 0, MPI_COMM_WORLD); }
static int send_dest_neg(void) { return MPI_Send(ibuf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD); }
static int send_dest_any(void) { return MPI_Send(ibuf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD); }
static int send_tag_neg(void) { return MPI_Send(ibuf, 1, MPI_INT, rank, -1, MPI_COMM_WORLD); }
static int send_tag_big(void) { return MPI_Send(ibuf, 1, MPI_INT, rank, tag_ub + 1, MPI_COMM_WORLD); }
static int send_buf_null(void) { return MPI_Send(NULL, 3, MPI_INT, rank, 0, MPI_COMM_WORLD); }
static int isend_dest_size(void) { return MPI_Isend(ibuf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &req); }
static int ssend_tag_neg(void) { return MPI_Ssend(ibuf, 1, MPI_INT, rank, -3, MPI_COMM_WORLD); }
static int recv_source_size(void) { return MPI_Recv(ibuf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
static int recv_tag_neg(void) { return MPI_Recv(ibuf, 1, MPI_INT, rank, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
static int recv_count_neg(void) { return MPI_Recv(ibuf, -2, MPI_INT, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
static int irecv_source_neg(void) { return MPI_Irecv(ibuf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &req); }
static int irecv_type_null(void) { return MPI_Irecv(ibuf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, &req); }
static int probe_source_size(void) { return MPI_Probe(size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
static int iprobe_tag_big(void) {
    int flag;
    return MPI_Iprobe(MPI_ANY_SOURCE, tag_ub + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}
static int wait_junk(void) {
    struct junk junk = {{0}};
    MPI_Request r;
    junk_handle(&r, sizeof r, &junk);
    return MPI_Wait(&r, MPI_STATUS_IGNORE);
}
static int test_junk(void) {
    struct junk junk = {{0}};
    MPI_Request r;
    int flag;
    junk_handle(&r, sizeof r, &junk);
    return MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
}
static int waitall_junk(void) {
    struct junk junk = {{0}};
    MPI_Request rs[2];
    rs[0] = MPI_REQUEST_NULL;
    junk_handle(&rs[1], sizeof rs[1], &junk);
    return MPI_Waitall(2, rs, MPI_STATUSES_IGNORE);
}
static int free_null(void) {
    MPI_Request r = MPI_REQUEST_NULL;
    return MPI_Request_free(&r);
}
static int start_null(void) {
    MPI_Request r = MPI_REQUEST_NULL;
    return MPI_Start(&r);
}
static int get_attr_bad(void) {
    void *v = NULL;
    int flag = 0;
    return MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &v, &flag);
}
static int get_attr_invalid(void) {
    void *v = NULL;
    int flag = 0;
    return MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag);
}
static int error_class_unknown(void) {
    int cls = -1;
    return MPI_Error_class(MPI_ERR_LASTCODE + 1000, &cls);
}
static int error_string_unknown(void) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    return MPI_Error_string(-12345, s, &len);
}
/* Rows expected to succeed: MPI_PROC_NULL is a valid peer. */
static int send_proc_null(void) { return MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD); }
static int recv_proc_null(void) {
    MPI_Status st;
    int rc = MPI_Recv(ibuf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (rc == MPI_SUCCESS && st.MPI_SOURCE != MPI_PROC_NULL) return MPI_ERR_INTERN;
    return rc;
}
static int send_tag_ub(void) { return MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, tag_ub, MPI_COMM_WORLD); }

struct error_case {
    const char *name;
    int (*call)(void);
    int expected; /* an error class, or MPI_SUCCESS */
};

static const struct error_case cases[] = {
    {"MPI_Send comm MPI_COMM_NULL", send_comm_null, MPI_ERR_COMM},
    {"MPI_Send comm zeroed garbage", send_comm_junk, MPI_ERR_COMM},
    {"MPI_Send count -1", send_count_neg, MPI_ERR_COUNT},
    {"MPI_Send MPI_DATATYPE_NULL", send_type_null, MPI_ERR_TYPE},
    {"MPI_Send dest = size", send_dest_size, MPI_ERR_RANK},
    {"MPI_Send dest = -5", send_dest_neg, MPI_ERR_RANK},
    {"MPI_Send dest = MPI_ANY_SOURCE", send_dest_any, MPI_ERR_RANK},
    {"MPI_Send tag -1", send_tag_neg, MPI_ERR_TAG},
    {"MPI_Send tag MPI_TAG_UB + 1", send_tag_big, MPI_ERR_TAG},
    {"MPI_Send NULL buffer, count 3", send_buf_null, MPI_ERR_BUFFER},
    {"MPI_Isend dest = size", isend_dest_size, MPI_ERR_RANK},
    {"MPI_Ssend tag -3", ssend_tag_neg, MPI_ERR_TAG},
    {"MPI_Recv source = size", recv_source_size, MPI_ERR_RANK},
    {"MPI_Recv tag -7", recv_tag_neg, MPI_ERR_TAG},
    {"MPI_Recv count -2", recv_count_neg, MPI_ERR_COUNT},
    {"MPI_Irecv source -5", irecv_source_neg, MPI_ERR_RANK},
    {"MPI_Irecv MPI_DATATYPE_NULL", irecv_type_null, MPI_ERR_TYPE},
    {"MPI_Probe source = size", probe_source_size, MPI_ERR_RANK},
    {"MPI_Iprobe tag MPI_TAG_UB + 1", iprobe_tag_big, MPI_ERR_TAG},
    {"MPI_Wait on zeroed garbage request", wait_junk, MPI_ERR_REQUEST},
    {"MPI_Test on zeroed garbage request", test_junk, MPI_ERR_REQUEST},
    {"MPI_Waitall with a garbage request", waitall_junk, MPI_ERR_REQUEST},
    {"MPI_Request_free(MPI_REQUEST_NULL)", free_null, MPI_ERR_REQUEST},
    {"MPI_Start(MPI_REQUEST_NULL)", start_null, MPI_ERR_REQUEST},
    {"MPI_Comm_get_attr keyval 123456", get_attr_bad, MPI_ERR_KEYVAL},
    {"MPI_Comm_get_attr MPI_KEYVAL_INVALID", get_attr_invalid, MPI_ERR_KEYVAL},
    {"MPI_Error_class of an unknown code", error_class_unknown, MPI_ERR_ARG},
    {"MPI_Error_string of an unknown code", error_string_unknown, MPI_ERR_ARG},
    {"MPI_Send to MPI_PROC_NULL (valid)", send_proc_null, MPI_SUCCESS},
    {"MPI_Recv from MPI_PROC_NULL (valid)", recv_proc_null, MPI_SUCCESS},
    {"MPI_Send tag = MPI_TAG_UB (valid)", send_tag_ub, MPI_SUCCESS},
};

static void run_table(void) {
    const int n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; ++i) {
        int rc;
        if (cases[i].call == send_tag_big || cases[i].call == iprobe_tag_big)
            if (tag_ub == INT_MAX) continue; /* no tag above MPI_TAG_UB */
        req = MPI_REQUEST_NULL;
        rc = cases[i].call();
        if (cases[i].expected == MPI_SUCCESS) {
            CHECK(rc == MPI_SUCCESS, "case \"%s\": returned %d, expected MPI_SUCCESS", cases[i].name, rc);
        } else {
            CHECK(rc != MPI_SUCCESS, "case \"%s\": returned MPI_SUCCESS, expected class %d", cases[i].name,
                  cases[i].expected);
            CHECK(err_class(rc) == cases[i].expected, "case \"%s\": returned %d (class %d), expected class %d",
                  cases[i].name, rc, err_class(rc), cases[i].expected);
        }
        CHECK(req == MPI_REQUEST_NULL, "case \"%s\": a failed call produced a request", cases[i].name);
    }
}

/* Rank 1 sends n ints; rank 0 receives into a buffer of n/2 (Recv, then Irecv+Wait). */
static void truncation(int n, int *buf) {
    const int half = n / 2;
    const int sentinel = 0x5eed5eed;
    if (rank == 1) {
        for (int rep = 0; rep < 2; ++rep) {
            for (int i = 0; i < n; ++i) buf[i] = i * 7 + rep;
            MPI_OK(MPI_Send(buf, n, MPI_INT, 0, 30 + rep, MPI_COMM_WORLD));
        }
    } else if (rank == 0) {
        for (int rep = 0; rep < 2; ++rep) {
            MPI_Status st;
            int rc, cnt = -1;
            for (int i = 0; i < n; ++i) buf[i] = sentinel;
            memset(&st, 0, sizeof st);
            if (rep == 0) {
                rc = MPI_Recv(buf, half, MPI_INT, 1, 30, MPI_COMM_WORLD, &st);
            } else {
                MPI_Request r;
                MPI_OK(MPI_Irecv(buf, half, MPI_INT, 1, 31, MPI_COMM_WORLD, &r));
                rc = MPI_Wait(&r, &st);
                CHECK(r == MPI_REQUEST_NULL, "truncated Wait did not free the request");
            }
            CHECK(rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_TRUNCATE,
                  "%d ints into %d (%s): rc %d (class %d), expected MPI_ERR_TRUNCATE", n, half,
                  rep ? "Irecv+Wait" : "Recv", rc, rc == MPI_SUCCESS ? 0 : err_class(rc));
            CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 30 + rep, "truncation: status source %d tag %d", st.MPI_SOURCE,
                  st.MPI_TAG);
            MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
            CHECK(cnt == half, "%d ints into %d: MPI_Get_count %d, expected %d", n, half, cnt, half);
            for (int i = 0; i < half; ++i)
                CHECK(buf[i] == i * 7 + rep, "truncation: element %d is %d, expected %d", i, buf[i], i * 7 + rep);
            for (int i = half; i < n; ++i)
                CHECK(buf[i] == sentinel, "truncation: element %d past the receive count was written", i);
        }
    }
}

static void error_strings(void) {
    for (int c = MPI_SUCCESS; c <= MPI_ERR_LASTCODE; ++c) {
        char s[MPI_MAX_ERROR_STRING];
        int len = -1, cls = -1;
        memset(s, 0, sizeof s);
        MPI_OK(MPI_Error_string(c, s, &len));
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "MPI_Error_string(%d): length %d", c, len);
        CHECK(s[0] != '\0' && (int)strlen(s) == len, "MPI_Error_string(%d): \"%s\" with length %d", c, s, len);
        MPI_OK(MPI_Error_class(c, &cls));
        CHECK(cls == c, "MPI_Error_class(%d) = %d", c, cls);
    }
}

static void ping_pong(void) {
    static const size_t sizes[3] = {0, 1000, 300000};
    unsigned char *buf = malloc(sizes[2]);
    CHECK(buf != NULL, "malloc");
    if (rank < 2) {
        const int peer = 1 - rank;
        for (int s = 0; s < 3; ++s) {
            const size_t len = sizes[s];
            for (int it = 0; it < 4; ++it) {
                const uint64_t seed = (uint64_t)len * 100 + (uint64_t)it;
                MPI_Status st;
                int cnt = -1;
                if ((it % 2) == rank) {
                    tl_fill(buf, len, seed);
                    MPI_OK(MPI_Send(buf, (int)len, MPI_BYTE, peer, 40, MPI_COMM_WORLD));
                } else {
                    memset(buf, 0, len);
                    MPI_OK(MPI_Recv(buf, (int)len, MPI_BYTE, peer, 40, MPI_COMM_WORLD, &st));
                    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
                    CHECK(cnt == (int)len && st.MPI_SOURCE == peer && st.MPI_TAG == 40,
                          "ping-pong: count %d source %d tag %d", cnt, st.MPI_SOURCE, st.MPI_TAG);
                    CHECK(tl_verify(buf, len, seed) == (size_t)-1, "ping-pong: data wrong (len %zu)", len);
                }
            }
        }
    }
    {
        /* A ring exchange involving everyone. */
        int out = rank * 3 + 1, in = -1;
        const int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 41, &in, 1, MPI_INT, left, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in == left * 3 + 1, "ring: got %d from %d", in, left);
    }
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int flag = 0;
    int *tag_ub_p = NULL;

    tl_init(&argc, &argv, &rank, &size, 2);

    /* The default handler, then MPI_ERRORS_RETURN. */
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default error handler is not MPI_ERRORS_ARE_FATAL");
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_Comm_get_errhandler does not return MPI_ERRORS_RETURN");
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set MPI_ERRHANDLER_NULL");

    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub_p, &flag));
    CHECK(flag == 1 && tag_ub_p != NULL, "MPI_TAG_UB attribute missing");
    tag_ub = *tag_ub_p;
    CHECK(tag_ub >= 32767, "MPI_TAG_UB %d is below the standard's minimum 32767", tag_ub);

    run_table();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        int *buf = malloc(100000 * sizeof(int));
        CHECK(buf != NULL, "malloc");
        truncation(10, buf);
        truncation(100000, buf);
        free(buf);
    }
    error_strings();
    run_table(); /* the same again: no state left behind by the first pass */

    /* The handler is still MPI_ERRORS_RETURN after all that. */
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "error handler changed by the bad calls");
    MPI_OK(MPI_Errhandler_free(&eh));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    ping_pong();
    /* Nothing stray was delivered by any of the bad calls. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        int f = -1;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE));
        CHECK(f == 0, "a message from a failed call is pending");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("errors: OK (%d ranks)\n", size);
    return 0;
}
