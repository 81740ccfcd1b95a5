! One-sided communication and MPI-IO through `use mpi` (or, with -DMPIFH,
! mpif.h): MPI_Win_create with fence (put, get, accumulate), passive target
! (lock, put, unlock; fetch_and_op, compare_and_swap), MPI_Win_allocate's
! base as an address, the window attributes; a collective file write over a
! subarray view, read back, the view's datarep, a data representation
! registered with conversion functions written in Fortran, and a file error
! handler.
#include "bindings.inc"
program rma_io
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use testlib
#ifdef MPIFH
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  integer, parameter :: n = 8
  integer :: ierr, rank, nprocs, left, right, win, win2, i, fh, ftype, etype, sizes(1), subs(1), starts(1)
  integer :: buf(n), got(n), one, old, cls, disp_unit
  external :: plus_read, plus_write, plus_extent
  integer(kind=MPI_ADDRESS_KIND) :: wsize, target, base, attr
  integer(kind=MPI_OFFSET_KIND) :: disp
  integer, pointer :: shared(:)
  type(c_ptr) :: cbase
  logical :: flag
  character(len=MPI_MAX_DATAREP_STRING) :: datarep
  character(len=64) :: fname

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ! fence: put to the right, get from the left, accumulate to rank 0
  buf = -1
  wsize = 4 * n
  call MPI_Win_create(buf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag, ierr)
  call check(flag .and. attr == 4 * n, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, attr, flag, ierr)
  call check(flag .and. attr == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_Win_fence(0, win, ierr)
  one = rank + 100
  target = 0
  call MPI_Put(one, 1, MPI_INTEGER, right, target, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(buf(1) == left + 100, 'put under fence', buf(1))
  target = 0
  call MPI_Get(got, 1, MPI_INTEGER, left, target, 1, MPI_INTEGER, win, ierr)
  one = 1
  target = 1
  call MPI_Accumulate(one, 1, MPI_INTEGER, 0, target, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(got(1) == mod(left + nprocs - 1, nprocs) + 100, 'get under fence', got(1))
  if (rank == 0) call check(buf(2) == nprocs - 1, 'accumulate', buf(2))
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'MPI_Win_free')

  ! passive target on an allocated window: its base is an address
  call MPI_Win_allocate(wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win2, ierr)
  cbase = transfer(base, cbase)
  call c_f_pointer(cbase, shared, [n])
  call MPI_Win_get_attr(win2, MPI_WIN_BASE, attr, flag, ierr)
  call check(flag .and. attr == base, 'MPI_WIN_BASE')
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win2, ierr)
  shared = 0
  call MPI_Win_unlock(rank, win2, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win2, ierr)
  one = rank
  target = 3
  call MPI_Put(one, 1, MPI_INTEGER, right, target, 1, MPI_INTEGER, win2, ierr)
  call MPI_Win_unlock(right, win2, ierr)
  one = 1
  target = 0
  do i = 1, 3
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win2, ierr)
    call MPI_Fetch_and_op(one, old, MPI_INTEGER, 0, target, MPI_SUM, win2, ierr)
    call MPI_Win_unlock(0, win2, ierr)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win2, ierr)
  call check(shared(4) == left, 'put under lock', shared(4))
  if (rank == 0) call check(shared(1) == 3 * nprocs, 'fetch_and_op', shared(1))
  call MPI_Win_unlock(rank, win2, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  one = -5
  old = left
  target = 3
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win2, ierr)
  call MPI_Compare_and_swap(one, old, got, MPI_INTEGER, right, target, win2, ierr)
  call MPI_Win_unlock(right, win2, ierr)
  call check(got(1) == rank, 'compare_and_swap result', got(1))
  call MPI_Win_get_attr(win2, MPI_WIN_DISP_UNIT, attr, flag, ierr)
  disp_unit = int(attr)
  call check(disp_unit == 4, 'disp unit of the allocated window')
  call MPI_Win_free(win2, ierr)

  ! MPI-IO: a file of nprocs*n integers, rank r's block at r*n, through a subarray view
  fname = 'ftmpi_fortran_io.dat'
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_open to write', ierr)
  sizes(1) = nprocs * n
  subs(1) = n
  starts(1) = rank * n
  call MPI_Type_create_subarray(1, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, ftype, ierr)
  call MPI_Type_commit(ftype, ierr)
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, 'native', MPI_INFO_NULL, ierr)
  buf = [(rank * 1000 + i, i = 1, n)]
  disp = 0
  call MPI_File_write_at_all(fh, disp, buf, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_write_at_all', ierr)
  call MPI_File_get_view(fh, disp, etype, i, datarep, ierr)
  call check(datarep == 'native' .and. etype == MPI_INTEGER, 'MPI_File_get_view')
  call MPI_Type_free(i, ierr)  ! the view's filetype, a derived type
  call MPI_File_close(fh, ierr)
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  got = -1
  disp = 4 * n * right
  call MPI_File_read_at_all(fh, disp, got, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(all(got == [(right * 1000 + i, i = 1, n)]), 'MPI_File_read_at_all')
  call MPI_File_close(fh, ierr)
  call check(fh == MPI_FILE_NULL, 'MPI_File_close')
  call MPI_Type_free(ftype, ierr)

  ! a representation that stores each INTEGER plus one
  target = 0
  call MPI_Register_datarep('plus_one', plus_read, plus_write, plus_extent, target, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Register_datarep', ierr)
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'plus_one', MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'a view in plus_one', ierr)
  buf = [(rank * 10 + i, i = 1, n)]
  disp = rank * n
  call MPI_File_write_at_all(fh, disp, buf, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  got = -1
  disp = right * n
  call MPI_File_read_at_all(fh, disp, got, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(all(got == [(right * 10 + i, i = 1, n)]), 'read back through plus_one')
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  disp = right * n
  call MPI_File_read_at_all(fh, disp, got, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(all(got == [(right * 10 + i + 1, i = 1, n)]), 'stored by plus_one')
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  ! MPI_FILE_NULL's handler: MPI_ERRORS_RETURN
  call MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_NO_SUCH_FILE, 'opening a deleted file', cls)

  if (rank == 0) print '(a,i0,a)', 'rma_io: ', nprocs, ' ranks passed'
  call MPI_Finalize(ierr)
end program rma_io

! plus_one's functions: the file holds each INTEGER plus one.
subroutine plus_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
  MPI_MODULE
  implicit none
  MPI_HEADER
  integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
  integer(kind=MPI_OFFSET_KIND) :: position
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  do i = 1, count
    filebuf(i) = userbuf(position + i) + 1
  end do
  ierror = merge(MPI_SUCCESS, MPI_ERR_TYPE, datatype == MPI_INTEGER .and. extra_state == 0)
end subroutine plus_write

subroutine plus_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
  MPI_MODULE
  implicit none
  MPI_HEADER
  integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
  integer(kind=MPI_OFFSET_KIND) :: position
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  do i = 1, count
    userbuf(position + i) = filebuf(i) - 1
  end do
  ierror = merge(MPI_SUCCESS, MPI_ERR_TYPE, datatype == MPI_INTEGER .and. extra_state == 0)
end subroutine plus_read

subroutine plus_extent(datatype, extent, extra_state, ierror)
  MPI_MODULE
  implicit none
  MPI_HEADER
  integer :: datatype, ierror
  integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
  extent = 4
  ierror = merge(MPI_SUCCESS, MPI_ERR_TYPE, datatype == MPI_INTEGER .and. extra_state == 0)
end subroutine plus_extent
