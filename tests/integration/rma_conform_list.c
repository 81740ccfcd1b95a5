/* rma_conform list: a token ring polled through one-sided calls, then a
   linked list built in a dynamic window three ways (see rma_conform.c). */
#include "rma_conform.h"

/* ---- list ---- */

/* An element: its value and the next element's (rank, address); rank -1 is
   the end. The values of process p are p * PER + i, appended in order of i. */
enum { VALUE, NEXT_RANK, NEXT_DISP, ELEM };
enum { PER = 25 };

typedef struct {
    MPI_Win win;
    long *mine[PER + 1];
    int count;
    long head_rank;
    MPI_Aint head_disp;
    long *tail; /* rank 0: the tail's (rank, address) and a counter */
    MPI_Aint tail_disp;
} List;

static MPI_Aint new_element(List *l, long value) {
    long *e;
    MPI_OK(MPI_Alloc_mem(ELEM * sizeof(long), MPI_INFO_NULL, &e));
    e[VALUE] = value;
    e[NEXT_RANK] = -1;
    e[NEXT_DISP] = 0;
    MPI_OK(MPI_Win_attach(l->win, e, ELEM * sizeof(long)));
    l->mine[l->count++] = e;
    MPI_Aint a;
    MPI_OK(MPI_Get_address(e, &a));
    return a;
}

/* The head (at rank 0, value -1) and, with `tail`, rank 0's tail record. */
static void list_init(List *l) {
    memset(l, 0, sizeof *l);
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &l->win));
    long rec[2] = {0, 0};
    if (rank == 0) {
        rec[1] = (long)new_element(l, -1);
        MPI_OK(MPI_Alloc_mem(3 * sizeof(long), MPI_INFO_NULL, &l->tail));
        l->tail[0] = 0;
        l->tail[1] = rec[1];
        l->tail[2] = 0;
        MPI_OK(MPI_Win_attach(l->win, l->tail, 3 * sizeof(long)));
        MPI_Aint a;
        MPI_OK(MPI_Get_address(l->tail, &a));
        rec[0] = (long)a;
    }
    MPI_OK(MPI_Bcast(rec, 2, MPI_LONG, 0, MPI_COMM_WORLD));
    l->tail_disp = (MPI_Aint)rec[0];
    l->head_rank = 0;
    l->head_disp = (MPI_Aint)rec[1];
}

/* (fop) The tail record at rank 0 is swapped under its exclusive lock; the
   new element is then linked from the old tail under that one's owner's
   exclusive lock. A fetch_and_op counts the appends. */
static void append_fop(List *l, long value, long *ticket) {
    const MPI_Aint e = new_element(l, value);
    long old[2] = {-1, -1}, now[2] = {rank, (long)e};
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, l->win));
    MPI_OK(MPI_Get(old, 2, MPI_LONG, 0, l->tail_disp, 2, MPI_LONG, l->win));
    MPI_OK(MPI_Win_flush(0, l->win));
    MPI_OK(MPI_Put(now, 2, MPI_LONG, 0, l->tail_disp, 2, MPI_LONG, l->win));
    MPI_OK(MPI_Win_unlock(0, l->win));
    CHECK(old[0] >= 0 && old[0] < size, "tail record names rank %ld", old[0]);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, (int)old[0], 0, l->win));
    MPI_OK(MPI_Put(now, 2, MPI_LONG, (int)old[0], MPI_Aint_add((MPI_Aint)old[1], NEXT_RANK * sizeof(long)), 2, MPI_LONG,
                   l->win));
    MPI_OK(MPI_Win_unlock((int)old[0], l->win));
    const long one = 1;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, l->win));
    MPI_OK(MPI_Fetch_and_op(&one, ticket, MPI_LONG, 0, MPI_Aint_add(l->tail_disp, 2 * sizeof(long)), MPI_SUM, l->win));
    MPI_OK(MPI_Win_unlock(0, l->win));
}

/* One access to the list at rank t: (cas) an epoch of its own, a lock of t
   (exclusive or shared) and its unlock; (lockall) inside the lock_all
   epoch, completed by a flush. */
