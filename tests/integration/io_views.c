/* io: parts subarray and indexed, file views against a sequential reference
   (see io.c). */
#include "io.h"

/* value of global element (i, j) of the 2-D array */
static int gval(int i, int j) { return 100000 + i * 1000 + j; }

enum { ROWS = 5, W = 3, HEADER = 24 };

/* The file: a HEADER-byte hole, then the ROWS x (W*size) array of ints, rank
   r owning columns W*r .. W*r+W-1 (ftype); memory: the local block with one
   padding column (mtype, non-contiguous), filled into mem. */
static void subarray_setup(MPI_Datatype *ftype, MPI_Datatype *mtype, int *mem) {
    int gsizes[2] = {ROWS, W * size}, lsizes[2] = {ROWS, W}, starts[2] = {0, W * rank};
    MPI_OK(MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_INT, ftype));
    MPI_OK(MPI_Type_commit(ftype));
    MPI_OK(MPI_Type_vector(ROWS, W, W + 1, MPI_INT, mtype));
    MPI_OK(MPI_Type_commit(mtype));
    for (int i = 0; i < ROWS; ++i) {
        for (int j = 0; j < W; ++j) mem[i * (W + 1) + j] = gval(i, W * rank + j);
        mem[i * (W + 1) + W] = -1;
    }
}

/* Rank 0 compares the whole file with the sequential reference. */
static void compare_subarray(const char *path) {
    const int cols = W * size;
    size_t ref_len = HEADER + (size_t)ROWS * cols * sizeof(int);
    unsigned char *ref = calloc(ref_len, 1);
    for (int i = 0; i < ROWS; ++i)
        for (int j = 0; j < cols; ++j) {
            int v = gval(i, j);
            memcpy(ref + HEADER + ((size_t)i * cols + j) * sizeof(int), &v, sizeof v);
        }
    compare_file(path, ref, ref_len);
    free(ref);
}

/* The padded local block read back: data where it belongs, padding untouched. */
static void check_block(const int *back, const char *how) {
    for (int i = 0; i < ROWS; ++i) {
        for (int j = 0; j < W; ++j)
            CHECK(back[i * (W + 1) + j] == gval(i, W * rank + j), "%s (%d,%d): %d", how, i, j, back[i * (W + 1) + j]);
        CHECK(back[i * (W + 1) + W] == -7, "%s wrote the padding at row %d", how, i);
    }
}

void subarray(void) {
    char path[300];
    path_of(path, sizeof path, "subarray");
    MPI_Datatype ftype, mtype;
    int mem[ROWS * (W + 1)];
    subarray_setup(&ftype, &mtype, mem);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, HEADER, MPI_INT, ftype, "native", MPI_INFO_NULL));
    MPI_Status st;
    int n;
    MPI_OK(MPI_File_write_all(fh, mem, 1, mtype, &st));
    MPI_OK(MPI_Get_count(&st, mtype, &n));
    CHECK(n == 1, "write_all count %d", n);
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &n));
    CHECK(n == ROWS * W, "write_all elements %d", n);
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == ROWS * W, "position after write_all: %lld", (long long)pos);
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    compare_subarray(path);
    /* read back collectively into the padded layout */
    int back[ROWS * (W + 1)];
    for (int k = 0; k < ROWS * (W + 1); ++k) back[k] = -7;
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_read_all(fh, back, 1, mtype, &st));
    MPI_OK(MPI_Get_count(&st, mtype, &n));
    CHECK(n == 1, "read_all count %d", n);
    check_block(back, "read_all");
    /* the view's end of file is the end of this rank's data */
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == ROWS * W, "MPI_SEEK_END position %lld", (long long)pos);
    MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
}

