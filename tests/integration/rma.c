/*
 * One-sided communication against a sequential reference: every result is
 * computed independently from the ranks' known contributions. Plain MPI-3,
 * so it builds with any MPI.
 *
 *   windows   Win_create/Win_allocate, attributes, group, name, errhandler
 *   fence     put and get (predefined and derived types on both sides),
 *             accumulate, get_accumulate, large (rendezvous) transfers
 *   lock      shared-lock accumulates (atomicity), exclusive-lock
 *             read-modify-write (mutual exclusion), fetch_and_op (every
 *             fetched value distinct), compare_and_swap (one winner),
 *             lock_all + flush; on MPI_Win_create memory under exclusive
 *             locks, operations of KiB (single copy within a node) mixed
 *             with small ones, in order
 *   errors    the classes of bad calls, under MPI_ERRORS_RETURN
 */
#include "testlib.h"

enum { K = 50, SLOTS = 64 };

static int rank, size;

static void windows(void) {
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    void *base;
    MPI_Aint *wsize;
    int *unit, *flavor, *model, flag;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mem, "MPI_WIN_BASE %p, expected %p", base, (void *)mem);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == SLOTS * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE %ld", (long)*wsize);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == (int)sizeof(int), "MPI_WIN_DISP_UNIT %d", *unit);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavor %d", *flavor);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "model %d", *model);
    MPI_Group wg, cg;
    int cmp;
    MPI_OK(MPI_Win_get_group(win, &wg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &cg));
    MPI_OK(MPI_Group_compare(wg, cg, &cmp));
    CHECK(cmp == MPI_IDENT, "window group differs from the communicator's (%d)", cmp);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Win_set_name(win, "rma-test"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, "rma-test") == 0 && len == 8, "name '%s'", name);
    for (int i = 0; i < SLOTS; ++i) CHECK(mem[i] == 0, "allocated memory not zero at %d", i);
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");

    /* User memory. */
    long *user = calloc(SLOTS, sizeof(long));
    MPI_OK(MPI_Win_create(user, SLOTS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; ++t) {
        long v = 1000L * rank + t;
        MPI_OK(MPI_Put(&v, 1, MPI_LONG, t, rank, 1, MPI_LONG, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    for (int o = 0; o < size; ++o) CHECK(user[o] == 1000L * o + rank, "user[%d] = %ld", o, user[o]);
    MPI_OK(MPI_Win_free(&win));
    free(user);
}

static void fence_ops(void) {
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    /* Put: slot `rank` of every window gets rank*10 + target. */
    for (int t = 0; t < size; ++t) {
        int v = rank * 10 + t;
        MPI_OK(MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    for (int o = 0; o < size; ++o) CHECK(mem[o] == o * 10 + rank, "put: mem[%d] = %d", o, mem[o]);

    /* Get: the next rank's whole row. */
    int row[SLOTS];
    const int next = (rank + 1) % size;
    MPI_OK(MPI_Get(row, size, MPI_INT, next, 0, size, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int o = 0; o < size; ++o) CHECK(row[o] == o * 10 + next, "get: row[%d] = %d", o, row[o]);

    /* Accumulate: every rank adds (rank + 1) to slot 32 of every window; the
       max of ranks lands in slot 33. */
    for (int t = 0; t < size; ++t) {
        int v = rank + 1;
        MPI_OK(MPI_Accumulate(&v, 1, MPI_INT, t, 32, 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(&rank, 1, MPI_INT, t, 33, 1, MPI_INT, MPI_MAX, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[32] == size * (size + 1) / 2, "acc sum %d", mem[32]);
    CHECK(mem[33] == size - 1, "acc max %d", mem[33]);

    /* Derived types: 4 contiguous ints to every other slot from 40 at the
       target (a vector), and back through a vector at the origin. */
    MPI_Datatype stride2;
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &stride2));
    MPI_OK(MPI_Type_commit(&stride2));
    int four[4];
    for (int i = 0; i < 4; ++i) four[i] = 100 * rank + i;
    MPI_OK(MPI_Put(four, 4, MPI_INT, next, 40, 1, stride2, win));
    MPI_OK(MPI_Win_fence(0, win));
    const int prev = (rank + size - 1) % size;
    for (int i = 0; i < 4; ++i)
        CHECK(mem[40 + 2 * i] == 100 * prev + i, "vector put: mem[%d] = %d", 40 + 2 * i, mem[40 + 2 * i]);
    int spread[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    MPI_OK(MPI_Get(spread, 1, stride2, next, 40, 1, stride2, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; ++i) {
        CHECK(spread[2 * i] == 100 * rank + i, "vector get: spread[%d] = %d", 2 * i, spread[2 * i]);
        CHECK(spread[2 * i + 1] == -1, "vector get wrote a gap at %d", 2 * i + 1);
    }
    MPI_Type_free(&stride2);

    /* Get_accumulate: fetch slot 32 and replace it; NO_OP reads only. */
    int old = -1, seen = -1, mine = rank;
    if (rank == 0)
        MPI_OK(MPI_Get_accumulate(&mine, 1, MPI_INT, &old, 1, MPI_INT, 1 % size, 32, 1, MPI_INT, MPI_REPLACE, win));
    MPI_OK(MPI_Win_fence(0, win));
    if (rank == 0) CHECK(old == size * (size + 1) / 2, "get_accumulate fetched %d", old);
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &seen, 1, MPI_INT, 1 % size, 32, 1, MPI_INT, MPI_NO_OP, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(seen == (size > 1 ? 0 : 0), "get_accumulate NO_OP saw %d", seen);
    MPI_OK(MPI_Win_free(&win));

    /* Large transfers (rendezvous): 1 MiB from every rank to the next. */
    const int n = 1 << 18;
    int *big;
    MPI_OK(MPI_Win_allocate((MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &big, &win));
    int *src = malloc((size_t)n * sizeof(int)), *back = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; ++i) src[i] = rank * n + i;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(src, n, MPI_INT, next, 0, n, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < n; ++i) CHECK(big[i] == prev * n + i, "big put: [%d] = %d", i, big[i]);
    MPI_OK(MPI_Get(back, n, MPI_INT, prev, 0, n, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < n; ++i) CHECK(back[i] == ((prev + size - 1) % size) * n + i, "big get: [%d] = %d", i, back[i]);
    MPI_OK(MPI_Win_free(&win));
    free(src);
    free(back);
}

static void lock_ops(void) {
    long *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(SLOTS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const int target = size - 1;
    /* Shared-lock accumulates: K additions of 1 from every rank. */
    for (int i = 0; i < K; ++i) {
        long one = 1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_SUM, win));
        MPI_OK(MPI_Win_unlock(target, win));
    }
    /* Exclusive-lock read-modify-write with get then put: only mutual
       exclusion keeps every increment. */
    for (int i = 0; i < K; ++i) {
        long v = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        MPI_OK(MPI_Get(&v, 1, MPI_LONG, target, 1, 1, MPI_LONG, win));
        MPI_OK(MPI_Win_flush(target, win));
        ++v;
        MPI_OK(MPI_Put(&v, 1, MPI_LONG, target, 1, 1, MPI_LONG, win));
        MPI_OK(MPI_Win_unlock(target, win));
    }
    /* Fetch_and_op under lock_all: the fetched values are all distinct. */
    long fetched[K];
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < K; ++i) {
        long one = 1;
        MPI_OK(MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG, target, 2, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(target, win));
    }
    /* Compare_and_swap: slot 3 goes from 0 to (winner + 1) once. */
    long want = rank + 1, zero = 0, was = -1;
    MPI_OK(MPI_Compare_and_swap(&want, &zero, &was, MPI_LONG, target, 3, win));
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target) {
        CHECK(mem[0] == (long)size * K, "shared accumulates: %ld, expected %ld", mem[0], (long)size * K);
        CHECK(mem[1] == (long)size * K, "exclusive increments: %ld, expected %ld", mem[1], (long)size * K);
        CHECK(mem[2] == (long)size * K, "fetch_and_op total: %ld", mem[2]);
        CHECK(mem[3] >= 1 && mem[3] <= size, "compare_and_swap left %ld", mem[3]);
    }
    long *all = malloc(sizeof(long) * (size_t)size * K);
    MPI_OK(MPI_Allgather(fetched, K, MPI_LONG, all, K, MPI_LONG, MPI_COMM_WORLD));
    char *hit = calloc((size_t)size * K, 1);
    for (int i = 0; i < size * K; ++i) {
        CHECK(all[i] >= 0 && all[i] < (long)size * K, "fetched %ld", all[i]);
        CHECK(!hit[all[i]], "value %ld fetched twice", all[i]);
        hit[all[i]] = 1;
    }
    free(hit);
    free(all);
    int won = was == 0, winners = 0;
    MPI_OK(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(winners == 1, "%d compare_and_swap winners", winners);
    MPI_OK(MPI_Win_free(&win));
}

/* MPI_Win_create memory under exclusive locks: operations of several KiB
   (single copies between processes of one node, which the target does not
   run) mixed with small ones (messages), against every rank's known
   contributions. */
static void exclusive_created(void) {
    enum { REG = 1024, N = 3 * REG, ROUNDS = 6 }; /* longs: three regions of 8 KiB */
    long *mem = calloc(N, sizeof(long)), *v = malloc(REG * sizeof(long)), *res = malloc(REG * sizeof(long));
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int round = 0; round < ROUNDS; ++round)
        for (int t = 0; t < size; ++t) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            /* Region 0: a get_accumulate adds rank + 1 everywhere; what it
               fetched is one value throughout (no one else in between). */
            for (int i = 0; i < REG; ++i) v[i] = rank + 1;
            MPI_OK(MPI_Get_accumulate(v, REG, MPI_LONG, res, REG, MPI_LONG, t, 0, REG, MPI_LONG, MPI_SUM, win));
            MPI_OK(MPI_Win_flush(t, win));
            for (int i = 1; i < REG; ++i)
                CHECK(res[i] == res[0], "get_accumulate fetched %ld at %d, %ld at 0", res[i], i, res[0]);
            /* Region 1: read, add i + 1, write back. */
            MPI_OK(MPI_Get(res, REG, MPI_LONG, t, REG, REG, MPI_LONG, win));
            MPI_OK(MPI_Win_flush(t, win));
            for (int i = 0; i < REG; ++i) res[i] += i + 1;
            MPI_OK(MPI_Put(res, REG, MPI_LONG, t, REG, REG, MPI_LONG, win));
            /* Region 2: a small accumulate (a message), then a large one
               over it, which must not overtake it: x -> (x + 1) * 2. */
            long one = 1;
            MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, t, 2 * REG, 1, MPI_LONG, MPI_SUM, win));
            for (int i = 0; i < REG; ++i) v[i] = 2;
            MPI_OK(MPI_Accumulate(v, REG, MPI_LONG, t, 2 * REG, REG, MPI_LONG, MPI_PROD, win));
            MPI_OK(MPI_Win_unlock(t, win));
        }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const long epochs = (long)ROUNDS * size, sum0 = (long)ROUNDS * size * (size + 1) / 2;
    for (int i = 0; i < REG; ++i) {
        CHECK(mem[i] == sum0, "region 0 [%d] = %ld, expected %ld", i, mem[i], sum0);
        CHECK(mem[REG + i] == epochs * (i + 1), "region 1 [%d] = %ld, expected %ld", i, mem[REG + i], epochs * (i + 1));
    }
    CHECK(mem[2 * REG] == (1L << (epochs + 1)) - 2, "region 2 [0] = %ld after %ld epochs", mem[2 * REG], epochs);
    for (int i = 1; i < REG; ++i) CHECK(mem[2 * REG + i] == 0, "region 2 [%d] = %ld", i, mem[2 * REG + i]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* MPI_NO_OP fetches, MPI_REPLACE swaps: rank 0, toward everyone. */
    if (rank == 0)
        for (int t = 0; t < size; ++t) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_LONG, res, REG, MPI_LONG, t, REG, REG, MPI_LONG, MPI_NO_OP, win));
            MPI_OK(MPI_Win_flush(t, win));
            for (int i = 0; i < REG; ++i) CHECK(res[i] == epochs * (i + 1), "no_op fetched %ld at %d", res[i], i);
            for (int i = 0; i < REG; ++i) v[i] = -i;
            MPI_OK(MPI_Get_accumulate(v, REG, MPI_LONG, res, REG, MPI_LONG, t, 0, REG, MPI_LONG, MPI_REPLACE, win));
            MPI_OK(MPI_Win_unlock(t, win));
            for (int i = 0; i < REG; ++i) CHECK(res[i] == sum0, "replace fetched %ld at %d", res[i], i);
        }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < REG; ++i) CHECK(mem[i] == -i, "region 0 [%d] = %ld after the replace", i, mem[i]);
    MPI_OK(MPI_Win_free(&win));
    free(mem);
    free(v);
    free(res);
}

/* PSCW: a ring (each rank exposes to its predecessor and accesses its
   successor), then everyone with everyone. */
static void pscw(void) {
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Group world, prev_g, next_g;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_OK(MPI_Group_incl(world, 1, &prev, &prev_g));
    MPI_OK(MPI_Group_incl(world, 1, &next, &next_g));
    for (int round = 0; round < 3; ++round) {
        MPI_OK(MPI_Win_post(prev_g, 0, win));
        MPI_OK(MPI_Win_start(next_g, 0, win));
        int v = 1000 * round + rank;
        MPI_OK(MPI_Put(&v, 1, MPI_INT, next, round, 1, MPI_INT, win));
        MPI_OK(MPI_Win_complete(win));
        MPI_OK(MPI_Win_wait(win));
        CHECK(mem[round] == 1000 * round + prev, "pscw ring round %d: %d", round, mem[round]);
    }
    /* All with all; MPI_Win_test polls the exposure epoch to its end. */
    MPI_OK(MPI_Win_post(world, 0, win));
    MPI_OK(MPI_Win_start(world, 0, win));
    for (int t = 0; t < size; ++t) {
        int one = 1;
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, t, 10, 1, MPI_INT, MPI_SUM, win));
    }
    MPI_OK(MPI_Win_complete(win));
    int flag = 0;
    while (!flag) MPI_OK(MPI_Win_test(win, &flag));
    CHECK(mem[10] == size, "pscw all: %d", mem[10]);
    MPI_Group_free(&prev_g);
    MPI_Group_free(&next_g);
    MPI_Group_free(&world);
    MPI_OK(MPI_Win_free(&win));
}

