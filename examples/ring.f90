! Token ring in Fortran (use mpi_f08): every rank passes a token to its right
! neighbour with MPI_Sendrecv, the token goes round the ring `size` times,
! and each rank checks what it received. Standard MPI only: builds with any
! mpifort.
!
!   ftmpifort ring.f90 -o ring_f && ftmpirun -n 4 ./ring_f
program ring
  use mpi_f08
  implicit none
  integer :: rank, size, right, left, token, incoming, expected, lap, errors, length
  type(MPI_Status) :: status
  character(len=MPI_MAX_PROCESSOR_NAME) :: name

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  token = rank
  errors = 0
  do lap = 1, size
    call MPI_Sendrecv(token, 1, MPI_INTEGER, right, lap, incoming, 1, MPI_INTEGER, left, lap, &
                      MPI_COMM_WORLD, status)
    ! After `lap` steps a rank holds the token that started `lap` ranks to its left.
    expected = modulo(rank - lap, size)
    if (incoming /= expected .or. status%MPI_SOURCE /= left .or. status%MPI_TAG /= lap) then
      print '(a,i0,a,i0,a,i0,a,i0)', 'rank ', rank, ': lap ', lap, ' got ', incoming, ', expected ', expected
      errors = errors + 1
    end if
    token = incoming
  end do
  call MPI_Get_processor_name(name, length)
  print '(a,i0,a,i0,a,i0,2a)', 'rank ', rank, ' of ', size, ' received token ', token, ' on ', name(1:length)
  call MPI_Finalize()
  if (errors /= 0) error stop 1
end program ring
