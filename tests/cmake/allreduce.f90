! An MPI program as a CMake project's Fortran target builds it (use mpi_f08).
program allreduce
  use mpi_f08
  implicit none
  integer :: rank, nprocs, total
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,i0,a)', 'sum ', total, ' of ', nprocs, ' ranks'
  call MPI_Finalize()
end program allreduce
