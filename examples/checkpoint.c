/*
 * Checkpoint/restart that survives a process failure without restarting the
 * job: a 1-D heat-equation stencil, block-distributed, that writes a
 * checkpoint collectively (MPI-IO) every K steps. When a rank dies, the
 * survivors revoke the communicator, shrink it, reopen the checkpoint files
 * on the shrunk communicator, read the last good checkpoint with the new
 * block distribution (so the dead rank's part is redistributed) and go on.
 * At the end rank 0 checks the result against a serial run: recovery is
 * exact, since every cell is computed by the same arithmetic.
 *
 *   ftmpicc -O2 examples/checkpoint.c -o checkpoint
 *   ftmpirun -n 4 ./checkpoint [-d DIR] [-k VICTIM:STEP]
 *
 * DIR holds the checkpoint files (ckpt.0, ckpt.1); without -d they go in a
 * new directory under /tmp, removed at the end. With -k, rank VICTIM dies
 * (SIGKILL) at the start of step STEP.
 *
 * Two files alternate, so a failure while one is being written leaves the
 * other: a checkpoint counts once its header (the step it holds, written by
 * one process after the data and a sync) is on disk.
 *
 * Plain MPI plus the ULFM calls (MPIX_Comm_revoke, MPIX_Comm_shrink,
 * MPIX_Comm_agree): builds with ftmpicc and Open MPI 5's mpicc.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 4096, STEPS = 200, K = 20 };
static const double C = 0.25;

typedef struct {
    MPI_Comm comm;
    int rank, size;
    int lo, n;       /* this rank's first global cell and cell count */
    double *u, *tmp; /* n cells plus one halo cell on each side */
} Domain;

static double initial(int i) { return (i % 97) * 0.5 + (i % 13 == 0 ? 100.0 : 0.0); }

static void distribute(Domain *d) {
    MPI_Comm_rank(d->comm, &d->rank);
    MPI_Comm_size(d->comm, &d->size);
    int base = N / d->size, extra = N % d->size;
    d->n = base + (d->rank < extra);
    d->lo = d->rank * base + (d->rank < extra ? d->rank : extra);
    free(d->u);
    free(d->tmp);
    d->u = calloc((size_t)d->n + 2, sizeof(double));
    d->tmp = calloc((size_t)d->n + 2, sizeof(double));
}

