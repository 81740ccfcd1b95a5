/* dtcontents, parts C and H: MPI_Type_create_darray against a sequential
   reference, and a global array scattered and gathered with darray types
   (see dtcontents.c). */
#include "dtcontents.h"

/* ---- C: darray against a reference ---- */

struct darray_case {
    int ndims;
    int gsizes[3], distribs[3], dargs[3], psizes[3];
};

#define B MPI_DISTRIBUTE_BLOCK
#define C MPI_DISTRIBUTE_CYCLIC
#define N MPI_DISTRIBUTE_NONE
#define D MPI_DISTRIBUTE_DFLT_DARG
static const struct darray_case dcases[] = {
    {1, {10}, {B}, {D}, {3}},
    {1, {10}, {B}, {4}, {3}},
    {1, {10}, {B}, {5}, {3}}, /* the last process owns nothing */
    {1, {10}, {C}, {D}, {3}},
    {1, {11}, {C}, {2}, {3}}, /* a partial last block */
    {1, {7}, {N}, {D}, {1}},
    {1, {5}, {C}, {7}, {2}}, /* one block longer than the array */
    {2, {7, 5}, {B, C}, {D, 2}, {2, 3}},
    {2, {6, 9}, {C, B}, {3, D}, {2, 2}},
    {2, {5, 8}, {N, C}, {D, 3}, {1, 4}},
    {2, {4, 4}, {B, B}, {D, D}, {1, 1}},
    {3, {4, 5, 6}, {C, N, B}, {1, D, 4}, {2, 1, 2}},
    {3, {3, 7, 4}, {B, C, C}, {2, 2, D}, {2, 3, 2}},
};
#undef B
#undef C
#undef N
#undef D

/* Does grid coordinate `coord` own index `idx` of a dimension? Written from
   the standard's definition, independently of the library. */
static int owns(int idx, int gsize, int distrib, int darg, int psize, int coord) {
    if (distrib == MPI_DISTRIBUTE_NONE) return 1;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        return idx / b == coord;
    }
    int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (idx / b) % psize == coord;
}

/* The linear offsets (storage order) of the elements rank r owns, ascending. */
static int reference_piece(const struct darray_case *dc, int order, int r, int *offsets) {
    int coords[3], total = 1, n = 0;
    for (int d = dc->ndims - 1, q = r; d >= 0; --d) { /* the grid is row-major */
        coords[d] = q % dc->psizes[d];
        q /= dc->psizes[d];
    }
    for (int d = 0; d < dc->ndims; ++d) total *= dc->gsizes[d];
    for (int l = 0; l < total; ++l) {
        int rem = l, mine = 1;
        for (int k = 0; k < dc->ndims; ++k) {
            int d = order == MPI_ORDER_C ? dc->ndims - 1 - k : k;
            int idx = rem % dc->gsizes[d];
            rem /= dc->gsizes[d];
            mine = mine && owns(idx, dc->gsizes[d], dc->distribs[d], dc->dargs[d], dc->psizes[d], coords[d]);
        }
        if (mine) offsets[n++] = l;
    }
    return n;
}

static int grid_size(const struct darray_case *dc) {
    int p = 1;
    for (int d = 0; d < dc->ndims; ++d) p *= dc->psizes[d];
    return p;
}

static int array_size(const struct darray_case *dc) {
    int n = 1;
    for (int d = 0; d < dc->ndims; ++d) n *= dc->gsizes[d];
    return n;
}

