/*
 * MPI_THREAD_MULTIPLE: several threads per rank in MPI at once.
 *   - every thread ping-pongs with its twin on the partner rank (tag = thread);
 *   - every thread runs collectives on its own communicator, concurrently;
 *   - a thread blocked in MPI_Recv from its own rank gets the message another
 *     thread of the same rank sends (a blocked call must not keep others out).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "testlib.h"

#define NTHREADS 4
#define ROUNDS 300

static int rank, size;
static MPI_Comm comms[NTHREADS];
static atomic_int receiver_waiting;

static void *worker(void *arg) {
    const int t = (int)(long)arg;
    int flag = 1;
    MPI_OK(MPI_Is_thread_main(&flag));
    CHECK(flag == 0, "thread %d is the main thread", t);
    /* Ping-pong with the twin thread of the partner rank. */
    const int partner = rank ^ 1;
    if (partner < size) {
        for (int i = 0; i < ROUNDS; ++i) {
            int out = rank * 1000000 + t * 10000 + i, in = -1;
            if (rank % 2 == 0) {
                MPI_OK(MPI_Send(&out, 1, MPI_INT, partner, t, MPI_COMM_WORLD));
                MPI_OK(MPI_Recv(&in, 1, MPI_INT, partner, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                MPI_OK(MPI_Recv(&in, 1, MPI_INT, partner, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MPI_OK(MPI_Send(&out, 1, MPI_INT, partner, t, MPI_COMM_WORLD));
            }
            CHECK(in == partner * 1000000 + t * 10000 + i, "thread %d round %d: got %d", t, i, in);
        }
    }
    /* Collectives on this thread's communicator while the others run theirs. */
    for (int i = 0; i < ROUNDS / 10; ++i) {
        int v = rank + t + i, sum = -1;
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comms[t]));
        CHECK(sum == size * (size - 1) / 2 + size * (t + i), "thread %d allreduce %d: %d", t, i, sum);
        MPI_OK(MPI_Barrier(comms[t]));
    }
    /* Within this rank: thread 0 blocks receiving what thread 1 sends once it
       knows thread 0 is on its way into MPI_Recv. */
    if (t == 0) {
        int in = -1;
        atomic_store(&receiver_waiting, 1);
        MPI_OK(MPI_Recv(&in, 1, MPI_INT, rank, 777, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in == rank + 777, "self message: %d", in);
    } else if (t == 1) {
        while (!atomic_load(&receiver_waiting)) sched_yield();
        int out = rank + 777;
        MPI_OK(MPI_Send(&out, 1, MPI_INT, rank, 777, MPI_COMM_WORLD));
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided = -1;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int level = -1;
    MPI_OK(MPI_Query_thread(&level));
    CHECK(level == MPI_THREAD_MULTIPLE, "MPI_Query_thread: %d", level);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int t = 0; t < NTHREADS; ++t) MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; ++t) CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; ++t) pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; ++t) MPI_OK(MPI_Comm_free(&comms[t]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("threads: %d threads per rank on %d ranks passed\n", NTHREADS, size);
    MPI_Finalize();
    return 0;
}
