/*
 * MPI-IO on POSIX files against a sequential reference: what the ranks write
 * through their views is read back whole by rank 0 with plain POSIX and
 * compared byte for byte with a file computed here. Plain MPI-3, so it
 * builds with any MPI. Files live in a fresh directory under /tmp (made by
 * rank 0, removed at the end).
 *
 *   manage     open/close, amode, group, info, atomicity, set_size,
 *              get_size, preallocate, sync, handle conversion, the default
 *              error handlers (MPI_ERRORS_RETURN)
 *   subarray   a 2-D block-column distribution: subarray filetype,
 *              non-contiguous memory type, collective write_all, POSIX check,
 *              read_all back
 *   indexed    an indexed filetype (two interleaved runs per rank):
 *              write_at, individual pointers with seek, iwrite/iread_at,
 *              get_byte_offset, get_view, POSIX check, read past the end
 *   shared     the shared file pointer: write_shared/iwrite_shared from
 *              every rank (each rank's records in its order, none lost),
 *              write_ordered/read_ordered (rank order), read_shared,
 *              seek_shared, MPI_MODE_SEQUENTIAL with MPI_DISPLACEMENT_CURRENT
 *   errors     amode errors, uniform open failure, MPI_ERR_NOT_SAME,
 *              access errors, data representations, file error handlers,
 *              DELETE_ON_CLOSE, APPEND
 *   datareps   MPI_Register_datarep: a byte-reversing representation
 *              written, checked with POSIX, read back; conversion errors;
 *              refused representations (other sizes, unknown, not the same)
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static int rank, size;
static char dir[256];

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* Rank 0's POSIX view of the whole file; *len gets its size. */
static unsigned char *slurp(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    CHECK(fstat(fd, &st) == 0, "fstat");
    unsigned char *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
        CHECK(n > 0, "pread of %s", path);
        got += (size_t)n;
    }
    close(fd);
    *len = got;
    return b;
}

static void compare_file(const char *path, const unsigned char *ref, size_t ref_len) {
    if (rank != 0) return;
    size_t len;
    unsigned char *b = slurp(path, &len);
    CHECK(len == ref_len, "%s has %zu bytes, expected %zu", path, len, ref_len);
    for (size_t i = 0; i < len; ++i) CHECK(b[i] == ref[i], "%s: byte %zu is %d, expected %d", path, i, b[i], ref[i]);
    free(b);
}

static void expect_class(int rc, int cls, const char *what) {
    CHECK(tl_class_of(rc) == cls, "%s: class %d (rc %d), expected %d", what, tl_class_of(rc), rc, cls);
}

static void expect_size(MPI_File fh, MPI_Offset expected, const char *after) {
    MPI_Offset sz = -1;
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == expected, "size after %s: %lld, expected %lld", after, (long long)sz, (long long)expected);
}

static void manage(void) {
    char path[300];
    path_of(path, sizeof path, "manage");
    MPI_File fh;
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "access_style", "write_once"));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_OK(MPI_Info_free(&info));
    CHECK(fh != MPI_FILE_NULL, "no handle");
    int amode;
    MPI_OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode 0x%x", amode);
    MPI_Group fg, wg;
    int cmp;
    MPI_OK(MPI_File_get_group(fh, &fg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_compare(fg, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "file group differs from the communicator's (%d)", cmp);
    MPI_Group_free(&fg);
    MPI_Group_free(&wg);
    /* hints come back as given, in a new info object */
    MPI_Info used;
    char value[64];
    int flag;
    MPI_OK(MPI_File_get_info(fh, &used));
    MPI_OK(MPI_Info_get(used, "access_style", sizeof value - 1, value, &flag));
    CHECK(flag && strcmp(value, "write_once") == 0, "hint access_style: flag %d '%s'", flag, value);
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "cb_nodes", "1"));
    MPI_OK(MPI_File_set_info(fh, info));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_File_get_info(fh, &used));
    MPI_OK(MPI_Info_get(used, "cb_nodes", sizeof value - 1, value, &flag));
    CHECK(flag && strcmp(value, "1") == 0, "hint cb_nodes: flag %d '%s'", flag, value);
    MPI_OK(MPI_Info_free(&used));
    /* atomicity */
    MPI_OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "atomicity starts off (%d)", flag);
    MPI_OK(MPI_File_set_atomicity(fh, 1));
    MPI_OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity on (%d)", flag);
    /* sizes: set_size grows and shrinks, preallocate never shrinks */
    expect_size(fh, 0, "a new file");
    MPI_OK(MPI_File_set_size(fh, 1000));
    expect_size(fh, 1000, "set_size(1000)");
    MPI_OK(MPI_File_preallocate(fh, 500));
    expect_size(fh, 1000, "preallocate(500)");
    MPI_OK(MPI_File_preallocate(fh, 4096));
    expect_size(fh, 4096, "preallocate(4096)");
    MPI_OK(MPI_File_set_size(fh, 10));
    expect_size(fh, 10, "set_size(10)");
    MPI_OK(MPI_File_sync(fh));
    /* set_size with different sizes */
    if (size > 1) {
        int rc = MPI_File_set_size(fh, rank == 0 ? 20 : 30);
        expect_class(rc, MPI_ERR_NOT_SAME, "set_size with different sizes");
    }
    /* handle conversion */
    MPI_Fint fi = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(fi) == fh, "c2f/f2c round trip");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL, "null handle conversion");
    /* the default file error handler returns */
    MPI_Errhandler eh;
    MPI_OK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "a new file's handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    MPI_OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not reset the handle");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        struct stat st;
        CHECK(stat(path, &st) == 0 && st.st_size == 10, "file after close: size %lld", (long long)st.st_size);
        MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
        CHECK(access(path, F_OK) != 0, "MPI_File_delete left %s", path);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

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