/* oldtype: `per` ints per array element (MPI_INT, or a contiguous pair). */
static void check_darray(int ci, const struct darray_case *dc, int order, int per) {
    const int total = array_size(dc), procs = grid_size(dc);
    MPI_Datatype old = MPI_INT;
    if (per > 1) MPI_OK(MPI_Type_contiguous(per, MPI_INT, &old));
    int *global = malloc(sizeof(int) * (size_t)(total * per));
    int *rebuilt = calloc((size_t)(total * per), sizeof(int));
    int *owner_count = calloc((size_t)total, sizeof(int));
    int *offsets = malloc(sizeof(int) * (size_t)total);
    int *packed = malloc(sizeof(int) * (size_t)(total * per) + 1);
    for (int i = 0; i < total * per; ++i) global[i] = 1000 + i;
    for (int r = 0; r < procs; ++r) {
        MPI_Datatype t;
        MPI_OK(MPI_Type_create_darray(procs, r, dc->ndims, dc->gsizes, dc->distribs, dc->dargs, dc->psizes, order, old,
                                      &t));
        MPI_OK(MPI_Type_commit(&t));
        const int n = reference_piece(dc, order, r, offsets);
        MPI_Count sz, lb, ext, tlb, text;
        MPI_OK(MPI_Type_size_x(t, &sz));
        MPI_OK(MPI_Type_get_extent_x(t, &lb, &ext));
        CHECK(sz == (MPI_Count)n * per * 4, "darray case %d order %d per %d rank %d: size %lld, reference %d elements",
              ci, order, per, r, sz, n);
        CHECK(lb == 0 && ext == (MPI_Count)total * per * 4, "darray case %d rank %d: lb %lld extent %lld", ci, r, lb,
              ext);
        MPI_OK(MPI_Type_get_true_extent_x(t, &tlb, &text));
        if (n > 0)
            CHECK(tlb == (MPI_Count)offsets[0] * per * 4 &&
                      text == (MPI_Count)(offsets[n - 1] - offsets[0] + 1) * per * 4,
                  "darray case %d rank %d: true lb %lld true extent %lld", ci, r, tlb, text);
        int pos = 0;
        MPI_OK(MPI_Pack(global, 1, t, packed, (int)(sizeof(int) * (size_t)(total * per)), &pos, MPI_COMM_WORLD));
        CHECK(pos == n * per * 4, "darray case %d rank %d: packed %d bytes", ci, r, pos);
        for (int k = 0; k < n; ++k)
            for (int j = 0; j < per; ++j)
                CHECK(packed[k * per + j] == global[offsets[k] * per + j],
                      "darray case %d order %s per %d rank %d: packed element %d is %d, expected global[%d] = %d", ci,
                      order == MPI_ORDER_C ? "C" : "Fortran", per, r, k, packed[k * per + j], offsets[k] * per + j,
                      global[offsets[k] * per + j]);
        for (int k = 0; k < n; ++k) owner_count[offsets[k]]++;
        pos = 0;
        MPI_OK(MPI_Unpack(packed, n * per * 4, &pos, rebuilt, 1, t, MPI_COMM_WORLD));
        MPI_OK(MPI_Type_free(&t));
    }
    for (int l = 0; l < total; ++l)
        CHECK(owner_count[l] == 1, "darray case %d: element %d owned by %d ranks", ci, l, owner_count[l]);
    CHECK(memcmp(rebuilt, global, sizeof(int) * (size_t)(total * per)) == 0,
          "darray case %d: unpacking every piece does not rebuild the array", ci);
    free(global);
    free(rebuilt);
    free(owner_count);
    free(offsets);
    free(packed);
    if (per > 1) MPI_OK(MPI_Type_free(&old));
}

