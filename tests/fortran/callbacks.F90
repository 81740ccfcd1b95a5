! Callbacks written in Fortran, through `use mpi` (or, with -DMPIFH, mpif.h):
! user ops (commutative, and not: MPI_Reduce and MPI_Scan keep rank order)
! on DOUBLE PRECISION and on a derived type, a communicator error handler,
! attribute copy and delete functions (and MPI_COMM_DUP_FN,
! MPI_COMM_NULL_COPY_FN), a generalized request, and MPI_Comm_idup's
! handle, written when its request completes.
module cb_state
  implicit none
  integer :: handler_calls = 0, handler_code = 0, handler_comm = -1
  integer :: deletes = 0, pair_type = -1, query_calls = 0, free_calls = 0
end module cb_state

#include "bindings.inc"

program callbacks
  use testlib
  use cb_state
#ifndef MPIFH
  use mpi
#endif
  implicit none
#ifdef MPIFH
  include 'mpif.h'
#endif
  external :: dsum, first, pair_sum, on_error, copy_plus_one, count_delete, gq_query, gq_free, gq_cancel
  integer :: ierr, rank, nprocs, op_sum, op_first, op_pair, eh, dup1, dup2, dup3, kv, kv_dup, kv_null, rc, req
  integer :: newcomm, n, status(MPI_STATUS_SIZE)
  double precision :: pairs(2, 2), pres(2, 2)
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: flag
  double precision :: x(3), y(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  ! user ops
  call MPI_Op_create(dsum, .true., op_sum, ierr)
  call MPI_Op_create(first, .false., op_first, ierr)
  x = [dble(rank), 1d0, 2d0 * rank]
  call MPI_Allreduce(x, y, 3, MPI_DOUBLE_PRECISION, op_sum, MPI_COMM_WORLD, ierr)
  call check(nint(y(1)) == nprocs * (nprocs - 1) / 2 .and. nint(y(2)) == nprocs, 'allreduce with a user op')
  call MPI_Reduce(x, y, 3, MPI_DOUBLE_PRECISION, op_first, nprocs - 1, MPI_COMM_WORLD, ierr)
  if (rank == nprocs - 1) call check(all(nint(y) == [0, 1, 0]), 'reduce with a non-commutative op')
  call MPI_Scan(x, y, 3, MPI_DOUBLE_PRECISION, op_first, MPI_COMM_WORLD, ierr)
  call check(all(nint(y) == [0, 1, 0]), 'scan with a non-commutative op')
  call MPI_Type_contiguous(2, MPI_DOUBLE_PRECISION, pair_type, ierr)
  call MPI_Type_commit(pair_type, ierr)
  call MPI_Op_create(pair_sum, .true., op_pair, ierr)
  pairs = reshape([dble(rank), 1d0, 10d0 * rank, 2d0], [2, 2])
  call MPI_Allreduce(pairs, pres, 2, pair_type, op_pair, MPI_COMM_WORLD, ierr)
  call check(nint(pres(1, 1)) == nprocs * (nprocs - 1) / 2 .and. nint(pres(2, 2)) == 2 * nprocs, &
             'user op on a derived type')
  call MPI_Op_free(op_sum, ierr)
  call MPI_Op_free(op_first, ierr)
  call MPI_Op_free(op_pair, ierr)
  call MPI_Type_free(pair_type, ierr)

  ! an error handler
  call MPI_Comm_dup(MPI_COMM_WORLD, dup1, ierr)
  call MPI_Comm_create_errhandler(on_error, eh, ierr)
  call MPI_Comm_set_errhandler(dup1, eh, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, nprocs + 3, 0, dup1, rc)
  call check(handler_calls == 1 .and. handler_comm == dup1 .and. rc == handler_code, 'error handler called')
  call MPI_Error_class(rc, n, ierr)
  call check(n == MPI_ERR_RANK, 'error class in the handler')

  ! attributes
  extra = 7
  call MPI_Comm_create_keyval(copy_plus_one, count_delete, kv, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv_dup, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv_null, extra, ierr)
  val = 41
  call MPI_Comm_set_attr(dup1, kv, val, ierr)
  val = 1234567890123_MPI_ADDRESS_KIND
  call MPI_Comm_set_attr(dup1, kv_dup, val, ierr)
  call MPI_Comm_set_attr(dup1, kv_null, val, ierr)
  call MPI_Comm_dup(dup1, dup2, ierr)
  call MPI_Comm_get_attr(dup2, kv, val, flag, ierr)
  call check(flag .and. val == 42, 'copy function')
  call MPI_Comm_get_attr(dup2, kv_dup, val, flag, ierr)
  call check(flag .and. val == 1234567890123_MPI_ADDRESS_KIND, 'MPI_COMM_DUP_FN')
  call MPI_Comm_get_attr(dup2, kv_null, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup2, ierr)
  call check(deletes == 1, 'delete function on free')
  call MPI_Comm_delete_attr(dup1, kv, ierr)
  call check(deletes == 2, 'delete function on delete_attr')
  call MPI_Comm_free_keyval(kv, ierr)
  call MPI_Comm_free_keyval(kv_dup, ierr)
  call MPI_Comm_free_keyval(kv_null, ierr)

  ! a generalized request
  extra = 99
  call MPI_Grequest_start(gq_query, gq_free, gq_cancel, extra, req, ierr)
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call check(ierr == MPI_SUCCESS .and. status(MPI_TAG) == 99 .and. query_calls == 1 .and. free_calls == 1 &
             .and. req == MPI_REQUEST_NULL, 'generalized request')

  ! a handle written at completion
  call MPI_Comm_idup(dup1, dup3, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Comm_size(dup3, n, ierr)
  call check(ierr == MPI_SUCCESS .and. n == nprocs, 'MPI_Comm_idup')
  call MPI_Comm_idup(dup3, newcomm, req, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Comm_compare(newcomm, dup3, n, ierr)
  call check(n == MPI_CONGRUENT, 'MPI_Comm_idup completed by MPI_Test')
  call MPI_Comm_free(newcomm, ierr)
  call MPI_Comm_free(dup3, ierr)
  call MPI_Comm_free(dup1, ierr)

  if (rank == 0) print '(a,i0,a)', 'callbacks: ', nprocs, ' ranks passed'
  call MPI_Finalize(ierr)

end program callbacks

subroutine dsum(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype
  double precision :: invec(len), inoutvec(len)
  inoutvec = invec + inoutvec
  if (datatype == 0) inoutvec = -1
end subroutine dsum

! op(a, b) = a: not commutative; a reduction keeps the lowest rank's value
subroutine first(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype
  double precision :: invec(len), inoutvec(len)
  inoutvec = invec
  if (datatype == 0) inoutvec = -1
end subroutine first

subroutine pair_sum(invec, inoutvec, len, datatype)
  use cb_state
  implicit none
  integer :: len, datatype
  double precision :: invec(2, len), inoutvec(2, len)
  if (datatype /= pair_type) then
    inoutvec = -1000
  else
    inoutvec = invec + inoutvec
  end if
end subroutine pair_sum

subroutine on_error(comm, code)
  use cb_state
  implicit none
  integer :: comm, code
  handler_calls = handler_calls + 1
  handler_code = code
  handler_comm = comm
end subroutine on_error

subroutine copy_plus_one(oldcomm, keyval, extra, val_in, val_out, flag, ierr)
  MPI_MODULE
  implicit none
  MPI_HEADER
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
  logical :: flag
  val_out = val_in + 1
  flag = extra == 7 .and. oldcomm /= MPI_COMM_NULL .and. keyval /= MPI_KEYVAL_INVALID
  ierr = MPI_SUCCESS
end subroutine copy_plus_one

subroutine count_delete(comm, keyval, val, extra, ierr)
  use cb_state
  MPI_MODULE
  implicit none
  MPI_HEADER
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  if (extra == 7 .and. (val == 41 .or. val == 42) .and. comm /= MPI_COMM_NULL .and. keyval /= 0) &
    deletes = deletes + 1
  ierr = MPI_SUCCESS
end subroutine count_delete

subroutine gq_query(extra, status, ierr)
  use cb_state
  MPI_MODULE
  implicit none
  MPI_HEADER
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: status(MPI_STATUS_SIZE), ierr
  query_calls = query_calls + 1
  call MPI_Status_set_elements(status, MPI_INTEGER, 0, ierr)
  call MPI_Status_set_cancelled(status, .false., ierr)
  status(MPI_SOURCE) = MPI_UNDEFINED
  status(MPI_TAG) = int(extra)
  ierr = MPI_SUCCESS
end subroutine gq_query

subroutine gq_free(extra, ierr)
  use cb_state
  MPI_MODULE
  implicit none
  MPI_HEADER
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierr
  if (extra == 99) free_calls = free_calls + 1
  ierr = MPI_SUCCESS
end subroutine gq_free

subroutine gq_cancel(extra, complete, ierr)
  MPI_MODULE
  implicit none
  MPI_HEADER
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: ierr
  ierr = MPI_SUCCESS
  if (complete .and. extra < 0) ierr = MPI_ERR_OTHER
end subroutine gq_cancel
