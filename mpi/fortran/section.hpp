// A choice buffer of mpi_f08 (TYPE(*), DIMENSION(..)): its descriptor, and
// the contiguous memory a call gets. A contiguous array or a scalar is
// passed as it is; an array section is copied into contiguous memory
// before the call and, when the call writes it, back after it: at once for
// a blocking call, when its request completes for a nonblocking one.
// Where MPI keeps using the buffer after the call without a request to
// complete (one-sided calls, persistent requests, split collectives,
// attached buffers) a section is refused (MPI_ERR_BUFFER).
#pragma once

#include <mpi.h>

#include <ISO_Fortran_binding.h>

#include <memory>
#include <vector>

namespace ftmpi::fortran {

// The object whose error handler a call's errors go to (a Fortran handle).
struct ErrorTarget {
    enum class Kind { none, comm, win, file } kind;
    const MPI_Fint *handle;
};

class Section {
public:
    enum class Use { address, contiguous_only, blocking, request };
    Section(const CFI_cdesc_t *d, bool output, Use use);
    // False (error raised on `target`, *ierr set) if the call cannot take this buffer.
    bool ready(const char *call, ErrorTarget target, MPI_Fint *ierr);
    void *addr() const { return addr_; }
    // After the call: `request` (a Fortran request number) completes the
    // copy back, if the call started one.
    void finish(MPI_Fint rc, const MPI_Fint *request);

private:
    const CFI_cdesc_t *d_;
    bool output_;
    Use use_;
    void *addr_ = nullptr;
    std::shared_ptr<std::vector<char>> copy_;  // a section's elements, in order
};

}  // namespace ftmpi::fortran
