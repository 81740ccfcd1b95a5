! A ULFM program in Fortran, as written for Open MPI 5: `use mpi` and
! `use mpi_ext` (or, with -DMPIFH, mpif.h and mpif-ext.h). The last rank
! kills itself with SIGKILL; the others see MPIX_ERR_PROC_FAILED, revoke,
! shrink, agree (an INTEGER flag, ANDed bitwise), acknowledge the failure
! and go on. The new communicator's rank 0 prints "ulfm: N survivors agreed".
program ulfm
  use testlib
#ifdef MPIFH
  implicit none
  include 'mpif.h'
  include 'mpif-ext.h'
#else
  use mpi
  use mpi_ext
  implicit none
#endif
  integer :: ierr, rc, rank, nprocs, victim, priv, shrunk, srank, ssize, flag, x, cls, acked, nacked
  logical :: revoked

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, priv, ierr)
  victim = nprocs - 1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == victim) call die()

  call MPI_Recv(x, 1, MPI_INTEGER, victim, 0, priv, MPI_STATUS_IGNORE, rc)
  call MPI_Error_class(rc, cls, ierr)
  call check(cls == MPIX_ERR_PROC_FAILED, 'receive from the dead rank', cls)

  rc = MPI_SUCCESS
  do while (rc == MPI_SUCCESS)
    call MPI_Barrier(MPI_COMM_WORLD, rc)
  end do
  call MPI_Error_class(rc, cls, ierr)
  call check(cls == MPIX_ERR_PROC_FAILED .or. cls == MPIX_ERR_REVOKED, 'barrier with a dead member', cls)
  call MPIX_Comm_revoke(MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'revoke', ierr)
  call MPIX_Comm_is_revoked(MPI_COMM_WORLD, revoked, ierr)
  call check(revoked, 'is_revoked', ierr)
  call MPI_Barrier(MPI_COMM_WORLD, rc)
  call MPI_Error_class(rc, cls, ierr)
  call check(cls == MPIX_ERR_REVOKED, 'barrier on the revoked communicator', cls)

  call MPIX_Comm_shrink(MPI_COMM_WORLD, shrunk, ierr)
  call check(ierr == MPI_SUCCESS, 'shrink', ierr)
  call MPI_Comm_rank(shrunk, srank, ierr)
  call MPI_Comm_size(shrunk, ssize, ierr)
  call check(ssize == nprocs - 1, 'size of the shrunk communicator', ssize)
  flag = not(ishft(1, srank))
  call MPIX_Comm_agree(shrunk, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag == not(ishft(1, ssize) - 1), 'agreed flag', flag)

  call MPIX_Comm_failure_ack(priv, ierr)
  call MPIX_Comm_failure_get_acked(priv, acked, ierr)
  call MPI_Group_size(acked, nacked, ierr)
  call check(nacked == 1, 'acknowledged failures', nacked)
  call MPI_Group_free(acked, ierr)

  call MPI_Allreduce(1, x, 1, MPI_INTEGER, MPI_SUM, shrunk, ierr)
  call check(ierr == MPI_SUCCESS .and. x == ssize, 'allreduce on the shrunk communicator', x)
  if (srank == 0) then
    print '(a,i0,a)', 'ulfm: ', ssize, ' survivors agreed'
    flush(6)
  end if
  call MPI_Comm_free(shrunk, ierr)
  call MPI_Comm_free(priv, ierr)
  call MPI_Finalize(ierr)

end program ulfm
