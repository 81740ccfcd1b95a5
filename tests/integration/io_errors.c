/* io: parts errors and datareps (see io.c). */
#include "io.h"

static int handler_calls;
static MPI_File handler_file;
static int handler_code;

static void on_file_error(MPI_File *fh, int *code, ...) {
    ++handler_calls;
    handler_file = *fh;
    handler_code = *code;
}

void errors(void) {
    char path[300], missing[300];
    path_of(path, sizeof path, "errors");
    path_of(missing, sizeof missing, "missing");
    MPI_File fh = MPI_FILE_NULL;
    /* amode errors, at every process */
    const int bad_modes[] = {0,
                             MPI_MODE_RDONLY | MPI_MODE_CREATE,
                             MPI_MODE_RDONLY | MPI_MODE_EXCL,
                             MPI_MODE_RDONLY | MPI_MODE_RDWR,
                             MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
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
    expect_class(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP,
                 "external32 of MPI_LONG (4 bytes there, 8 here)");
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

void datareps(void) {
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
    MPI_OK(
        MPI_Register_datarep("ftmpi-test-asis", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, native_extent, NULL));

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
    CHECK(ext == (MPI_Aint)sizeof(double), "get_type_extent(MPI_DOUBLE) under the swapped representation: %ld",
          (long)ext);

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
        expect_class(
            MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rank == 0 ? "native" : "ftmpi-test-asis", MPI_INFO_NULL),
            MPI_ERR_NOT_SAME, "representations that differ between ranks");
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
}
