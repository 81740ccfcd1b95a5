! One-sided communication and MPI-IO through `use mpi_f08`: fence and
! passive target on MPI_Win_allocate's window (its base a TYPE(C_PTR)),
! array sections as one-sided buffers (and one refused: MPI_ERR_BUFFER), a
! collective write of an array section over a subarray view, read back into
! a section, and nonblocking file reads.
program rma_io_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use testlib
  use mpi_f08
  implicit none
  integer, parameter :: n = 8
  type(MPI_Win) :: win
  type(MPI_File) :: fh
  type(MPI_Datatype) :: ftype
  type(MPI_Request) :: req
  type(MPI_Status) :: status
  integer :: rank, nprocs, left, right, i, rc, cls, cnt, one, sizes(1), subs(1), starts(1)
  integer :: buf(2, n), got(n), twice(2 * n)
  integer(kind=MPI_ADDRESS_KIND) :: wsize, target
  integer(kind=MPI_OFFSET_KIND) :: disp
  integer, pointer :: shared(:)
  type(c_ptr) :: cbase
  character(len=64) :: fname

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  wsize = 4 * n
  call MPI_Win_allocate(wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, cbase, win)
  call c_f_pointer(cbase, shared, [n])
  shared = -1
  call MPI_Win_fence(0, win)
  one = rank
  target = 2
  call MPI_Put(one, 1, MPI_INTEGER, right, target, 1, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(shared(3) == left, 'put under fence', shared(3))
  call MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win)
  call MPI_Get(got, 2, MPI_INTEGER, left, 2_MPI_ADDRESS_KIND, 2, MPI_INTEGER, win)
  call MPI_Win_unlock(left, win)
  call check(got(1) == mod(left + nprocs - 1, nprocs) .and. got(2) == -1, 'get under lock', got(1))
  ! sections MPI reads or writes after the call returns: described by a type
  call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)
  buf(1, :) = [(100 * rank + i, i = 1, n)]
  buf(2, :) = -9
  call MPI_Win_fence(0, win)
  call MPI_Put(buf(1, :), n, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(shared == [(100 * left + i, i = 1, n)]), 'MPI_Put of a section')
  buf(1, :) = -1
  call MPI_Get(buf(1, :), n, MPI_INTEGER, left, 0_MPI_ADDRESS_KIND, n, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(buf(1, :) == [(100 * modulo(left - 1, nprocs) + i, i = 1, n)]) .and. all(buf(2, :) == -9), &
             'MPI_Get into a section')
  ! not one element of the array per datatype element: refused
  call MPI_Put(buf(1, :), n - 1, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, n - 1, MPI_INTEGER, win, rc)
  call MPI_Error_class(rc, cls)
  call check(cls == MPI_ERR_BUFFER, 'a section with another count given to MPI_Put', cls)
  call MPI_Win_fence(0, win)
  call MPI_Win_free(win)

  ! a section written collectively, rank r's block at r*n through a subarray view
  fname = 'ftmpi_fortran_io_f08.dat'
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh)
  sizes(1) = nprocs * n
  subs(1) = n
  starts(1) = rank * n
  call MPI_Type_create_subarray(1, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INTEGER, ftype)
  call MPI_Type_commit(ftype)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, ftype, 'native', MPI_INFO_NULL)
  buf(1, :) = [(rank * 1000 + i, i = 1, n)]
  buf(2, :) = -7
  call MPI_File_write_all(fh, buf(1, :), n, MPI_INTEGER, status)
  call MPI_Get_count(status, MPI_INTEGER, cnt)
  call check(cnt == n, 'MPI_File_write_all of a section', cnt)
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
  twice = -1
  disp = n * right
  call MPI_File_iread_at(fh, disp, twice(1:2 * n:2), n, MPI_INTEGER, req)
  call MPI_Wait(req, status)
  call check(all(twice(1:2 * n:2) == [(right * 1000 + i, i = 1, n)]) .and. all(twice(2:2 * n:2) == -1), &
             'MPI_File_iread_at into a section')
  call MPI_File_close(fh)
  call MPI_Type_free(ftype)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL)

  if (rank == 0) print '(a,i0,a)', 'rma_io f08: ', nprocs, ' ranks passed'
  call MPI_Finalize()
end program rma_io_f08
