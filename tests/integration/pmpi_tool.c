/*
 * The profiling layer: this program is its own tool. It defines MPI_Send,
 * MPI_Put and MPI_Allreduce, counts the calls and forwards them to the PMPI_
 * twins. The counts must be exactly the program's own calls: the library's
 * internal traffic (collectives, MPI_Rput's put) is not intercepted, and
 * the forwarded calls still work.
 */
#include "testlib.h"

static int sends, put_calls, allreduces;

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    ++sends;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Put(const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
            MPI_Datatype ttype, MPI_Win win) {
    ++put_calls;
    return PMPI_Put(origin, ocount, otype, target, disp, tcount, ttype, win);
}

int MPI_Allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    ++allreduces;
    return PMPI_Allreduce(in, out, count, type, op, comm);
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < 3; ++i) {
        int v = rank * 10 + i, got = -1;
        MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, next, i, &got, 1, MPI_INT, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == prev * 10 + i, "sendrecv got %d", got);
        if (rank == 0) MPI_OK(MPI_Send(&v, 1, MPI_INT, 1, 100 + i, MPI_COMM_WORLD));
        if (rank == 1) MPI_OK(MPI_Recv(&got, 1, MPI_INT, 0, 100 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    int one = 1, total = 0;
    MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == size, "allreduce %d", total);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Bcast(&total, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(sends == (rank == 0 ? 3 : 0), "MPI_Send intercepted %d times (Sendrecv, Barrier, Bcast must not count)",
          sends);
    CHECK(allreduces == 1, "MPI_Allreduce intercepted %d times", allreduces);

    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_Request req;
    int v = rank;
    MPI_OK(MPI_Rput(&v, 1, MPI_INT, next, 0, 1, MPI_INT, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(put_calls == 0, "MPI_Rput's internal put was intercepted (%d)", put_calls);
    MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 1, 1, MPI_INT, win));
    CHECK(put_calls == 1, "MPI_Put intercepted %d times", put_calls);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(PMPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[0] == prev && mem[1] == prev, "window %d %d", mem[0], mem[1]);
    MPI_OK(MPI_Win_free(&win));
    if (rank == 0) printf("pmpi_tool: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
