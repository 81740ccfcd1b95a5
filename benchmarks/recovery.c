/*
 * Cost of the recovery calls next to allreduce on the same communicator:
 *   allreduce (one int), MPIX_Comm_agree, MPIX_Comm_iagree + MPI_Wait,
 *   revoke propagation (rank 0 revokes; the time until every other rank's
 *   blocked receive returns MPI_ERR_REVOKED), and shrink after one failure.
 * Times are per call, the slowest rank's, median of several runs.
 *
 *   ftmpicc -O2 benchmarks/recovery.c -o rb && ftmpirun -n 4 ./rb
 * Builds with any MPI that has the ULFM MPIX_ calls (mpi-ext.h).
 */
#include <mpi-ext.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { CALLS = 2000, RUNS = 7 };

static double slowest(double t, MPI_Comm comm) {
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
    return m;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp);
    return v[n / 2];
}

/* kind: 0 allreduce, 1 agree, 2 iagree */
static double per_call(int kind, MPI_Comm comm) {
    double runs[RUNS];
    for (int r = 0; r < RUNS; ++r) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int i = 0; i < CALLS; ++i) {
            int v = 1, out;
            MPI_Request req;
            if (kind == 0) MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_BAND, comm);
            else if (kind == 1) MPIX_Comm_agree(comm, &v);
            else {
                MPIX_Comm_iagree(comm, &v, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        }
        runs[r] = slowest((MPI_Wtime() - t0) / CALLS, comm);
    }
    return median(runs, RUNS);
}

static double revoke_time(int rank) {
    double runs[RUNS];
    for (int r = 0; r < RUNS; ++r) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), t = 0;
        MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* rank 0's clock reading (one node: one clock) */
        if (rank == 0) {
            t0 = MPI_Wtime();
            MPIX_Comm_revoke(c);
        } else {
            int x;
            MPI_Recv(&x, 1, MPI_INT, 0, 1, c, MPI_STATUS_IGNORE); /* returns MPI_ERR_REVOKED */
            t = MPI_Wtime();
        }
        MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        runs[r] = slowest(rank == 0 ? 0 : t - t0, MPI_COMM_WORLD);
        MPI_Comm_free(&c);
    }
    return median(runs, RUNS);
}

int main(int argc, char **argv) {
    int rank, size;
    bench_init(&argc, &argv, "recovery", 3, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const double ar = per_call(0, MPI_COMM_WORLD), ag = per_call(1, MPI_COMM_WORLD), iag = per_call(2, MPI_COMM_WORLD);
    const double rv = revoke_time(rank);
    /* Shrink after one failure: the last rank dies, the others shrink. */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Barrier(comm);
    if (rank == size - 1) raise(SIGKILL);
    int flag = 1;
    MPI_Recv(&flag, 1, MPI_INT, size - 1, 9, comm, MPI_STATUS_IGNORE); /* returns once the failure is known */
    MPIX_Comm_failure_ack(comm);
    /* The survivors start together (point-to-point through rank 0). */
    int token = 0;
    if (rank == 0) {
        for (int r = 1; r < size - 1; ++r) MPI_Recv(&token, 1, MPI_INT, r, 10, comm, MPI_STATUS_IGNORE);
        for (int r = 1; r < size - 1; ++r) MPI_Send(&token, 1, MPI_INT, r, 11, comm);
    } else {
        MPI_Send(&token, 1, MPI_INT, 0, 10, comm);
        MPI_Recv(&token, 1, MPI_INT, 0, 11, comm, MPI_STATUS_IGNORE);
    }
    MPI_Comm survivors;
    double t0 = MPI_Wtime();
    MPIX_Comm_shrink(comm, &survivors);
    double sh = MPI_Wtime() - t0;
    sh = slowest(sh, survivors);
    if (rank == 0) {
        printf("# ftmpi-bench recovery: %d ranks (shrink: %d survivors)\n", size, size - 1);
        printf("allreduce_us %8.2f\n", ar * 1e6);
        printf("agree_us     %8.2f  (%.2fx allreduce)\n", ag * 1e6, ag / ar);
        printf("iagree_us    %8.2f  (%.2fx allreduce)\n", iag * 1e6, iag / ar);
        printf("revoke_us    %8.2f  (%.2fx allreduce)\n", rv * 1e6, rv / ar);
        printf("shrink_us    %8.2f  (%.2fx agree)\n", sh * 1e6, sh / ag);
    }
    MPI_Comm_free(&survivors);
    MPI_Finalize();
    return 0;
}
