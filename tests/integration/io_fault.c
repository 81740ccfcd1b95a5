/*
 * MPI-IO with a SIGKILLed process (spec 000 §17.4.3, §17.12.1; spec 001
 * §1.2.4, §1.3.3). The victim is rank 3 of 4 (rank 0 in sync mode, the
 * file's leader). Nothing may hang; every
 * survivor checks the exact error classes; MPI_File_sync's result is compared
 * among the survivors (an allreduce on the shrunk MPI_COMM_WORLD: it must be
 * the same everywhere); after a successful sync, what the survivors wrote is
 * read back from the file and compared.
 *
 *   io_fault write   the victim dies inside MPI_File_write_at_all, after its
 *                    own access (FTMPI_TEST_KILL_AT io.collective): the
 *                    survivors' write reports MPI_ERR_PROC_FAILED; the next
 *                    sync MPI_ERR_PROC_FAILED, the one after it success; the
 *                    survivors' blocks are on disk; a collective fails until
 *                    MPI_File_validate (the victim, at everyone), then works
 *   io_fault sync    the victim dies between two syncs; the survivors write
 *                    (independently and collectively), then sync:
 *                    MPI_ERR_PROC_FAILED everywhere, then success; the data
 *                    of all survivors is on disk; MPI_File_get_group_failed
 *                    and MPI_Ifile_validate name the victim; after it, the
 *                    collectives that rank 0 led run with rank 1 leading:
 *                    seek_shared, write_ordered (rank order), set_size, and
 *                    close removes the shared pointer's sidecar; a file
 *                    opened over the validated MPI_COMM_WORLD works (rank 1
 *                    creates it and deletes it at close)
 *   io_fault shared  every rank appends records with MPI_File_write_shared;
 *                    the victim dies inside its third one, after reserving
 *                    its place (FTMPI_TEST_KILL_AT io.shared): the survivors'
 *                    appends go on; sync as above; every survivor record is in
 *                    the file exactly once
 *   io_fault insync  the victim dies inside MPI_File_sync's agreement, right
 *                    after contributing (FTMPI_TEST_KILL_AT agree.contribute,
 *                    its third agreement: open has two): the
 *                    survivors' result is the same everywhere, success or
 *                    MPI_ERR_PROC_FAILED; after success the next sync reports
 *                    the death; then success; the data is on disk
 *   io_fault revoke  (no death, 3 ranks) ranks 1.. block in
 *                    MPI_File_read_at_all that rank 0 never joins; rank 0
 *                    calls MPIX_File_revoke: their read ends with
 *                    MPIX_ERR_REVOKED, and every later non-local call on the
 *                    file (independent write, set_view, collective read,
 *                    sync) fails with it at every rank
 *   io_fault syncrevoke (no death, 3 ranks) ranks 1.. call MPI_File_sync,
 *                    which rank 0 does not join; rank 0 revokes the file:
 *                    their sync ends with MPIX_ERR_REVOKED (a revoke
 *                    preempts a sync, spec 001 §1.3.3), and rank 0's own
 *                    sync, after theirs ended, fails with it at once
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ftlib.h"

enum { k_block = 4096, k_records = 6 };

static int rank, size, victim, lead; /* lead: the lowest survivor */
static char dir[256], path[300];

/* The survivors (on `live`) got `rc` from a call that must give everyone the
   same class: checks it is the same everywhere and returns it. */
static int uniform(MPI_Comm live, int rc, const char *what) {
    int cls = tl_class(rc), lo = -1, hi = -1;
    MPI_OK(MPI_Allreduce(&cls, &lo, 1, MPI_INT, MPI_MIN, live));
    MPI_OK(MPI_Allreduce(&cls, &hi, 1, MPI_INT, MPI_MAX, live));
    CHECK(lo == hi, "%s: classes differ among the survivors (%d to %d; %d here)", what, lo, hi, cls);
    return cls;
}

/* Survivor `r`'s block at `off`, read back through the file, is seed `seed`. */
static void check_block(MPI_File fh, MPI_Offset off, uint64_t seed, int r) {
    unsigned char buf[k_block];
    MPI_Status st;
    MPI_OK(MPI_File_read_at(fh, off, buf, k_block, MPI_BYTE, &st));
    int n = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == k_block, "block of rank %d at %lld: %d bytes read", r, (long long)off, n);
    const size_t bad = tl_verify(buf, k_block, seed);
    CHECK(bad == (size_t)-1, "block of rank %d at %lld: byte %zu is wrong", r, (long long)off, bad);
}

