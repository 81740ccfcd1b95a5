/*
 * An Open-MPI-style ULFM program: it includes mpi.h and mpi-ext.h, tests
 * Open MPI's feature macros, and asks MPIX_FT whether fault tolerance is on
 * (built with -pedantic and -Werror, like ulfm_mpich.c).
 *
 * Checks, in a run without failures:
 *   - MPIX_FT on MPI_COMM_WORLD: flag 1 and a value (int) of 1; the same on a
 *     dup and on MPI_COMM_SELF (ftmpi sets the predefined attributes on
 *     every communicator); MPIX_FT cannot be set or deleted (MPI_ERR_KEYVAL);
 *   - the calls each OMPI_HAVE_ macro announces, with no failure: get_failed
 *     is empty, ack_failed acknowledges 0, ishrink keeps every rank, iagree
 *     ANDs the flags.
 * Rank 0 prints "ulfm_ompi: MPIX_FT=1" (checked by the harness).
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>

#include "testlib.h"

#if !defined(OMPI_HAVE_MPI_EXT_FTMPI) || !OMPI_HAVE_MPI_EXT_FTMPI
#error "mpi-ext.h does not announce the ULFM extension (OMPI_HAVE_MPI_EXT_FTMPI)"
#endif

static int ft_attribute(MPI_Comm comm) {
    int *value = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(comm, MPIX_FT, &value, &flag));
    CHECK(flag == 1, "MPIX_FT attribute not set (flag %d)", flag);
    CHECK(value != NULL, "MPIX_FT attribute value is a null pointer");
    return *value;
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 1);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* argv[1]: the value expected (0 under ftmpirun --no-ft) */
    const int want = argc > 1 ? atoi(argv[1]) : 1;
    const int ft = ft_attribute(MPI_COMM_WORLD);
    CHECK(ft == want, "MPIX_FT = %d, expected %d", ft, want);
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    CHECK(ft_attribute(dup) == ft, "MPIX_FT on a dup differs");
    CHECK(ft_attribute(MPI_COMM_SELF) == ft, "MPIX_FT on MPI_COMM_SELF differs");
    static int mine = 0;
    CHECK(tl_class_of(MPI_Comm_set_attr(dup, MPIX_FT, &mine)) == MPI_ERR_KEYVAL, "MPIX_FT was settable");
    CHECK(tl_class_of(MPI_Comm_delete_attr(dup, MPIX_FT)) == MPI_ERR_KEYVAL, "MPIX_FT was deletable");

#if OMPI_HAVE_MPIX_COMM_GET_FAILED
    {
        MPI_Group failed;
        int n = -1;
        MPI_OK(MPIX_Comm_get_failed(dup, &failed));
        MPI_OK(MPI_Group_size(failed, &n));
        CHECK(n == 0, "%d failures in a run without failures", n);
        if (failed != MPI_GROUP_EMPTY) MPI_OK(MPI_Group_free(&failed));
    }
#else
#error "OMPI_HAVE_MPIX_COMM_GET_FAILED is missing"
#endif
#if OMPI_HAVE_MPIX_COMM_ACK_FAILED
    {
        int acked = -1;
        MPI_OK(MPIX_Comm_ack_failed(dup, size, &acked));
        CHECK(acked == 0, "acknowledged %d failures in a run without failures", acked);
    }
#else
#error "OMPI_HAVE_MPIX_COMM_ACK_FAILED is missing"
#endif
#if OMPI_HAVE_MPIX_COMM_ISHRINK
    {
        MPI_Comm shrunk;
        MPI_Request req;
        int n = 0;
        MPI_OK(MPIX_Comm_ishrink(dup, &shrunk, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_size(shrunk, &n));
        CHECK(n == size, "ishrink without failures kept %d of %d ranks", n, size);
        int flag = rank == 0 ? 0x3 : 0x1, revoked = 1;
        MPI_OK(MPIX_Comm_iagree(shrunk, &flag, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(flag == (size == 1 ? 0x3 : 0x1), "iagree: flag %#x", (unsigned)flag);
        MPI_OK(MPIX_Comm_is_revoked(shrunk, &revoked));
        CHECK(revoked == 0, "a fresh communicator is revoked");
        MPI_OK(MPI_Comm_free(&shrunk));
    }
#else
#error "OMPI_HAVE_MPIX_COMM_ISHRINK is missing"
#endif

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        printf("ulfm_ompi: MPIX_FT=%d\n", ft);
        fflush(stdout);
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