/* Request-based operations in a lock_all epoch. */
static void requests(void) {
    long *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(SLOTS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < SLOTS; ++i) mem[i] = 100L * rank + i;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const int next = (rank + 1) % size;
    MPI_OK(MPI_Win_lock_all(0, win));
    long got[4] = {0}, old = -1, add = 5, put = -7;
    MPI_Request req[4];
    MPI_OK(MPI_Rget(got, 4, MPI_LONG, next, 8, 4, MPI_LONG, win, &req[0]));
    MPI_OK(MPI_Rget_accumulate(&add, 1, MPI_LONG, &old, 1, MPI_LONG, next, 20, 1, MPI_LONG, MPI_SUM, win, &req[1]));
    MPI_OK(MPI_Rput(&put, 1, MPI_LONG, next, 30, 1, MPI_LONG, win, &req[2]));
    MPI_OK(MPI_Raccumulate(&add, 1, MPI_LONG, next, 31, 1, MPI_LONG, MPI_SUM, win, &req[3]));
    MPI_OK(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; ++i) CHECK(got[i] == 100L * next + 8 + i, "rget[%d] = %ld", i, got[i]);
    CHECK(old == 100L * next + 20, "rget_accumulate fetched %ld", old);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[20] == 100L * rank + 20 + 5, "rget_accumulate left %ld", mem[20]);
    CHECK(mem[30] == -7, "rput left %ld", mem[30]);
    CHECK(mem[31] == 100L * rank + 31 + 5, "raccumulate left %ld", mem[31]);
    MPI_OK(MPI_Win_free(&win));
}

