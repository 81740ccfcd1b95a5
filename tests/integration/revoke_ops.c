/*
 * Every operation on a revoked communicator that is not local fails with
 * MPIX_ERR_REVOKED (ULFM, as Open MPI 5 does), whatever would have made it
 * trivial: MPI_PROC_NULL as the peer, a communicator of one process, the
 * fast paths (the small collectives' direct path, the request-less send).
 *
 *   revoke_ops
 *       Runs the whole list on a revoked dup of MPI_COMM_WORLD (every rank
 *       revokes its own view, so no rank waits for another's notice) and on
 *       a revoked dup of MPI_COMM_SELF:
 *       - point-to-point with MPI_PROC_NULL: blocking (Send, Ssend, Rsend,
 *         Bsend, Recv, Sendrecv, Sendrecv_replace), probes (Probe, Iprobe,
 *         Mprobe, Improbe), nonblocking (Isend, Issend, Irsend, Ibsend,
 *         Irecv) and persistent (Send_init/Recv_init + Start): the call or
 *         its request fails with MPIX_ERR_REVOKED;
 *       - point-to-point with a real peer (the next rank);
 *       - collectives, blocking and nonblocking, small (direct path) and
 *         large, and neighborhood collectives on a revoked ring topology;
 *       - communicator creation (dup, idup, split, create, create_group,
 *         cart_create) fails and leaves MPI_COMM_NULL;
 *       - what must still work: local calls, MPIX_Comm_agree, and
 *         MPIX_Comm_shrink, whose result works.
 *       With 2 ranks or more, also a revoked inter-communicator: its
 *       collectives fail, a bcast's MPI_PROC_NULL root included.
 */
#include "ftlib.h"

static int me, np;

/* rc is MPIX_ERR_REVOKED, or MPI_SUCCESS with *req failing with it. */
static void expect_revoked_nb(int rc, MPI_Request *req, const char *what) {
    if (rc != MPI_SUCCESS) {
        CHECK(tl_class(rc) == MPIX_ERR_REVOKED, "%s: class %d, expected MPIX_ERR_REVOKED", what, tl_class(rc));
        return;
    }
    MPI_Status st;
    rc = MPI_Wait(req, &st);
    CHECK(tl_class(rc) == MPIX_ERR_REVOKED, "%s: its request ended with class %d, expected MPIX_ERR_REVOKED", what,
          tl_class(rc));
}

#define REVOKED(call) CHECK_CLASS(call, MPIX_ERR_REVOKED)
#define REVOKED_NB(call, req) expect_revoked_nb((call), (req), #call)

static void p2p(MPI_Comm c, int peer) {
    int x = 1, y = 0, flag = 0;
    MPI_Status st;
    MPI_Message msg;
    MPI_Request req;
    REVOKED(MPI_Send(&x, 1, MPI_INT, peer, 0, c));
    REVOKED(MPI_Ssend(&x, 1, MPI_INT, peer, 0, c));
    REVOKED(MPI_Rsend(&x, 1, MPI_INT, peer, 0, c));
    REVOKED(MPI_Bsend(&x, 1, MPI_INT, peer, 0, c));
    REVOKED(MPI_Recv(&y, 1, MPI_INT, peer, 0, c, &st));
    REVOKED(MPI_Sendrecv(&x, 1, MPI_INT, peer, 0, &y, 1, MPI_INT, peer, 0, c, &st));
    REVOKED(MPI_Sendrecv_replace(&x, 1, MPI_INT, peer, 0, peer, 0, c, &st));
    REVOKED(MPI_Probe(peer, 0, c, &st));
    REVOKED(MPI_Iprobe(peer, 0, c, &flag, &st));
    REVOKED(MPI_Mprobe(peer, 0, c, &msg, &st));
    REVOKED(MPI_Improbe(peer, 0, c, &flag, &msg, &st));
    REVOKED_NB(MPI_Isend(&x, 1, MPI_INT, peer, 0, c, &req), &req);
    REVOKED_NB(MPI_Issend(&x, 1, MPI_INT, peer, 0, c, &req), &req);
    REVOKED_NB(MPI_Irsend(&x, 1, MPI_INT, peer, 0, c, &req), &req);
    REVOKED_NB(MPI_Ibsend(&x, 1, MPI_INT, peer, 0, c, &req), &req);
    REVOKED_NB(MPI_Irecv(&y, 1, MPI_INT, peer, 0, c, &req), &req);
    MPI_Request ps, pr;
    MPI_OK(MPI_Send_init(&x, 1, MPI_INT, peer, 0, c, &ps)); /* local: allowed */
    MPI_OK(MPI_Recv_init(&y, 1, MPI_INT, peer, 0, c, &pr));
    REVOKED_NB(MPI_Start(&ps), &ps);
    REVOKED_NB(MPI_Start(&pr), &pr);
    MPI_OK(MPI_Request_free(&ps));
    MPI_OK(MPI_Request_free(&pr));
}