/* The failed group `g` is exactly the victim. */
static void check_victim_group(MPI_Group g, const char *what) {
    MPI_Group world;
    int n = -1, r = -1, zero = 0;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_size(g, &n));
    CHECK(n == 1, "%s: %d failed", what, n);
    MPI_OK(MPI_Group_translate_ranks(g, 1, &zero, world, &r));
    CHECK(r == victim, "%s named rank %d", what, r);
    MPI_Group_free(&world);
}

/* Sync after the death: MPI_ERR_PROC_FAILED at every survivor, then success
   (the failure was reported). */
static void sync_reports_once(MPI_File fh, MPI_Comm live) {
    int cls = uniform(live, MPI_File_sync(fh), "first sync after the death");
    CHECK(cls == MPI_ERR_PROC_FAILED, "first sync after the death: class %d", cls);
    cls = uniform(live, MPI_File_sync(fh), "second sync after the death");
    CHECK(cls == MPI_SUCCESS, "second sync after the death: class %d", cls);
}

static void mode_write(MPI_File fh, MPI_Comm *live) {
    unsigned char buf[k_block];
    tl_fill(buf, k_block, (uint64_t)rank + 1);
    /* The victim does its own write, then dies before the exchange. */
    int rc = MPI_File_write_at_all(fh, (MPI_Offset)rank * k_block, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(rank != victim, "the victim survived its kill point");
    CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED, "write_at_all with the victim dying: class %d", tl_class(rc));
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, live));
    sync_reports_once(fh, *live);
    for (int r = 0; r < size; ++r)
        if (r != victim) check_block(fh, (MPI_Offset)r * k_block, (uint64_t)r + 1, r);
    /* Collectives stay disabled until validate, and never hang. */
    int active = 1;
    MPI_OK(MPI_File_collectives_enabled(fh, &active));
    CHECK(!active, "collectives enabled with an unrecognized failure");
    rc = MPI_File_write_at_all(fh, (MPI_Offset)rank * k_block, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED, "write_at_all before validate: class %d", tl_class(rc));
    MPI_Group failed;
    MPI_OK(MPI_File_validate(fh, &failed));
    check_victim_group(failed, "MPI_File_validate");
    MPI_Group_free(&failed);
    MPI_OK(MPI_File_collectives_enabled(fh, &active));
    CHECK(active, "collectives disabled after validate");
    /* Validated: the survivors' collectives run again, on a new layout. */
    tl_fill(buf, k_block, (uint64_t)rank + 100);
    MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)(size + rank) * k_block, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE));
    int cls = uniform(*live, MPI_File_sync(fh), "sync after validate");
    CHECK(cls == MPI_SUCCESS, "sync after validate: class %d", cls);
    unsigned char back[k_block];
    MPI_OK(MPI_File_read_at_all(fh, (MPI_Offset)(size + (rank + 1) % victim) * k_block, back, k_block, MPI_BYTE,
                                MPI_STATUS_IGNORE));
    CHECK(tl_verify(back, k_block, (uint64_t)((rank + 1) % victim) + 100) == (size_t)-1, "read_at_all after validate");
}

