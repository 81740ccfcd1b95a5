! The basics through `use mpi` (or, with -DMPIFH, mpif.h in free form):
! a cartesian topology (LOGICAL arrays), MPI_IN_PLACE, MPI_BOTTOM with
! absolute addresses, a vector type over an array's row, MPI_Testall's
! LOGICAL flag and MPI_Waitall with MPI_STATUSES_IGNORE, MPI_Waitsome's
! 1-based indices, info strings, error strings.
program basics
  use testlib
#ifdef MPIFH
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  integer :: ierr, rank, nprocs, cart, dims(1), coords(1), left, right, i, n, outcount
  integer :: rowtype, structtype, info, vlen, cls, slen
  integer :: reqs(2), indices(2), statuses(MPI_STATUS_SIZE, 2), a(4, 3), b(3), blens(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2)
  logical :: periods(1), flag, got
  double precision :: x(2), t0
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init(ierr)
  t0 = MPI_Wtime()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  ! a periodic ring as a cartesian communicator
  dims(1) = nprocs
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_shift(cart, 0, 1, left, right, ierr)
  periods(1) = .false.
  call MPI_Cart_get(cart, 1, dims, periods, coords, ierr)
  call check(periods(1) .and. coords(1) == rank .and. right == mod(rank + 1, nprocs), 'cart')

  ! MPI_IN_PLACE
  x = [dble(rank), 1d0]
  call MPI_Allreduce(MPI_IN_PLACE, x, 2, MPI_DOUBLE_PRECISION, MPI_SUM, cart, ierr)
  call check(nint(x(1)) == nprocs * (nprocs - 1) / 2 .and. nint(x(2)) == nprocs, 'in place')

  ! a row of a(4,3) (stride 4) to the right neighbour
  a = reshape([(i, i = 1, 12)], [4, 3]) + 100 * rank
  call MPI_Type_vector(3, 1, 4, MPI_INTEGER, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Sendrecv(a(2, 1), 1, rowtype, right, 1, b, 3, MPI_INTEGER, left, 1, cart, MPI_STATUS_IGNORE, ierr)
  call check(all(b == [2, 6, 10] + 100 * left), 'row')
  call MPI_Type_free(rowtype, ierr)

  ! absolute addresses from MPI_BOTTOM
  call MPI_Get_address(a(1, 1), disps(1), ierr)
  call MPI_Get_address(a(4, 3), disps(2), ierr)
  blens = 1
  types = MPI_INTEGER
  call MPI_Type_create_struct(2, blens, disps, types, structtype, ierr)
  call MPI_Type_commit(structtype, ierr)
  call MPI_Sendrecv(MPI_BOTTOM, 1, structtype, right, 2, b, 2, MPI_INTEGER, left, 2, cart, MPI_STATUS_IGNORE, ierr)
  call check(b(1) == 1 + 100 * left .and. b(2) == 12 + 100 * left, 'bottom')
  call MPI_Type_free(structtype, ierr)

  ! nonblocking: Testall's flag, Waitsome's indices
  call MPI_Irecv(n, 1, MPI_INTEGER, left, 3, cart, reqs(1), ierr)
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 3, cart, reqs(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
  end do
  call check(n == left .and. reqs(1) == MPI_REQUEST_NULL, 'testall')
  call MPI_Irecv(n, 1, MPI_INTEGER, left, 5, cart, reqs(1), ierr)
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 5, cart, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. n == left .and. all(reqs == MPI_REQUEST_NULL), 'waitall')
  call MPI_Irecv(n, 1, MPI_INTEGER, left, 4, cart, reqs(2), ierr)
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Send(rank, 1, MPI_INTEGER, right, 4, cart, ierr)
  call MPI_Waitsome(2, reqs, outcount, indices, statuses, ierr)
  call check(outcount == 1 .and. indices(1) == 2 .and. statuses(MPI_SOURCE, 1) == left, 'waitsome')
  call MPI_Iprobe(MPI_ANY_SOURCE, 99, cart, got, MPI_STATUS_IGNORE, ierr)
  call check(.not. got, 'iprobe')

  ! info strings (blanks trimmed on the way in, padded on the way out)
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, ' color ', 'blue ', ierr)
  call MPI_Info_get(info, 'color', MPI_MAX_INFO_VAL, value, flag, ierr)
  call check(flag .and. value == 'blue', 'info_get')
  call MPI_Info_get_valuelen(info, 'color', vlen, flag, ierr)
  call check(flag .and. vlen == 4, 'info_get_valuelen')
  vlen = len(value)
  call MPI_Info_get_string(info, 'color', vlen, value, flag, ierr)
  call check(flag .and. vlen == 4 .and. value == 'blue', 'info_get_string')
  call MPI_Info_get(info, 'shape', MPI_MAX_INFO_VAL, value, flag, ierr)
  call check(.not. flag, 'info missing key')
  call MPI_Info_free(info, ierr)
  call check(info == MPI_INFO_NULL, 'info_free')

  ! errors come back as codes under MPI_ERRORS_RETURN
  call MPI_Send(rank, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls, i)
  call MPI_Error_string(ierr, msg, slen, i)
  call check(cls == MPI_ERR_RANK .and. slen > 0 .and. slen <= len(msg), 'error class')

  call check(MPI_Wtime() >= t0 .and. MPI_Wtick() > 0, 'wtime')
  call MPI_Comm_free(cart, ierr)
  call check(cart == MPI_COMM_NULL, 'comm_free')
  if (rank == 0) print '(a,i0,a)', 'basics: ', nprocs, ' ranks passed'
  call MPI_Finalize(ierr)

end program basics
