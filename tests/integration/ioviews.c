/*
 * File views: the error classes of bad etypes and filetypes, and the
 * "external32" data representation with derived types. Needs nprocs >= 2.
 * Files live under /tmp (made by rank 0, removed at the end).
 *
 *   classes    an etype or a filetype with a negative displacement, with
 *              decreasing displacements, or overlapping (in a writable
 *              file) -> MPI_ERR_IO, as MPICH 4.0.2 (ROMIO; its
 *              test/mpi/io/tst_fileview); overlaps are fine in a file opened
 *              MPI_MODE_RDONLY; a filetype not made of whole etypes ->
 *              MPI_ERR_ARG (as MPICH).
 *   external32 each rank writes records {int, double, MPI_DOUBLE_INT, short}
 *              from a non-contiguous memory type through an external32 view
 *              interleaving the ranks' 26-byte records; rank 0
 *              checks the file's bytes (big-endian, no padding, 26 per
 *              element) with POSIX; every rank reads another rank's elements
 *              back through the view. MPICH's external32_derived_dtype (an
 *              indexed type of 2 chars). MPI_File_get_view names
 *              "external32"; a view or an access with MPI_LONG (4 bytes in
 *              external32, 8 here) -> MPI_ERR_UNSUPPORTED_DATAREP.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

#include "testlib.h"

static int rank, size;
static char dir[64];

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static MPI_Datatype indexed2(int d0, int b0, int d1, int b1) {
    int bl[2] = {b0, b1}, d[2] = {d0, d1};
    MPI_Datatype t;
    MPI_OK(MPI_Type_indexed(2, bl, d, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

static void expect_view(MPI_File fh, MPI_Datatype etype, MPI_Datatype filetype, int want, const char *what) {
    int rc = MPI_File_set_view(fh, 0, etype, filetype, "native", MPI_INFO_NULL), len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    CHECK(tl_class_of(rc) == want, "%s: set_view gave class %d (%s), expected %d", what, tl_class_of(rc), msg, want);
}

static void part_classes(void) {
    char path[128];
    path_of(path, sizeof path, "classes");
    for (int ro = 0; ro < 2; ++ro) {
        MPI_File fh;
        MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, ro ? MPI_MODE_RDONLY : MPI_MODE_RDWR | MPI_MODE_CREATE,
                             MPI_INFO_NULL, &fh));
        MPI_Datatype neg = indexed2(-2, 1, 2, 1), dec = indexed2(3, 1, 0, 1), over = indexed2(0, 3, 1, 1);
        expect_view(fh, neg, neg, MPI_ERR_IO, "etype with a negative displacement");
        expect_view(fh, dec, dec, MPI_ERR_IO, "etype with decreasing displacements");
        expect_view(fh, over, over, ro ? MPI_SUCCESS : MPI_ERR_IO, "overlapping etype");
        expect_view(fh, MPI_INT, neg, MPI_ERR_IO, "filetype with a negative displacement");
        expect_view(fh, MPI_INT, dec, MPI_ERR_IO, "filetype with decreasing displacements");
        expect_view(fh, MPI_INT, over, ro ? MPI_SUCCESS : MPI_ERR_IO, "overlapping filetype");
        MPI_Datatype three = indexed2(0, 1, 1, 2);
        expect_view(fh, MPI_DOUBLE, three, MPI_ERR_ARG, "filetype of 3 ints with etype MPI_DOUBLE");
        MPI_OK(MPI_Type_free(&three));
        MPI_OK(MPI_Type_free(&neg));
        MPI_OK(MPI_Type_free(&dec));
        MPI_OK(MPI_Type_free(&over));
        MPI_OK(MPI_File_close(&fh));
    }
}

struct rec {
    int a;
    double b;
    struct {
        double v;
        int i;
    } p;
    short c;
};

/* The struct type of struct rec, and a memory type holding the same data in
   another order of fields (non-contiguous, with gaps). */
static MPI_Datatype rec_type(void) {
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint d[4] = {offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, p),
                     offsetof(struct rec, c)};
    MPI_Datatype ty[4] = {MPI_INT, MPI_DOUBLE, MPI_DOUBLE_INT, MPI_SHORT}, t, r;
    MPI_OK(MPI_Type_create_struct(4, bl, d, ty, &t));
    MPI_OK(MPI_Type_create_resized(t, 0, sizeof(struct rec), &r));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_commit(&r));
    return r;
}

static void fill_rec(struct rec *x, int owner, int k) {
    memset(x, 0xEE, sizeof *x);
    x->a = 1000 * owner + k;
    x->b = owner + k / 4.0;
    x->p.v = -0.5 * (k + 1);
    x->p.i = owner * 10 + k;
    x->c = (short)(-owner - k);
}

static void be_put(unsigned char *out, const void *in, size_t n) {
    const unsigned char *p = in;
    for (size_t i = 0; i < n; ++i) out[i] = p[n - 1 - i];
}

#define NREC 3
#define EXT_REC 26 /* 4 + 8 + (8 + 4) + 2 */

/* MPICH's external32_derived_dtype: etype = filetype = indexed {1 char, 1 char}. */
static void external32_indexed_chars(void) {
    char path[128];
    MPI_File fh;
    const int other = (rank + 1) % size;
    path_of(path, sizeof path, "ext32_chars");
    MPI_Datatype dt;
    int bl[2] = {1, 1}, d[2] = {0, 1};
    MPI_OK(MPI_Type_indexed(2, bl, d, MPI_CHAR, &dt));
    MPI_OK(MPI_Type_commit(&dt));
    char buf[2] = {(char)('a' + rank), (char)('A' + rank)};
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, 0, dt, dt, "external32", MPI_INFO_NULL));
    MPI_OK(MPI_File_write_at_all(fh, rank, buf, 1, dt, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    char got[2] = {0, 0};
    MPI_OK(MPI_File_read_at_all(fh, other, got, 1, dt, MPI_STATUS_IGNORE));
    CHECK(got[0] == 'a' + other && got[1] == 'A' + other, "indexed chars of rank %d: %c%c", other, got[0], got[1]);
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Type_free(&dt));
}

