/*
 * Derived datatypes in point-to-point communication. Needs nprocs >= 3.
 *
 *   A. vector (eager 100 elements, rendezvous 8192 elements > 16 KiB eager
 *      limit): derived -> same derived, derived -> contiguous, contiguous ->
 *      derived; gaps of the receive buffer stay untouched.
 *   B. indexed, struct with padding, subarray (C and Fortran order), resized,
 *      an indexed type with zero-length blocks inside a struct, each eager
 *      and rendezvous, between different pairs of ranks; a freed type's
 *      handle names the next type made.
 *   C. Isend/Irecv around a ring and Sendrecv with derived types on both sides.
 *   D. Probe + Get_count/Get_elements with a struct type (whole elements and a
 *      partial one), Mprobe + Mrecv into a derived type.
 *   E. MPI_Pack/MPI_Unpack/MPI_Pack_size, and a packed message received with a
 *      derived type.
 *   F. MPI_Type_free while a receive and a rendezvous send are pending.
 *   G. MPI_BOTTOM with absolute addresses, Bsend, persistent requests.
 *   H. bad arguments under MPI_ERRORS_RETURN: uncommitted type -> MPI_ERR_TYPE,
 *      negative count -> MPI_ERR_COUNT, freeing a predefined type ->
 *      MPI_ERR_TYPE, a too-long message -> MPI_ERR_TRUNCATE.
 */
#include "datatypes.h"

int rank, size;

/* ---- A: vector ---- */
static void part_a(int n) {
    const int src = 0, dst = 1;
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &v));
    MPI_OK(MPI_Type_commit(&v));
    double *a = malloc(sizeof(double) * 2 * (size_t)n);
    for (int mode = 0; mode < 3; ++mode) { /* 0: v->v, 1: v->contig, 2: contig->v */
        if (rank == src) {
            for (int i = 0; i < 2 * n; ++i) a[i] = i + 1000.0 * mode;
            if (mode == 2) MPI_OK(MPI_Send(a, n, MPI_DOUBLE, dst, 1, MPI_COMM_WORLD));
            else MPI_OK(MPI_Send(a, 1, v, dst, 1, MPI_COMM_WORLD));
        } else if (rank == dst) {
            MPI_Status st;
            int cnt = -1;
            for (int i = 0; i < 2 * n; ++i) a[i] = -1;
            if (mode == 1) {
                MPI_OK(MPI_Recv(a, n, MPI_DOUBLE, src, 1, MPI_COMM_WORLD, &st));
                for (int k = 0; k < n; ++k)
                    CHECK(a[k] == 2 * k + 1000.0 * mode, "A n=%d mode %d: a[%d] = %g", n, mode, k, a[k]);
            } else {
                MPI_OK(MPI_Recv(a, 1, v, src, 1, MPI_COMM_WORLD, &st));
                MPI_OK(MPI_Get_count(&st, v, &cnt));
                CHECK(cnt == 1, "A n=%d mode %d: Get_count(vector) %d", n, mode, cnt);
                MPI_OK(MPI_Get_elements(&st, v, &cnt));
                CHECK(cnt == n, "A n=%d mode %d: Get_elements(vector) %d", n, mode, cnt);
                for (int k = 0; k < n; ++k) {
                    double want = mode == 0 ? 2 * k + 1000.0 * mode : k + 1000.0 * mode;
                    CHECK(a[2 * k] == want, "A n=%d mode %d: a[%d] = %g, expected %g", n, mode, 2 * k, a[2 * k], want);
                    CHECK(a[2 * k + 1] == -1, "A n=%d mode %d: gap a[%d] written (%g)", n, mode, 2 * k + 1,
                          a[2 * k + 1]);
                }
            }
        }
    }
    free(a);
    MPI_OK(MPI_Type_free(&v));
    CHECK(v == MPI_DATATYPE_NULL, "Type_free did not reset the handle");
}

/* ---- B: indexed, struct, subarray, resized ---- */
struct rec {
    char c;
    double d;
    int i[3];
};

static MPI_Datatype rec_type(void) {
    int lens[3] = {1, 1, 3};
    MPI_Aint disps[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t;
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_create_struct(3, lens, disps, types, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct rec), "struct extent %ld (lb %ld), sizeof %zu", (long)ext, (long)lb,
          sizeof(struct rec));
    return t;
}