/* MPI_Win_allocate_shared: one contiguous segment, rank after rank; each
   rank writes its neighbour's part with plain stores. */
static void shared(void) {
    int *mine;
    MPI_Win win;
    const MPI_Aint bytes = (MPI_Aint)(rank + 1) * (MPI_Aint)sizeof(int);
    MPI_OK(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
    char *prev_end = NULL;
    for (int r = 0; r < size; ++r) {
        MPI_Aint sz;
        int unit;
        int *base;
        MPI_OK(MPI_Win_shared_query(win, r, &sz, &unit, &base));
        CHECK(sz == (MPI_Aint)(r + 1) * (MPI_Aint)sizeof(int) && unit == (int)sizeof(int), "rank %d: size %ld unit %d",
              r, (long)sz, unit);
        CHECK(prev_end == NULL || (char *)base == prev_end, "rank %d's memory does not follow rank %d's", r, r - 1);
        if (r == rank) CHECK(base == mine, "shared_query of self differs from baseptr");
        prev_end = (char *)base + sz;
    }
    MPI_OK(MPI_Win_lock_all(0, win));
    const int next = (rank + 1) % size;
    int *theirs;
    MPI_Aint sz;
    int unit;
    MPI_OK(MPI_Win_shared_query(win, next, &sz, &unit, &theirs));
    for (int i = 0; i <= next; ++i) theirs[i] = 1000 * rank + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(win));
    const int prev = (rank + size - 1) % size;
    for (int i = 0; i <= rank; ++i) CHECK(mine[i] == 1000 * prev + i, "shared mine[%d] = %d", i, mine[i]);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));
}

