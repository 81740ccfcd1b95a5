/* The stress program's checked operations of a round, on comm (see stress.c). */
#include "stress.h"

int ring_on(MPI_Comm c, int bytes, int tag) {
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    const int count = bytes / (int)sizeof(int);
    int *out = malloc(sizeof(int) * count), *in = malloc(sizeof(int) * count);
    for (int i = 0; i < count; ++i) out[i] = val(r, i), in[i] = -1;
    const int to = (r + 1) % n, from = (r + n - 1) % n;
    MPI_Request q;
    int failed = check_rc(MPI_Irecv(in, count, MPI_INT, from, tag, c, &q), "Irecv");
    if (!failed) failed |= check_rc(MPI_Send(out, count, MPI_INT, to, tag, c), "Send");
    if (!failed) failed |= check_rc(MPI_Wait(&q, MPI_STATUS_IGNORE), "Wait");
    else {
        /* The receive may still be posted: cancel it so its buffer can go. */
        MPI_Cancel(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    if (!failed)
        for (int i = 0; i < count; ++i)
            if (in[i] != val(from, i)) {
                wrong("ring", i, in[i], val(from, i));
                break;
            }
    free(out);
    free(in);
    return failed;
}

int ring(int bytes) { return ring_on(comm, bytes, 40 + round_no % 8); }

int allreduce(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int *a = malloc(sizeof(int) * count), *b = malloc(sizeof(int) * count);
    for (int i = 0; i < count; ++i) a[i] = val(r, i), b[i] = -1;
    int failed = check_rc(MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, comm), "Allreduce");
    for (int i = 0; !failed && i < count; ++i) {
        long want = 0;
        for (int k = 0; k < n; ++k) want += val(k, i);
        if (b[i] != want) {
            wrong("allreduce", i, b[i], want);
            break;
        }
    }
    free(a);
    free(b);
    return failed;
}

int bcast(int bytes) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    const int root = round_no % n, count = bytes / (int)sizeof(int);
    int *a = malloc(sizeof(int) * count);
    for (int i = 0; i < count; ++i) a[i] = r == root ? val(root, i) : -1;
    int failed = check_rc(MPI_Bcast(a, count, MPI_INT, root, comm), "Bcast");
    for (int i = 0; !failed && i < count; ++i)
        if (a[i] != val(root, i)) {
            wrong("bcast", i, a[i], val(root, i));
            break;
        }
    free(a);
    return failed;
}

int reduce_max(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    const int root = (round_no + 1) % n;
    int *a = malloc(sizeof(int) * count), *b = malloc(sizeof(int) * count);
    for (int i = 0; i < count; ++i) a[i] = val(r, i), b[i] = -1;
    int failed = check_rc(MPI_Reduce(a, b, count, MPI_INT, MPI_MAX, root, comm), "Reduce");
    for (int i = 0; !failed && r == root && i < count; ++i)
        if (b[i] != val(n - 1, i)) {
            wrong("reduce", i, b[i], val(n - 1, i));
            break;
        }
    free(a);
    free(b);
    return failed;
}

int allgather(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int *a = malloc(sizeof(int) * count), *b = malloc(sizeof(int) * count * n);
    for (int i = 0; i < count; ++i) a[i] = val(r, i);
    int failed = check_rc(MPI_Allgather(a, count, MPI_INT, b, count, MPI_INT, comm), "Allgather");
    for (int k = 0; !failed && k < n; ++k)
        for (int i = 0; i < count; ++i)
            if (b[k * count + i] != val(k, i)) {
                wrong("allgather", k * count + i, b[k * count + i], val(k, i));
                k = n;
                break;
            }
    free(a);
    free(b);
    return failed;
}

int alltoall(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int *a = malloc(sizeof(int) * count * n), *b = malloc(sizeof(int) * count * n);
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < count; ++i) a[k * count + i] = val(r, i + k);
    int failed = check_rc(MPI_Alltoall(a, count, MPI_INT, b, count, MPI_INT, comm), "Alltoall");
    for (int k = 0; !failed && k < n; ++k)
        for (int i = 0; i < count; ++i)
            if (b[k * count + i] != val(k, i + r)) {
                wrong("alltoall", k * count + i, b[k * count + i], val(k, i + r));
                k = n;
                break;
            }
    free(a);
    free(b);
    return failed;
}

int scan_sum(void) {
    int r, x, y = -1;
    MPI_Comm_rank(comm, &r);
    x = val(r, 0);
    int failed = check_rc(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, comm), "Scan");
    long want = 0;
    for (int k = 0; k <= r; ++k) want += val(k, 0);
    if (!failed && y != want) wrong("scan", 0, y, want);
    return failed;
}

int gather_scatter(int count) {
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    const int root = (round_no + 2) % n;
    int *a = malloc(sizeof(int) * count), *all = malloc(sizeof(int) * count * n);
    for (int i = 0; i < count; ++i) a[i] = val(r, i);
    int failed = check_rc(MPI_Gather(a, count, MPI_INT, all, count, MPI_INT, root, comm), "Gather");
    for (int k = 0; !failed && r == root && k < n; ++k)
        for (int i = 0; i < count; ++i)
            if (all[k * count + i] != val(k, i)) {
                wrong("gather", k * count + i, all[k * count + i], val(k, i));
                k = n;
                break;
            }
    if (!failed) {
        for (int i = 0; i < count; ++i) a[i] = -1;
        failed = check_rc(MPI_Scatter(all, count, MPI_INT, a, count, MPI_INT, root, comm), "Scatter");
        for (int i = 0; !failed && i < count; ++i)
            if (a[i] != val(r, i)) {
                wrong("scatter", i, a[i], val(r, i));
                break;
            }
    }
    free(a);
    free(all);
    return failed;
}

int dup_barrier(void) {
    MPI_Comm d;
    if (check_rc(MPI_Comm_dup(comm, &d), "Comm_dup")) return 1;
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    int failed = check_rc(MPI_Barrier(d), "Barrier");
    MPI_Comm_free(&d);
    return failed;
}
