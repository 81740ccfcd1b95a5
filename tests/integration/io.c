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
#include "io.h"

int rank, size;
char dir[256];

void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* Rank 0's POSIX view of the whole file; *len gets its size. */
unsigned char *slurp(const char *path, size_t *len) {
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

void compare_file(const char *path, const unsigned char *ref, size_t ref_len) {
    if (rank != 0) return;
    size_t len;
    unsigned char *b = slurp(path, &len);
    CHECK(len == ref_len, "%s has %zu bytes, expected %zu", path, len, ref_len);
    for (size_t i = 0; i < len; ++i) CHECK(b[i] == ref[i], "%s: byte %zu is %d, expected %d", path, i, b[i], ref[i]);
    free(b);
}

void expect_class(int rc, int cls, const char *what) {
    CHECK(tl_class_of(rc) == cls, "%s: class %d (rc %d), expected %d", what, tl_class_of(rc), rc, cls);
}

void expect_size(MPI_File fh, MPI_Offset expected, const char *after) {
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
