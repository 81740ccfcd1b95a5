// A choice buffer of mpi_f08 (TYPE(*), DIMENSION(..)): its descriptor, and
// the contiguous memory a call gets. A contiguous array or a scalar is
// passed as it is; an array section is copied into contiguous memory
// before the call and, when the call writes it, back after it: at once for
// a blocking call, when its request completes for a nonblocking one.
// Where MPI keeps using the buffer after the call without a request to
// complete (one-sided calls, persistent requests, split collectives) the
// section is described instead: its (count, datatype) becomes one element
// of a type (hvectors of the datatype over the section's dimensions) when
// the datatype is one contiguous element of the array and count is the
// section's size. Otherwise, and for attached buffers, a section is
// refused (MPI_ERR_BUFFER).
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
    // The buffer's own (count, datatype), for a described section (before ready).
    void pair(const MPI_Fint *count, const MPI_Fint *datatype);
    void pair(const MPI_Count *count, const MPI_Fint *datatype);
    // False (error raised on `target`, *ierr set) if the call cannot take this buffer.
    bool ready(const char *call, ErrorTarget target, MPI_Fint *ierr);
    void *addr() const { return addr_; }
    // The count and datatype the call gets: (1, the type) for a described section.
    MPI_Fint *count(MPI_Fint *c) { return typed_ != MPI_DATATYPE_NULL ? &one_ : c; }
    MPI_Count *count(MPI_Count *c) { return typed_ != MPI_DATATYPE_NULL ? &one_c_ : c; }
    MPI_Fint *datatype(MPI_Fint *t) { return typed_ != MPI_DATATYPE_NULL ? &typed_f_ : t; }
    // After the call: `request` (a Fortran request number) completes the
    // copy back, if the call started one.
    void finish(MPI_Fint rc, const MPI_Fint *request);
    ~Section();
    Section(const Section &) = delete;
    Section &operator=(const Section &) = delete;

private:
    const CFI_cdesc_t *d_;
    bool output_;
    Use use_;
    void *addr_ = nullptr;
    std::shared_ptr<std::vector<char>> copy_;  // a section's elements, in order
    MPI_Count pair_count_ = -1;                // the pair's count, -1 without one
    const MPI_Fint *pair_type_ = nullptr;
    MPI_Datatype typed_ = MPI_DATATYPE_NULL;  // a described section's type
    MPI_Fint typed_f_ = 0, one_ = 1;
    MPI_Count one_c_ = 1;
    int describe(const char *call, ErrorTarget target);
};

}  // namespace ftmpi::fortran
