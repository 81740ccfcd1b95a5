/*
 * Partitioned communication (MPI 4.0 chapter 4).
 *   pairs  even rank 2i sends to 2i+1: two partitioned pairs at once (tags
 *          5 and 9, the receiver initializing them in the other order),
 *          one of ints and one of a strided type; three starts, partitions
 *          marked ready out of order with MPI_Pready, _range and _list and
 *          from four threads (MPI_THREAD_MULTIPLE); the receiver polls
 *          MPI_Parrived and checks each partition as it arrives.
 *   kill   rank 0 receives partitions from the last rank, which dies
 *          (SIGKILL): its Wait returns MPI_ERR_PROC_FAILED; rank 1's send
 *          to it ends (success or MPI_ERR_PROC_FAILED) and never hangs.
 */
#include <pthread.h>
#include <signal.h>

#include "testlib.h"

#define PARTS 8
#define COUNT 16

struct marker {
    MPI_Request req;
    int first;
};

static void *mark_every_fourth(void *arg) {
    struct marker *m = arg;
    for (int p = PARTS - 1 - m->first; p >= 0; p -= 4) MPI_OK(MPI_Pready(p, m->req));
    return NULL;
}

static int value(int it, int part, int i, int which) { return which * 100000 + it * 1000 + part * COUNT + i; }

static void pairs(int rank, int size) {
    if (rank % 2 == 1 && rank == size - 1) return; /* no partner */
    const int sender = rank % 2 == 0, peer = sender ? rank + 1 : rank - 1;
    if (peer >= size) return;
    static int a[PARTS * COUNT], b[PARTS * COUNT * 2];
    MPI_Datatype strided, every2; /* every other int of a partition's 2 * COUNT */
    MPI_OK(MPI_Type_vector(COUNT, 1, 2, MPI_INT, &strided));
    MPI_OK(MPI_Type_create_resized(strided, 0, (MPI_Aint)(2 * COUNT * sizeof(int)), &every2));
    MPI_OK(MPI_Type_commit(&every2));
    MPI_OK(MPI_Type_free(&strided));
    MPI_Request r[2];
    if (sender) {
        MPI_OK(MPI_Psend_init(a, PARTS, COUNT, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
        MPI_OK(MPI_Psend_init(b, PARTS, 1, every2, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    } else { /* the other order: matching is by tag */
        MPI_OK(MPI_Precv_init(b, PARTS, 1, every2, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
        MPI_OK(MPI_Precv_init(a, PARTS, COUNT, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    }
    MPI_OK(MPI_Type_free(&every2)); /* the requests keep it */
    for (int it = 0; it < 3; ++it) {
        if (sender) {
            for (int p = 0; p < PARTS; ++p)
                for (int i = 0; i < COUNT; ++i) {
                    a[p * COUNT + i] = value(it, p, i, 0);
                    b[(p * COUNT + i) * 2] = value(it, p, i, 1);
                }
        } else {
            memset(a, 0xff, sizeof a);
            memset(b, 0xff, sizeof b);
        }
        MPI_OK(MPI_Startall(2, r));
        if (sender) {
            MPI_OK(MPI_Pready(PARTS - 1, r[0]));
            MPI_OK(MPI_Pready_range(2, PARTS - 2, r[0]));
            const int rest[2] = {1, 0};
            MPI_OK(MPI_Pready_list(2, rest, r[0]));
            struct marker m[4];
            pthread_t t[4];
            for (int k = 0; k < 4; ++k) {
                m[k].req = r[1], m[k].first = k;
                CHECK(pthread_create(&t[k], NULL, mark_every_fourth, &m[k]) == 0, "pthread_create");
            }
            for (int k = 0; k < 4; ++k) pthread_join(t[k], NULL);
        } else {
            int seen[PARTS] = {0}, nseen = 0;
            while (nseen < PARTS) {
                for (int p = 0; p < PARTS; ++p) {
                    int flag = 0;
                    MPI_OK(MPI_Parrived(r[0], p, &flag));
                    if (!flag || seen[p]) continue;
                    seen[p] = 1, ++nseen;
                    for (int i = 0; i < COUNT; ++i)
                        CHECK(a[p * COUNT + i] == value(it, p, i, 0), "start %d partition %d [%d]: %d", it, p, i,
                              a[p * COUNT + i]);
                }
            }
        }
        MPI_Status st[2];
        MPI_OK(MPI_Waitall(2, r, st));
        if (!sender) {
            for (int p = 0; p < PARTS; ++p)
                for (int i = 0; i < COUNT; ++i) {
                    CHECK(b[(p * COUNT + i) * 2] == value(it, p, i, 1), "strided: start %d partition %d [%d]", it, p,
                          i);
                    CHECK(b[(p * COUNT + i) * 2 + 1] == -1, "strided: a hole written");
                }
            CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 5, "status: source %d tag %d", st[0].MPI_SOURCE,
                  st[0].MPI_TAG);
            int flag = 0;
            MPI_OK(MPI_Parrived(r[0], 0, &flag)); /* inactive: everything arrived */
            CHECK(flag, "MPI_Parrived on an inactive request");
        }
    }
    MPI_OK(MPI_Request_free(&r[0]));
    MPI_OK(MPI_Request_free(&r[1]));
}

static void dead(int rank, int size) {
    const int victim = size - 1;
    static int buf[PARTS * COUNT];
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 0) MPI_OK(MPI_Precv_init(buf, PARTS, COUNT, MPI_INT, victim, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    if (rank == 1) MPI_OK(MPI_Psend_init(buf, PARTS, COUNT, MPI_INT, victim, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim) {
        fflush(stdout);
        raise(SIGKILL);
    }
    if (r == MPI_REQUEST_NULL) return;
    MPI_OK(MPI_Start(&r));
    if (rank == 1) MPI_OK(MPI_Pready_range(0, PARTS - 1, r));
    const int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rank == 0)
        CHECK(tl_class_of(rc) == MPI_ERR_PROC_FAILED, "receive from the dead rank: class %d", tl_class_of(rc));
    else
        CHECK(rc == MPI_SUCCESS || tl_class_of(rc) == MPI_ERR_PROC_FAILED, "send to the dead rank: class %d",
              tl_class_of(rc));
    MPI_OK(MPI_Request_free(&r));
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init_multiple(&argc, &argv, &rank, &size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int kill = argc > 1 && strcmp(argv[1], "kill") == 0;
    if (kill) {
        CHECK(size >= 3, "the kill variant needs 3 ranks");
        dead(rank, size);
    } else {
        pairs(rank, size);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rank == 0) printf("partitioned %s: ok\n", kill ? "kill" : "pairs");
    MPI_OK(MPI_Finalize());
    return 0;
}
