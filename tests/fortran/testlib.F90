! What the Fortran tests share: check(ok, what [, value]) aborts the job
! with a message naming the rank and the check when ok is false;
! die() ends this process with SIGKILL, as a failure would.
module testlib
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  private
  public :: check, die
  include 'mpif.h'
  interface
    integer(c_int) function c_raise(sig) bind(c, name='raise')
      import :: c_int
      integer(c_int), value :: sig
    end function c_raise
  end interface
contains
  subroutine die()
    integer(c_int), parameter :: sigkill = 9
    integer(c_int) :: rc
    flush(6)
    rc = c_raise(sigkill)
  end subroutine die

  subroutine check(ok, what, value)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in), optional :: value
    integer :: rank, e
    if (ok) return
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, e)
    if (present(value)) then
      print '(a,i0,3a,i0)', 'rank ', rank, ': failed: ', what, ': ', value
    else
      print '(a,i0,2a)', 'rank ', rank, ': failed: ', what
    end if
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine check
end module testlib
