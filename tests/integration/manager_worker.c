/*
 * A manager/worker program that survives its workers dying (issue 4).
 *
 * Rank 0 hands out NTASKS tasks and collects results with MPI_ANY_SOURCE
 * receives. Workers 1, 3 and 4 are killed (SIGKILL) one by one, each while
 * holding a task. When a receive fails with MPI_ERR_PROC_FAILED the manager
 * acknowledges the failure, learns who failed, gives the dead worker's task
 * to someone else, and goes on. It checks that every task's result arrived
 * exactly once and is right; the job exits 0. Until all three have died the
 * manager keeps the workers busy with extra tasks, so every run sees exactly
 * three failures whatever the scheduling.
 *
 *   manager_worker ulfm   MPIX_Comm_failure_ack + MPIX_Comm_failure_get_acked
 *   manager_worker 2011   MPI_Comm_reenable_any_source (spec 000 §17.6)
 */
#include "ftlib.h"

enum { NTASKS = 300, TAG_TASK = 1, TAG_STOP = 2, TAG_RESULT = 3 };

static int dies_after(int w) { return (w == 1 || w == 3 || w == 4) ? 3 * w : -1; }

/* A worker: squares the tasks it gets until told to stop (or dies at its
   dies_after(me)th task). */
static void worker(int me) {
    int count = 0;
    for (;;) {
        long long task;
        MPI_Status st;
        MPI_OK(MPI_Recv(&task, 1, MPI_LONG_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        if (st.MPI_TAG == TAG_STOP) break;
        if (++count == dies_after(me)) tl_die(SIGKILL);
        long long result[2] = {task, task * task};
        MPI_OK(MPI_Send(result, 2, MPI_LONG_LONG, 0, TAG_RESULT, MPI_COMM_WORLD));
    }
}

/* The failed processes the manager has acknowledged (ULFM, or the 2011
   proposal's reenable_any_source) as world ranks; their count. */
static int failed_ranks(int use_2011, int *ranks) {
    MPI_Group failed, world;
    if (use_2011) {
        MPI_OK(MPI_Comm_reenable_any_source(MPI_COMM_WORLD, &failed));
    } else {
        MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
        MPI_OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &failed));
    }
    int n = 0, idx[64];
    MPI_OK(MPI_Group_size(failed, &n));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int i = 0; i < n; ++i) idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(failed, n, idx, world, ranks));
    MPI_Group_free(&world);
    if (failed != MPI_GROUP_EMPTY) MPI_Group_free(&failed);
    return n;
}

int main(int argc, char **argv) {
    int me, size;
    tl_init(&argc, &argv, &me, &size, 6);
    CHECK(argc == 2 && (!strcmp(argv[1], "ulfm") || !strcmp(argv[1], "2011")), "usage: manager_worker ulfm|2011");
    const int use_2011 = !strcmp(argv[1], "2011");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    if (me != 0) {
        worker(me);
        MPI_OK(MPI_Finalize());
        return 0;
    }

    int holding[64], dead[64] = {0}, idle[64] = {0};
    char done[NTASKS] = {0};
    int requeued[NTASKS], nrequeued = 0, next = 0, ndone = 0, nfailures = 0;
    long long sum = 0;
    for (int w = 0; w < size; ++w) holding[w] = -1;

        /* Gives worker w its next task, or marks it idle when there is none now. */
#define FEED(w)                                                                                                \
    do {                                                                                                       \
        long long t_ = nrequeued > 0 ? requeued[--nrequeued] : (next < NTASKS || nfailures < 3) ? next++ : -1; \
        if (t_ < 0) {                                                                                          \
            idle[w] = 1;                                                                                       \
            break;                                                                                             \
        }                                                                                                      \
        idle[w] = 0;                                                                                           \
        holding[w] = (int)t_;                                                                                  \
        int rc_ = MPI_Send(&t_, 1, MPI_LONG_LONG, w, TAG_TASK, MPI_COMM_WORLD);                                \
        CHECK(rc_ == MPI_SUCCESS || tl_class(rc_) == MPI_ERR_PROC_FAILED, "task send: %d", rc_);               \
    } while (0)

    for (int w = 1; w < size; ++w) FEED(w);
    while (ndone < NTASKS || nfailures < 3) {
        long long result[2];
        MPI_Status st;
        int rc = MPI_Recv(result, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
        if (rc == MPI_SUCCESS) {
            const int w = st.MPI_SOURCE, t = (int)result[0];
            CHECK(t >= 0 && result[1] == result[0] * result[0], "bad result from %d", w);
            if (t < NTASKS && !done[t]) {
                done[t] = 1;
                ++ndone;
                sum += result[1];
            }
            holding[w] = -1;
            FEED(w);
            continue;
        }
        CHECK(tl_class(rc) == MPI_ERR_PROC_FAILED, "wildcard receive: class %d", tl_class(rc));
        int ranks[64];
        const int n = failed_ranks(use_2011, ranks);
        for (int i = 0; i < n; ++i) {
            const int w = ranks[i];
            if (dead[w]) continue;
            CHECK(dies_after(w) > 0, "worker %d was reported failed but is alive", w);
            dead[w] = 1;
            idle[w] = 0;
            ++nfailures;
            if (holding[w] >= 0 && holding[w] < NTASKS && !done[holding[w]]) requeued[nrequeued++] = holding[w];
            holding[w] = -1;
        }
        for (int w = 1; w < size; ++w)
            if (!dead[w] && idle[w] && nrequeued > 0) FEED(w);
        int alive = 0;
        for (int w = 1; w < size; ++w) alive += !dead[w];
        CHECK(alive > 0, "every worker died");
    }
    long long expect = 0;
    for (long long t = 0; t < NTASKS; ++t) expect += t * t;
    CHECK(sum == expect, "sum %lld, expected %lld", sum, expect);
    CHECK(nfailures == 3, "%d failures handled, expected 3", nfailures);
    for (int w = 1; w < size; ++w) {
        if (dead[w]) continue;
        long long stop = -1;
        MPI_OK(MPI_Send(&stop, 1, MPI_LONG_LONG, w, TAG_STOP, MPI_COMM_WORLD));
    }
    printf("manager_worker %s: %d tasks done by the survivors after %d worker failures\n", argv[1], NTASKS, nfailures);
    MPI_OK(MPI_Finalize());
    return 0;
}
