/*
 * MPI_Bsend_init: persistent buffered sends. Each MPI_Start copies the
 * message into the attached buffer and completes at once; the receivers
 * post their receives only after the sender changed its data, so they see
 * what each start copied. Contiguous and strided (vector) messages, small
 * and large; Startall in a loop, Request_free, Cancel, MPI_PROC_NULL, a
 * start without room (MPI_ERR_BUFFER), and Buffer_detach waiting for the
 * buffered messages.
 */
#include "testlib.h"

#define ITERS 10
#define BIG 20000 /* ints: above the eager limit */

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    const int peer = 1 - rank;
    static int small[4], big[BIG], strided[16];
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    if (rank == 0) {
        int bufsize = 0, s;
        MPI_OK(MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &s));
        bufsize += ITERS * (s + MPI_BSEND_OVERHEAD);
        MPI_OK(MPI_Pack_size(BIG, MPI_INT, MPI_COMM_WORLD, &s));
        bufsize += ITERS * (s + MPI_BSEND_OVERHEAD);
        MPI_OK(MPI_Pack_size(1, every_other, MPI_COMM_WORLD, &s));
        bufsize += ITERS * (s + MPI_BSEND_OVERHEAD);
        char *attached = malloc((size_t)bufsize);
        MPI_Request reqs[4];
        MPI_OK(MPI_Bsend_init(small, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, &reqs[0]));
        MPI_OK(MPI_Bsend_init(big, BIG, MPI_INT, peer, 2, MPI_COMM_WORLD, &reqs[1]));
        MPI_OK(MPI_Bsend_init(strided, 1, every_other, peer, 3, MPI_COMM_WORLD, &reqs[2]));
        MPI_OK(MPI_Bsend_init(small, 4, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &reqs[3]));
        /* No buffer attached: the start fails, the request stays inactive. */
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int rc = MPI_Start(&reqs[0]);
        CHECK(tl_class_of(rc) == MPI_ERR_BUFFER, "MPI_Start without a buffer returned class %d", tl_class_of(rc));
        MPI_OK(MPI_Buffer_attach(attached, bufsize));
        for (int it = 0; it < ITERS; ++it) {
            for (int i = 0; i < 4; ++i) small[i] = it * 100 + i;
            for (int i = 0; i < BIG; ++i) big[i] = it + i;
            for (int i = 0; i < 16; ++i) strided[i] = it * 1000 + i;
            if (it % 2 == 0) {
                MPI_OK(MPI_Startall(4, reqs));
            } else {
                for (int i = 0; i < 4; ++i) MPI_OK(MPI_Start(&reqs[i]));
            }
            MPI_Status sts[4];
            MPI_OK(MPI_Waitall(4, reqs, sts));
            /* The buffer holds the copies: change the data at once. */
            for (int i = 0; i < 4; ++i) small[i] = -1;
            for (int i = 0; i < BIG; ++i) big[i] = -1;
            for (int i = 0; i < 16; ++i) strided[i] = -1;
        }
        /* Cancel after a start: the message was buffered, the send stays. */
        for (int i = 0; i < 4; ++i) small[i] = 777 + i;
        MPI_OK(MPI_Start(&reqs[0]));
        MPI_OK(MPI_Cancel(&reqs[0]));
        MPI_Status st;
        int cancelled = 1;
        MPI_OK(MPI_Wait(&reqs[0], &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(!cancelled, "a buffered send was cancelled after it was copied");
        /* Request_free of a started request: the message still goes. */
        for (int i = 0; i < 4; ++i) small[i] = 888 + i;
        MPI_OK(MPI_Start(&reqs[0]));
        MPI_OK(MPI_Request_free(&reqs[0]));
        for (int i = 1; i < 4; ++i) MPI_OK(MPI_Request_free(&reqs[i]));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the receiver starts receiving only now */
        void *back;
        int back_size;
        MPI_OK(MPI_Buffer_detach(&back, &back_size)); /* waits until every copy went out */
        CHECK(back == attached && back_size == bufsize, "detach returned another buffer");
        free(attached);
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int it = 0; it < ITERS; ++it) {
            MPI_OK(MPI_Recv(small, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 4; ++i) CHECK(small[i] == it * 100 + i, "iteration %d small[%d] = %d", it, i, small[i]);
            MPI_OK(MPI_Recv(big, BIG, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < BIG; ++i) CHECK(big[i] == it + i, "iteration %d big[%d] = %d", it, i, big[i]);
            for (int i = 0; i < 16; ++i) strided[i] = -5;
            MPI_OK(MPI_Recv(strided, 1, every_other, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 16; ++i)
                CHECK(strided[i] == (i % 2 == 0 ? it * 1000 + i : -5), "iteration %d strided[%d] = %d", it, i,
                      strided[i]);
        }
        for (int rep = 0; rep < 2; ++rep) {
            MPI_OK(MPI_Recv(small, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(small[0] == (rep == 0 ? 777 : 888), "message after cancel/free holds %d", small[0]);
        }
    }
    MPI_OK(MPI_Type_free(&every_other));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("bsend_init: OK\n");
    MPI_Finalize();
    return 0;
}