static void begin_at(List *l, int t, int lock_type, int lockall) {
    if (!lockall) MPI_OK(MPI_Win_lock(lock_type, t, 0, l->win));
}

static void end_at(List *l, int t, int lockall) {
    if (lockall) MPI_OK(MPI_Win_flush(t, l->win));
    else MPI_OK(MPI_Win_unlock(t, l->win));
}

/* (cas, lockall) From this process's guess of the tail, swing its next rank
   from -1 to this rank (MPI_Compare_and_swap); on success store the address
   (MPI_Accumulate, MPI_REPLACE) in a second access, else poll the address
   the winner stores (MPI_Fetch_and_op, MPI_NO_OP) and move there. The
   address may come late: the winner stores it after its swap, and a process
   may poll its own element, which only its progress lets the winner reach. */
static void append_cas(List *l, long value, long *guess_rank, MPI_Aint *guess_disp, int lockall) {
    const MPI_Aint e = new_element(l, value);
    const long me = rank, nil = -1, zero = 0;
    for (;;) {
        const int t = (int)*guess_rank;
        const MPI_Aint next_rank = MPI_Aint_add(*guess_disp, NEXT_RANK * sizeof(long));
        const MPI_Aint next_disp = MPI_Aint_add(*guess_disp, NEXT_DISP * sizeof(long));
        long found = -2;
        begin_at(l, t, MPI_LOCK_EXCLUSIVE, lockall);
        MPI_OK(MPI_Compare_and_swap(&me, &nil, &found, MPI_LONG, t, next_rank, l->win));
        end_at(l, t, lockall);
        if (found == -1) {
            const long a = (long)e;
            begin_at(l, t, MPI_LOCK_EXCLUSIVE, lockall);
            MPI_OK(MPI_Accumulate(&a, 1, MPI_LONG, t, next_disp, 1, MPI_LONG, MPI_REPLACE, l->win));
            end_at(l, t, lockall);
            *guess_rank = rank;
            *guess_disp = e;
            return;
        }
        CHECK(found >= 0 && found < size, "next rank %ld", found);
        long d = 0;
        do {
            begin_at(l, t, MPI_LOCK_SHARED, lockall);
            MPI_OK(MPI_Fetch_and_op(&zero, &d, MPI_LONG, t, next_disp, MPI_NO_OP, l->win));
            end_at(l, t, lockall);
        } while (d == 0);
        *guess_rank = found;
        *guess_disp = (MPI_Aint)d;
    }
}

/* Walks the list from the head: every value once, each process's in order. */
static void list_check(List *l) {
    long last[64];
    CHECK(size <= 64, "at most 64 ranks");
    for (int p = 0; p < size; ++p) last[p] = -1;
    long r = l->head_rank;
    MPI_Aint d = l->head_disp;
    int n = 0;
    MPI_OK(MPI_Win_lock_all(0, l->win));
    for (;;) {
        long e[ELEM];
        MPI_OK(MPI_Get(e, ELEM, MPI_LONG, (int)r, d, ELEM, MPI_LONG, l->win));
        MPI_OK(MPI_Win_flush((int)r, l->win));
        if (n > 0) {
            const long p = e[VALUE] / PER, i = e[VALUE] % PER;
            CHECK(p == r && i > last[p], "element %d: value %ld at rank %ld after %ld", n, e[VALUE], r,
                  last[p < 64 ? p : 0]);
            last[p] = i;
        }
        ++n;
        if (e[NEXT_RANK] == -1) break;
        CHECK(n <= size * PER, "the list is longer than %d", size * PER);
        r = e[NEXT_RANK];
        d = (MPI_Aint)e[NEXT_DISP];
    }
    MPI_OK(MPI_Win_unlock_all(l->win));
    CHECK(n == size * PER + 1, "the list holds %d elements, expected %d", n - 1, size * PER);
    for (int p = 0; p < size; ++p) CHECK(last[p] == PER - 1, "rank %d's last value %ld", p, last[p]);
}