/* One step: halo exchange (fixed boundaries at 0), then the update. */
static int step(Domain *d) {
    int left = d->rank > 0 ? d->rank - 1 : MPI_PROC_NULL;
    int right = d->rank < d->size - 1 ? d->rank + 1 : MPI_PROC_NULL;
    d->u[0] = d->u[d->n + 1] = 0.0;
    int rc = MPI_Sendrecv(&d->u[1], 1, MPI_DOUBLE, left, 0, &d->u[d->n + 1], 1, MPI_DOUBLE, right, 0, d->comm,
                          MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = MPI_Sendrecv(&d->u[d->n], 1, MPI_DOUBLE, right, 1, &d->u[0], 1, MPI_DOUBLE, left, 1, d->comm,
                          MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
    for (int i = 1; i <= d->n; ++i) d->tmp[i] = d->u[i] + C * (d->u[i - 1] - 2.0 * d->u[i] + d->u[i + 1]);
    double *t = d->u;
    d->u = d->tmp;
    d->tmp = t;
    return MPI_SUCCESS;
}

static void ckpt_path(char *out, size_t len, const char *dir, int which) {
    snprintf(out, len, "%s/ckpt.%d", dir, which);
}

/* Keeps the first error in *rc. */
static void keep(int *rc, int r) {
    if (*rc == MPI_SUCCESS) *rc = r;
}

/* Writes the state after `done` steps into checkpoint file `which`: the cells
   at offset 8 + 8*global index, then the header. Every process makes every
   collective call whatever failed before (a process that skipped one would
   leave the others waiting), and the header goes in only when all agree
   that the data and its sync succeeded everywhere. */
static int checkpoint(Domain *d, const char *dir, int which, int done) {
    char path[512];
    ckpt_path(path, sizeof path, dir, which);
    MPI_File fh;
    int rc = MPI_File_open(d->comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) return rc; /* the outcome of open is the same everywhere */
    long long header = -1;            /* invalid while the data is being replaced */
    if (d->rank == 0) keep(&rc, MPI_File_write_at(fh, 0, &header, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE));
    keep(&rc, MPI_File_sync(fh));
    keep(&rc, MPI_File_write_at_all(fh, 8 + 8 * (MPI_Offset)d->lo, &d->u[1], d->n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    keep(&rc, MPI_File_sync(fh));
    int ok = rc == MPI_SUCCESS;
    keep(&rc, MPIX_Comm_agree(d->comm, &ok));
    header = done;
    if (ok && d->rank == 0) keep(&rc, MPI_File_write_at(fh, 0, &header, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE));
    keep(&rc, MPI_File_sync(fh));
    keep(&rc, MPI_File_close(&fh));
    return rc != MPI_SUCCESS ? rc : ok ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* Restores the newest good checkpoint with d's distribution; returns its
   step (0 and the initial state when there is none). Every process makes the
   same calls; the choice of checkpoint is agreed. */
static int restore(Domain *d, const char *dir, int *rc_out) {
    long long best = 0;
    int best_file = -1, rc = MPI_SUCCESS;
    for (int which = 0; which < 2; ++which) {
        char path[512];
        ckpt_path(path, sizeof path, dir, which);
        MPI_File fh;
        if (MPI_File_open(d->comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) continue;
        long long header = -1;
        int r = MPI_File_read_at_all(fh, 0, &header, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE);
        keep(&rc, r);
        if (r == MPI_SUCCESS && header > best) {
            best = header;
            best_file = which;
        }
        keep(&rc, MPI_File_close(&fh));
    }
    int ok = rc == MPI_SUCCESS;
    keep(&rc, MPIX_Comm_agree(d->comm, &ok));
    if (ok && best_file >= 0) {
        char path[512];
        ckpt_path(path, sizeof path, dir, best_file);
        MPI_File fh;
        int r = MPI_File_open(d->comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        keep(&rc, r);
        if (r == MPI_SUCCESS) {
            keep(&rc,
                 MPI_File_read_at_all(fh, 8 + 8 * (MPI_Offset)d->lo, &d->u[1], d->n, MPI_DOUBLE, MPI_STATUS_IGNORE));
            keep(&rc, MPI_File_close(&fh));
        }
    } else if (ok) {
        for (int i = 0; i < d->n; ++i) d->u[i + 1] = initial(d->lo + i);
    }
    *rc_out = rc != MPI_SUCCESS ? rc : ok ? MPI_SUCCESS : MPI_ERR_OTHER;
    return (int)best;
}

/* Gathers the result at rank 0 and compares it with a serial run: 0 when
   they match (at rank 0; 0 elsewhere). */
static int check_result(const Domain *d, int recoveries) {
    int *counts = NULL, *displs = NULL;
    double *all = NULL;
    if (d->rank == 0) {
        counts = malloc(sizeof(int) * (size_t)d->size);
        displs = malloc(sizeof(int) * (size_t)d->size);
        all = malloc(sizeof(double) * N);
    }
    MPI_Gather(&d->n, 1, MPI_INT, counts, 1, MPI_INT, 0, d->comm);
    MPI_Gather(&d->lo, 1, MPI_INT, displs, 1, MPI_INT, 0, d->comm);
    MPI_Gatherv(&d->u[1], d->n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, d->comm);
    int status = 0;
    if (d->rank == 0) {
        double *u = calloc(N + 2, sizeof(double)), *t = calloc(N + 2, sizeof(double));
        for (int i = 0; i < N; ++i) u[i + 1] = initial(i);
        for (int k = 0; k < STEPS; ++k) {
            for (int i = 1; i <= N; ++i) t[i] = u[i] + C * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
            double *x = u;
            u = t;
            t = x;
        }
        int bad = 0;
        for (int i = 0; i < N; ++i) bad += all[i] != u[i + 1];
        printf("%d steps on %d ranks after %d recover%s: %s\n", STEPS, d->size, recoveries,
               recoveries == 1 ? "y" : "ies", bad == 0 ? "result matches the serial run" : "RESULT DIFFERS");
        status = bad != 0;
        free(u);
        free(t);
    }
    free(counts);
    free(displs);
    free(all);
    return status;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int world_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    char dir[256] = "";
    int victim = -1, kill_step = -1, own_dir = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) {
            snprintf(dir, sizeof dir, "%s", argv[++i]);
        } else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc && sscanf(argv[++i], "%d:%d", &victim, &kill_step) == 2) {
        } else {
            if (world_rank == 0) fprintf(stderr, "usage: %s [-d DIR] [-k VICTIM:STEP]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (dir[0] == '\0') { /* a fresh directory, named by rank 0 */
        own_dir = 1;
        if (world_rank == 0) {
            snprintf(dir, sizeof dir, "/tmp/ftmpi-checkpoint-XXXXXX");
            if (mkdtemp(dir) == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    }

    Domain d = {0};
    MPI_Comm_dup(MPI_COMM_WORLD, &d.comm);
    MPI_Comm_set_errhandler(d.comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    distribute(&d);
    int rc = MPI_SUCCESS;
    int s = restore(&d, dir, &rc);
    int recoveries = 0, which = 0;
    while (s < STEPS || rc != MPI_SUCCESS) {
        if (rc == MPI_SUCCESS) {
            if (world_rank == victim && s == kill_step) raise(SIGKILL);
            rc = step(&d);
            if (rc == MPI_SUCCESS && ++s % K == 0) {
                rc = checkpoint(&d, dir, which, s);
                which ^= 1;
            }
        }
        /* A process that saw an error revokes the communicator first: that
           interrupts the others wherever they are blocked on it (a halo
           exchange, a checkpoint's open). Then everyone learns whether the
           round went well everywhere. */
        if (rc != MPI_SUCCESS) MPIX_Comm_revoke(d.comm);
        int ok = rc == MPI_SUCCESS;
        int arc = MPIX_Comm_agree(d.comm, &ok);
        if (arc == MPI_SUCCESS && ok) continue;
        /* A failure: the survivors go on over a shrunk communicator from
           the last good checkpoint. */
        MPIX_Comm_revoke(d.comm);
        MPI_Comm shrunk;
        if (MPIX_Comm_shrink(d.comm, &shrunk) != MPI_SUCCESS) {
            fprintf(stderr, "rank %d: shrink failed\n", world_rank);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        MPI_Comm_free(&d.comm);
        d.comm = shrunk;
        MPI_Comm_set_errhandler(d.comm, MPI_ERRORS_RETURN);
        distribute(&d);
        s = restore(&d, dir, &rc);
        which = (s / K) % 2; /* the file after the restored one is older */
        ++recoveries;
        if (d.rank == 0) printf("recovered on %d ranks from the checkpoint of step %d\n", d.size, s);
    }

    /* Gather the result and compare it with a serial run. */
    int status = check_result(&d, recoveries);
    MPI_Bcast(&status, 1, MPI_INT, 0, d.comm);
    if (own_dir && d.rank == 0) {
        for (int which = 0; which < 2; ++which) {
            char path[512];
            ckpt_path(path, sizeof path, dir, which);
            MPI_File_delete(path, MPI_INFO_NULL);
        }
        if (rmdir(dir) != 0) status = 1;
    }
    free(d.u);
    free(d.tmp);
    MPI_Comm_free(&d.comm);
    MPI_Finalize();
    return status;
}
