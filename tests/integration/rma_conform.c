/*
 * One-sided conformance: the patterns MPICH's RMA test suite relies on.
 * Plain MPI-3, so it builds with any MPI; `epochs` and `list` pass under
 * MPICH 4.0.2 unchanged. `shared_query` follows MPI-4.0 (MPICH 4.0.2 and
 * Open MPI 4.1 still refuse it), and `dynamic`'s refused access is ftmpi's
 * own check (MPICH does not check).
 *
 *   rma_conform epochs   a fence after which no operation was issued opens
 *                        no epoch: lock, lock_all, start and a lock of
 *                        one's own rank may follow it; a self-lock while
 *                        other ranks are locked or during an exposure
 *                        epoch. And the epoch errors MPICH reports
 *                        (MPI_ERR_RMA_SYNC): a lock after a fence whose
 *                        epoch has operations, a lock inside lock_all or
 *                        start, start inside a lock, unlock of one rank of
 *                        lock_all, a fence inside PSCW, a flush outside a
 *                        passive-target epoch.
 *   rma_conform dynamic  every operation on memory attached to a dynamic
 *                        window, completed by every flush variant (flush,
 *                        flush_local, flush_all, flush_local_all) under
 *                        lock_all and under a lock, with two regions
 *                        attached per process; an access outside them is
 *                        still refused (MPI_ERR_RMA_RANGE) once; one across
 *                        two regions attached end to end is not.
 *   rma_conform shared_query  MPI_Win_shared_query on windows made by
 *                        MPI_Win_create and MPI_Win_allocate (MPI-4.0
 *                        §12.2.3): one's own memory; another's memory when it
 *                        is shared (load/store reads what its owner wrote),
 *                        else size 0 and NULL; a dynamic window is refused.
 *   rma_conform list     a token goes round the ranks, each polling its own
 *                        memory with lock/get/unlock (or fetch_and_op and
 *                        flush inside lock_all) until the previous rank's
 *                        lock/put/unlock (fetch_and_op) lands; then
 *                        every process appends elements to one linked list
 *                        whose elements are attached to a dynamic window as
 *                        they are made, three ways: (fop) exclusive
 *                        lock/get/put/unlock of the tail, then a put into the
 *                        old tail, with MPI_Fetch_and_op numbering; (cas)
 *                        MPI_Compare_and_swap on the next pointer, then
 *                        MPI_Accumulate(MPI_REPLACE) of the address, each in
 *                        a lock epoch of its own, while the losers poll the
 *                        address (MPI_Fetch_and_op, MPI_NO_OP) in lock
 *                        epochs, their own element's too; (lockall) the same
 *                        inside lock_all, completed by flushes. Every
 *                        process then walks the list: each element once,
 *                        each process's in its order.
 */
#include "rma_conform.h"

int rank, size;

static int cls(int rc) { return tl_class_of(rc); }

#define EXPECT_CLASS(call, want)                                                         \
    do {                                                                                 \
        int c_ = cls(call);                                                              \
        CHECK(c_ == (want), "%s: class %d, expected %s (%d)", #call, c_, #want, (want)); \
    } while (0)

/* ---- epochs ---- */

static MPI_Group group_of(int r) {
    MPI_Group world, g;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &r, &g));
    MPI_Group_free(&world);
    return g;
}

/* What a fence that opened no epoch may be followed by, and self-locks while
   another rank is locked or during one's exposure epoch. */
