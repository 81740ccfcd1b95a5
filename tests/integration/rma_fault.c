/*
 * One-sided communication with a SIGKILLed process (spec 000 §17.11, spec
 * 001 §1.2.3). The victim is the last rank; every survivor checks the exact
 * error class, that the epoch completed with the live targets (their data is
 * intact), that nothing hangs, and that MPI_Win_free then completes.
 *
 *   rma_fault fence   the victim dies inside an epoch; the survivors' puts to
 *                     everyone end with a fence that reports
 *                     MPI_ERR_PROC_FAILED, and their puts to each other landed
 *   rma_fault lock    lock, put and unlock toward the dead victim:
 *                     MPI_ERR_PROC_FAILED; toward a live target: success
 *   rma_fault flush   lock_all; puts to all, the victim dies: flush of the
 *                     victim fails, flush of a live target succeeds,
 *                     unlock_all reports the failure
 *   rma_fault holder  the victim holds rank 0's exclusive lock and dies: every
 *                     later lock of rank 0 fails with MPI_ERR_PROC_FAILED
 *   rma_fault acclock the victim dies inside a fetch-and-op on rank 0's
 *                     memory, holding its accumulate lock (FTMPI_TEST_KILL_AT
 *                     rma.acc_locked; 3 ranks): the survivors' fetch-and-ops
 *                     on it then complete, none lost, none twice
 *   rma_fault copy    on MPI_Win_create memory, rank 0 holds the victim's
 *                     exclusive lock when it dies; once its process is gone
 *                     (not necessarily known failed), a get_accumulate of
 *                     8 KiB fails with MPI_ERR_PROC_FAILED (a single copy
 *                     within a node) or succeeds (a message, lost), and the
 *                     unlock reports MPI_ERR_PROC_FAILED; the same toward a
 *                     live target lands whole
 *   rma_fault pscw    everyone posts to and starts on everyone, the victim
 *                     dies inside the epochs: complete and wait report
 *                     MPI_ERR_PROC_FAILED, the live origins' data landed
 *   rma_fault validate  MPI_Win_validate and MPI_Iwin_validate give every
 *                     survivor the same failed group: the victim
 *   rma_fault create  the victim dies inside MPI_Win_allocate (at its first
 *                     agreement, FTMPI_TEST_KILL_AT; 4 ranks): every survivor
 *                     gets the same outcome
 *   rma_fault revoke_fence  (no death) ranks 1.. block in a fence rank 0
 *                     never joins; rank 0 revokes the window: MPIX_ERR_REVOKED
 *   rma_fault revoke_lock   (no death) rank 2 blocks on rank 0's lock that
 *                     rank 1 holds; rank 1 revokes: MPIX_ERR_REVOKED
 */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <unistd.h>

#include "testlib.h"

static int rank, size, victim;