static void list_free(List *l) {
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < l->count; ++i) {
        MPI_OK(MPI_Win_detach(l->win, l->mine[i]));
        MPI_OK(MPI_Free_mem(l->mine[i]));
    }
    if (l->tail != NULL) {
        MPI_OK(MPI_Win_detach(l->win, l->tail));
        MPI_OK(MPI_Free_mem(l->tail));
    }
    MPI_OK(MPI_Win_free(&l->win));
}

/* A token goes round the ranks through memory attached to a dynamic window:
   each rank polls its own word until the previous rank has written it, then
   writes the next rank's. (lock) the poll is a shared lock of oneself, a get
   and an unlock; the write an exclusive lock, a put and an unlock. (lockall)
   inside lock_all, the poll is MPI_Fetch_and_op(MPI_NO_OP) and a flush, the
   write an MPI_Fetch_and_op(MPI_SUM) and a flush. The writer's operations
   need the poller's progress, which only its polling calls can give. */
static void token_ring(int lockall) {
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    long *word;
    MPI_OK(MPI_Alloc_mem(sizeof(long), MPI_INFO_NULL, &word));
    *word = 0;
    MPI_OK(MPI_Win_attach(win, word, sizeof(long)));
    MPI_Aint mine, *addr = malloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_OK(MPI_Get_address(word, &mine));
    MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    const int next = (rank + 1) % size;
    const long one = 1, zero = 0;
    if (lockall) MPI_OK(MPI_Win_lock_all(0, win));
    for (int round = 1; round <= 3; ++round) {
        /* Rank 0 starts each round; its own word counts the rounds before. */
        const long want = rank == 0 ? round - 1 : round;
        if (want > 0) {
            long seen = 0;
            do {
                if (lockall) {
                    MPI_OK(MPI_Fetch_and_op(&zero, &seen, MPI_LONG, rank, mine, MPI_NO_OP, win));
                    MPI_OK(MPI_Win_flush(rank, win));
                } else {
                    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
                    MPI_OK(MPI_Get(&seen, 1, MPI_LONG, rank, mine, 1, MPI_LONG, win));
                    MPI_OK(MPI_Win_unlock(rank, win));
                }
            } while (seen < want);
            CHECK(seen == want, "token %ld in round %d", seen, round);
        }
        if (round == 3 && rank == size - 1) break; /* rank 0 polls no fourth round */
        long old = -1;
        if (lockall) {
            MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, next, addr[next], MPI_SUM, win));
            MPI_OK(MPI_Win_flush(next, win));
            CHECK(old == round - 1, "rank %d's token was %ld in round %d", next, old, round);
        } else {
            const long v = round;
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
            MPI_OK(MPI_Put(&v, 1, MPI_LONG, next, addr[next], 1, MPI_LONG, win));
            MPI_OK(MPI_Win_unlock(next, win));
        }
    }
    if (lockall) MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, word));
    MPI_OK(MPI_Free_mem(word));
    MPI_OK(MPI_Win_free(&win));
    free(addr);
}

void list(void) {
    token_ring(0);
    token_ring(1);
    List l;
    /* fop */
    list_init(&l);
    long tickets[PER];
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < PER; ++i) append_fop(&l, (long)rank * PER + i, &tickets[i]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    list_check(&l);
    long *all = malloc(sizeof(long) * (size_t)size * PER);
    char *hit = calloc((size_t)size * PER, 1);
    MPI_OK(MPI_Allgather(tickets, PER, MPI_LONG, all, PER, MPI_LONG, MPI_COMM_WORLD));
    for (int i = 0; i < size * PER; ++i) {
        CHECK(all[i] >= 0 && all[i] < (long)size * PER && !hit[all[i]], "ticket %ld", all[i]);
        hit[all[i]] = 1;
    }
    free(all);
    free(hit);
    list_free(&l);
    /* cas, then lockall */
    for (int lockall = 0; lockall < 2; ++lockall) {
        list_init(&l);
        long gr = l.head_rank;
        MPI_Aint gd = l.head_disp;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (lockall) MPI_OK(MPI_Win_lock_all(0, l.win));
        for (int i = 0; i < PER; ++i) append_cas(&l, (long)rank * PER + i, &gr, &gd, lockall);
        if (lockall) MPI_OK(MPI_Win_unlock_all(l.win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        list_check(&l);
        list_free(&l);
    }
}