static void mode_sync(MPI_File fh, MPI_Comm *live) {
    unsigned char buf[k_block];
    tl_fill(buf, k_block, (uint64_t)rank + 1);
    MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * k_block, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(fh));
    if (rank == victim) tl_die(SIGKILL);
    /* Independent writes do not need the others. */
    tl_fill(buf, k_block, (uint64_t)rank + 50);
    MPI_OK(MPI_File_write_at(fh, (MPI_Offset)(size + rank) * k_block, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, live));
    sync_reports_once(fh, *live);
    for (int r = 0; r < size; ++r) {
        check_block(fh, (MPI_Offset)r * k_block, (uint64_t)r + 1, r);
        if (r != victim) check_block(fh, (MPI_Offset)(size + r) * k_block, (uint64_t)r + 50, r);
    }
    MPI_Group failed;
    MPI_OK(MPI_File_get_group_failed(fh, &failed));
    check_victim_group(failed, "MPI_File_get_group_failed");
    MPI_Group_free(&failed);
    MPI_Request req;
    MPI_OK(MPI_Ifile_validate(fh, &failed, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_victim_group(failed, "MPI_Ifile_validate");
    MPI_Group_free(&failed);
    /* Collectives again, led by rank 1: the survivors' blocks in rank order
       from block 2 * size on. */
    const MPI_Offset base = (MPI_Offset)2 * size * k_block;
    MPI_OK(MPI_File_seek_shared(fh, base, MPI_SEEK_SET));
    tl_fill(buf, k_block, (uint64_t)rank + 200);
    MPI_OK(MPI_File_write_ordered(fh, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(fh));
    for (int r = 1; r < size; ++r) check_block(fh, base + (MPI_Offset)(r - 1) * k_block, (uint64_t)r + 200, r);
    const MPI_Offset end = base + (MPI_Offset)(size - 1) * k_block;
    MPI_OK(MPI_File_set_size(fh, end + 10));
    MPI_Offset now = 0;
    MPI_OK(MPI_File_get_size(fh, &now));
    CHECK(now == end + 10, "set_size led by rank 1: size %lld", (long long)now);
    /* A file opened over a validated communicator whose rank 0 is dead:
       rank 1 creates it, its first sync has nothing to report (the failure
       predates it), rank 1 deletes it at close. */
    MPI_Group wfailed;
    MPI_OK(MPI_Comm_validate(MPI_COMM_WORLD, &wfailed));
    check_victim_group(wfailed, "MPI_Comm_validate");
    MPI_Group_free(&wfailed);
    char path2[320];
    snprintf(path2, sizeof path2, "%s/validated", dir);
    MPI_File f2;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path2, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &f2));
    tl_fill(buf, k_block, (uint64_t)rank + 300);
    MPI_OK(MPI_File_write_at_all(f2, (MPI_Offset)rank * k_block, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(f2));
    for (int r = 1; r < size; ++r) check_block(f2, (MPI_Offset)r * k_block, (uint64_t)r + 300, r);
    MPI_OK(MPI_File_close(&f2));
    CHECK(access(path2, F_OK) != 0 && errno == ENOENT, "%s still exists after close", path2);
}

/* A record of the shared-pointer mode: who wrote it, which one, a check. */
typedef struct {
    int rank, seq, check, pad;
} Record;

static int record_check(int r, int seq) { return 0x5eed0000 ^ (r << 8) ^ seq; }

static void mode_shared(MPI_File fh, MPI_Comm *live) {
    for (int i = 0; i < k_records; ++i) {
        Record rec = {rank, i, record_check(rank, i), 0};
        /* The victim dies inside its third append. */
        MPI_OK(MPI_File_write_shared(fh, &rec, (int)sizeof rec, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    CHECK(rank != victim, "the victim survived its kill point");
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, live));
    sync_reports_once(fh, *live);
    MPI_Offset bytes = 0;
    MPI_OK(MPI_File_get_size(fh, &bytes));
    const int n = (int)(bytes / (MPI_Offset)sizeof(Record));
    CHECK(n >= victim * k_records + 2, "the file holds %d records", n);
    Record *all = malloc((size_t)n * sizeof(Record));
    MPI_OK(MPI_File_read_at(fh, 0, all, n * (int)sizeof(Record), MPI_BYTE, MPI_STATUS_IGNORE));
    int seen[8][k_records] = {{0}};
    for (int i = 0; i < n; ++i) {
        const Record *rec = &all[i];
        if (rec->rank == 0 && rec->seq == 0 && rec->check == 0) continue; /* the victim's reserved hole */
        CHECK(rec->rank >= 0 && rec->rank < size && rec->seq >= 0 && rec->seq < k_records &&
                  rec->check == record_check(rec->rank, rec->seq),
              "record %d is garbage", i);
        ++seen[rec->rank][rec->seq];
    }
    for (int r = 0; r < victim; ++r)
        for (int i = 0; i < k_records; ++i)
            CHECK(seen[r][i] == 1, "record %d of rank %d seen %d times", i, r, seen[r][i]);
    for (int i = 0; i < 2; ++i)
        CHECK(seen[victim][i] == 1, "record %d of the victim seen %d times", i, seen[victim][i]);
    free(all);
}

static void mode_insync(MPI_File fh, MPI_Comm *live) {
    unsigned char buf[k_block];
    tl_fill(buf, k_block, (uint64_t)rank + 1);
    MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * k_block, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE));
    const int rc = MPI_File_sync(fh); /* the victim dies in here */
    CHECK(rank != victim, "the victim survived its kill point");
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, live));
    int cls = uniform(*live, rc, "sync the victim died in");
    CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_PROC_FAILED, "sync the victim died in: class %d", cls);
    if (cls == MPI_SUCCESS) sync_reports_once(fh, *live);
    else {
        cls = uniform(*live, MPI_File_sync(fh), "the sync after");
        CHECK(cls == MPI_SUCCESS, "the sync after: class %d", cls);
    }
    for (int r = 0; r < size; ++r) check_block(fh, (MPI_Offset)r * k_block, (uint64_t)r + 1, r);
}