static int cls_of(int rc) {
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* The victim waits until every survivor is done with what came before,
   tells rank 0 it is about to die, then does. */
static void die(void) {
    int x = 1;
    /* Only once every survivor is done with what came before (its word, tag
       76): none is still inside a call that would see the failure. */
    for (int r = 0; r < size; ++r)
        if (r != victim) MPI_Recv(&x, 1, MPI_INT, r, 76, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
    raise(SIGKILL);
}

/* Each survivor tells the victim it is done with what came before; rank 0
   then waits for the victim's last word and tells the other survivors; the
   failure is then certain to come. */
static void await_death(void) {
    int x = 1;
    MPI_OK(MPI_Send(&x, 1, MPI_INT, victim, 76, MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, victim, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int r = 1; r < victim; ++r) MPI_OK(MPI_Send(&x, 1, MPI_INT, r, 78, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

static MPI_Group failed_group(MPI_Win win) {
    MPI_Group g;
    MPI_OK(MPI_Win_get_failed(win, &g));
    return g;
}

/* Waits until this process knows of the victim's failure. */
static void until_known(MPI_Win win) {
    for (;;) {
        MPI_Group g = failed_group(win);
        int n;
        MPI_Group_size(g, &n);
        if (g != MPI_GROUP_EMPTY) MPI_Group_free(&g);
        if (n == 1) return;
    }
}

/* The victim dies inside MPI_Win_allocate: every survivor gets the same outcome. */
static void mode_create(void) {
    int *mem;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    int ok = rc == MPI_SUCCESS, lo = -1, hi = -1;
    MPI_OK(MPI_Allreduce(&ok, &lo, 1, MPI_INT, MPI_MIN, shrunk));
    MPI_OK(MPI_Allreduce(&ok, &hi, 1, MPI_INT, MPI_MAX, shrunk));
    CHECK(lo == hi, "MPI_Win_allocate succeeded at some survivors only (rc %d here)", rc);
    CHECK(ok || cls_of(rc) == MPI_ERR_PROC_FAILED, "MPI_Win_allocate failed with class %d", cls_of(rc));
    if (ok) MPI_OK(MPI_Win_free(&win));
    MPI_Comm_free(&shrunk);
    if (rank == 0) printf("rma_fault create: 3 survivors ok (window %s everywhere)\n", ok ? "created" : "refused");
    MPI_Finalize();
}

/* rma_fault fence (see the header). */
static void mode_fence(int *mem, MPI_Win win, int survivors) {
    MPI_OK(MPI_Win_fence(0, win));
    if (rank == victim) die();
    await_death();
    for (int t = 0; t < size; ++t) {
        int v = 100 * rank + t;
        int rc = MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win);
        CHECK(rc == MPI_SUCCESS || (t == victim && cls_of(rc) == MPI_ERR_PROC_FAILED), "put to %d: %d", t, rc);
    }
    int rc = MPI_Win_fence(0, win);
    CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "fence after the death: class %d", cls_of(rc));
    /* The epoch completed among the live: every survivor's put is here. */
    for (int o = 0; o < survivors; ++o) CHECK(mem[o] == 100 * o + rank, "mem[%d] = %d", o, mem[o]);
    /* The next epoch is normal, the failure being reported. */
    for (int t = 0; t < survivors; ++t) {
        int v = 7;
        MPI_OK(MPI_Accumulate(&v, 1, MPI_INT, t, 40, 1, MPI_INT, MPI_SUM, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[40] == 7 * survivors, "mem[40] = %d", mem[40]);
}

/* rma_fault lock (see the header). */
static void mode_lock(MPI_Win win, int survivors) {
    if (rank == victim) die();
    await_death();
    until_known(win);
    int v = 5;
    int rc = MPI_Win_lock(MPI_LOCK_SHARED, victim, 0, win);
    CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "lock of the dead: class %d", cls_of(rc));
    rc = MPI_Put(&v, 1, MPI_INT, victim, 0, 1, MPI_INT, win);
    CHECK(cls_of(rc) != MPI_SUCCESS, "put to the dead without a lock succeeded");
    const int live = (rank + 1) % survivors;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, live, 0, win));
    MPI_OK(MPI_Accumulate(&v, 1, MPI_INT, live, 1, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(live, win));
}

/* rma_fault flush (see the header). */
static void mode_flush(MPI_Win win, int survivors) {
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every lock_all is granted before the death */
    if (rank == victim) die();
    await_death();
    for (int t = 0; t < size; ++t) {
        int v = 10 + rank;
        int rc = MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win);
        CHECK(rc == MPI_SUCCESS || (t == victim && cls_of(rc) == MPI_ERR_PROC_FAILED), "put to %d: %d", t, rc);
    }
    const int live = (rank + 1) % survivors;
    MPI_OK(MPI_Win_flush(live, win));
    int rc = MPI_Win_flush(victim, win);
    if (rc == MPI_SUCCESS) {
        /* The put failed at once (the failure was known): unlock still reports it. */
    } else {
        CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "flush of the dead: class %d", cls_of(rc));
    }
    until_known(win);
    rc = MPI_Win_unlock_all(win);
    CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "unlock_all: class %d", cls_of(rc));
}

/* rma_fault holder (see the header). */
static void mode_holder(MPI_Win win, int survivors) {
    if (rank == victim) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        die();
    }
    await_death();
    until_known(win);
    for (int attempt = 0; attempt < 3; ++attempt) {
        int rc = MPI_Win_lock(attempt % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win);
        CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "lock %d of rank 0 after its holder died: class %d", attempt,
              cls_of(rc));
    }
    /* Other targets' locks are not affected. */
    if (survivors > 1) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        MPI_OK(MPI_Win_unlock(1, win));
    }
}

/* Whether process `pid` has ended (gone, or a zombie not yet reaped). */
static int process_gone(int pid) {
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return 1;
    const int n = fscanf(f, "%*d %*s %c", &state);
    fclose(f);
    return n != 1 || state == 'Z' || state == 'X';
}