static void epochs_allowed(const int *mem, MPI_Win win, MPI_Group gnext, MPI_Group gprev) {
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int v = rank, got = -1;

    /* fence(0) with no operation after it, then a lock epoch, then fences. */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(next, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[0] == prev, "put in a lock epoch after fence(0): mem[0] = %d", mem[0]);
    /* That fence opens a fence epoch again; one with operations, then one
       without, and a lock after it. */
    MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 1, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[1] == prev, "put in a fence epoch: mem[1] = %d", mem[1]);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT, next, 1, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(next, win));
    CHECK(got == rank, "get after fence; lock: %d", got);

    /* fence(0), then lock_all. */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 2, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(next, win));
    MPI_OK(MPI_Win_unlock_all(win));

    /* fence(0), then PSCW (from the previous rank, to the next). */
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[2] == prev, "put under lock_all after fence(0): mem[2] = %d", mem[2]);
    MPI_OK(MPI_Win_post(gprev, 0, win));
    MPI_OK(MPI_Win_start(gnext, 0, win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 3, 1, MPI_INT, win));
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
    CHECK(mem[3] == prev, "put under PSCW after fence(0): mem[3] = %d", mem[3]);

    /* fence(0), then an exclusive lock of one's own rank. */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT, rank, 4, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(rank, win));
    CHECK(mem[4] == rank, "put to self after fence(0): mem[4] = %d", mem[4]);
    /* MPI_MODE_NOSUCCEED ends the fences; a self-lock while the next rank is
       locked. */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win)); /* shared: an exclusive one could deadlock the ring */
    MPI_OK(MPI_Put(&v, 1, MPI_INT, rank, 5, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Win_unlock(next, win));
    CHECK(mem[5] == rank, "put to self while locking another: mem[5] = %d", mem[5]);
    /* A self-lock during one's own exposure epoch (MPICH allows it). */
    MPI_OK(MPI_Win_post(gprev, 0, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT, rank, 5, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(rank, win));
    CHECK(got == rank, "get from self during exposure: %d", got);
    MPI_OK(MPI_Win_start(gnext, 0, win));
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
}

/* The epoch errors (MPI_ERR_RMA_SYNC). */
static void epochs_errors(const int *mem, MPI_Win win, MPI_Group gnext, MPI_Group gprev, MPI_Group gself) {
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int v = rank;

    /* The errors. A fence epoch with an operation cannot be left for a lock. */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 6, 1, MPI_INT, win));
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_start(gnext, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_flush(next, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_flush_local(next, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_flush_local_all(win), MPI_ERR_RMA_SYNC);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(mem[6] == prev, "put before the refused lock: mem[6] = %d", mem[6]);
    /* No epoch at all. */
    EXPECT_CLASS(MPI_Win_flush(next, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_flush_local_all(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Put(&v, 1, MPI_INT, next, 7, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    /* Inside lock_all: no lock (not even of oneself), no unlock of one rank. */
    MPI_OK(MPI_Win_lock_all(0, win));
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_unlock(next, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
    MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 7, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush_local(next, win));
    MPI_OK(MPI_Win_unlock_all(win));
    /* A lock then lock_all or start. */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    EXPECT_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_start(gself, 0, win), MPI_ERR_RMA_SYNC);
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Win_unlock(rank, win));
    /* Inside PSCW: no lock, no fence. */
    MPI_OK(MPI_Win_post(gprev, 0, win));
    MPI_OK(MPI_Win_start(gnext, 0, win));
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_flush(next, win), MPI_ERR_RMA_SYNC);
    MPI_OK(MPI_Win_complete(win));
    EXPECT_CLASS(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC); /* still exposed */
    EXPECT_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    MPI_OK(MPI_Win_wait(win));
}

static void epochs(void) {
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 16; ++i) mem[i] = -1;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Group gnext = group_of(next), gprev = group_of(prev), gself = group_of(rank);

    epochs_allowed(mem, win, gnext, gprev);
    epochs_errors(mem, win, gnext, gprev, gself);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[7] == prev, "put under lock_all after the refused calls: mem[7] = %d", mem[7]);
    MPI_Group_free(&gnext);
    MPI_Group_free(&gprev);
    MPI_Group_free(&gself);
    MPI_OK(MPI_Win_free(&win));
}

/* ---- dynamic ---- */

enum { DA = 64, DB = 8 };

#define AT_A(t, i) MPI_Aint_add(addr[2 * (t)], (MPI_Aint)(i) * (MPI_Aint)sizeof(long))
#define AT_B(t, i) MPI_Aint_add(addr[2 * (t) + 1], (MPI_Aint)(i) * (MPI_Aint)sizeof(long))

/* Under lock_all, toward every process (oneself too), every operation, each
   completed by a flush variant; then the results in one's own memory a, b. */