/* MPI_Win_create_dynamic: displacements are the target's addresses of
   memory it attached; an access outside it is refused (MPI_ERR_RMA_RANGE
   at the next synchronization) and writes nothing. */
static void dynamic(void) {
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int *mem = calloc(16, sizeof(int)), *other = calloc(4, sizeof(int));
    MPI_OK(MPI_Win_attach(win, mem, 16 * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, other, 4 * sizeof(int)));
    int cls = -1;
    MPI_Error_class(MPI_Win_attach(win, mem + 8, 4 * sizeof(int)), &cls);
    CHECK(cls == MPI_ERR_RMA_ATTACH, "overlapping attach: class %d", cls);
    MPI_Aint mine, *addr = malloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_OK(MPI_Get_address(mem, &mine));
    MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_OK(MPI_Win_fence(0, win));
    int v[3] = {rank, rank + 1, rank + 2};
    MPI_OK(MPI_Put(v, 3, MPI_INT, next, addr[next] + 4 * (MPI_Aint)sizeof(int), 3, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 3; ++i) CHECK(mem[4 + i] == prev + i, "dynamic put: mem[%d] = %d", 4 + i, mem[4 + i]);
    int back[3] = {-1, -1, -1};
    MPI_OK(MPI_Get(back, 3, MPI_INT, next, addr[next] + 4 * (MPI_Aint)sizeof(int), 3, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 3; ++i) CHECK(back[i] == rank + i, "dynamic get: back[%d] = %d", i, back[i]);
    /* Past the end of the attached memory: refused, nothing written. */
    MPI_OK(MPI_Put(v, 3, MPI_INT, next, addr[next] + 14 * (MPI_Aint)sizeof(int), 3, MPI_INT, win));
    MPI_Error_class(MPI_Win_fence(0, win), &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "put past the attached memory: fence class %d", cls);
    CHECK(mem[14] == 0 && mem[15] == 0, "a refused put wrote %d %d", mem[14], mem[15]);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_detach(win, mem));
    MPI_Error_class(MPI_Win_detach(win, mem), &cls);
    CHECK(cls == MPI_ERR_RMA_ATTACH, "second detach: class %d", cls);
    MPI_OK(MPI_Win_detach(win, other));
    MPI_OK(MPI_Win_free(&win));
    free(mem);
    free(other);
    free(addr);
}

static int handler_calls = 0;
static MPI_Win handler_win = MPI_WIN_NULL;
static void win_handler(MPI_Win *win, int *code, ...) {
    ++handler_calls;
    handler_win = *win;
    (void)code;
}

/* Info objects, window info and error handlers, MPI_Alloc_mem, and a lock
   with MPI_MODE_NOCHECK. */
static void objects(void) {
    MPI_Info info, dup;
    char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
    int flag = 0, n = -1, len = -1;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "no_locks", "false"));
    MPI_OK(MPI_Info_set(info, "accumulate_ordering", "rar,raw"));
    MPI_OK(MPI_Info_set(info, "no_locks", "true")); /* replaces */
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "nkeys %d", n);
    MPI_OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "accumulate_ordering") == 0, "nthkey 1 '%s'", key);
    MPI_OK(MPI_Info_get(info, "no_locks", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, "true") == 0, "no_locks '%s'", value);
    MPI_OK(MPI_Info_get(info, "accumulate_ordering", 3, value, &flag));
    CHECK(flag && strcmp(value, "rar") == 0, "truncated get '%s'", value);
    MPI_OK(MPI_Info_get_valuelen(info, "accumulate_ordering", &len, &flag));
    CHECK(flag && len == 7, "valuelen %d", len);
    MPI_OK(MPI_Info_get(info, "absent", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(!flag, "absent key found");
    MPI_OK(MPI_Info_dup(info, &dup));
    MPI_OK(MPI_Info_delete(dup, "no_locks"));
    MPI_OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 1, "dup after delete: nkeys %d", n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = -1;
    MPI_Error_class(MPI_Info_delete(dup, "no_locks"), &cls);
    CHECK(cls == MPI_ERR_INFO_NOKEY, "delete of an absent key: class %d", cls);
    MPI_Error_class(MPI_Info_set(dup, "", "x"), &cls);
    CHECK(cls == MPI_ERR_INFO_KEY, "empty key: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_OK(MPI_Info_free(&dup));
    CHECK(dup == MPI_INFO_NULL, "Info_free left the handle");

    double *mem;
    MPI_OK(MPI_Alloc_mem(8 * sizeof(double), MPI_INFO_NULL, &mem));
    CHECK(((uintptr_t)mem % 8) == 0, "MPI_Alloc_mem misaligned");
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, 8 * sizeof(double), sizeof(double), info, MPI_COMM_WORLD, &win));
    MPI_Info used;
    MPI_OK(MPI_Win_get_info(win, &used));
    MPI_OK(MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, "true") == 0, "window info no_locks '%s'", value);
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_free(&info));

    /* The window's own handler gets the window; the communicator's is not called. */
    MPI_Errhandler eh, got;
    MPI_OK(MPI_Win_create_errhandler(win_handler, &eh));
    MPI_OK(MPI_Win_set_errhandler(win, eh));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == eh, "Win_get_errhandler returned another handler");
    MPI_Errhandler_free(&got);
    int rc = MPI_Win_unlock(0, win); /* no lock: MPI_ERR_RMA_SYNC, to the handler */
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_win == win, "handler calls %d", handler_calls);
    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(handler_calls == 2, "call_errhandler: %d calls", handler_calls);
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
    MPI_Errhandler_free(&eh);

    /* MPI_MODE_NOCHECK: no lock traffic; the epoch still works. */
    for (int i = 0; i < 8; ++i) mem[i] = 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const int next = (rank + 1) % size;
    double v = rank + 0.5;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, next, MPI_MODE_NOCHECK, win));
    MPI_OK(MPI_Put(&v, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, win));
    MPI_OK(MPI_Win_unlock(next, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const int prev = (rank + size - 1) % size;
    CHECK(mem[0] == prev + 0.5, "nocheck put: %f", mem[0]);
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Free_mem(mem));
}