/* rma_fault copy (see the header). */
static void mode_copy(int survivors) {
    enum { N = 1024 };
    long *mem = calloc(N, sizeof(long)), v[N], res[N];
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int pid = (int)getpid();
    if (rank == victim) {
        MPI_OK(MPI_Send(&pid, 1, MPI_INT, 0, 79, MPI_COMM_WORLD));
        die();
    }
    if (rank == 0) {
        MPI_OK(MPI_Recv(&pid, 1, MPI_INT, victim, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, victim, 0, win));
    }
    await_death();
    for (int i = 0; i < N; ++i) v[i] = rank + 1;
    if (rank == 0) {
        for (double until = MPI_Wtime() + 30; !process_gone(pid);)
            CHECK(MPI_Wtime() < until, "the victim's process %d is still there after 30 s", pid);
        int rc = MPI_Get_accumulate(v, N, MPI_LONG, res, N, MPI_LONG, victim, 0, N, MPI_LONG, MPI_SUM, win);
        CHECK(rc == MPI_SUCCESS || cls_of(rc) == MPI_ERR_PROC_FAILED, "get_accumulate on the dead victim: class %d",
              cls_of(rc));
        rc = MPI_Win_unlock(victim, win);
        CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "unlock of the dead victim: class %d", cls_of(rc));
    }
    /* Every survivor, toward its live successor: whole operations. */
    const int live = (rank + 1) % survivors;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, live, 0, win));
    MPI_OK(MPI_Get_accumulate(v, N, MPI_LONG, res, N, MPI_LONG, live, 0, N, MPI_LONG, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(live, win));
    for (int i = 0; i < N; ++i) CHECK(res[i] == res[0], "fetched %ld at %d, %ld at 0", res[i], i, res[0]);
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    MPI_OK(MPI_Barrier(shrunk));
    const int from = (rank + survivors - 1) % survivors;
    for (int i = 0; i < N; ++i) CHECK(mem[i] == from + 1, "mem[%d] = %ld, expected %d", i, mem[i], from + 1);
    MPI_Comm_free(&shrunk);
    MPI_OK(MPI_Win_free(&win));
    free(mem);
}

/* rma_fault acclock (see the header). */
static void mode_acclock(int *mem, MPI_Win win, int survivors) {
    enum { N = 50 };
    const int big = 1000, one = 1;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every lock_all granted before the death */
    if (rank == victim) {
        int old;
        MPI_Fetch_and_op(&big, &old, MPI_INT, 0, 1, MPI_SUM, win); /* dies in there */
        CHECK(0, "the victim outlived its fetch-and-op");
    }
    until_known(win);
    int last = -1;
    for (int i = 0; i < N; ++i) {
        int old = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 1, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
        CHECK(old > last && old < N * survivors, "fetch-and-op %d saw %d after %d", i, old, last);
        last = old;
    }
    /* The victim's part of the epoch is lost: unlock_all says so. */
    const int rc = MPI_Win_unlock_all(win);
    CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "unlock_all with a failed member: class %d", cls_of(rc));
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    MPI_OK(MPI_Barrier(shrunk));
    MPI_OK(MPI_Win_sync(win));
    if (rank == 0) CHECK(mem[1] == N * survivors, "rank 0's counter is %d, expected %d", mem[1], N * survivors);
    MPI_Comm_free(&shrunk);
}

/* rma_fault pscw (see the header). */
static void mode_pscw(int *mem, MPI_Win win, int survivors) {
    MPI_Group world;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Win_post(world, 0, win));
    MPI_OK(MPI_Win_start(world, 0, win));
    if (rank == victim) die();
    await_death();
    for (int t = 0; t < size; ++t) {
        int v = 50 + rank;
        int rc = MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win);
        CHECK(rc == MPI_SUCCESS || (t == victim && cls_of(rc) == MPI_ERR_PROC_FAILED), "put to %d: %d", t, rc);
    }
    /* Once the failure is known here, complete reports it (the victim
       failed during the epoch); before, a put that was a direct copy into
       the victim's mapped memory may complete without error. */
    until_known(win);
    int rc = MPI_Win_complete(win);
    CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "complete: class %d", cls_of(rc));
    rc = MPI_Win_wait(win);
    CHECK(cls_of(rc) == MPI_ERR_PROC_FAILED, "wait: class %d", cls_of(rc));
    for (int o = 0; o < survivors; ++o) CHECK(mem[o] == 50 + o, "mem[%d] = %d", o, mem[o]);
    /* A new epoch leaves the known failure out and succeeds. */
    MPI_OK(MPI_Win_post(world, 0, win));
    MPI_OK(MPI_Win_start(world, 0, win));
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
    MPI_Group_free(&world);
}

