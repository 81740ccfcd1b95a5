/*
 * Persistent collectives against their blocking forms: MPI_Allreduce
 * (MPI_SUM of one double, 8 B) and MPI_Bcast (8 B, root 0), each run
 * blocking and as a persistent request (MPI_Allreduce_init / MPI_Bcast_init
 * once, then MPI_Start + MPI_Wait per call). MPI 4.0 calls, so it builds
 * with ftmpicc and MPICH's mpicc (Open MPI 4.1 has them only as MPIX_):
 *
 *   ftmpicc -O2 persistent.c -o persistent && ftmpirun -n 2 ./persistent
 *   mpicc.mpich -O2 persistent.c -o persistent-mpich && mpirun.mpich -n 2 ./persistent-mpich
 *
 * Each figure is the median over 2000 timed calls (after warm-up) of the
 * slowest rank's time for one call, in microseconds; the four kinds are
 * interleaved in blocks of 100 so that the machine's drift hits them alike.
 */
#include <string.h>

#include "bench.h"

enum { ALLREDUCE, ALLREDUCE_P, BCAST, BCAST_P, KINDS };
static const char *names[KINDS] = {"allreduce", "allreduce_init", "bcast", "bcast_init"};

int main(int argc, char **argv) {
    int rank, size;
    bench_init(&argc, &argv, "persistent", 2, &rank, &size);
    double in = 1.0, out = 0.0, b = 2.0;
    MPI_Request req[KINDS];
    MPI_Allreduce_init(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[ALLREDUCE_P]);
    MPI_Bcast_init(&b, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[BCAST_P]);
    enum { BLOCK = 100, BLOCKS = 20, REPS = BLOCK * BLOCKS };
    static double t[KINDS][REPS];
    for (int blk = -2; blk < BLOCKS; ++blk) {
        for (int kind = 0; kind < KINDS; ++kind) {
            for (int i = 0; i < BLOCK; ++i) {
                MPI_Barrier(MPI_COMM_WORLD);
                const double t0 = MPI_Wtime();
                if (kind == ALLREDUCE) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else if (kind == BCAST) MPI_Bcast(&b, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                else {
                    MPI_Start(&req[kind]);
                    MPI_Wait(&req[kind], MPI_STATUS_IGNORE);
                }
                double dt = MPI_Wtime() - t0, mx;
                MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (blk >= 0) t[kind][blk * BLOCK + i] = mx;
                if ((kind == ALLREDUCE || kind == ALLREDUCE_P) && out != size) {
                    fprintf(stderr, "rank %d: allreduce gave %g, expected %d\n", rank, out, size);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        }
    }
    if (rank == 0) printf("# %d ranks, 8 B, median of %d calls (us)\n", size, REPS);
    for (int kind = 0; kind < KINDS; ++kind) {
        qsort(t[kind], REPS, sizeof(double), bench_cmp);
        if (rank == 0) printf("%-16s %8.2f\n", names[kind], t[kind][REPS / 2] * 1e6);
    }
    MPI_Request_free(&req[ALLREDUCE_P]);
    MPI_Request_free(&req[BCAST_P]);
    MPI_Finalize();
    return 0;
}
