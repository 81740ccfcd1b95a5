/*
 * ftmpi extensions, as Open MPI's mpi-ext.h: the feature macros that
 * Open MPI 5's ULFM programs test. Everything they announce (the MPIX_ error
 * classes, MPIX_FT and the MPIX_Comm_* calls) is declared in mpi.h, so
 * programs written for MPICH, which include only mpi.h, compile too.
 */
#ifndef FTMPI_MPI_EXT_H
#define FTMPI_MPI_EXT_H

#include <mpi.h>

#define OMPI_HAVE_MPI_EXT_FTMPI 1
#define OMPI_HAVE_MPIX_COMM_GET_FAILED 1
#define OMPI_HAVE_MPIX_COMM_ACK_FAILED 1
#define OMPI_HAVE_MPIX_COMM_ISHRINK 1

#endif /* FTMPI_MPI_EXT_H */
