/*
 * The job an outsider attacks (tests/security/outsider.py): 4 ranks run
 * checked allreduces until the stop file named by argv[1] exists (rank 0
 * looks, then tells everyone), with a 60 s deadline. Every rank prints
 * "ready rank R pid P" once the job is up. At the end rank 0 prints the
 * rounds and the job's total of ftmpi_refused_messages (MPI_T): what the
 * ranks refused from outside the job. Any failure, false ones included,
 * ends the job with an error (MPI_ERRORS_ARE_FATAL).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { N = 1024 };

static unsigned long long refused(void) {
    int idx, prov;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    unsigned long long v = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS) return 0;
    if (MPI_T_pvar_get_index("ftmpi_refused_messages", MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS &&
        MPI_T_pvar_session_create(&s) == MPI_SUCCESS) {
        if (MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count) == MPI_SUCCESS) {
            MPI_T_pvar_read(s, h, &v);
            MPI_T_pvar_handle_free(s, &h);
        }
        MPI_T_pvar_session_free(&s);
    }
    MPI_T_finalize();
    return v;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: outsider STOPFILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("ready rank %d pid %d\n", rank, (int)getpid());
    fflush(stdout);
    static long long in[N], out[N];
    const double deadline = MPI_Wtime() + 60.0;
    int rounds = 0, stop = 0;
    while (!stop) {
        for (int i = 0; i < N; ++i) in[i] = (long long)(rank + 1) * (i + rounds);
        MPI_Allreduce(in, out, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        const long long ranks_sum = (long long)size * (size + 1) / 2;
        for (int i = 0; i < N; ++i)
            if (out[i] != ranks_sum * (i + rounds)) {
                fprintf(stderr, "rank %d round %d: element %d is %lld, expected %lld\n", rank, rounds, i, out[i],
                        ranks_sum * (i + rounds));
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        ++rounds;
        if (rank == 0) stop = access(argv[1], F_OK) == 0 || MPI_Wtime() > deadline;
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    unsigned long long mine = refused(), total = 0;
    MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("outsider: %d rounds, refused %llu\n", rounds, total);
    MPI_Finalize();
    return 0;
}
