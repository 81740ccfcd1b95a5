! The basics through `use mpi_f08`: handle types and their operators, an
! optional ierror, TYPE(MPI_Status), array sections as buffers (strided,
! in two dimensions, blocking and nonblocking, sent and received), a vector
! type over a section, bounds of an allocatable kept across calls,
! large-count forms chosen by the kind of the count, MPI_BUFFER_AUTOMATIC,
! MPI_F_sync_reg and the status conversions.
program basics_f08
  use testlib
  use mpi_f08
  implicit none
  type(MPI_Comm) :: comm
  type(MPI_Status) :: status
  type(MPI_Request) :: reqs(2)
  type(MPI_Datatype) :: vec
  integer :: rank, nprocs, left, right, i, j, n, ierr
  integer(kind=MPI_COUNT_KIND) :: ncount
  integer :: a(10, 6), b(10, 6), c(5, 3), row(6)
  integer, allocatable :: sendv(:), recvv(:)
  integer :: fstatus(MPI_STATUS_SIZE), sz, pair(2), got2(2), counts2(2)
  integer(kind=8) :: wide(3)
  integer(kind=MPI_ADDRESS_KIND) :: displs2(2)
  type(MPI_Status) :: status2
  type(MPI_Comm) :: selfring
  type(MPI_Datatype) :: types2(2)
  double precision :: x(4)

  call MPI_Init()
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, nprocs, ierr)
  call check(ierr == MPI_SUCCESS .and. comm /= MPI_COMM_NULL .and. .not. (comm == MPI_COMM_WORLD), 'handles')
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  a = reshape([(i + 1000 * rank, i = 1, 60)], [10, 6])

  ! a strided 2-D section, blocking: a(1:10:2, 2:6:2) (5 x 3), into a contiguous array
  call MPI_Sendrecv(a(1:10:2, 2:6:2), 15, MPI_INTEGER, right, 1, c, 15, MPI_INTEGER, left, 1, comm, status)
  call check(status%MPI_SOURCE == left .and. status%MPI_TAG == 1, 'status fields')
  call MPI_Get_count(status, MPI_INTEGER, n)
  call check(n == 15, 'MPI_Get_count', n)
  call check(all(c == a(1:10:2, 2:6:2) - 1000 * rank + 1000 * left), 'strided section sent')

  ! received into a section: only its elements change
  b = -1
  call MPI_Sendrecv(c, 15, MPI_INTEGER, right, 2, b(2:10:2, 1:5:2), 15, MPI_INTEGER, left, 2, comm, &
                    MPI_STATUS_IGNORE)
  n = 0
  do j = 1, 6
    do i = 1, 10
      if (mod(i, 2) == 0 .and. mod(j, 2) == 1 .and. j <= 5) then
        if (b(i, j) /= a(i - 1, j + 1) - 1000 * rank + 1000 * mod(left + nprocs - 1, nprocs)) n = n + 1
      else if (b(i, j) /= -1) then
        n = n + 1
      end if
    end do
  end do
  call check(n == 0, 'section received', n)

  ! nonblocking, a row (stride 10) each way; the receive lands at completion
  row = -1
  call MPI_Irecv(b(3, :), 6, MPI_INTEGER, left, 3, comm, reqs(1))
  call MPI_Isend(a(3, :), 6, MPI_INTEGER, right, 3, comm, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(all(b(3, :) == a(3, :) - 1000 * rank + 1000 * left), 'nonblocking sections')
  call check(all(reqs == MPI_REQUEST_NULL), 'requests freed')

  ! a vector type over a contiguous array: row 4 of a
  call MPI_Type_vector(6, 1, 10, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  call MPI_Sendrecv(a(4, 1), 1, vec, right, 4, row, 6, MPI_INTEGER, left, 4, comm, MPI_STATUS_IGNORE)
  call check(all(row == a(4, :) - 1000 * rank + 1000 * left), 'vector type')
  call MPI_Type_free(vec)
  call check(vec == MPI_DATATYPE_NULL, 'type freed')

  ! allocatables keep their bounds (lbound 0 here)
  allocate(sendv(0:nprocs - 1), recvv(0:nprocs - 1))
  sendv = [(rank * 100 + i, i = 0, nprocs - 1)]
  call MPI_Alltoall(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, comm)
  call check(lbound(recvv, 1) == 0 .and. ubound(recvv, 1) == nprocs - 1, 'bounds after MPI_Alltoall')
  call check(all(recvv == [(i * 100 + rank, i = 0, nprocs - 1)]), 'MPI_Alltoall')
  deallocate(sendv, recvv)

  ! MPI_IN_PLACE and a large-count form (INTEGER(KIND=MPI_COUNT_KIND) count)
  x = [dble(rank), 1d0, 2d0, 3d0]
  ncount = 2
  call MPI_Allreduce(MPI_IN_PLACE, x, ncount, MPI_DOUBLE_PRECISION, MPI_SUM, comm)
  call check(nint(x(1)) == nprocs * (nprocs - 1) / 2 .and. nint(x(2)) == nprocs .and. nint(x(3)) == 2, &
             'MPI_Allreduce_c in place')
  call MPI_Type_size(MPI_DOUBLE_PRECISION, ncount)
  call check(ncount == 8, 'MPI_Type_size_c')

  ! buffered sends with the automatic buffer
  call MPI_Comm_attach_buffer(comm, MPI_BUFFER_AUTOMATIC, 0)
  call MPI_Bsend(rank, 1, MPI_INTEGER, right, 5, comm)
  call MPI_Recv(n, 1, MPI_INTEGER, left, 5, comm, status)
  call MPI_F_sync_reg(n)
  call check(n == left, 'MPI_Bsend with MPI_BUFFER_AUTOMATIC', n)
  call MPI_Status_f082f(status, fstatus)
  call MPI_Status_f2f08(fstatus, status2)
  call check(fstatus(MPI_SOURCE) == left .and. status2%MPI_TAG == 5, 'status conversions')

  ! MPI_Sizeof, any type and rank
  call MPI_Sizeof(x, sz)
  call check(sz == 8, 'MPI_Sizeof of DOUBLE PRECISION', sz)
  call MPI_Sizeof(wide, sz)
  call check(sz == 8, 'MPI_Sizeof of INTEGER(8)', sz)
  call MPI_Sizeof(n, sz)
  call check(sz == 4, 'MPI_Sizeof of INTEGER', sz)

  ! a receive into a section, freed before it completes: the data still lands
  ! (the message after it, from the same sender, comes later)
  b = -1
  call MPI_Irecv(b(2:10:2, 1), 5, MPI_INTEGER, left, 6, comm, reqs(1))
  call MPI_Request_free(reqs(1))
  call MPI_Send(a(1:5, 1), 5, MPI_INTEGER, right, 6, comm)
  call MPI_Send(rank, 1, MPI_INTEGER, right, 7, comm)
  call MPI_Recv(n, 1, MPI_INTEGER, left, 7, comm, MPI_STATUS_IGNORE)
  call check(all(b(2:10:2, 1) == a(1:5, 1) - 1000 * rank + 1000 * left) .and. all(b(1:9:2, 1) == -1), &
             'a freed receive into a section')

  ! neighborhood collective with more neighbours than ranks: a periodic ring of one
  call MPI_Cart_create(MPI_COMM_SELF, 1, [1], [.true.], .false., selfring)
  pair = [rank, -rank]
  counts2 = 1
  displs2 = [0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND]
  types2 = MPI_INTEGER
  got2 = -7
  call MPI_Neighbor_alltoallw(pair, counts2, displs2, types2, got2, counts2, displs2, types2, selfring)
  call check(got2(1) == -rank .and. got2(2) == rank, 'MPI_Neighbor_alltoallw on a ring of one')
  call MPI_Comm_free(selfring)

  call MPI_Comm_free(comm)
  call check(comm == MPI_COMM_NULL, 'comm freed')
  if (rank == 0) print '(a,i0,a)', 'basics f08: ', nprocs, ' ranks passed'
  call MPI_Finalize()
end program basics_f08
