/*
 * Collective MPI-IO through the aggregators (two-phase) against a sequential
 * reference, under the hints that choose it: romio_cb_write/romio_cb_read
 * = enable / disable / automatic, cb_nodes (aggregators) and a tiny
 * cb_buffer_size (many rounds, windows that cut runs). Plain MPI-3, so it
 * builds with any MPI.
 *
 *   subarray  a 3-D block distribution (MPI_Dims_create grid, uneven
 *             blocks): write_all and write_at_all after a displacement; rank
 *             0 checks the file with POSIX byte for byte; read_all back
 *   indexed   an indexed filetype of interleaved blocks of 1..4 ints, some
 *             blocks nobody's (holes that must keep the bytes written
 *             before), one rank with nothing to write; write_at_all checked
 *             with POSIX, read_at_all past the end of the file compared
 *             with the reference and with the independent path's count
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static int rank, size;
static char dir[256];

/* Hint sets, one per pass: mode, cb_nodes, cb_buffer_size (NULL: unset). */
static const char *const passes[][3] = {
    {"enable", NULL, NULL},  {"enable", "1", "100"},    {"enable", "2", "4096"},
    {"disable", NULL, NULL}, {"automatic", NULL, "64"}, {"enable", "3", "37"},
};
#define NPASSES (int)(sizeof passes / sizeof passes[0])

static MPI_Info hints(int pass) {
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "romio_cb_write", passes[pass][0]));
    MPI_OK(MPI_Info_set(info, "romio_cb_read", passes[pass][0]));
    if (passes[pass][1]) MPI_OK(MPI_Info_set(info, "cb_nodes", passes[pass][1]));
    if (passes[pass][2]) MPI_OK(MPI_Info_set(info, "cb_buffer_size", passes[pass][2]));
    return info;
}

static void check_file(const char *path, const unsigned char *ref, size_t n, int pass, const char *what) {
    if (rank == 0) {
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
        struct stat st;
        CHECK(fstat(fd, &st) == 0 && (size_t)st.st_size == n, "%s pass %d: %lld bytes, expected %zu", what, pass,
              (long long)st.st_size, n);
        unsigned char *b = malloc(n);
        CHECK(pread(fd, b, n, 0) == (ssize_t)n, "pread %s", path);
        close(fd);
        for (size_t i = 0; i < n; ++i)
            CHECK(b[i] == ref[i], "%s pass %d: byte %zu is %d, expected %d", what, pass, i, b[i], ref[i]);
        free(b);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Value of global element i: distinct in every byte position. */
static int gval(long i, int salt) { return (int)(i * 2654435761u + (unsigned)salt * 97u); }

static void subarray(int pass) {
    enum { NX = 13, NY = 7, NZ = 11 };
    const int g[3] = {NX, NY, NZ};
    int dims[3] = {0, 0, 0}, coords[3], sub[3], start[3];
    MPI_OK(MPI_Dims_create(size, 3, dims));
    coords[0] = rank / (dims[1] * dims[2]);
    coords[1] = rank / dims[2] % dims[1];
    coords[2] = rank % dims[2];
    for (int d = 0; d < 3; ++d) {
        start[d] = g[d] * coords[d] / dims[d];
        sub[d] = g[d] * (coords[d] + 1) / dims[d] - start[d];
    }
    MPI_Datatype ft;
    MPI_OK(MPI_Type_create_subarray(3, g, sub, start, MPI_ORDER_C, MPI_INT, &ft));
    MPI_OK(MPI_Type_commit(&ft));
    const int n = sub[0] * sub[1] * sub[2];
    int *mine = malloc(sizeof(int) * (size_t)(n + 1)), *back = malloc(sizeof(int) * (size_t)(n + 1));
    const MPI_Offset disp = 40; /* second write: after a header */
    unsigned char *ref = calloc(1, disp + sizeof(int) * NX * NY * NZ);
    for (int salt = 0; salt < 2; ++salt) {
        int k = 0;
        for (int x = start[0]; x < start[0] + sub[0]; ++x)
            for (int y = start[1]; y < start[1] + sub[1]; ++y)
                for (int z = start[2]; z < start[2] + sub[2]; ++z) mine[k++] = gval(((long)x * NY + y) * NZ + z, salt);
        memset(ref, 0, disp + sizeof(int) * NX * NY * NZ);
        for (long i = 0; i < (long)NX * NY * NZ; ++i) {
            int v = gval(i, salt);
            memcpy(ref + (salt ? disp : 0) + i * sizeof(int), &v, sizeof v);
        }
        char path[300];
        snprintf(path, sizeof path, "%s/sub%d_%d", dir, pass, salt);
        MPI_Info info = hints(pass);
        MPI_File fh;
        MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
        MPI_OK(MPI_Info_free(&info));
        MPI_Status st;
        int cnt;
        if (salt == 0) {
            MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
            MPI_OK(MPI_File_write_all(fh, mine, n, MPI_INT, &st));
        } else {
            MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
            MPI_OK(MPI_File_write_at_all(fh, 0, mine, n, MPI_INT, &st));
        }
        MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == n, "subarray pass %d: wrote %d of %d", pass, cnt, n);
        MPI_OK(MPI_File_sync(fh));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        check_file(path, ref, (salt ? disp : 0) + sizeof(int) * NX * NY * NZ, pass, "subarray");
        memset(back, 0, sizeof(int) * (size_t)n);
        if (salt == 0) {
            MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
            MPI_OK(MPI_File_read_all(fh, back, n, MPI_INT, &st));
        } else {
            MPI_OK(MPI_File_read_at_all(fh, 0, back, n, MPI_INT, &st));
        }
        MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == n, "subarray pass %d: read %d of %d", pass, cnt, n);
        for (int i = 0; i < n; ++i) CHECK(back[i] == mine[i], "subarray pass %d: element %d read back wrong", pass, i);
        MPI_OK(MPI_File_close(&fh));
        if (rank == 0) CHECK(unlink(path) == 0, "unlink %s", path);
    }
    free(ref);
    free(mine);
    free(back);
    MPI_OK(MPI_Type_free(&ft));
}

