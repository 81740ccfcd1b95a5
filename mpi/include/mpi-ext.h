/*
 * ftmpi extensions: the ULFM interface that Open MPI 5 and MPICH programs use.
 *
 * The error classes are the same classes as the MPI_ERR_* names in mpi.h.
 * The feature macros are Open MPI's, so programs that test for them compile
 * unchanged.
 */
#ifndef FTMPI_MPI_EXT_H
#define FTMPI_MPI_EXT_H

#include <mpi.h>

#define MPIX_ERR_PROC_FAILED MPI_ERR_PROC_FAILED
#define MPIX_ERR_PROC_FAILED_PENDING MPI_ERR_PROC_FAILED_PENDING
#define MPIX_ERR_REVOKED MPI_ERR_REVOKED

#define OMPI_HAVE_MPI_EXT_FTMPI 1
#define OMPI_HAVE_MPIX_COMM_GET_FAILED 1
#define OMPI_HAVE_MPIX_COMM_ACK_FAILED 1
#define OMPI_HAVE_MPIX_COMM_ISHRINK 1

#ifdef __cplusplus
extern "C" {
#endif

/* Failure acknowledgement and queries. */
int MPIX_Comm_failure_ack(MPI_Comm comm);
int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);
int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);

/* Recovery (intra-communicators; on inter-communicators they return
 * MPI_ERR_UNSUPPORTED_OPERATION for now). */
int MPIX_Comm_revoke(MPI_Comm comm);
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag);
int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int MPIX_Comm_agree(MPI_Comm comm, int *flag);
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);

#ifdef __cplusplus
}
#endif

#endif /* FTMPI_MPI_EXT_H */
