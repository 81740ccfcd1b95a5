/*
 * Where start-up time goes: each rank prints the wall-clock times (seconds
 * since the epoch, CLOCK_REALTIME, which every process of the node shares)
 * at which it entered main, returned from MPI_Init, and entered and left
 * MPI_Finalize. benchmarks/compare.sh subtracts the launch time it took just
 * before starting the launcher. Plain MPI, so it builds with any MPI.
 *
 *   output, one line per rank: startup <rank> <main> <init_done> <fin_start> <fin_done>
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    const double t_main = now();
    MPI_Init(&argc, &argv);
    const double t_init = now();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const double t_fin = now();
    MPI_Finalize();
    const double t_done = now();
    printf("startup %d %.6f %.6f %.6f %.6f\n", rank, t_main, t_init, t_fin, t_done);
    return 0;
}