static void mode_revoke(MPI_File fh) {
    unsigned char buf[k_block];
    tl_fill(buf, k_block, (uint64_t)rank + 1);
    MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * k_block, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(fh));
    int x = 0, rc;
    if (rank == 0) {
        for (int r = 1; r < size; ++r) MPI_OK(MPI_Recv(&x, 1, MPI_INT, r, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPIX_File_revoke(fh));
    } else {
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        rc = MPI_File_read_at_all(fh, 0, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE);
        CHECK(tl_class(rc) == MPIX_ERR_REVOKED, "read_at_all interrupted by the revoke: class %d", tl_class(rc));
    }
    int flag = 0;
    MPI_OK(MPIX_File_is_revoked(fh, &flag));
    CHECK(flag, "not revoked");
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE), MPIX_ERR_REVOKED);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPIX_ERR_REVOKED);
    CHECK_CLASS(MPI_File_read_at_all(fh, 0, buf, k_block, MPI_BYTE, MPI_STATUS_IGNORE), MPIX_ERR_REVOKED);
    const int cls = uniform(MPI_COMM_WORLD, MPI_File_sync(fh), "sync on the revoked file");
    CHECK(cls == MPIX_ERR_REVOKED, "sync on the revoked file: class %d", cls);
    /* Spec 001's name works on an already revoked file too. */
    MPI_OK(MPI_File_invalidate(fh));
}

static void mode_syncrevoke(MPI_File fh) {
    int x = 0;
    if (rank == 0) {
        for (int r = 1; r < size; ++r) MPI_OK(MPI_Recv(&x, 1, MPI_INT, r, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPIX_File_revoke(fh));
        /* Their syncs end without this rank ever joining them. */
        for (int r = 1; r < size; ++r) {
            MPI_OK(MPI_Recv(&x, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == MPIX_ERR_REVOKED, "rank %d's sync interrupted by the revoke: class %d", r, x);
        }
        /* Its own, on the revoked file, fails at once (the others are past theirs). */
        CHECK_CLASS(MPI_File_sync(fh), MPIX_ERR_REVOKED);
    } else {
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        x = tl_class(MPI_File_sync(fh));
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "write";
    if (strcmp(mode, "write") == 0) setenv("FTMPI_TEST_KILL_AT", "io.collective:3", 1);
    if (strcmp(mode, "shared") == 0) setenv("FTMPI_TEST_KILL_AT", "io.shared:3:3", 1);
    if (strcmp(mode, "insync") == 0) setenv("FTMPI_TEST_KILL_AT", "agree.contribute:3:3", 1);
    const int no_death = strcmp(mode, "revoke") == 0 || strcmp(mode, "syncrevoke") == 0;
    tl_init(&argc, &argv, &rank, &size, no_death ? 2 : 4);
    CHECK(no_death || size == 4, "%s runs with 4 ranks", mode);
    victim = no_death ? -1 : strcmp(mode, "sync") == 0 ? 0 : size - 1;
    lead = victim == 0 ? 1 : 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/ftmpi-io_fault-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    }
    MPI_OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    snprintf(path, sizeof path, "%s/data", dir);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Comm live = MPI_COMM_WORLD;
    if (strcmp(mode, "write") == 0) mode_write(fh, &live);
    else if (strcmp(mode, "sync") == 0) mode_sync(fh, &live);
    else if (strcmp(mode, "shared") == 0) mode_shared(fh, &live);
    else if (strcmp(mode, "insync") == 0) mode_insync(fh, &live);
    else if (strcmp(mode, "revoke") == 0) mode_revoke(fh);
    else if (strcmp(mode, "syncrevoke") == 0) mode_syncrevoke(fh);
    else CHECK(0, "unknown mode %s", mode);
    /* Close completes despite the failure (it may report it) or the revoke. */
    const int rc = MPI_File_close(&fh);
    CHECK(fh == MPI_FILE_NULL, "the handle survived close (class %d)", tl_class(rc));
    const int survivors = no_death ? size : size - 1;
    int one = 1, total = 0;
    MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, live));
    CHECK(total == survivors, "%d survivors, expected %d", total, survivors);
    if (rank == lead) {
        CHECK(unlink(path) == 0, "unlink %s: %s", path, strerror(errno));
        CHECK(rmdir(dir) == 0, "%s not empty at the end: %s", dir, strerror(errno));
        printf("io_fault %s: %d survivors ok\n", mode, survivors);
    }
    if (live != MPI_COMM_WORLD) MPI_Comm_free(&live);
    MPI_Finalize();
    return 0;
}