static void collectives(MPI_Comm c) {
    int n;
    MPI_OK(MPI_Comm_size(c, &n));
    enum { big = 4096 }; /* doubles: past the direct path */
    double *a = calloc((size_t)big * n, sizeof(double)), *b = calloc((size_t)big * n, sizeof(double));
    CHECK(a && b, "out of memory");
    MPI_Request req;
    REVOKED(MPI_Barrier(c));
    for (int count = 1; count <= big; count = count == 1 ? big : big + 1) {
        REVOKED(MPI_Bcast(a, count, MPI_DOUBLE, 0, c));
        REVOKED(MPI_Reduce(a, b, count, MPI_DOUBLE, MPI_SUM, 0, c));
        REVOKED(MPI_Allreduce(a, b, count, MPI_DOUBLE, MPI_SUM, c));
        REVOKED(MPI_Scan(a, b, count, MPI_DOUBLE, MPI_SUM, c));
        REVOKED(MPI_Exscan(a, b, count, MPI_DOUBLE, MPI_SUM, c));
        REVOKED(MPI_Gather(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, 0, c));
        REVOKED(MPI_Scatter(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, 0, c));
        REVOKED(MPI_Allgather(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, c));
        REVOKED(MPI_Alltoall(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, c));
        REVOKED(MPI_Reduce_scatter_block(a, b, count, MPI_DOUBLE, MPI_SUM, c));
        REVOKED_NB(MPI_Ibcast(a, count, MPI_DOUBLE, 0, c, &req), &req);
        REVOKED_NB(MPI_Iallreduce(a, b, count, MPI_DOUBLE, MPI_SUM, c, &req), &req);
        REVOKED_NB(MPI_Ialltoall(a, count, MPI_DOUBLE, b, count, MPI_DOUBLE, c, &req), &req);
    }
    REVOKED_NB(MPI_Ibarrier(c, &req), &req);
    free(a);
    free(b);
}

static void creation(MPI_Comm c) {
    MPI_Comm out = MPI_COMM_NULL;
    MPI_Request req;
    MPI_Group grp;
    REVOKED(MPI_Comm_dup(c, &out));
    CHECK(out == MPI_COMM_NULL, "MPI_Comm_dup on a revoked communicator made one");
    REVOKED_NB(MPI_Comm_idup(c, &out, &req), &req);
    CHECK(out == MPI_COMM_NULL, "MPI_Comm_idup on a revoked communicator made one");
    REVOKED(MPI_Comm_split(c, 0, me, &out));
    CHECK(out == MPI_COMM_NULL, "MPI_Comm_split on a revoked communicator made one");
    MPI_OK(MPI_Comm_group(c, &grp)); /* local */
    REVOKED(MPI_Comm_create(c, grp, &out));
    REVOKED(MPI_Comm_create_group(c, grp, 5, &out));
    MPI_OK(MPI_Group_free(&grp));
    int n, periods = 1;
    MPI_OK(MPI_Comm_size(c, &n));
    REVOKED(MPI_Cart_create(c, 1, &n, &periods, 0, &out));
    CHECK(out == MPI_COMM_NULL, "a creation on a revoked communicator made one");
}

/* The ULFM recovery calls, and the local ones, still work. */
static void recovery(MPI_Comm c) {
    int n, r, flag = 1, len;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_get_name(c, name, &len));
    MPI_OK(MPIX_Comm_is_revoked(c, &flag));
    CHECK(flag == 1, "MPIX_Comm_is_revoked gave %d", flag);
    flag = 1;
    MPI_OK(MPIX_Comm_agree(c, &flag));
    CHECK(flag == 1, "agree on a revoked communicator gave %d", flag);
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(c, &s));
    int sum = 0, one = 1;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK(sum == n, "allreduce on the shrunk communicator gave %d, expected %d", sum, n);
    MPI_OK(MPI_Comm_free(&s));
}

static void on_revoked(MPI_Comm base, int ring) {
    MPI_Comm c, cart = MPI_COMM_NULL;
    int n, periods = 1;
    MPI_OK(MPI_Comm_dup(base, &c));
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    if (ring) {
        MPI_OK(MPI_Cart_create(c, 1, &n, &periods, 0, &cart));
        MPI_OK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
        MPI_OK(MPIX_Comm_revoke(cart));
    }
    /* Every member revokes its own view: nobody waits for a notice. */
    MPI_OK(MPIX_Comm_revoke(c));
    p2p(c, MPI_PROC_NULL);
    if (n > 1) p2p(c, (me + 1) % n);
    collectives(c);
    creation(c);
    if (cart != MPI_COMM_NULL) {
        int x[2] = {me, me}, y[4];
        MPI_Request req;
        REVOKED(MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, cart));
        REVOKED(MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, cart));
        REVOKED_NB(MPI_Ineighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, cart, &req), &req);
        MPI_OK(MPI_Comm_free(&cart));
    }
    recovery(c);
    MPI_OK(MPI_Comm_free(&c));
}

/* Two halves of the job, an inter-communicator between them, revoked. */
static void on_revoked_inter(void) {
    MPI_Comm half, inter;
    const int low = me < np / 2;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, me, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? np / 2 : 0, 3, &inter));
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MPI_OK(MPIX_Comm_revoke(inter));
    int hr, x = 7, y = 0;
    MPI_OK(MPI_Comm_rank(half, &hr));
    /* The low half's rank 0 is the root: MPI_ROOT there, MPI_PROC_NULL at its
       other members, the root's rank (0) in the other group. */
    const int root = low ? (hr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    REVOKED(MPI_Bcast(&x, 1, MPI_INT, root, inter));
    REVOKED(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, root, inter));
    REVOKED(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, inter));
    REVOKED(MPI_Barrier(inter));
    REVOKED(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, inter));
    MPI_Comm dup = MPI_COMM_NULL;
    REVOKED(MPI_Comm_dup(inter, &dup));
    CHECK(dup == MPI_COMM_NULL, "MPI_Comm_dup of a revoked inter-communicator made one");
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&half));
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &me, &np, 1);
    static char bsend_buf[1 << 12];
    MPI_OK(MPI_Buffer_attach(bsend_buf, sizeof bsend_buf));
    on_revoked(MPI_COMM_SELF, 1);
    on_revoked(MPI_COMM_WORLD, 1);
    if (np > 1) on_revoked_inter();
    void *b;
    int bs;
    MPI_OK(MPI_Buffer_detach(&b, &bs));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("revoke_ops: %d ranks OK\n", np);
    MPI_OK(MPI_Finalize());
    return 0;
}