static void part_b_indexed(int reps) {
    /* 6 ints out of every 10: positions 4,5,0,7,8,9; sent by 1, received contiguous by 2. */
    static const int pos[6] = {4, 5, 0, 7, 8, 9};
    int lens[3] = {2, 1, 3}, disps[3] = {4, 0, 7};
    MPI_Datatype t;
    MPI_OK(MPI_Type_indexed(3, lens, disps, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    int *a = malloc(sizeof(int) * 10 * (size_t)reps);
    if (rank == 1) {
        for (int i = 0; i < 10 * reps; ++i) a[i] = i + 7;
        MPI_OK(MPI_Send(a, reps, t, 2, 2, MPI_COMM_WORLD));
    } else if (rank == 2) {
        MPI_OK(MPI_Recv(a, 6 * reps, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int e = 0; e < reps; ++e)
            for (int j = 0; j < 6; ++j)
                CHECK(a[6 * e + j] == 10 * e + pos[j] + 7, "B indexed reps %d: element %d item %d = %d", reps, e, j,
                      a[6 * e + j]);
    }
    free(a);
    MPI_OK(MPI_Type_free(&t));
}

/* An indexed (or hindexed) type whose first blocks (and one in the middle)
   have length zero, at displacements far out, inside a struct after an int: zero-length blocks carry no
   data and do not move the bounds (indexed: lb 16, extent 36; the struct:
   extent 96, 11 ints an element at int positions zb_pos). Sent with the type
   by 0, received contiguous by 1; sent contiguous by 1, received with the
   type by 2 (the gaps untouched); packed, the ints in type-map order. */
static const int zb_pos[11] = {0, 6, 7, 12, 13, 14, 15, 16, 21, 22, 23};

/* a[] holds reps elements of the struct: the data at zb_pos, -1 in the gaps. */
static void zb_check_spread(const int *a, int reps, const char *what) {
    for (int e = 0; e < reps; ++e)
        for (int i = 0, j = 0; i < 24; ++i) {
            const int want = (j < 11 && zb_pos[j] == i) ? 24 * e + i + 100 : -1;
            if (want != -1) ++j;
            CHECK(a[24 * e + i] == want, "B zero blocks: %s element %d int %d = %d, expected %d", what, e, i,
                  a[24 * e + i], want);
        }
}

static void part_b_zeroblocks(int reps, int hindexed) {
    /* The empty blocks' displacements are far out (they must not count) */
    int lens[5] = {0, 0, 2, 0, 3}, disps[5] = {INT_MAX, 1, 4, INT_MAX, 10};
    MPI_Aint hdisps[5] = {PTRDIFF_MAX, 4, 16, PTRDIFF_MIN, 40};
    MPI_Datatype idx, t;
    if (hindexed) MPI_OK(MPI_Type_create_hindexed(5, lens, hdisps, MPI_INT, &idx));
    else MPI_OK(MPI_Type_indexed(5, lens, disps, MPI_INT, &idx));
    int blens[2] = {1, 2};
    MPI_Aint bdisps[2] = {0, 8}, lb, ext;
    MPI_Datatype btypes[2] = {MPI_INT, idx};
    MPI_OK(MPI_Type_create_struct(2, blens, bdisps, btypes, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Type_get_extent(idx, &lb, &ext));
    CHECK(lb == 16 && ext == 36, "B zero blocks: indexed lb %ld extent %ld, expected 16 36", (long)lb, (long)ext);
    int sz;
    MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
    MPI_OK(MPI_Type_size(t, &sz));
    CHECK(lb == 0 && ext == 96 && sz == 44, "B zero blocks: struct lb %ld extent %ld size %d, expected 0 96 44",
          (long)lb, (long)ext, sz);
    const size_t n = 24 * (size_t)reps;
    int *a = malloc(sizeof(int) * n), *c = malloc(sizeof(int) * 11 * (size_t)reps);
    for (size_t i = 0; i < n; ++i) a[i] = (int)i + 100;
    if (rank == 0) {
        MPI_OK(MPI_Send(a, reps, t, 1, 4, MPI_COMM_WORLD));
        int packed_size, pos = 0;
        MPI_OK(MPI_Pack_size(reps, t, MPI_COMM_WORLD, &packed_size));
        char *packed = malloc((size_t)packed_size);
        MPI_OK(MPI_Pack(a, reps, t, packed, packed_size, &pos, MPI_COMM_WORLD));
        CHECK(pos == 44 * reps, "B zero blocks: packed %d bytes, expected %d", pos, 44 * reps);
        memcpy(c, packed, sizeof(int) * 11 * (size_t)reps);
        for (int e = 0; e < reps; ++e)
            for (int j = 0; j < 11; ++j)
                CHECK(c[11 * e + j] == 24 * e + zb_pos[j] + 100, "B zero blocks: packed element %d item %d = %d", e, j,
                      c[11 * e + j]);
        for (size_t i = 0; i < n; ++i) a[i] = -1;
        pos = 0;
        MPI_OK(MPI_Unpack(packed, packed_size, &pos, a, reps, t, MPI_COMM_WORLD));
        zb_check_spread(a, reps, "unpacked");
        free(packed);
    } else if (rank == 1) {
        MPI_OK(MPI_Recv(c, 11 * reps, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int e = 0; e < reps; ++e)
            for (int j = 0; j < 11; ++j)
                CHECK(c[11 * e + j] == 24 * e + zb_pos[j] + 100, "B zero blocks: received element %d item %d = %d", e,
                      j, c[11 * e + j]);
        MPI_OK(MPI_Send(c, 11 * reps, MPI_INT, 2, 5, MPI_COMM_WORLD));
    } else if (rank == 2) {
        for (size_t i = 0; i < n; ++i) a[i] = -1;
        MPI_OK(MPI_Recv(a, reps, t, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        zb_check_spread(a, reps, "received with the type");
    }
    free(a);
    free(c);
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_free(&idx));
}

/* Packs one element of t from a[10] and unpacks it into a zeroed a. */
static void pack_roundtrip(int *a, MPI_Datatype t) {
    char packed[64];
    int pos = 0;
    MPI_OK(MPI_Pack(a, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    memset(a, 0, 10 * sizeof(int));
    const int bytes = pos;
    pos = 0;
    MPI_OK(MPI_Unpack(packed, bytes, &pos, a, 1, t, MPI_COMM_WORLD));
}

/* A freed type's handle, kept by the program, names the next type made (as
   MPICH and Open MPI recycle handles; MPICH's own datatype tests rely on
   it): a struct {indexed with empty blocks far out, int at 32}, freed, then
   an hindexed of the same layout made, and a struct made again from the
   kept handle: layout xx0123xx4x. */
static void part_b_recycled(void) {
    int lens[3] = {0, 4, 0}, disps[3] = {INT_MAX, 2, INT_MAX}, a[10];
    MPI_Aint hd[3] = {PTRDIFF_MAX, 8, PTRDIFF_MAX}, sd[2] = {0, 32};
    int sl[2] = {1, 1};
    MPI_Datatype idx, st, types[2];
    for (int round = 0; round < 2; ++round) {
        if (round == 0) MPI_OK(MPI_Type_indexed(3, lens, disps, MPI_INT, &idx));
        else MPI_OK(MPI_Type_create_hindexed(3, lens, hd, MPI_INT, &idx));
        MPI_OK(MPI_Type_commit(&idx));
        if (round == 0) types[0] = idx, types[1] = MPI_INT;
        CHECK(types[0] == idx, "B recycled: the freed handle is not the new type's");
        MPI_OK(MPI_Type_create_struct(2, sl, sd, types, &st));
        MPI_OK(MPI_Type_commit(&st));
        for (int i = 0; i < 10; ++i) a[i] = i + 1;
        pack_roundtrip(a, st);
        for (int i = 0; i < 10; ++i)
            CHECK(a[i] == (((i >= 2 && i < 6) || i == 8) ? i + 1 : 0), "B recycled round %d: a[%d] = %d", round, i,
                  a[i]);
        MPI_OK(MPI_Type_free(&st));
        MPI_OK(MPI_Type_free(&idx));
    }
}

static void part_b_struct(int n) {
    MPI_Datatype t = rec_type();
    struct rec *r = malloc(sizeof(struct rec) * (size_t)n);
    if (rank == 2) {
        memset(r, 0, sizeof(struct rec) * (size_t)n);
        for (int k = 0; k < n; ++k) {
            r[k].c = (char)('a' + k % 26);
            r[k].d = k * 0.5;
            r[k].i[0] = k;
            r[k].i[1] = -k;
            r[k].i[2] = 3 * k;
        }
        MPI_OK(MPI_Send(r, n, t, 0, 3, MPI_COMM_WORLD));
    } else if (rank == 0) {
        MPI_Status st;
        int cnt = -1;
        memset(r, 0x55, sizeof(struct rec) * (size_t)n);
        MPI_OK(MPI_Recv(r, n, t, 2, 3, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, t, &cnt));
        CHECK(cnt == n, "B struct: Get_count %d, expected %d", cnt, n);
        MPI_OK(MPI_Get_elements(&st, t, &cnt));
        CHECK(cnt == 5 * n, "B struct: Get_elements %d, expected %d", cnt, 5 * n);
        for (int k = 0; k < n; ++k)
            CHECK(r[k].c == (char)('a' + k % 26) && r[k].d == k * 0.5 && r[k].i[0] == k && r[k].i[1] == -k &&
                      r[k].i[2] == 3 * k,
                  "B struct n=%d: record %d wrong (%c %g %d %d %d)", n, k, r[k].c, r[k].d, r[k].i[0], r[k].i[1],
                  r[k].i[2]);
    }
    free(r);
    MPI_OK(MPI_Type_free(&t));
}

static void part_b_subarray(int rows, int cols) {
    /* Sub-block (rows/2 x cols/2) at (1, 2) of a rows x cols int array. Rank 0
     * sends it in C order; rank 1 receives contiguous. Then rank 1 sends the
     * same block described in Fortran order (dims swapped) back. */
    int sizes[2] = {rows, cols}, sub[2] = {rows / 2, cols / 2}, starts[2] = {1, 2};
    int fsizes[2] = {cols, rows}, fsub[2] = {cols / 2, rows / 2}, fstarts[2] = {2, 1};
    MPI_Datatype c, f;
    MPI_OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &c));
    MPI_OK(MPI_Type_create_subarray(2, fsizes, fsub, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &f));
    MPI_OK(MPI_Type_commit(&c));
    MPI_OK(MPI_Type_commit(&f));
    const int nsub = sub[0] * sub[1];
    int *a = malloc(sizeof(int) * (size_t)(rows * cols));
    int *b = malloc(sizeof(int) * (size_t)nsub);
    if (rank == 0) {
        for (int i = 0; i < rows * cols; ++i) a[i] = i;
        MPI_OK(MPI_Send(a, 1, c, 1, 4, MPI_COMM_WORLD));
        for (int i = 0; i < rows * cols; ++i) a[i] = -1;
        MPI_OK(MPI_Recv(a, 1, c, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < rows; ++i)
            for (int j = 0; j < cols; ++j) {
                int in = i >= 1 && i < 1 + sub[0] && j >= 2 && j < 2 + sub[1];
                int want = in ? 2 * (i * cols + j) : -1;
                CHECK(a[i * cols + j] == want, "B subarray %dx%d: a[%d][%d] = %d, expected %d", rows, cols, i, j,
                      a[i * cols + j], want);
            }
    } else if (rank == 1) {
        MPI_OK(MPI_Recv(b, nsub, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < sub[0]; ++i)
            for (int j = 0; j < sub[1]; ++j)
                CHECK(b[i * sub[1] + j] == (1 + i) * cols + 2 + j, "B subarray C: b[%d][%d] = %d", i, j,
                      b[i * sub[1] + j]);
        for (int i = 0; i < rows * cols; ++i) a[i] = 2 * i;
        MPI_OK(MPI_Send(a, 1, f, 0, 5, MPI_COMM_WORLD)); /* same elements, Fortran description */
    }
    free(a);
    free(b);
    MPI_OK(MPI_Type_free(&c));
    MPI_OK(MPI_Type_free(&f));
}

static void part_b_resized(int n) {
    /* Every third int: resized(int, 0, 12). Rank 1 -> rank 0, received contiguous;
     * then rank 0 -> rank 1 contiguous, received resized. */
    MPI_Datatype t;
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 0 && ext == 12, "resized: lb %ld extent %ld", (long)lb, (long)ext);
    int *a = malloc(sizeof(int) * 3 * (size_t)n);
    if (rank == 1) {
        for (int i = 0; i < 3 * n; ++i) a[i] = i;
        MPI_OK(MPI_Send(a, n, t, 0, 6, MPI_COMM_WORLD));
        for (int i = 0; i < 3 * n; ++i) a[i] = -1;
        MPI_OK(MPI_Recv(a, n, t, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3 * n; ++i)
            CHECK(a[i] == (i % 3 == 0 ? 9 * (i / 3) : -1), "B resized back: a[%d] = %d", i, a[i]);
    } else if (rank == 0) {
        MPI_OK(MPI_Recv(a, n, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < n; ++k) CHECK(a[k] == 3 * k, "B resized: a[%d] = %d", k, a[k]);
        for (int k = 0; k < n; ++k) a[k] = 9 * k;
        MPI_OK(MPI_Send(a, n, MPI_INT, 1, 7, MPI_COMM_WORLD));
    }
    free(a);
    MPI_OK(MPI_Type_free(&t));
}

/* ---- C: Isend/Irecv ring and Sendrecv ---- */
static void part_c(int n) {
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(n, 2, 3, MPI_INT, &v)); /* 2 of every 3 ints */
    MPI_OK(MPI_Type_commit(&v));
    int *s = malloc(sizeof(int) * 3 * (size_t)n), *r = malloc(sizeof(int) * 3 * (size_t)n);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < 3 * n; ++i) s[i] = rank * 1000000 + i;
    for (int i = 0; i < 2 * n; ++i) r[i] = -1;
    MPI_Request rq[2];
    MPI_OK(MPI_Irecv(r, 2 * n, MPI_INT, prev, 8, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Isend(s, 1, v, next, 8, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < n; ++k)
        CHECK(r[2 * k] == prev * 1000000 + 3 * k && r[2 * k + 1] == prev * 1000000 + 3 * k + 1,
              "C ring n=%d: pair %d = %d %d", n, k, r[2 * k], r[2 * k + 1]);
    for (int i = 0; i < 3 * n; ++i) r[i] = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(s, 1, v, next, 9, r, 1, v, prev, 9, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == prev, "C sendrecv: source %d", st.MPI_SOURCE);
    for (int i = 0; i < 3 * n; ++i)
        CHECK(r[i] == (i % 3 == 2 ? -1 : prev * 1000000 + i), "C sendrecv n=%d: r[%d] = %d", n, i, r[i]);
    free(s);
    free(r);
    MPI_OK(MPI_Type_free(&v));
}

/* ---- D: Probe + Get_count/Get_elements; Mprobe + Mrecv ---- */
static void part_d(void) {
    MPI_Datatype t = rec_type();
    struct rec r[2];
    memset(r, 0, sizeof r);
    if (rank == 0) {
        r[0].c = 'p';
        r[0].d = 2.5;
        r[1].i[2] = 77;
        MPI_OK(MPI_Send(r, 2, t, 1, 10, MPI_COMM_WORLD));
        /* one record and a partial one: char + double, as raw bytes (1 + 8 + 12 + 1 + 8) */
        unsigned char raw[30];
        memset(raw, 1, sizeof raw);
        MPI_OK(MPI_Send(raw, 30, MPI_BYTE, 1, 11, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(r, 2, t, 1, 12, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_Status st;
        int cnt = -1;
        MPI_OK(MPI_Probe(0, 10, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, t, &cnt));
        CHECK(cnt == 2, "D probe: Get_count(struct) %d", cnt);
        MPI_OK(MPI_Get_elements(&st, t, &cnt));
        CHECK(cnt == 10, "D probe: Get_elements(struct) %d", cnt);
        MPI_OK(MPI_Recv(r, 2, t, 0, 10, MPI_COMM_WORLD, &st));
        CHECK(r[0].c == 'p' && r[0].d == 2.5 && r[1].i[2] == 77, "D probe: data wrong");
        MPI_OK(MPI_Probe(0, 11, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, t, &cnt));
        CHECK(cnt == MPI_UNDEFINED, "D partial: Get_count(struct) %d, expected MPI_UNDEFINED", cnt);
        MPI_OK(MPI_Get_elements(&st, t, &cnt));
        CHECK(cnt == 7, "D partial: Get_elements(struct) %d, expected 7", cnt);
        unsigned char raw[30];
        MPI_OK(MPI_Recv(raw, 30, MPI_BYTE, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_Message m;
        memset(r, 0, sizeof r);
        MPI_OK(MPI_Mprobe(0, 12, MPI_COMM_WORLD, &m, &st));
        MPI_OK(MPI_Mrecv(r, 2, t, &m, &st));
        CHECK(r[0].c == 'p' && r[0].d == 2.5 && r[1].i[2] == 77, "D mrecv: data wrong");
    }
    MPI_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 3, "needs at least 3 ranks, got %d", size);
    for (int big = 0; big < 2; ++big) {
        const int n = big ? RNDV_N : EAGER_N;
        part_a(n);
        part_b_indexed(big ? 1000 : 3);       /* 24 KB / 72 B packed */
        part_b_struct(big ? 1500 : 4);        /* 36 KB / 84 B packed */
        part_b_zeroblocks(big ? 1000 : 3, 0); /* 44 KB / 132 B */
        part_b_zeroblocks(big ? 1000 : 3, 1);
        part_b_subarray(big ? 200 : 6, big ? 100 : 8);
        part_b_resized(n);
        part_c(n);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    part_b_recycled();
    part_d();
    part_e();
    part_f();
    part_g();
    part_h();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("datatypes: all checks passed on %d ranks\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
