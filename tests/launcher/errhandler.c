/* The initial error handler (ftmpirun -initial-errhandler, FTMPI_ERRHANDLER).
 *   errhandler preinit  an invalid call before MPI_Init, then init and finalize
 *   errhandler send     an MPI_Send to an invalid rank after MPI_Init
 * Each call that returns prints "rank R: CALL returned CLASS"; the program
 * then names MPI_COMM_WORLD's and MPI_COMM_SELF's handlers and finalizes. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char *handler_name(MPI_Errhandler h) {
    if (h == MPI_ERRORS_ARE_FATAL) return "MPI_ERRORS_ARE_FATAL";
    if (h == MPI_ERRORS_RETURN) return "MPI_ERRORS_RETURN";
    if (h == MPI_ERRORS_ABORT) return "MPI_ERRORS_ABORT";
    return "other";
}

static void report(int rank, const char *call, int rc) {
    char name[MPI_MAX_ERROR_STRING];
    int cls = -1, len = 0;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_SUCCESS) strcpy(name, "MPI_SUCCESS");
    else if (cls == MPI_ERR_RANK) strcpy(name, "MPI_ERR_RANK");
    else if (cls == MPI_ERR_OTHER) strcpy(name, "MPI_ERR_OTHER");
    else MPI_Error_string(rc, name, &len);
    printf("rank %d: %s returned %s\n", rank, call, name);
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "send";
    int rank = -1, size = 0, x = 0;
    if (strcmp(mode, "preinit") == 0) report(-1, "MPI_Comm_rank", MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(mode, "send") == 0) report(rank, "MPI_Send", MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD));
    MPI_Errhandler world, self;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    printf("rank %d: world %s self %s\n", rank, handler_name(world), handler_name(self));
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