/* The same layout through split collectives and nonblocking collectives. */
void split_and_nonblocking(void) {
    char path[300];
    path_of(path, sizeof path, "split");
    MPI_Datatype ftype, mtype;
    int mem[ROWS * (W + 1)], back[ROWS * (W + 1)];
    subarray_setup(&ftype, &mtype, mem);
    MPI_File fh;
    MPI_Status st;
    int n = -1;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, HEADER, MPI_INT, ftype, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_write_all_begin(fh, mem, 1, mtype));
    expect_class(MPI_File_write_all_begin(fh, mem, 1, mtype), MPI_ERR_OTHER, "a second split collective");
    expect_class(MPI_File_write_all_end(fh, back, &st), MPI_ERR_ARG, "_end with another buffer");
    MPI_OK(MPI_File_write_all_end(fh, mem, &st));
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &n));
    CHECK(n == ROWS * W, "write_all_end elements %d", n);
    expect_class(MPI_File_write_all_end(fh, mem, &st), MPI_ERR_OTHER, "_end with no split collective");
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    compare_subarray(path);
    /* read_at_all_begin/_end at offset 0 of the view */
    for (int k = 0; k < ROWS * (W + 1); ++k) back[k] = -7;
    MPI_OK(MPI_File_read_at_all_begin(fh, 0, back, 1, mtype));
    MPI_OK(MPI_File_read_at_all_end(fh, back, &st));
    MPI_OK(MPI_Get_count(&st, mtype, &n));
    CHECK(n == 1, "read_at_all_end count %d", n);
    check_block(back, "read_at_all_begin/_end");
    /* iread_at_all and iread_all (after a seek) complete through MPI_Wait */
    MPI_Request req;
    for (int k = 0; k < ROWS * (W + 1); ++k) back[k] = -7;
    MPI_OK(MPI_File_iread_at_all(fh, 0, back, 1, mtype, &req));
    MPI_OK(MPI_Wait(&req, &st));
    check_block(back, "iread_at_all");
    for (int k = 0; k < ROWS * (W + 1); ++k) back[k] = -7;
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_iread_all(fh, back, 1, mtype, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &n));
    CHECK(n == ROWS * W, "iread_all elements %d", n);
    check_block(back, "iread_all");
    MPI_OK(MPI_File_close(&fh));
    /* write_ordered_begin/_end: rank order, as write_ordered */
    path_of(path, sizeof path, "split_ordered");
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int rec[2] = {rank, -rank};
    MPI_OK(MPI_File_write_ordered_begin(fh, rec, 2, MPI_INT));
    MPI_OK(MPI_File_write_ordered_end(fh, rec, &st));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    size_t len = (size_t)size * 2 * sizeof(int);
    unsigned char *ref = malloc(len);
    for (int r = 0; r < size; ++r) {
        int v[2] = {r, -r};
        memcpy(ref + (size_t)r * sizeof v, v, sizeof v);
    }
    compare_file(path, ref, len);
    free(ref);
    MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    if (rank == 0) {
        MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
        path_of(path, sizeof path, "split");
        MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
}

enum { TILES = 4 };

/* The indexed view: per tile of 3*size ints, rank r owns int r and ints
   size+2r, size+2r+1. */
static MPI_Datatype indexed_filetype(void) {
    int lens[2] = {1, 2}, displs[2] = {rank, size + 2 * rank};
    MPI_Datatype t, ft;
    MPI_OK(MPI_Type_indexed(2, lens, displs, MPI_INT, &t));
    MPI_OK(MPI_Type_create_resized(t, 0, (MPI_Aint)(3 * size * sizeof(int)), &ft));
    MPI_OK(MPI_Type_commit(&ft));
    MPI_Type_free(&t);
    return ft;
}

static int ival(int owner, int k) { return owner * 100000 + k; }

