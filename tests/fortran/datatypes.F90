! Derived datatypes from Fortran, through `use mpi`, mpif.h (-DMPIFH) or
! `use mpi_f08` (-DF08): a struct type for a Fortran derived type (from
! MPI_Get_address, resized to the array's stride) sent as an array, its
! envelope and contents, pack and unpack, a row of a 2-D array (an
! array section) through a vector type, and the optional kinds
! (MPI_INTEGER16, MPI_COMPLEX32, MPI_Type_match_size).
! (mpif.h declares no interfaces: gfortran needs -fallow-argument-mismatch
! for its calls with buffers of several types.)
#ifdef F08
#define DATATYPE type(MPI_Datatype)
#define STATUS type(MPI_Status) :: status
#else
#define DATATYPE integer
#define STATUS integer :: status(MPI_STATUS_SIZE)
#endif
program datatypes
  use testlib
#if defined(F08)
  use mpi_f08
  implicit none
#elif defined(MPIFH)
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  type particle
    sequence
    integer :: id
    double precision :: x(3)
  end type particle
  type(particle) :: p(4), q(4)
  DATATYPE :: ptype, tmp, rowtype, types(2), got_types(2)
  STATUS
  integer :: ierr, rank, nprocs, left, right, i, nint_, naddr, ndt, ncomb, sz, pos, cnt
  integer :: blens(2), ints(3), a(5, 4), row(4)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), addrs(2), base, lb, extent
  character :: packed(200)
  integer(kind=16) :: big(2), bigsum(2)
  complex(kind=16) :: z(1), zprod(1)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ! a struct for `particle`, resized to its stride in an array
  call MPI_Get_address(p(1), base, ierr)
  call MPI_Get_address(p(1)%id, addrs(1), ierr)
  call MPI_Get_address(p(1)%x, addrs(2), ierr)
  disps = addrs - base
  blens = [1, 3]
  types(1) = MPI_INTEGER
  types(2) = MPI_DOUBLE_PRECISION
  call MPI_Type_create_struct(2, blens, disps, types, tmp, ierr)
  call MPI_Get_address(p(2), addrs(1), ierr)
  call MPI_Type_create_resized(tmp, 0_MPI_ADDRESS_KIND, addrs(1) - base, ptype, ierr)
  call MPI_Type_commit(ptype, ierr)
  call MPI_Type_get_extent(ptype, lb, extent, ierr)
  call check(lb == 0 .and. extent == addrs(1) - base, 'extent of the resized struct')
  call MPI_Type_size(ptype, sz, ierr)
  call check(sz == 4 + 3 * 8, 'size of the struct', sz)

  do i = 1, 4
    p(i)%id = 100 * rank + i
    p(i)%x = [dble(i), dble(rank), -1d0]
  end do
  q = particle(-1, [0d0, 0d0, 0d0])
  call MPI_Sendrecv(p, 4, ptype, right, 1, q, 4, ptype, left, 1, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, ptype, cnt, ierr)
  call check(cnt == 4, 'count of structs', cnt)
  do i = 1, 4
    call check(q(i)%id == 100 * left + i .and. all(q(i)%x == [dble(i), dble(left), -1d0]), 'struct received', i)
  end do

  ! its envelope and contents: the handles come back as Fortran handles
  call MPI_Type_get_envelope(tmp, nint_, naddr, ndt, ncomb, ierr)
  call check(ncomb == MPI_COMBINER_STRUCT .and. nint_ == 3 .and. naddr == 2 .and. ndt == 2, 'envelope')
  call MPI_Type_get_contents(tmp, 3, 2, 2, ints, disps, got_types, ierr)
  call check(all(ints == [2, 1, 3]) .and. got_types(1) == MPI_INTEGER .and. &
             got_types(2) == MPI_DOUBLE_PRECISION, 'contents')
  call MPI_Type_free(tmp, ierr)

  ! pack and unpack
  pos = 0
  call MPI_Pack(p, 2, ptype, packed, size(packed), pos, MPI_COMM_WORLD, ierr)
  call check(pos == 2 * sz, 'packed size', pos)
  q = particle(-1, [0d0, 0d0, 0d0])
  pos = 0
  call MPI_Unpack(packed, size(packed), pos, q, 2, ptype, MPI_COMM_WORLD, ierr)
  call check(q(2)%id == p(2)%id .and. q(3)%id == -1, 'unpacked')
  call MPI_Type_free(ptype, ierr)

  ! row 2 of a(5,4): stride 5
  a = reshape([(i + 100 * rank, i = 1, 20)], [5, 4])
  call MPI_Type_vector(4, 1, 5, MPI_INTEGER, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Sendrecv(a(2, 1), 1, rowtype, right, 2, row, 4, MPI_INTEGER, left, 2, MPI_COMM_WORLD, status, ierr)
  call check(all(row == a(2, :) - 100 * rank + 100 * left), 'a row through a vector type')
  call MPI_Type_free(rowtype, ierr)

  ! INTEGER(16) beyond 64 bits, COMPLEX(16) (MPI_COMPLEX32), and the kinds by size
  big = [ishft(1_16, 100), int(rank, 16)]
  call MPI_Allreduce(big, bigsum, 2, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(bigsum(1) == nprocs * ishft(1_16, 100) .and. bigsum(2) == nprocs * (nprocs - 1) / 2, 'MPI_INTEGER16')
  z(1) = cmplx(0, 1, kind=16)
  call MPI_Allreduce(z, zprod, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD, ierr)
  call check(zprod(1) == cmplx(0, 1, kind=16)**nprocs, 'MPI_COMPLEX32')
  call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, tmp, ierr)
  call check(tmp == MPI_INTEGER16, 'MPI_Type_match_size INTEGER 16')
  call MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 32, tmp, ierr)
  call check(tmp == MPI_COMPLEX32, 'MPI_Type_match_size COMPLEX 32')

  if (rank == 0) print '(a,i0,a)', 'datatypes: ', nprocs, ' ranks passed'
  call MPI_Finalize(ierr)
end program datatypes