/* The indexed tile: NB blocks, block b has b % 4 + 1 ints; it belongs to rank
   b % (size + 1) (rank `size`: nobody, a hole). The last rank writes nothing
   when it has ranks to spare. */
enum { NB = 23, TILES = 9 };
static int blen(int b) { return b % 4 + 1; }
static int owner(int b) { return b % (size + 1); }

static void indexed(int pass) {
    int lens[NB], displs[NB], nb = 0, tile = 0, mycount = 0;
    for (int b = 0; b < NB; ++b) {
        if (owner(b) == rank) {
            lens[nb] = blen(b);
            displs[nb++] = tile;
            mycount += blen(b);
        }
        tile += blen(b);
    }
    const int idle = size > 1 && rank == size - 1;
    MPI_Datatype ix, ft;
    MPI_OK(MPI_Type_indexed(nb, lens, displs, MPI_INT, &ix));
    MPI_OK(MPI_Type_create_resized(ix, 0, (MPI_Aint)tile * (MPI_Aint)sizeof(int), &ft));
    MPI_OK(MPI_Type_commit(&ft));
    MPI_OK(MPI_Type_free(&ix));
    const int n = idle ? 0 : mycount * TILES;
    int *mine = malloc(sizeof(int) * (size_t)(mycount * TILES + 1));
    const size_t flen = sizeof(int) * (size_t)tile * TILES;
    unsigned char *ref = malloc(flen);
    memset(ref, 0xEE, flen); /* what rank 0 writes first: holes keep it */
    int k = 0;
    for (int t = 0; t < TILES; ++t)
        for (int b = 0, at = 0; b < NB; at += blen(b), ++b)
            for (int j = 0; j < blen(b); ++j) {
                const long i = (long)t * tile + at + j;
                const int v = gval(i, 3);
                if (owner(b) < size && !(size > 1 && owner(b) == size - 1)) memcpy(ref + i * sizeof(int), &v, sizeof v);
                if (owner(b) == rank) mine[k++] = v;
            }
    char path[300];
    snprintf(path, sizeof path, "%s/ix%d", dir, pass);
    if (rank == 0) {
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
        unsigned char *fill = malloc(flen);
        memset(fill, 0xEE, flen);
        CHECK(fd >= 0 && write(fd, fill, flen) == (ssize_t)flen, "prefill %s", path);
        close(fd);
        free(fill);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Info info = hints(pass);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    MPI_Status st;
    int cnt;
    MPI_OK(MPI_File_write_at_all(fh, 0, mine, n, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == n, "indexed pass %d: wrote %d of %d", pass, cnt, n);
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    check_file(path, ref, flen, pass, "indexed");
    /* Read from the middle of tile 2 for more than the file holds: what
       exists comes back, as the independent path gives it. */
    const int from = mycount + mycount / 2, want = mycount * TILES;
    int *back = malloc(sizeof(int) * (size_t)(want + 1)), *indep = malloc(sizeof(int) * (size_t)(want + 1));
    memset(back, 0, sizeof(int) * (size_t)want);
    memset(indep, 0, sizeof(int) * (size_t)want);
    MPI_OK(MPI_File_read_at_all(fh, from, back, want, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    int icnt;
    MPI_OK(MPI_File_read_at(fh, from, indep, want, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &icnt));
    CHECK(cnt == icnt && cnt == mycount * TILES - from, "indexed pass %d: read_at_all got %d, read_at %d, expected %d",
          pass, cnt, icnt, mycount * TILES - from);
    for (int i = 0; i < want; ++i) CHECK(back[i] == indep[i], "indexed pass %d: element %d differs", pass, i);
    for (int i = 0; i < cnt; ++i)
        if (!idle) CHECK(back[i] == mine[from + i], "indexed pass %d: element %d read back wrong", pass, i);
    MPI_OK(MPI_File_close(&fh));
    if (rank == 0) CHECK(unlink(path) == 0, "unlink %s", path);
    free(back);
    free(indep);
    free(ref);
    free(mine);
    MPI_OK(MPI_Type_free(&ft));
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 1);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/io_coll.XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    }
    MPI_OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    for (int pass = 0; pass < NPASSES; ++pass) {
        subarray(pass);
        indexed(pass);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK(rmdir(dir) == 0, "%s not empty at the end: %s", dir, strerror(errno));
    if (rank == 0) printf("io_coll: %d passes at %d ranks passed\n", NPASSES, size);
    MPI_Finalize();
    return 0;
}