void indexed(void) {
    char path[300];
    path_of(path, sizeof path, "indexed");
    const int disp = 8;
    MPI_Datatype ft = indexed_filetype();
    const int n = 3 * TILES;
    int mine[3 * TILES];
    for (int k = 0; k < n; ++k) mine[k] = ival(rank, k);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
    /* byte offsets through the view */
    MPI_Offset b;
    MPI_OK(MPI_File_get_byte_offset(fh, 0, &b));
    CHECK(b == disp + rank * 4, "byte offset of etype 0: %lld", (long long)b);
    MPI_OK(MPI_File_get_byte_offset(fh, 2, &b));
    CHECK(b == disp + (size + 2 * rank + 1) * 4, "byte offset of etype 2: %lld", (long long)b);
    MPI_OK(MPI_File_get_byte_offset(fh, 4, &b));
    CHECK(b == disp + (3 * size + size + 2 * rank) * 4, "byte offset of etype 4: %lld", (long long)b);
    /* pieces: explicit offsets (tile 0), individual pointer (tiles 1-2 in
       two writes, out of order with seek), nonblocking (tile 3) */
    MPI_Status st;
    int cnt;
    MPI_OK(MPI_File_write_at(fh, 0, mine, 3, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 3, "write_at count %d", cnt);
    MPI_OK(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    MPI_OK(MPI_File_write(fh, mine + 5, 4, MPI_INT, &st)); /* 5..8 */
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 9, "position after write: %lld", (long long)pos);
    MPI_OK(MPI_File_seek(fh, -6, MPI_SEEK_CUR));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 3, "position after seek_cur: %lld", (long long)pos);
    MPI_OK(MPI_File_write(fh, mine + 3, 2, MPI_INT, &st)); /* 3..4 */
    MPI_Request req;
    MPI_OK(MPI_File_iwrite_at(fh, 9, mine + 9, 3, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 3 && req == MPI_REQUEST_NULL, "iwrite_at count %d", cnt);
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* the reference: int p of the data region */
    const int per_tile = 3 * size;
    size_t ref_len = disp + (size_t)TILES * per_tile * sizeof(int);
    unsigned char *ref = calloc(ref_len, 1);
    for (int p = 0; p < TILES * per_tile; ++p) {
        int t = p / per_tile, q = p % per_tile, owner, k;
        if (q < size) owner = q, k = 3 * t;
        else owner = (q - size) / 2, k = 3 * t + 1 + (q - size) % 2;
        int v = ival(owner, k);
        memcpy(ref + disp + (size_t)p * sizeof(int), &v, sizeof v);
    }
    compare_file(path, ref, ref_len);
    free(ref);
    /* read back: collective at an offset, then nonblocking with the pointer */
    int back[3 * TILES];
    memset(back, 0, sizeof back);
    MPI_OK(MPI_File_read_at_all(fh, 0, back, n, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == n, "read_at_all count %d", cnt);
    for (int k = 0; k < n; ++k) CHECK(back[k] == ival(rank, k), "read_at_all [%d] = %d", k, back[k]);
    memset(back, 0, sizeof back);
    MPI_OK(MPI_File_seek(fh, 6, MPI_SEEK_SET));
    MPI_OK(MPI_File_iread(fh, back, 6, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 6, "iread count %d", cnt);
    for (int k = 0; k < 6; ++k) CHECK(back[k] == ival(rank, 6 + k), "iread [%d] = %d", k, back[k]);
    /* reading past the end gives what is there */
    memset(back, 0, sizeof back);
    MPI_OK(MPI_File_iread_at(fh, n - 2, back, 5, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 2, "read past the end: count %d, expected 2", cnt);
    CHECK(back[0] == ival(rank, n - 2) && back[1] == ival(rank, n - 1), "read at the end: %d %d", back[0], back[1]);
    MPI_OK(MPI_File_read_at(fh, n, back, 1, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 0, "read at the end of file: count %d", cnt);
    /* get_view gives back what was set */
    MPI_Offset d;
    MPI_Datatype et, ftype;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &d, &et, &ftype, rep));
    CHECK(d == disp && et == MPI_INT && strcmp(rep, "native") == 0, "get_view: disp %lld rep %s", (long long)d, rep);
    int ni, na, nt, comb;
    MPI_OK(MPI_Type_get_envelope(ftype, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_RESIZED, "get_view's filetype combiner %d", comb);
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(ftype, &lb, &ext));
    CHECK(ext == (MPI_Aint)(3 * size * sizeof(int)), "filetype extent %ld", (long)ext);
    MPI_OK(MPI_Type_free(&ftype));
    MPI_OK(MPI_File_get_type_extent(fh, ft, &ext));
    CHECK(ext == (MPI_Aint)(3 * size * sizeof(int)), "get_type_extent %ld", (long)ext);
    MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    if (rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}