static void part_external32(void) {
    char path[128];
    path_of(path, sizeof path, "ext32");
    MPI_Datatype et = rec_type(), bytes26, ft;
    /* The file holds the data as converted (packed: 26 bytes an element) laid
       through the view, as ROMIO does: a filetype of 26 bytes, then room for
       the other ranks' elements (interleaved). */
    MPI_OK(MPI_Type_contiguous(EXT_REC, MPI_BYTE, &bytes26));
    MPI_OK(MPI_Type_create_resized(bytes26, 0, (MPI_Aint)EXT_REC * size, &ft));
    MPI_OK(MPI_Type_commit(&ft));
    MPI_OK(MPI_Type_free(&bytes26));
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, (MPI_Offset)rank * EXT_REC, MPI_BYTE, ft, "external32", MPI_INFO_NULL));
    {
        MPI_Offset disp;
        MPI_Datatype e2, f2;
        char rep[MPI_MAX_DATAREP_STRING];
        MPI_OK(MPI_File_get_view(fh, &disp, &e2, &f2, rep));
        CHECK(strcmp(rep, "external32") == 0 && disp == (MPI_Offset)rank * EXT_REC, "get_view: \"%s\" %lld", rep,
              (long long)disp);
        CHECK(e2 == MPI_BYTE, "get_view: etype");
        MPI_OK(MPI_Type_free(&f2));
    }
    /* Memory: NREC records every other slot of an array (a vector of them). */
    struct rec mem[2 * NREC];
    for (int k = 0; k < NREC; ++k) fill_rec(&mem[2 * k], rank, k);
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(NREC, 1, 2, et, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    MPI_Status st;
    MPI_OK(MPI_File_write_at_all(fh, 0, mem, 1, every_other, &st));
    int cnt = -1;
    MPI_OK(MPI_Get_count(&st, every_other, &cnt));
    CHECK(cnt == 1, "write: Get_count %d", cnt);
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    if (rank == 0) {
        /* The file: element k of rank r at (k * size + r) * 26, big-endian. */
        const size_t total = (size_t)NREC * size * EXT_REC;
        unsigned char *file = malloc(total), want[EXT_REC];
        const int fd = open(path, O_RDONLY);
        CHECK(fd >= 0 && pread(fd, file, total, 0) == (ssize_t)total, "reading %s", path);
        close(fd);
        for (int k = 0; k < NREC; ++k)
            for (int r = 0; r < size; ++r) {
                struct rec x;
                fill_rec(&x, r, k);
                be_put(want, &x.a, 4);
                be_put(want + 4, &x.b, 8);
                be_put(want + 12, &x.p.v, 8);
                be_put(want + 20, &x.p.i, 4);
                be_put(want + 24, &x.c, 2);
                CHECK(memcmp(file + ((size_t)k * size + r) * EXT_REC, want, EXT_REC) == 0,
                      "file bytes of rank %d's element %d are not its external32 form", r, k);
            }
        free(file);
    }
    /* Read the next rank's elements back through its view, into a contiguous array. */
    const int other = (rank + 1) % size;
    MPI_OK(MPI_File_set_view(fh, (MPI_Offset)other * EXT_REC, MPI_BYTE, ft, "external32", MPI_INFO_NULL));
    struct rec back[NREC];
    memset(back, 0x11, sizeof back);
    MPI_OK(MPI_File_read_at_all(fh, 0, back, NREC, et, &st));
    MPI_OK(MPI_Get_count(&st, et, &cnt));
    CHECK(cnt == NREC, "read: Get_count %d", cnt);
    for (int k = 0; k < NREC; ++k) {
        struct rec x;
        fill_rec(&x, other, k);
        CHECK(back[k].a == x.a && back[k].b == x.b && back[k].p.v == x.p.v && back[k].p.i == x.p.i && back[k].c == x.c,
              "read back rank %d's element %d: %d %g %g %d %d", other, k, back[k].a, back[k].b, back[k].p.v,
              back[k].p.i, back[k].c);
        const unsigned char *pad = (const unsigned char *)&back[k].p + 12;
        CHECK(pad[0] == 0x11 && pad[3] == 0x11, "read back: padding of the pair written");
    }

    /* MPI_LONG has 4 bytes in external32: not a view ftmpi takes, nor an access. */
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    int rc = MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL);
    CHECK(tl_class_of(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "external32 view of MPI_LONG gave %d", rc);
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    long l[2] = {1, 2};
    rc = MPI_File_write_at(fh, 0, l, 2, MPI_LONG, MPI_STATUS_IGNORE);
    CHECK(tl_class_of(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "external32 write of MPI_LONG gave %d", rc);
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Type_free(&every_other));
    MPI_OK(MPI_Type_free(&ft));
    MPI_OK(MPI_Type_free(&et));

    external32_indexed_chars();
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/ftmpi-ioviews-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MPI_OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    part_classes();
    part_external32();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        char path[128];
        for (const char *const *n = (const char *const[]){"classes", "ext32", "ext32_chars", NULL}; *n; ++n) {
            path_of(path, sizeof path, *n);
            unlink(path);
        }
        rmdir(dir);
        printf("ioviews: all checks passed on %d ranks\n", size);
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