static void dynamic_lock_all(MPI_Win win, const MPI_Aint *addr, const long *a, const long *b) {
    const long one = 1;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; ++t) {
        long v = 100 + rank, back = -1, old = -1, want = rank + 1, zero = 0, was = -1, seen = -1;
        MPI_OK(MPI_Put(&v, 1, MPI_LONG, t, AT_A(t, rank), 1, MPI_LONG, win));
        MPI_OK(MPI_Win_flush(t, win));
        MPI_OK(MPI_Get(&back, 1, MPI_LONG, t, AT_A(t, rank), 1, MPI_LONG, win));
        MPI_OK(MPI_Win_flush_local(t, win));
        CHECK(back == v, "dynamic get after flush from %d: %ld", t, back);
        MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, t, AT_A(t, DA - 1), 1, MPI_LONG, MPI_SUM, win));
        MPI_OK(MPI_Win_flush_all(win));
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, t, AT_A(t, DA - 2), MPI_SUM, win));
        MPI_OK(MPI_Win_flush_local_all(win));
        CHECK(old >= 0 && old < size, "fetch_and_op at %d fetched %ld", t, old);
        MPI_OK(MPI_Compare_and_swap(&want, &zero, &was, MPI_LONG, t, AT_B(t, 0), win));
        MPI_OK(MPI_Win_flush(t, win));
        CHECK(was >= 0 && was <= size, "compare_and_swap at %d found %ld", t, was);
        MPI_OK(
            MPI_Get_accumulate(&one, 1, MPI_LONG, &seen, 1, MPI_LONG, t, AT_A(t, DA - 3), 1, MPI_LONG, MPI_SUM, win));
        MPI_OK(MPI_Win_flush_local(t, win));
        CHECK(seen >= 0 && seen < size, "get_accumulate at %d fetched %ld", t, seen);
        /* Request-based ones, completed by a flush and by their requests. */
        MPI_Request req[2];
        long rv = 200 + rank, rback = -1;
        MPI_OK(MPI_Rput(&rv, 1, MPI_LONG, t, AT_A(t, size + rank), 1, MPI_LONG, win, &req[0]));
        MPI_OK(MPI_Win_flush(t, win));
        MPI_OK(MPI_Rget(&rback, 1, MPI_LONG, t, AT_A(t, size + rank), 1, MPI_LONG, win, &req[1]));
        MPI_Status st[2];
        MPI_OK(MPI_Waitall(2, req, st));
        CHECK(rback == rv, "rget after rput and flush from %d: %ld", t, rback);
        long racc_old = -1;
        MPI_OK(MPI_Raccumulate(&one, 1, MPI_LONG, t, AT_A(t, DA - 4), 1, MPI_LONG, MPI_SUM, win, &req[0]));
        MPI_OK(MPI_Win_flush_local_all(win));
        MPI_OK(MPI_Rget_accumulate(&one, 1, MPI_LONG, &racc_old, 1, MPI_LONG, t, AT_A(t, DA - 5), 1, MPI_LONG, MPI_SUM,
                                   win, &req[1]));
        MPI_OK(MPI_Waitall(2, req, st));
        CHECK(racc_old >= 0 && racc_old < size, "rget_accumulate at %d fetched %ld", t, racc_old);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win)); /* the unified model: local reads in an epoch */
    for (int o = 0; o < size; ++o) {
        CHECK(a[o] == 100 + o, "a[%d] = %ld", o, a[o]);
        CHECK(a[size + o] == 200 + o, "a[%d] = %ld", size + o, a[size + o]);
    }
    for (int i = 1; i <= 5; ++i) CHECK(a[DA - i] == size, "atomics: a[%d] = %ld", DA - i, a[DA - i]);
    CHECK(b[0] >= 1 && b[0] <= size, "compare_and_swap left %ld", b[0]);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Under an exclusive lock of each target in turn, into the second region. */
static void dynamic_exclusive(MPI_Win win, const MPI_Aint *addr) {
    for (int t = 0; t < size; ++t) {
        long v = 300 + rank, back = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MPI_OK(MPI_Accumulate(&v, 1, MPI_LONG, t, AT_B(t, 1 + rank % (DB - 1)), 1, MPI_LONG, MPI_REPLACE, win));
        MPI_OK(MPI_Win_flush(t, win));
        MPI_OK(MPI_Get(&back, 1, MPI_LONG, t, AT_B(t, 1 + rank % (DB - 1)), 1, MPI_LONG, win));
        MPI_OK(MPI_Win_flush_local_all(win));
        CHECK(back == v, "get from %d's second region: %ld", t, back);
        MPI_OK(MPI_Win_flush_all(win));
        MPI_OK(MPI_Win_unlock(t, win));
    }
}

