! The ULFM program of ulfm.F90 through `use mpi_f08` and `use mpi_f08_ext`
! (Open MPI 5's module names): the last rank kills itself with SIGKILL; the
! others see MPIX_ERR_PROC_FAILED, revoke, shrink (also nonblocking), agree
! and acknowledge. The new communicator's rank 0 prints "ulfm f08: N survivors agreed".
program ulfm_f08
  use testlib
  use mpi_f08
  use mpi_f08_ext
  implicit none
  type(MPI_Comm) :: priv, shrunk, shrunk2
  type(MPI_Group) :: acked
  type(MPI_Request) :: req
  integer :: rc, rank, nprocs, victim, srank, ssize, flag, x, cls, nacked
  logical :: revoked

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Comm_dup(MPI_COMM_WORLD, priv)
  victim = nprocs - 1
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == victim) call die()

  call MPI_Recv(x, 1, MPI_INTEGER, victim, 0, priv, MPI_STATUS_IGNORE, rc)
  call MPI_Error_class(rc, cls)
  call check(cls == MPIX_ERR_PROC_FAILED, 'receive from the dead rank', cls)
  rc = MPI_SUCCESS
  do while (rc == MPI_SUCCESS)
    call MPI_Barrier(MPI_COMM_WORLD, rc)
  end do
  call MPI_Error_class(rc, cls)
  call check(cls == MPIX_ERR_PROC_FAILED .or. cls == MPIX_ERR_REVOKED, 'barrier with a dead member', cls)
  call MPIX_Comm_revoke(MPI_COMM_WORLD, rc)
  call check(rc == MPI_SUCCESS, 'revoke', rc)
  call MPIX_Comm_is_revoked(MPI_COMM_WORLD, revoked)
  call check(revoked, 'is_revoked')
  call MPI_Barrier(MPI_COMM_WORLD, rc)
  call MPI_Error_class(rc, cls)
  call check(cls == MPIX_ERR_REVOKED, 'barrier on the revoked communicator', cls)

  call MPIX_Comm_shrink(MPI_COMM_WORLD, shrunk, rc)
  call check(rc == MPI_SUCCESS, 'shrink', rc)
  call MPI_Comm_rank(shrunk, srank)
  call MPI_Comm_size(shrunk, ssize)
  call check(ssize == nprocs - 1, 'size of the shrunk communicator', ssize)
  flag = not(ishft(1, srank))
  call MPIX_Comm_agree(shrunk, flag, rc)
  call check(rc == MPI_SUCCESS .and. flag == not(ishft(1, ssize) - 1), 'agreed flag', flag)
  call MPIX_Comm_ishrink(priv, shrunk2, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE, rc)
  call MPI_Comm_size(shrunk2, x)
  call check(rc == MPI_SUCCESS .and. x == nprocs - 1, 'ishrink', x)

  call MPIX_Comm_failure_ack(priv)
  call MPIX_Comm_failure_get_acked(priv, acked)
  call MPI_Group_size(acked, nacked)
  call check(nacked == 1, 'acknowledged failures', nacked)
  call MPI_Group_free(acked)

  call MPI_Allreduce(1, x, 1, MPI_INTEGER, MPI_SUM, shrunk, rc)
  call check(rc == MPI_SUCCESS .and. x == ssize, 'allreduce on the shrunk communicator', x)
  if (srank == 0) then
    print '(a,i0,a)', 'ulfm f08: ', ssize, ' survivors agreed'
    flush(6)
  end if
  call MPI_Comm_free(shrunk2)
  call MPI_Comm_free(shrunk)
  call MPI_Comm_free(priv)
  call MPI_Finalize()
end program ulfm_f08
