/*
 * ftmpi extensions: the ULFM names that Open MPI 5 and MPICH programs use.
 *
 * The error classes are the same classes as the MPI_ERR_* names in mpi.h.
 * The MPIX_ fault-tolerance calls (revoke, agree, shrink, failure_ack, ...)
 * and their feature macros are added as they are implemented, so a program
 * that tests for them never links against a call ftmpi lacks.
 */
#ifndef FTMPI_MPI_EXT_H
#define FTMPI_MPI_EXT_H

#include <mpi.h>

#define MPIX_ERR_PROC_FAILED MPI_ERR_PROC_FAILED
#define MPIX_ERR_PROC_FAILED_PENDING MPI_ERR_PROC_FAILED_PENDING
#define MPIX_ERR_REVOKED MPI_ERR_REVOKED

#endif /* FTMPI_MPI_EXT_H */
