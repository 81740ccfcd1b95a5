/*
 * Collective MPI-IO bandwidth of a 3-D block-distributed array (plain
 * MPI-2: builds with any MPI's mpicc).
 *
 *   ftmpirun -n 4 ./io_bw [MiB [reps [dir [cb]]]]
 *
 * A cube of doubles of about MiB mebibytes (default 1024), split over an
 * MPI_Dims_create grid (blocks differ by at most one plane), each rank's
 * block described by an MPI_Type_create_subarray filetype. Write: open,
 * set_view, MPI_File_write_all, MPI_File_sync, timed from the write to the
 * end of the sync (the slowest rank's time). Read: seek to 0, MPI_File_read_all
 * into a cleared buffer, then checked. Best of `reps` repetitions (default 3) of
 * each, in MB/s (10^6 bytes/s). The file is dir/io_bw.dat (default /tmp),
 * removed at the end. `cb` (enable | disable | automatic) sets the hints
 * romio_cb_write and romio_cb_read; by default no hint is given.
 */
#include <string.h>

#include "bench.h"

/* The value of global element i (checked after reads). */
static double val(long long i) { return (double)i * 0.5 + 1.0; }

int main(int argc, char **argv) {
    int rank, size;
    bench_init(&argc, &argv, "io_bw", 1, &rank, &size);
    const double mib = argc > 1 ? atof(argv[1]) : 1024.0;
    const int reps = argc > 2 ? atoi(argv[2]) : 3;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    const char *cb = argc > 4 ? argv[4] : NULL;
    int n = 0; /* the largest cube of doubles within the size */
    while ((double)(n + 1) * (n + 1) * (n + 1) * 8.0 <= mib * 1048576.0) ++n;
    if (n < 1 || reps < 1) {
        if (rank == 0) fprintf(stderr, "io_bw: bad size or repetitions\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int g[3] = {n, n, n};
    int dims[3] = {0, 0, 0}, coords[3], sub[3], start[3];
    MPI_Dims_create(size, 3, dims);
    coords[0] = rank / (dims[1] * dims[2]);
    coords[1] = rank / dims[2] % dims[1];
    coords[2] = rank % dims[2];
    for (int d = 0; d < 3; ++d) {
        start[d] = (int)((long long)g[d] * coords[d] / dims[d]);
        sub[d] = (int)((long long)g[d] * (coords[d] + 1) / dims[d]) - start[d];
    }
    MPI_Datatype ft;
    MPI_Type_create_subarray(3, g, sub, start, MPI_ORDER_C, MPI_DOUBLE, &ft);
    MPI_Type_commit(&ft);
    const long long count = (long long)sub[0] * sub[1] * sub[2];
    double *mine = malloc(sizeof(double) * (size_t)(count + 1));
    double *back = malloc(sizeof(double) * (size_t)(count + 1));
    long long k = 0;
    for (int x = start[0]; x < start[0] + sub[0]; ++x)
        for (int y = start[1]; y < start[1] + sub[1]; ++y)
            for (int z = start[2]; z < start[2] + sub[2]; ++z) mine[k++] = val(((long long)x * n + y) * n + z);
    if (count > 0x7fffffff) {
        if (rank == 0) fprintf(stderr, "io_bw: a rank's block exceeds 2^31 elements; use more ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/io_bw.dat", dir);
    MPI_Info info = MPI_INFO_NULL;
    if (cb != NULL) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_cb_write", cb);
        MPI_Info_set(info, "romio_cb_read", cb);
    }
    const double bytes = (double)n * n * n * 8.0;
    double best_w = 0, best_r = 0;
    for (int rep = 0; rep < reps; ++rep) {
        MPI_File fh;
        MPI_Status st;
        double t, w, r;
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh) != MPI_SUCCESS) {
            if (rank == 0) fprintf(stderr, "io_bw: cannot open %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", info);
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        int rc = MPI_File_write_all(fh, mine, (int)count, MPI_DOUBLE, &st);
        rc |= MPI_File_sync(fh);
        t = MPI_Wtime() - t;
        MPI_Allreduce(&t, &w, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        memset(back, 0, sizeof(double) * (size_t)count);
        MPI_File_seek(fh, 0, MPI_SEEK_SET);
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        rc |= MPI_File_read_all(fh, back, (int)count, MPI_DOUBLE, &st);
        t = MPI_Wtime() - t;
        MPI_Allreduce(&t, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_File_close(&fh);
        if (rc != MPI_SUCCESS || memcmp(back, mine, sizeof(double) * (size_t)count) != 0) {
            fprintf(stderr, "io_bw: rank %d: an access failed or read back wrong data\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (bytes / w > best_w) best_w = bytes / w;
        if (bytes / r > best_r) best_r = bytes / r;
    }
    if (rank == 0) {
        printf("# io_bw: %d ranks, %d^3 doubles (%.0f MiB), grid %dx%dx%d, best of %d, %s%s\n", size, n,
               bytes / 1048576.0, dims[0], dims[1], dims[2], reps, cb ? "romio_cb_read/write=" : "no hints",
               cb ? cb : "");
        printf("write_all+sync %10.0f MB/s\nread_all       %10.0f MB/s\n", best_w / 1e6, best_r / 1e6);
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    MPI_Type_free(&ft);
    free(mine);
    free(back);
    MPI_Finalize();
    return 0;
}
