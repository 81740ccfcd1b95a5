/*
 * One-sided latency and bandwidth between ranks 0 and 1 (plain MPI-3: builds
 * with any MPI's mpicc).
 *
 *   ftmpirun -n 2 ./rma            # every operation, sizes 8 B .. 1 MiB
 *
 * Latency: rank 0 locks rank 1's window (MPI_Win_lock_all), then repeats
 * one operation + MPI_Win_flush; the median of 5 runs of `iters` each.
 * Bandwidth: a window of 64 operations, then one flush. Rank 1 waits in
 * MPI_Barrier meanwhile (which drives its progress, as any MPI call does).
 */
#include <string.h>

#include "bench.h"

enum { RUNS = 5, WINDOW = 64 };

typedef enum { PUT, GET, ACC, GET_ACC, FOP, CAS } Kind;
static const char *names[] = {"put", "get", "acc", "get_acc", "fop", "cas"};

static void op(Kind k, char *buf, char *res, int n, MPI_Win win) {
    switch (k) {
    case PUT: MPI_Put(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win); break;
    case GET: MPI_Get(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win); break;
    case ACC: MPI_Accumulate(buf, n / 8, MPI_LONG, 1, 0, n / 8, MPI_LONG, MPI_SUM, win); break;
    case GET_ACC:
        MPI_Get_accumulate(buf, n / 8, MPI_LONG, res, n / 8, MPI_LONG, 1, 0, n / 8, MPI_LONG, MPI_SUM, win);
        break;
    case FOP: MPI_Fetch_and_op(buf, res, MPI_LONG, 1, 0, MPI_SUM, win); break;
    case CAS: MPI_Compare_and_swap(buf, buf + 8, res, MPI_LONG, 1, 0, win); break;
    }
}

int main(int argc, char **argv) {
    int rank, size;
    bench_init(&argc, &argv, "rma", 2, &rank, &size);
    const int max = 1 << 20;
    char *mem, *buf = calloc(max, 1), *res = calloc(max, 1);
    MPI_Win win;
    MPI_Win_allocate(max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (rank == 0) printf("# ftmpi-bench rma: op bytes latency_us(median of %d) bandwidth_MBps\n", RUNS);
    for (int k = PUT; k <= CAS; ++k) {
        const int only8 = k == FOP || k == CAS;
        for (int n = 8; n <= (only8 ? 8 : max); n *= 8) {
            const int iters = n >= 65536 ? 100 : 2000;
            double lat[RUNS], bw = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                MPI_Win_lock_all(0, win);
                for (int i = 0; i < 50; ++i) { /* warm-up */
                    op((Kind)k, buf, res, n, win);
                    MPI_Win_flush(1, win);
                }
                for (int r = 0; r < RUNS; ++r) {
                    double t0 = MPI_Wtime();
                    for (int i = 0; i < iters; ++i) {
                        op((Kind)k, buf, res, n, win);
                        MPI_Win_flush(1, win);
                    }
                    lat[r] = (MPI_Wtime() - t0) / iters * 1e6;
                }
                if (!only8) {
                    const int reps = n >= 65536 ? 4 : 20;
                    double t0 = MPI_Wtime();
                    for (int i = 0; i < reps; ++i) {
                        for (int w = 0; w < WINDOW; ++w) op((Kind)k, buf, res, n, win);
                        MPI_Win_flush(1, win);
                    }
                    bw = (double)n * WINDOW * reps / (MPI_Wtime() - t0) / 1e6;
                }
                MPI_Win_unlock_all(win);
                qsort(lat, RUNS, sizeof(double), bench_cmp);
                printf("%-8s %8d %10.2f %10.1f\n", names[k], n, lat[RUNS / 2], bw);
                fflush(stdout);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    MPI_Win_free(&win);
    free(buf);
    free(res);
    MPI_Finalize();
    return 0;
}
