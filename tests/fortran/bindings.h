! The binding an external procedure of a test uses, as its program does:
! `use mpi`, or with -DMPIFH, mpif.h (after IMPLICIT NONE, where the module
! comes before it):
!   MPI_MODULE / IMPLICIT NONE / MPI_HEADER
#ifdef MPIFH
#define MPI_MODULE
#define MPI_HEADER include 'mpif.h'
#else
#define MPI_MODULE use mpi
#define MPI_HEADER
#endif
