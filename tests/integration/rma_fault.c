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
 */
#include <signal.h>
#include <unistd.h>

#include "testlib.h"

static int rank, size, victim;

static int cls_of(int rc) {
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* The victim tells rank 0 it is about to die, then does. */
static void die(void) {
    int x = 1;
    MPI_Send(&x, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
    raise(SIGKILL);
}

/* Rank 0 (a survivor) waits for the victim's last word, then tells the
   other survivors; the failure is then certain to come. */
static void await_death(void) {
    int x;
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

int main(int argc, char **argv) {
    tl_init(&argc, &argv, &rank, &size, 3);
    const char *mode = argc > 1 ? argv[1] : "fence";
    victim = size - 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    const int survivors = size - 1;

    if (strcmp(mode, "fence") == 0) {
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
    } else if (strcmp(mode, "lock") == 0) {
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
    } else if (strcmp(mode, "flush") == 0) {
        MPI_OK(MPI_Win_lock_all(0, win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));  /* every lock_all is granted before the death */
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
    } else if (strcmp(mode, "holder") == 0) {
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
