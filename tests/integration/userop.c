/*
 * A user-defined op (MPI_Op_create) on a derived struct type with holes,
 * through MPI_Allreduce, MPI_Reduce at every root and MPI_Scan: the function
 * sees whole elements in the type's memory layout.
 */
#include <stddef.h>

#include "testlib.h"

typedef struct {
    char tag;
    double sum;
    int count;
} Acc;

static void add(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    const Acc *a = in;
    Acc *b = inout;
    for (int i = 0; i < *len; ++i) {
        b[i].sum += a[i].sum;
        b[i].count += a[i].count;
        b[i].tag = 'x';
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {offsetof(Acc, tag), offsetof(Acc, sum), offsetof(Acc, count)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, acc, accr;
    MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &acc));
    MPI_OK(MPI_Type_create_resized(acc, 0, sizeof(Acc), &accr));
    MPI_OK(MPI_Type_commit(&accr));
    MPI_Op op;
    MPI_OK(MPI_Op_create(add, 1, &op));

    Acc in[2] = {{'a', rank + 0.5, 1}, {'b', 2.0 * rank, rank}}, out[2];
    double s0 = 0, s1 = 0;
    int c1 = 0;
    for (int r = 0; r < size; ++r) {
        s0 += r + 0.5;
        s1 += 2.0 * r;
        c1 += r;
    }
    MPI_OK(MPI_Allreduce(in, out, 2, accr, op, MPI_COMM_WORLD));
    CHECK(out[0].sum == s0 && out[0].count == size, "allreduce[0] = %g/%d", out[0].sum, out[0].count);
    CHECK(out[1].sum == s1 && out[1].count == c1, "allreduce[1] = %g/%d", out[1].sum, out[1].count);
    for (int root = 0; root < size; ++root) {
        Acc r[2] = {{0, -1, -1}, {0, -1, -1}};
        MPI_OK(MPI_Reduce(in, r, 2, accr, op, root, MPI_COMM_WORLD));
        if (rank == root)
            CHECK(r[0].sum == s0 && r[1].count == c1, "reduce at root %d: %g/%d", root, r[0].sum, r[1].count);
    }
    Acc sc[2];
    MPI_OK(MPI_Scan(in, sc, 2, accr, op, MPI_COMM_WORLD));
    double p0 = 0;
    for (int r = 0; r <= rank; ++r) p0 += r + 0.5;
    CHECK(sc[0].sum == p0 && sc[0].count == rank + 1, "scan: %g/%d", sc[0].sum, sc[0].count);

    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&accr));
    MPI_OK(MPI_Type_free(&acc));
    if (rank == 0) printf("userop: a user op on a struct type reduced correctly on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