static void errors(void) {
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int v = 1, cls = -1;
    cls = -1;
    MPI_Error_class(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "put outside an epoch: class %d", cls);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_Error_class(MPI_Put(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, win), &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "put past the end: class %d", cls);
    MPI_Error_class(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), &cls);
    CHECK(cls == MPI_ERR_RANK, "put to rank %d: class %d", size, cls);
    MPI_Error_class(MPI_Put(&v, 1, MPI_INT, 0, 0, 2, MPI_INT, win), &cls);
    CHECK(cls == MPI_ERR_TYPE, "mismatched counts: class %d", cls);
    MPI_Error_class(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_LAND, win), &cls);
    CHECK(cls == MPI_SUCCESS, "MPI_LAND on int: class %d", cls);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_Error_class(MPI_Win_lock(7, 0, 0, win), &cls);
    CHECK(cls == MPI_ERR_LOCKTYPE, "lock type 7: class %d", cls);
    MPI_Error_class(MPI_Win_unlock(0, win), &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "unlock without lock: class %d", cls);
    MPI_Request r;
    MPI_Error_class(MPI_Rput(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &r), &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "rput outside a passive epoch: class %d", cls);
    MPI_Aint qs;
    int qu;
    void *qb;
    MPI_OK(MPI_Win_shared_query(win, rank, &qs, &qu, &qb)); /* MPI-4.0: any window with memory */
    CHECK(qb == mem && qs == 4 * (MPI_Aint)sizeof(int) && qu == (int)sizeof(int), "shared_query of oneself: %p %ld %d",
          qb, (long)qs, qu);
    MPI_Error_class(MPI_Win_fence(1 << 30, win), &cls);
    CHECK(cls == MPI_ERR_ASSERT, "bad assert: class %d", cls);
    MPI_OK(MPI_Win_free(&win));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Error_class(MPI_Win_fence(0, MPI_WIN_NULL), &cls);
    CHECK(cls == MPI_ERR_WIN, "fence on MPI_WIN_NULL: class %d", cls);
    MPI_Error_class(MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), &cls);
    CHECK(cls == MPI_ERR_SIZE, "negative size: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 1);
    windows();
    fence_ops();
    lock_ops();
    exclusive_created();
    pscw();
    requests();
    shared();
    dynamic();
    objects();
    errors();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("rma: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