/* Outside the attached memory: refused once, nothing written, and the
   window works on. */
static void dynamic_refused(MPI_Win win, const MPI_Aint *addr, const long *a) {
    const int next = (rank + 1) % size;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win));
    long v2[2] = {7, 7};
    MPI_OK(MPI_Put(v2, 2, MPI_LONG, next, AT_A(next, DA - 1), 2, MPI_LONG, win));
    EXPECT_CLASS(MPI_Win_flush(next, win), MPI_ERR_RMA_RANGE);
    MPI_OK(MPI_Win_flush(next, win));
    MPI_OK(MPI_Put(v2, 1, MPI_LONG, next, AT_A(next, 2 * size), 1, MPI_LONG, win));
    MPI_OK(MPI_Win_flush(next, win));
    MPI_OK(MPI_Win_unlock(next, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(a[DA - 1] == size, "a refused put wrote %ld", a[DA - 1]);
    CHECK(a[2 * size] == 7, "put after the refused one: %ld", a[2 * size]);
}

#undef AT_A
#undef AT_B

/* Two regions attached end to end: one access may span both. */
static void dynamic_span(MPI_Win win) {
    const int next = (rank + 1) % size;
    long *c;
    MPI_OK(MPI_Alloc_mem(8 * sizeof(long), MPI_INFO_NULL, &c));
    for (int i = 0; i < 8; ++i) c[i] = -1;
    MPI_OK(MPI_Win_attach(win, c, 4 * sizeof(long)));
    MPI_OK(MPI_Win_attach(win, c + 4, 4 * sizeof(long)));
    MPI_Aint cmine, *caddr = malloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_OK(MPI_Get_address(c, &cmine));
    MPI_OK(MPI_Allgather(&cmine, 1, MPI_AINT, caddr, 1, MPI_AINT, MPI_COMM_WORLD));
    long span[4] = {rank, rank, rank, rank};
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
    MPI_OK(MPI_Put(span, 4, MPI_LONG, next, MPI_Aint_add(caddr[next], 2 * sizeof(long)), 4, MPI_LONG, win));
    MPI_OK(MPI_Win_flush_local(next, win));
    MPI_OK(MPI_Win_unlock(next, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const int prev = (rank + size - 1) % size;
    for (int i = 0; i < 8; ++i)
        CHECK(c[i] == (i >= 2 && i < 6 ? prev : -1), "put across two regions: c[%d] = %ld", i, c[i]);
    MPI_OK(MPI_Win_detach(win, c));
    MPI_OK(MPI_Win_detach(win, c + 4));
    MPI_OK(MPI_Free_mem(c));
    free(caddr);
}

static void dynamic(void) {
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    long *a, *b;
    MPI_OK(MPI_Alloc_mem(DA * sizeof(long), MPI_INFO_NULL, &a));
    b = calloc(DB, sizeof(long));
    for (int i = 0; i < DA; ++i) a[i] = 0;
    MPI_OK(MPI_Win_attach(win, a, DA * sizeof(long)));
    MPI_OK(MPI_Win_attach(win, b, DB * sizeof(long)));
    MPI_Aint mine[2], *addr = malloc(2 * sizeof(MPI_Aint) * (size_t)size);
    MPI_OK(MPI_Get_address(a, &mine[0]));
    MPI_OK(MPI_Get_address(b, &mine[1]));
    MPI_OK(MPI_Allgather(mine, 2, MPI_AINT, addr, 2, MPI_AINT, MPI_COMM_WORLD));
    dynamic_lock_all(win, addr, a, b);
    dynamic_exclusive(win, addr);
    dynamic_refused(win, addr, a);
    dynamic_span(win);
    MPI_OK(MPI_Win_detach(win, a));
    MPI_OK(MPI_Win_detach(win, b));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Free_mem(a));
    free(b);
    free(addr);
}

/* ---- shared_query ---- */

/* Whether this run's allocate windows are in shared memory (ftmpi: on
   unless FTMPI_RMA_SHM=0). */
static int allocate_is_shared(void) {
    const char *e = getenv("FTMPI_RMA_SHM");
    return e == NULL || strcmp(e, "0") != 0;
}

/* Every rank's answer on `win`, whose members hold (r + 1) * 4 ints of value
   1000 * r + i; `shared`: other ranks' memory must be returned. */
static void query_all(MPI_Win win, const int *mine, int shared) {
    for (int r = 0; r < size; ++r) {
        MPI_Aint sz = -1;
        int du = -1;
        int *p = (int *)1;
        MPI_OK(MPI_Win_shared_query(win, r, &sz, &du, &p));
        if (r == rank) {
            CHECK(p == mine && sz == (MPI_Aint)(r + 1) * 4 * (MPI_Aint)sizeof(int) && du == (int)sizeof(int),
                  "own memory: %p (mine %p), size %ld, disp_unit %d", (void *)p, (void *)mine, (long)sz, du);
        } else if (p == NULL) {
            CHECK(!shared, "rank %d's memory not returned", r);
            CHECK(sz == 0, "rank %d: NULL with size %ld", r, (long)sz);
        } else {
            CHECK(sz == (MPI_Aint)(r + 1) * 4 * (MPI_Aint)sizeof(int) && du == (int)sizeof(int),
                  "rank %d: size %ld, disp_unit %d", r, (long)sz, du);
            for (int i = 0; i < (r + 1) * 4; ++i)
                CHECK(p[i] == 1000 * r + i, "rank %d's memory through shared_query: [%d] = %d", r, i, p[i]);
        }
    }
    /* MPI_PROC_NULL: the lowest rank with memory that this process can reach. */
    MPI_Aint sz = -1;
    int du = -1, *p = (int *)1;
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
    CHECK(p != NULL && sz > 0, "MPI_PROC_NULL: %p size %ld", (void *)p, (long)sz);
    if (shared || rank == 0)
        CHECK(sz == 4 * (MPI_Aint)sizeof(int) && p[0] == 0, "MPI_PROC_NULL: size %ld, [0] = %d", (long)sz, p[0]);
}

static void shared_query(void) {
    const int n = (rank + 1) * 4;
    int *user = malloc((size_t)n * sizeof(int)), *alloc;
    for (int i = 0; i < n; ++i) user[i] = 1000 * rank + i;
    MPI_Win create, allocate, dyn;
    MPI_OK(MPI_Win_create(user, (MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &create));
    MPI_OK(MPI_Win_allocate((MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &alloc, &allocate));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, allocate));
    for (int i = 0; i < n; ++i) alloc[i] = 1000 * rank + i;
    MPI_OK(MPI_Win_unlock(rank, allocate));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, create));
    query_all(create, user, 0);
    MPI_OK(MPI_Win_unlock_all(create));
    MPI_OK(MPI_Win_lock_all(0, allocate));
    MPI_OK(MPI_Win_sync(allocate));
    query_all(allocate, alloc, allocate_is_shared());
    MPI_OK(MPI_Win_unlock_all(allocate));
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    MPI_OK(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
    MPI_Aint sz;
    int du;
    void *p;
    EXPECT_CLASS(MPI_Win_shared_query(dyn, rank, &sz, &du, &p), MPI_ERR_RMA_FLAVOR);
    MPI_OK(MPI_Win_free(&dyn));
    MPI_OK(MPI_Win_free(&allocate));
    MPI_OK(MPI_Win_free(&create));
    free(user);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 2);
    const char *which = argc > 1 ? argv[1] : "";
    if (strcmp(which, "epochs") == 0) epochs();
    else if (strcmp(which, "dynamic") == 0) dynamic();
    else if (strcmp(which, "shared_query") == 0) shared_query();
    else if (strcmp(which, "list") == 0) list();
    else CHECK(0, "unknown case '%s' (epochs, dynamic, shared_query, list)", which);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("rma_conform %s: %d ranks ok\n", which, size);
    MPI_Finalize();
    return 0;
}