/* rma_fault validate (see the header). */
static void mode_validate(MPI_Win win) {
    if (rank == victim) die();
    await_death();
    MPI_Group failed, ifailed, world;
    MPI_OK(MPI_Win_validate(win, &failed));
    MPI_Request req;
    MPI_OK(MPI_Iwin_validate(win, &ifailed, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int n = -1, in = -1, r = -1, cmp = -1;
    MPI_Group_size(failed, &n);
    MPI_Group_size(ifailed, &in);
    CHECK(n == 1 && in == 1, "validate: %d and %d failed", n, in);
    int zero = 0;
    MPI_OK(MPI_Group_translate_ranks(failed, 1, &zero, world, &r));
    CHECK(r == victim, "validate named rank %d", r);
    MPI_OK(MPI_Group_compare(failed, ifailed, &cmp));
    CHECK(cmp == MPI_IDENT, "validate and iwin_validate differ");
    MPI_Group_free(&failed);
    MPI_Group_free(&ifailed);
    MPI_Group_free(&world);
}

/* rma_fault revoke_fence (see the header). */
static void mode_revoke_fence(MPI_Win win) {
    int x = 0, rc;
    if (rank == 0) {
        for (int r = 1; r < size; ++r) MPI_OK(MPI_Recv(&x, 1, MPI_INT, r, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPIX_Win_revoke(win));
    } else {
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
    }
    rc = MPI_Win_fence(0, win);
    CHECK(cls_of(rc) == MPI_ERR_REVOKED, "fence on the revoked window: class %d", cls_of(rc));
    int flag = 0;
    MPI_OK(MPIX_Win_is_revoked(win, &flag));
    CHECK(flag, "not revoked");
    rc = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK(cls_of(rc) == MPI_ERR_REVOKED, "lock on the revoked window: class %d", cls_of(rc));
}

/* rma_fault revoke_lock (see the header). */
static void mode_revoke_lock(MPI_Win win) {
    int x = 0, rc;
    if (rank == 1) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 2, 6, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 2, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Win_invalidate(win));
        rc = MPI_Win_unlock(0, win);
        CHECK(cls_of(rc) == MPI_ERR_REVOKED, "unlock on the revoked window: class %d", cls_of(rc));
    } else if (rank == 2) {
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
        rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        CHECK(cls_of(rc) == MPI_ERR_REVOKED, "lock blocked by the holder: class %d", cls_of(rc));
    } else {
        rc = MPI_Win_fence(0, win); /* drives progress until the revoke arrives */
        CHECK(cls_of(rc) == MPI_ERR_REVOKED, "fence: class %d", cls_of(rc));
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "fence";
    /* Rank 3 of 4 dies at its first agreement: the one inside MPI_Win_allocate. */
    if (strcmp(mode, "create") == 0) setenv("FTMPI_TEST_KILL_AT", "agree.contribute:3", 1);
    /* Rank 2 of 3 dies holding rank 0's accumulate lock. */
    if (strcmp(mode, "acclock") == 0) setenv("FTMPI_TEST_KILL_AT", "rma.acc_locked:2", 1);
    tl_init(&argc, &argv, &rank, &size, 3);
    victim = size - 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *mem;
    MPI_Win win = MPI_WIN_NULL;
    const int no_death = strncmp(mode, "revoke", 6) == 0;
    const int survivors = no_death ? size : size - 1;
    if (strcmp(mode, "create") == 0) {
        CHECK(size == 4, "create runs with 4 ranks");
        mode_create();
        return 0;
    }
    MPI_OK(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    if (strcmp(mode, "fence") == 0) {
        mode_fence(mem, win, survivors);
    } else if (strcmp(mode, "lock") == 0) {
        mode_lock(win, survivors);
    } else if (strcmp(mode, "flush") == 0) {
        mode_flush(win, survivors);
    } else if (strcmp(mode, "holder") == 0) {
        mode_holder(win, survivors);
    } else if (strcmp(mode, "acclock") == 0) {
        CHECK(size == 3, "acclock runs with 3 ranks");
        mode_acclock(mem, win, survivors);
    } else if (strcmp(mode, "copy") == 0) {
        mode_copy(survivors);
    } else if (strcmp(mode, "pscw") == 0) {
        mode_pscw(mem, win, survivors);
    } else if (strcmp(mode, "validate") == 0) {
        mode_validate(win);
    } else if (strcmp(mode, "revoke_fence") == 0) {
        mode_revoke_fence(win);
    } else if (strcmp(mode, "revoke_lock") == 0) {
        mode_revoke_lock(win);
    } else {
        CHECK(0, "unknown mode %s", mode);
    }
    MPI_OK(MPI_Win_free(&win));
    /* The survivors go on together. */
    int one = 1, total = 0;
    MPI_Comm shrunk;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK(total == survivors, "%d survivors in the shrunk communicator, expected %d", total, survivors);
    MPI_Comm_free(&shrunk);
    if (rank == 0) printf("rma_fault %s: %d survivors ok\n", mode, survivors);
    MPI_Finalize();
    return 0;
}
