/* io: part shared, the shared file pointer (see io.c). */
#include "io.h"

enum { CALLS = 4 };

static int sval(int r, int call, int k) { return 1000000 + r * 10000 + call * 100 + k; }

/* Call c of rank r writes c+1 records through the shared pointer, blocking
   and nonblocking in turn; rank 0 then finds every record once in the
   file. Returns the number of records written. */
static int shared_writes(MPI_File fh, const char *path) {
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
    return total;
}

/* Ordered: rank r appends r+1 records (at most CALLS+1), in rank order,
   after the `total` records; read_ordered gives each rank its own records
   back. Returns the number of records written. */
static int shared_ordered(MPI_File fh, const char *path, int total) {
    int buf[CALLS + 1];
    MPI_Status st;
    MPI_Offset pos;
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
    return all;
}

/* read_shared: the ranks share out the whole file (total + all records),
   one record at a time. */
static void shared_read_all(MPI_File fh, int total, int all) {
    MPI_Status st;
    int cnt;
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
}

/* MPI_MODE_SEQUENTIAL: shared pointer only; MPI_DISPLACEMENT_CURRENT */
static void shared_sequential(const char *path) {
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path,
                         MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
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
}

void shared(void) {
    char path[300];
    path_of(path, sizeof path, "shared");
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, 4, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    const int total = shared_writes(fh, path);
    const int all = shared_ordered(fh, path, total);
    shared_read_all(fh, total, all);
    MPI_Offset pos;
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total + all, "MPI_SEEK_END of the shared pointer: %lld", (long long)pos);
    if (size > 1) expect_class(MPI_File_seek_shared(fh, rank, MPI_SEEK_SET), MPI_ERR_NOT_SAME, "seek_shared differing");
    MPI_OK(MPI_File_close(&fh));
    if (rank == 0) MPI_OK(MPI_File_delete(path, MPI_INFO_NULL));
    shared_sequential(path);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}