void part_c(void) {
    const int ncases = (int)(sizeof dcases / sizeof dcases[0]);
    for (int ci = 0; ci < ncases; ++ci) {
        check_darray(ci, &dcases[ci], MPI_ORDER_C, 1);
        check_darray(ci, &dcases[ci], MPI_ORDER_FORTRAN, 1);
        check_darray(ci, &dcases[ci], ci % 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN, 2);
    }
    /* Fortran order by hand: a 4x3 array, rows BLOCK over 2, columns not
       distributed; rank 1 owns rows 2..3, stored column by column. */
    MPI_Datatype t;
    int a[12], out[6], pos = 0;
    for (int i = 0; i < 12; ++i) a[i] = i; /* a(i, j) at i + 4j */
    MPI_OK(MPI_Type_create_darray(2, 1, 2, (int[]){4, 3}, (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
                                  (int[]){MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2, 1},
                                  MPI_ORDER_FORTRAN, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Pack(a, 1, t, out, (int)sizeof out, &pos, MPI_COMM_WORLD));
    const int want[6] = {2, 3, 6, 7, 10, 11};
    CHECK(pos == 24 && memcmp(out, want, sizeof want) == 0, "Fortran-order darray by hand: %d %d %d %d %d %d", out[0],
          out[1], out[2], out[3], out[4], out[5]);
    MPI_OK(MPI_Type_free(&t));
}

/* ---- H: scatter and gather with darray types over all ranks ---- */

static void scatter_gather(const struct darray_case *dc, int order, int tag) {
    const int total = array_size(dc);
    int *offsets = malloc(sizeof(int) * (size_t)total);
    const int n = reference_piece(dc, order, rank, offsets);
    int *piece = malloc(sizeof(int) * (size_t)(n + 1));
    int *global = NULL;
    MPI_Request *reqs = NULL;
    MPI_Datatype *types = NULL;
    if (rank == 0) {
        global = malloc(sizeof(int) * (size_t)total);
        for (int i = 0; i < total; ++i) global[i] = 7 * i + 3;
        reqs = malloc(sizeof(MPI_Request) * (size_t)size);
        types = malloc(sizeof(MPI_Datatype) * (size_t)size);
        for (int r = 0; r < size; ++r) {
            MPI_OK(MPI_Type_create_darray(size, r, dc->ndims, dc->gsizes, dc->distribs, dc->dargs, dc->psizes, order,
                                          MPI_INT, &types[r]));
            MPI_OK(MPI_Type_commit(&types[r]));
            MPI_OK(MPI_Isend(global, 1, types[r], r, tag, MPI_COMM_WORLD, &reqs[r]));
        }
    }
    MPI_Status st;
    int got = -1;
    MPI_OK(MPI_Recv(piece, n, MPI_INT, 0, tag, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == n, "scatter tag %d: rank %d got %d ints, reference %d", tag, rank, got, n);
    for (int k = 0; k < n; ++k)
        CHECK(piece[k] == 7 * offsets[k] + 3, "scatter tag %d: rank %d element %d is %d, expected %d", tag, rank, k,
              piece[k], 7 * offsets[k] + 3);
    if (rank == 0) MPI_OK(MPI_Waitall(size, reqs, MPI_STATUSES_IGNORE));

    /* Back: each rank sends its piece (plus its rank); rank 0 receives into a cleared array. */
    for (int k = 0; k < n; ++k) piece[k] += 1000000 * (rank + 1);
    MPI_Request back;
    MPI_OK(MPI_Isend(piece, n, MPI_INT, 0, tag + 1, MPI_COMM_WORLD, &back));
    if (rank == 0) {
        memset(global, 0, sizeof(int) * (size_t)total);
        for (int r = 0; r < size; ++r) {
            MPI_OK(MPI_Recv(global, 1, types[r], r, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Type_free(&types[r]));
        }
        /* every element came back, from the rank that owns it */
        for (int r = 0; r < size; ++r) {
            const int m = reference_piece(dc, order, r, offsets);
            for (int k = 0; k < m; ++k)
                CHECK(global[offsets[k]] == 7 * offsets[k] + 3 + 1000000 * (r + 1),
                      "gather tag %d: global[%d] is %d, expected it from rank %d", tag, offsets[k], global[offsets[k]],
                      r);
        }
        free(global);
        free(reqs);
        free(types);
    }
    MPI_OK(MPI_Wait(&back, MPI_STATUS_IGNORE));
    free(piece);
    free(offsets);
}

void part_h(void) {
    int dims[2] = {0, 0};
    MPI_OK(MPI_Dims_create(size, 2, dims));
    /* 2-D grids of all ranks; a 3-D one with a non-distributed dimension. */
    struct darray_case a = {
        2, {9, 7}, {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, {MPI_DISTRIBUTE_DFLT_DARG, 2}, {dims[0], dims[1]}};
    const int block = (11 + dims[1] - 1) / dims[1] + 1; /* an explicit block size larger than the default */
    struct darray_case b = {2, {5, 11}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, {3, block}, {dims[0], dims[1]}};
    struct darray_case c = {3,
                            {4, 3, 10},
                            {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK},
                            {1, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG},
                            {dims[0], 1, dims[1]}};
    scatter_gather(&a, MPI_ORDER_C, 10);
    scatter_gather(&a, MPI_ORDER_FORTRAN, 20);
    scatter_gather(&b, MPI_ORDER_FORTRAN, 30);
    scatter_gather(&c, MPI_ORDER_C, 40);
}
