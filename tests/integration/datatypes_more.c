/* datatypes, parts E to H: MPI_Pack and MPI_Unpack, MPI_Type_free while
   pending, MPI_BOTTOM, Bsend and persistent requests, bad arguments (see
   datatypes.c). */
#include "datatypes.h"

/* ---- E: Pack / Unpack ---- */
void part_e(void) {
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    int a[12], b[12], psize = -1, pos = 0, head = 42, head2 = 0;
    for (int i = 0; i < 12; ++i) a[i] = 100 + i;
    MPI_OK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &psize));
    CHECK(psize == 16, "E Pack_size(vector) %d", psize);
    char buf[64];
    MPI_OK(MPI_Pack(&head, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    MPI_OK(MPI_Pack(a, 1, v, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 20, "E position after two packs %d", pos);
    int ints[5];
    memcpy(ints, buf, sizeof ints);
    CHECK(ints[0] == 42 && ints[1] == 100 && ints[2] == 103 && ints[3] == 106 && ints[4] == 109,
          "E packed bytes wrong: %d %d %d %d %d", ints[0], ints[1], ints[2], ints[3], ints[4]);
    pos = 0;
    for (int i = 0; i < 12; ++i) b[i] = -1;
    MPI_OK(MPI_Unpack(buf, 20, &pos, &head2, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Unpack(buf, 20, &pos, b, 1, v, MPI_COMM_WORLD));
    CHECK(head2 == 42 && pos == 20, "E unpack head %d pos %d", head2, pos);
    for (int i = 0; i < 12; ++i) CHECK(b[i] == (i % 3 == 0 ? 100 + i : -1), "E unpack: b[%d] = %d", i, b[i]);
    /* a packed message received with the derived type */
    if (rank == 2) {
        MPI_OK(MPI_Send(buf + 4, 16, MPI_PACKED, 0, 13, MPI_COMM_WORLD));
    } else if (rank == 0) {
        for (int i = 0; i < 12; ++i) b[i] = -1;
        MPI_OK(MPI_Recv(b, 1, v, 2, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 12; ++i) CHECK(b[i] == (i % 3 == 0 ? 100 + i : -1), "E packed recv: b[%d] = %d", i, b[i]);
    }
    MPI_OK(MPI_Type_free(&v));
}

/* ---- F: Type_free while requests are pending ---- */
void part_f(void) {
    const int n = RNDV_N;
    double *a = malloc(sizeof(double) * 2 * n);
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &v));
    MPI_OK(MPI_Type_commit(&v));
    if (rank == 1) {
        MPI_Request rq;
        int go = 1;
        for (int i = 0; i < 2 * n; ++i) a[i] = -1;
        MPI_OK(MPI_Irecv(a, 1, v, 0, 14, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Type_free(&v));
        MPI_OK(MPI_Send(&go, 1, MPI_INT, 0, 15, MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int k = 0; k < n; ++k)
            CHECK(a[2 * k] == k + 0.25 && a[2 * k + 1] == -1, "F recv after free: a[%d] = %g", 2 * k, a[2 * k]);
    } else if (rank == 0) {
        MPI_Request rq;
        int go = 0;
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 1, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(a, 0, MPI_DOUBLE, 2, 16, MPI_COMM_WORLD)); /* tell rank 2 to post late */
        for (int k = 0; k < n; ++k) a[k] = k + 0.25;               /* contiguous on this side */
        MPI_OK(MPI_Send(a, n, MPI_DOUBLE, 1, 14, MPI_COMM_WORLD));
        /* a rendezvous send with a derived type, freed before the receiver posts */
        for (int i = 0; i < 2 * n; ++i) a[i] = i;
        MPI_OK(MPI_Isend(a, 1, v, 2, 17, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Type_free(&v));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else if (rank == 2) {
        MPI_OK(MPI_Recv(a, 0, MPI_DOUBLE, 0, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Recv(a, n, MPI_DOUBLE, 0, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < n; ++k) CHECK(a[k] == 2 * k, "F send after free: a[%d] = %g", k, a[k]);
    }
    if (v != MPI_DATATYPE_NULL) MPI_OK(MPI_Type_free(&v));
    free(a);
}

/* ---- G: MPI_BOTTOM, Bsend, persistent ---- */
void part_g(void) {
    /* absolute addresses of two separate variables */
    int x = 0;
    double y = 0;
    int lens[2] = {1, 1};
    MPI_Aint disps[2];
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, abs_t;
    MPI_OK(MPI_Get_address(&x, &disps[0]));
    MPI_OK(MPI_Get_address(&y, &disps[1]));
    MPI_OK(MPI_Type_create_struct(2, lens, disps, types, &abs_t));
    MPI_OK(MPI_Type_commit(&abs_t));
    if (rank == 0) {
        x = 31;
        y = 4.75;
        MPI_OK(MPI_Send(MPI_BOTTOM, 1, abs_t, 2, 18, MPI_COMM_WORLD));
    } else if (rank == 2) {
        MPI_OK(MPI_Recv(MPI_BOTTOM, 1, abs_t, 0, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(x == 31 && y == 4.75, "G MPI_BOTTOM: x %d y %g", x, y);
    }
    MPI_OK(MPI_Type_free(&abs_t));

    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(EAGER_N, 1, 2, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    int a[2 * EAGER_N];
    if (rank == 2) {
        int bsize = 0;
        MPI_OK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &bsize));
        bsize += MPI_BSEND_OVERHEAD;
        void *bbuf = malloc((size_t)bsize), *det = NULL;
        MPI_OK(MPI_Buffer_attach(bbuf, bsize));
        for (int i = 0; i < 2 * EAGER_N; ++i) a[i] = 5 * i;
        MPI_OK(MPI_Bsend(a, 1, v, 1, 19, MPI_COMM_WORLD));
        for (int i = 0; i < 2 * EAGER_N; ++i) a[i] = -7; /* the buffered copy must be what goes */
        MPI_OK(MPI_Buffer_detach(&det, &bsize));
        free(det);
    } else if (rank == 1) {
        MPI_OK(MPI_Recv(a, EAGER_N, MPI_INT, 2, 19, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < EAGER_N; ++k) CHECK(a[k] == 10 * k, "G bsend: a[%d] = %d", k, a[k]);
    }

    /* persistent: 3 rounds of rank 1 -> rank 2 with the vector on both sides */
    MPI_Request rq;
    if (rank == 1) MPI_OK(MPI_Send_init(a, 1, v, 2, 20, MPI_COMM_WORLD, &rq));
    if (rank == 2) MPI_OK(MPI_Recv_init(a, 1, v, 1, 20, MPI_COMM_WORLD, &rq));
    for (int round = 0; round < 3; ++round) {
        if (rank == 1) {
            for (int i = 0; i < 2 * EAGER_N; ++i) a[i] = round * 1000 + i;
            MPI_OK(MPI_Start(&rq));
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else if (rank == 2) {
            for (int i = 0; i < 2 * EAGER_N; ++i) a[i] = -1;
            MPI_OK(MPI_Start(&rq));
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int i = 0; i < 2 * EAGER_N; ++i)
                CHECK(a[i] == (i % 2 == 0 ? round * 1000 + i : -1), "G persistent round %d: a[%d] = %d", round, i,
                      a[i]);
        }
    }
    if (rank == 1 || rank == 2) MPI_OK(MPI_Request_free(&rq));
    MPI_OK(MPI_Type_free(&v));
}

/* ---- H: bad arguments ---- */
void part_h(void) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype u, c, dt = MPI_INT;
    int a[8] = {0}, pos = 0;
    char pbuf[64];
    MPI_Request rq = MPI_REQUEST_NULL;
    const int next = (rank + 1) % size;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &u)); /* never committed */
    int rc = MPI_Send(a, 1, u, next, 21, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPI_ERR_TYPE, "H Send(uncommitted) gave %d", rc);
    rc = MPI_Irecv(a, 1, u, next, 21, MPI_COMM_WORLD, &rq);
    CHECK(tl_class_of(rc) == MPI_ERR_TYPE && rq == MPI_REQUEST_NULL, "H Irecv(uncommitted) gave %d", rc);
    rc = MPI_Pack(a, 1, u, pbuf, sizeof pbuf, &pos, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPI_ERR_TYPE && pos == 0, "H Pack(uncommitted) gave %d", rc);
    rc = MPI_Type_contiguous(-1, MPI_INT, &c);
    CHECK(tl_class_of(rc) == MPI_ERR_COUNT, "H Type_contiguous(-1) gave %d", rc);
    rc = MPI_Type_vector(-3, 1, 2, MPI_INT, &c);
    CHECK(tl_class_of(rc) == MPI_ERR_COUNT, "H Type_vector(-3) gave %d", rc);
    rc = MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &c);
    CHECK(tl_class_of(rc) == MPI_ERR_TYPE, "H Type_contiguous(NULL type) gave %d", rc);
    MPI_OK(MPI_Type_commit(&u));
    rc = MPI_Send(a, -1, u, next, 21, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPI_ERR_COUNT, "H Send(count -1) gave %d", rc);
    rc = MPI_Send(NULL, 2, MPI_INT, next, 21, MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPI_ERR_BUFFER, "H Send(NULL, predefined) gave %d", rc);
    rc = MPI_Type_free(&dt);
    CHECK(tl_class_of(rc) == MPI_ERR_TYPE && dt == MPI_INT, "H Type_free(MPI_INT) gave %d", rc);
    /* truncation: 2 elements sent, room for 1 */
    if (rank == 0) {
        MPI_OK(MPI_Send(a, 2, u, 1, 22, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_Status st;
        rc = MPI_Recv(a, 1, u, 0, 22, MPI_COMM_WORLD, &st);
        CHECK(tl_class_of(rc) == MPI_ERR_TRUNCATE, "H truncated Recv gave %d", rc);
    }
    MPI_OK(MPI_Type_free(&u));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}