static void subarray(void) {
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
static void split_and_nonblocking(void) {
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

static void indexed(void) {
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
    MPI_OK(MPI_File_write(fh, mine + 5, 4, MPI_INT, &st));  /* 5..8 */
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

enum { CALLS = 4 };

static int sval(int r, int call, int k) { return 1000000 + r * 10000 + call * 100 + k; }

static void shared(void) {
    char path[300];
    path_of(path, sizeof path, "shared");
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, 4, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    /* call c of rank r writes c+1 records */
    int buf[CALLS + 1];
    MPI_Status st;
    int cnt;
    for (int c = 0; c < CALLS; ++c) {
        for (int k = 0; k <= c; ++k) buf[k] = sval(rank, c, k);
        if (c % 2 == 0) {
            MPI_OK(MPI_File_write_shared(fh, buf, c + 1, MPI_INT, &st));
        } else {
            MPI_Request req;
            MPI_OK(MPI_File_iwrite_shared(fh, buf, c + 1, MPI_INT, &req));
            MPI_OK(MPI_Wait(&req, &st));
        }
        MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == c + 1, "shared write count %d", cnt);
    }
    const int per_rank = CALLS * (CALLS + 1) / 2, total = per_rank * size;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total, "shared pointer after the writes: %lld, expected %d", (long long)pos, total);
    if (rank == 0) {
        /* every record once, each rank's in its own order */
        size_t len;
        unsigned char *b = slurp(path, &len);
        CHECK(len == 4 + (size_t)total * 4, "shared file has %zu bytes", len);
        int *next = calloc((size_t)size, sizeof(int)); /* records of each rank seen so far */
        for (int p = 0; p < total; ++p) {
            int v;
            memcpy(&v, b + 4 + (size_t)p * 4, 4);
            int r = (v - 1000000) / 10000;
            CHECK(r >= 0 && r < size, "record %d: value %d", p, v);
            int c = 0, k = next[r];
            while (k > c) k -= ++c;
            CHECK(v == sval(r, c, k), "record %d: %d, expected rank %d's record %d", p, v, r, next[r]);
            ++next[r];
        }
        free(next);
        free(b);
    }
    /* ordered: rank r appends r+1 records, in rank order */
    for (int k = 0; k <= rank && k <= CALLS; ++k) buf[k] = 2000000 + rank * 100 + k;
    const int mine = rank < CALLS ? rank + 1 : CALLS + 1;
    MPI_OK(MPI_File_write_ordered(fh, buf, mine, MPI_INT, &st));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int all = 0;
    for (int r = 0; r < size; ++r) all += r < CALLS ? r + 1 : CALLS + 1;
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total + all, "shared pointer after write_ordered: %lld", (long long)pos);
    if (rank == 0) {
        size_t len;
        unsigned char *b = slurp(path, &len);
        CHECK(len == 4 + (size_t)(total + all) * 4, "file after write_ordered: %zu bytes", len);
        int p = total;
        for (int r = 0; r < size; ++r)
            for (int k = 0; k < (r < CALLS ? r + 1 : CALLS + 1); ++k, ++p) {
                int v;
                memcpy(&v, b + 4 + (size_t)p * 4, 4);
                CHECK(v == 2000000 + r * 100 + k, "ordered record %d: %d", p, v);
            }
        free(b);
    }
    /* read_ordered gives each rank its own records back */
    MPI_OK(MPI_File_seek_shared(fh, total, MPI_SEEK_SET));
    int back[CALLS + 1];
    MPI_OK(MPI_File_read_ordered(fh, back, mine, MPI_INT, &st));
    for (int k = 0; k < mine; ++k) CHECK(back[k] == 2000000 + rank * 100 + k, "read_ordered [%d] = %d", k, back[k]);
    /* read_shared: the ranks share out the whole file, one record at a time */
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    long long sum = 0;
    int got = 0;
    for (;;) {
        int v;
        MPI_OK(MPI_File_read_shared(fh, &v, 1, MPI_INT, &st));
        MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
        if (cnt == 0) break;
        sum += v;
        ++got;
    }
    long long sums[2] = {sum, got}, totals[2];
    MPI_OK(MPI_Allreduce(sums, totals, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    long long expect = 0;
    for (int r = 0; r < size; ++r) {
        for (int c = 0; c < CALLS; ++c)
            for (int k = 0; k <= c; ++k) expect += sval(r, c, k);
        for (int k = 0; k < (r < CALLS ? r + 1 : CALLS + 1); ++k) expect += 2000000 + r * 100 + k;
    }
    CHECK(totals[1] == total + all && totals[0] == expect, "read_shared: %lld records, sum %lld (expected %d, %lld)",
          totals[1], totals[0], total + all, expect);
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total + all, "MPI_SEEK_END of the shared pointer: %lld", (long long)pos);
    if (size > 1) expect_class(MPI_File_seek_shared(fh, rank, MPI_SEEK_SET), MPI_ERR_NOT_SAME, "seek_shared differing");
    MPI_OK(MPI_File_close(&fh));
    if (rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
    /* MPI_MODE_SEQUENTIAL: shared pointer only; MPI_DISPLACEMENT_CURRENT */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL |
                         MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    int v = rank;
    expect_class(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_UNSUPPORTED_OPERATION,
                 "write_at in MPI_MODE_SEQUENTIAL");
    MPI_OK(MPI_File_write_ordered(fh, "xyz", 3, MPI_CHAR, &st));
    MPI_OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset d;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(d == 3 * size, "MPI_DISPLACEMENT_CURRENT gave disp %lld, expected %d", (long long)d, 3 * size);
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0, "shared pointer after set_view: %lld", (long long)pos);
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static int handler_calls;
static MPI_File handler_file;
static int handler_code;

static void on_file_error(MPI_File *fh, int *code, ...) {
    ++handler_calls;
    handler_file = *fh;
    handler_code = *code;
}

static void errors(void) {
    char path[300], missing[300];
    path_of(path, sizeof path, "errors");
    path_of(missing, sizeof missing, "missing");
    MPI_File fh = MPI_FILE_NULL;
    /* amode errors, at every process */
    const int bad_modes[] = {0, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_MODE_RDONLY | MPI_MODE_EXCL,
                             MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                             MPI_MODE_WRONLY | 0x40000};
    for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; ++i) {
        int rc = MPI_File_open(MPI_COMM_WORLD, path, bad_modes[i], MPI_INFO_NULL, &fh);
        expect_class(rc, MPI_ERR_AMODE, "bad amode");
        CHECK(fh == MPI_FILE_NULL, "handle after a failed open");
    }
    CHECK(access(path, F_OK) != 0, "a failed open created %s", path);
    /* a missing file without MPI_MODE_CREATE */
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    expect_class(rc, MPI_ERR_NO_SUCH_FILE, "open of a missing file");
    CHECK(fh == MPI_FILE_NULL, "handle after a failed open");
    /* MPI_MODE_EXCL on an existing file */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_close(&fh));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    expect_class(rc, MPI_ERR_FILE_EXISTS, "MPI_MODE_EXCL on an existing file");
    CHECK(fh == MPI_FILE_NULL, "handle after a failed open");
    if (size > 1) {
        /* amode that differs between processes */
        rc = MPI_File_open(MPI_COMM_WORLD, path, rank == 0 ? MPI_MODE_RDWR : MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        expect_class(rc, MPI_ERR_NOT_SAME, "amode differing between processes");
        CHECK(fh == MPI_FILE_NULL, "handle after a failed open");
        /* uniform outcome: rank 0 can open its file, the others cannot */
        rc = MPI_File_open(MPI_COMM_WORLD, rank == 0 ? path : missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        expect_class(rc, MPI_ERR_NO_SUCH_FILE, "open that fails at some process");
        CHECK(fh == MPI_FILE_NULL, "handle after an open that failed elsewhere");
    }
    /* access errors on a read-only file, and argument errors */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int v = 1;
    expect_class(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS, "write to RDONLY");
    expect_class(MPI_File_write_all(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS, "write_all to RDONLY");
    expect_class(MPI_File_set_size(fh, 0), MPI_ERR_ACCESS, "set_size of RDONLY");
    expect_class(MPI_File_read_at(fh, -1, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ARG, "negative offset");
    expect_class(MPI_File_read_at(fh, 0, &v, -1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_COUNT, "negative count");
    expect_class(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG, "bad whence");
    expect_class(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG, "negative position");
    expect_class(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP, "external32 of MPI_LONG (4 bytes there, 8 here)");
    expect_class(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG,
                 "filetype not made of etypes");
    MPI_OK(MPI_File_set_view(fh, 0, MPI_SHORT, MPI_INT, "native", MPI_INFO_NULL));
    expect_class(MPI_File_read(fh, &v, 3, MPI_CHAR, MPI_STATUS_IGNORE), MPI_ERR_TYPE, "not a whole etype");
    /* a user handler on the file gets the file */
    MPI_Errhandler eh;
    MPI_OK(MPI_File_create_errhandler(on_file_error, &eh));
    MPI_OK(MPI_File_set_errhandler(fh, eh));
    handler_calls = 0;
    rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_file == fh && tl_class_of(handler_code) == MPI_ERR_ACCESS,
          "file handler: rc %d calls %d code %d", rc, handler_calls, handler_code);
    MPI_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_IO, "call_errhandler: calls %d", handler_calls);
    MPI_OK(MPI_File_close(&fh));
    /* ... and on MPI_FILE_NULL, the errors of open and of invalid handles */
    MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    handler_calls = 0;
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_file == MPI_FILE_NULL &&
              tl_class_of(handler_code) == MPI_ERR_NO_SUCH_FILE,
          "MPI_FILE_NULL handler on open: calls %d code %d", handler_calls, handler_code);
    MPI_Offset sz;
    rc = MPI_File_get_size(MPI_FILE_NULL, &sz);
    CHECK(tl_class_of(rc) == MPI_ERR_FILE && handler_calls == 2, "get_size(MPI_FILE_NULL): rc %d", rc);
    MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);
    if (rank == 0) {
        expect_class(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE, "delete of a missing file");
        MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* MPI_MODE_APPEND starts the pointer at the end; DELETE_ON_CLOSE removes */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_write_at_all(fh, rank * 8, "abcdefgh", 8, MPI_CHAR, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_close(&fh));
    CHECK(access(path, F_OK) != 0, "DELETE_ON_CLOSE left %s", path);
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_size(fh, 77));
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 77, "MPI_MODE_APPEND position %lld", (long long)pos);
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* A user data representation (MPI_Register_datarep): "ftmpi-test-swapped"
 * stores MPI_INT and MPI_DOUBLE byte-reversed, at their native sizes; other
 * types fail to convert (MPI_ERR_CONVERSION). `extra` counts the calls. */
static void swap_copy(unsigned char *to, const unsigned char *from, int count, int esize) {
    for (int i = 0; i < count; ++i)
        for (int b = 0; b < esize; ++b) to[i * esize + b] = from[i * esize + esize - 1 - b];
}

static int swap_convert(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra,
                        int to_file) {
    if (type != MPI_INT && type != MPI_DOUBLE) return MPI_ERR_CONVERSION;
    int esize;
    MPI_Type_size(type, &esize);
    unsigned char *user = (unsigned char *)userbuf + position * esize;
    if (to_file) swap_copy(filebuf, user, count, esize);
    else swap_copy(user, filebuf, count, esize);
    ++*(int *)extra;
    return MPI_SUCCESS;
}

static int swap_write(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra) {
    return swap_convert(userbuf, type, count, filebuf, position, extra, 1);
}

static int swap_read(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra) {
    return swap_convert(userbuf, type, count, filebuf, position, extra, 0);
}

static int native_extent(MPI_Datatype type, MPI_Aint *extent, void *extra) {
    (void)extra;
    MPI_Aint lb;
    return MPI_Type_get_extent(type, &lb, extent);
}

static int wide_extent(MPI_Datatype type, MPI_Aint *extent, void *extra) {
    (void)extra;
    MPI_Aint lb;
    MPI_Type_get_extent(type, &lb, extent);
    *extent *= 2;
    return MPI_SUCCESS;
}

static int int_swapped(int v) {
    int out;
    swap_copy((unsigned char *)&out, (const unsigned char *)&v, 1, (int)sizeof v);
    return out;
}

static void datareps(void) {
    enum { N = 64 };
    char path[300];
    path_of(path, sizeof path, "datarep");
    int calls = 0;
    MPI_OK(MPI_Register_datarep("ftmpi-test-swapped", swap_read, swap_write, native_extent, &calls));
    expect_class(MPI_Register_datarep("ftmpi-test-swapped", swap_read, swap_write, native_extent, NULL),
                 MPI_ERR_DUP_DATAREP, "registering a name twice");
    expect_class(MPI_Register_datarep("external32", swap_read, swap_write, native_extent, NULL), MPI_ERR_DUP_DATAREP,
                 "registering external32");
    MPI_OK(MPI_Register_datarep("ftmpi-test-wide", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, wide_extent, NULL));
    MPI_OK(MPI_Register_datarep("ftmpi-test-asis", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, native_extent, NULL));

    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    const MPI_Offset disp = (MPI_Offset)rank * N * (MPI_Offset)sizeof(int);
    MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "ftmpi-test-swapped", MPI_INFO_NULL));
    MPI_Offset d;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(strcmp(rep, "ftmpi-test-swapped") == 0 && d == disp, "get_view: \"%s\" at %lld", rep, (long long)d);
    MPI_Aint ext = 0;
    MPI_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK(ext == (MPI_Aint)sizeof(double), "get_type_extent(MPI_DOUBLE) under the swapped representation: %ld", (long)ext);

    int out[N], back[N];
    for (int i = 0; i < N; ++i) out[i] = rank * 100000 + i * 7 + 1;
    MPI_OK(MPI_File_write_all(fh, out, N, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(calls >= 1, "the write conversion was not called");
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    if (rank == 0) { /* the file holds every rank's ints byte-reversed */
        size_t len;
        unsigned char *b = slurp(path, &len);
        CHECK(len == (size_t)size * N * sizeof(int), "%s has %zu bytes", path, len);
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < N; ++i) {
                int v;
                memcpy(&v, b + ((size_t)r * N + (size_t)i) * sizeof v, sizeof v);
                CHECK(v == int_swapped(r * 100000 + i * 7 + 1), "file int %d of rank %d: %d", i, r, v);
            }
        free(b);
    }
    /* read back through the representation: the values */
    const int before = calls;
    memset(back, 0, sizeof back);
    MPI_OK(MPI_File_read_at_all(fh, 0, back, N, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(calls > before, "the read conversion was not called");
    for (int i = 0; i < N; ++i) CHECK(back[i] == out[i], "read back int %d: %d, expected %d", i, back[i], out[i]);
    /* a conversion's error is the access's */
    short two[2] = {1, 2};
    expect_class(MPI_File_write_at(fh, 0, two, 2, MPI_SHORT, MPI_STATUS_IGNORE), MPI_ERR_CONVERSION,
                 "write whose conversion fails");
    /* no conversion functions: the file's bytes as they are */
    MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "ftmpi-test-asis", MPI_INFO_NULL));
    MPI_OK(MPI_File_read_at(fh, 0, back, N, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) CHECK(back[i] == int_swapped(out[i]), "raw int %d: %d", i, back[i]);
    /* sizes other than native, and representations that differ, are refused everywhere */
    expect_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "ftmpi-test-wide", MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP, "a representation with 8-byte ints");
    expect_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "nobody-registered-this", MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP, "an unknown representation");
    if (size > 1)
        expect_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rank == 0 ? "native" : "ftmpi-test-asis", MPI_INFO_NULL),
                     MPI_ERR_NOT_SAME, "representations that differ between ranks");
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 1);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/ftmpi-io-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    }
    MPI_OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    manage();
    subarray();
    split_and_nonblocking();
    indexed();
    shared();
    errors();
    datareps();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        char path[300];
        path_of(path, sizeof path, "subarray");
        unlink(path);
        CHECK(rmdir(dir) == 0, "%s not empty at the end: %s", dir, strerror(errno));
    }
    if (rank == 0) printf("io: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
