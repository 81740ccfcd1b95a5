! Callbacks written for `use mpi_f08`, with its interfaces (TYPE(C_PTR),
! VALUE vectors; TYPE(MPI_Comm) handles): user ops (commutative, and not,
! and a large-count one),
! an error handler, attribute copy and delete functions, MPI_COMM_DUP_FN,
! and MPI_Comm_idup's communicator written when MPI_Wait completes it.
module cb08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08
  implicit none
  integer :: handler_calls = 0, handler_code = 0, deletes = 0
  type(MPI_Comm) :: handler_comm
contains
  ! a user op's vectors as DOUBLE PRECISION arrays; none if the type is another
  logical function vectors(invec, inoutvec, len, datatype, a, b)
    type(c_ptr), intent(in) :: invec, inoutvec
    integer, intent(in) :: len
    type(MPI_Datatype), intent(in) :: datatype
    double precision, pointer, intent(out) :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    vectors = datatype == MPI_DOUBLE_PRECISION
    if (.not. vectors) b = -1
  end function vectors

  subroutine dsum(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    double precision, pointer :: a(:), b(:)
    if (vectors(invec, inoutvec, len, datatype, a, b)) b = a + b
  end subroutine dsum

  ! MPI_Op_create_c's: the length is an INTEGER(KIND=MPI_COUNT_KIND)
  subroutine dsum_c(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer(kind=MPI_COUNT_KIND) :: len
    type(MPI_Datatype) :: datatype
    double precision, pointer :: a(:), b(:)
    if (vectors(invec, inoutvec, int(len), datatype, a, b)) b = a + b
  end subroutine dsum_c

  ! op(a, b) = a: not commutative; a scan keeps rank 0's value
  subroutine first(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    double precision, pointer :: a(:), b(:)
    if (vectors(invec, inoutvec, len, datatype, a, b)) b = a
  end subroutine first

  subroutine on_error(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    handler_calls = handler_calls + 1
    handler_code = code
    handler_comm = comm
  end subroutine on_error

  subroutine copy_plus_one(oldcomm, keyval, extra, val_in, val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    val_out = val_in + 1
    flag = extra == 7 .and. oldcomm /= MPI_COMM_NULL .and. keyval /= MPI_KEYVAL_INVALID
    ierror = MPI_SUCCESS
  end subroutine copy_plus_one

  subroutine count_delete(comm, keyval, val, extra, ierror)
    type(MPI_Comm) :: comm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    if (extra == 7 .and. (val == 41 .or. val == 42) .and. comm /= MPI_COMM_NULL .and. keyval /= 0) &
      deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine count_delete
end module cb08

program callbacks_f08
  use testlib
  use mpi_f08
  use cb08
  implicit none
  type(MPI_Op) :: op_sum, op_first, op_sum_c
  ! the standard's abstract interfaces: these pointers check our callbacks against them
  procedure(MPI_User_function), pointer :: user_fn => null()
  procedure(MPI_User_function_c), pointer :: user_fn_c => null()
  procedure(MPI_Comm_copy_attr_function), pointer :: copy_fn => null()
  procedure(MPI_Comm_delete_attr_function), pointer :: delete_fn => null()
  procedure(MPI_Comm_errhandler_function), pointer :: handler_fn => null()
  type(MPI_Errhandler) :: eh
  type(MPI_Comm) :: dup1, dup2, dup3
  type(MPI_Request) :: req
  integer :: rank, nprocs, kv, kv_dup, rc, cls, n
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: flag
  double precision :: x(3), y(3)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  user_fn => dsum
  call MPI_Op_create(user_fn, .true., op_sum)
  call MPI_Op_create(first, .false., op_first)
  x = [dble(rank), 1d0, 2d0 * rank]
  call MPI_Allreduce(x, y, 3, MPI_DOUBLE_PRECISION, op_sum, MPI_COMM_WORLD)
  call check(nint(y(1)) == nprocs * (nprocs - 1) / 2 .and. nint(y(2)) == nprocs, 'allreduce with a user op')
  call MPI_Scan(x, y, 3, MPI_DOUBLE_PRECISION, op_first, MPI_COMM_WORLD)
  call check(all(nint(y) == [0, 1, 0]), 'scan with a non-commutative op')
  user_fn_c => dsum_c
  call MPI_Op_create_c(user_fn_c, .true., op_sum_c)
  call MPI_Allreduce(x, y, 3_MPI_COUNT_KIND, MPI_DOUBLE_PRECISION, op_sum_c, MPI_COMM_WORLD)
  call check(nint(y(1)) == nprocs * (nprocs - 1) / 2 .and. nint(y(2)) == nprocs, 'MPI_Op_create_c')
  call MPI_Op_free(op_sum)
  call MPI_Op_free(op_first)
  call MPI_Op_free(op_sum_c)

  call MPI_Comm_dup(MPI_COMM_WORLD, dup1)
  handler_fn => on_error
  call MPI_Comm_create_errhandler(handler_fn, eh)
  call MPI_Comm_set_errhandler(dup1, eh)
  call MPI_Errhandler_free(eh)
  call MPI_Send(rank, 1, MPI_INTEGER, nprocs + 3, 0, dup1, rc)
  call MPI_Error_class(rc, cls)
  call check(handler_calls == 1 .and. handler_comm == dup1 .and. rc == handler_code .and. cls == MPI_ERR_RANK, &
             'error handler')

  extra = 7
  copy_fn => copy_plus_one
  delete_fn => count_delete
  call MPI_Comm_create_keyval(copy_fn, delete_fn, kv, extra)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv_dup, extra)
  val = 41
  call MPI_Comm_set_attr(dup1, kv, val)
  call MPI_Comm_set_attr(dup1, kv_dup, val)
  call MPI_Comm_dup(dup1, dup2)
  call MPI_Comm_get_attr(dup2, kv, val, flag)
  call check(flag .and. val == 42, 'copy function')
  call MPI_Comm_get_attr(dup2, kv_dup, val, flag)
  call check(flag .and. val == 41, 'MPI_COMM_DUP_FN')
  call MPI_Comm_free(dup2)
  call check(deletes == 1, 'delete function', deletes)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB')

  call MPI_Comm_idup(dup1, dup3, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_Comm_compare(dup1, dup3, n)
  call check(n == MPI_CONGRUENT, 'MPI_Comm_idup')
  call MPI_Comm_free(dup3)
  call MPI_Comm_free(dup1)
  call check(deletes == 3, 'delete functions on free (dup3 had a copy)', deletes)
  call MPI_Comm_free_keyval(kv)
  call MPI_Comm_free_keyval(kv_dup)
  if (rank == 0) print '(a,i0,a)', 'callbacks f08: ', nprocs, ' ranks passed'
  call MPI_Finalize()
end program callbacks_f08
