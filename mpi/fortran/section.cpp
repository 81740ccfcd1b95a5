// mpi_f08's choice buffers (section.hpp).
#include "mpi/fortran/section.hpp"

#include <cstring>
#include <memory>

#include "mpi/errors.hpp"
#include "mpi/fortran/support.hpp"
#include "mpi/fortran_hooks.hpp"

namespace ftmpi::fortran {
namespace {

bool contiguous(const CFI_cdesc_t *d) {
    CFI_index_t want = static_cast<CFI_index_t>(d->elem_len);
    for (int i = 0; i < d->rank; ++i) {
        if (d->dim[i].extent == 0) return true;  // no elements
        if (d->dim[i].sm != want) return false;
        want *= d->dim[i].extent;
    }
    return true;
}

std::size_t elements(const CFI_cdesc_t *d) {
    std::size_t n = 1;
    for (int i = 0; i < d->rank; ++i) n *= static_cast<std::size_t>(d->dim[i].extent > 0 ? d->dim[i].extent : 0);
    return n;
}

// Visits every element of the section in array element order (the first
// index fastest), with its address.
template <typename F>
void each(const CFI_cdesc_t *d, F f) {
    if (elements(d) == 0) return;
    std::vector<CFI_index_t> idx(static_cast<std::size_t>(d->rank), 0);
    for (;;) {
        char *p = static_cast<char *>(d->base_addr);
        for (int i = 0; i < d->rank; ++i) p += idx[static_cast<std::size_t>(i)] * d->dim[i].sm;
        f(p);
        int i = 0;
        while (i < d->rank && ++idx[static_cast<std::size_t>(i)] == d->dim[i].extent)
            idx[static_cast<std::size_t>(i++)] = 0;
        if (i == d->rank) return;
    }
}

void copy_back(const CFI_cdesc_t *d, const std::vector<char> &copy) {
    const char *src = copy.data();
    each(d, [&](char *p) {
        std::memcpy(p, src, d->elem_len);
        src += d->elem_len;
    });
}

// Raises `code` on the target's error handler.
int fail(ErrorTarget t, int code, const char *call, const char *msg) {
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    void *object = nullptr;
    MPI_Win w = MPI_WIN_NULL;
    MPI_File f = MPI_FILE_NULL;
    switch (t.kind) {
    case ErrorTarget::Kind::comm: return mpi::raise(PMPI_Comm_f2c(*t.handle), code, call, "%s", msg);
    case ErrorTarget::Kind::win:
        w = PMPI_Win_f2c(*t.handle);
        if (PMPI_Win_get_errhandler(w, &h) != MPI_SUCCESS) return mpi::raise(MPI_COMM_NULL, code, call, "%s", msg);
        object = &w;
        break;
    case ErrorTarget::Kind::file:
        f = PMPI_File_f2c(*t.handle);
        if (PMPI_File_get_errhandler(f, &h) != MPI_SUCCESS) return mpi::raise(MPI_COMM_NULL, code, call, "%s", msg);
        object = &f;
        break;
    case ErrorTarget::Kind::none: return mpi::raise(MPI_COMM_NULL, code, call, "%s", msg);
    }
    const int rc =
        mpi::raise_via(h, object, t.kind == ErrorTarget::Kind::win ? "a window" : "a file", code, call, "%s", msg);
    PMPI_Errhandler_free(&h);
    return rc;
}

}  // namespace

Section::Section(const CFI_cdesc_t *d, bool output, Use use) : d_(d), output_(output), use_(use) {
    addr_ = d->base_addr;
}

void Section::pair(const MPI_Fint *count, const MPI_Fint *datatype) {
    pair_count_ = *count;
    pair_type_ = datatype;
}

void Section::pair(const MPI_Count *count, const MPI_Fint *datatype) {
    pair_count_ = *count;
    pair_type_ = datatype;
}

Section::~Section() {
    if (typed_ != MPI_DATATYPE_NULL) PMPI_Type_free(&typed_);
}

// A section MPI keeps using: one element of hvectors of the pair's datatype.
int Section::describe(const char *call, ErrorTarget target) {
    const char *why = nullptr;
    MPI_Datatype base = pair_type_ != nullptr ? PMPI_Type_f2c(*pair_type_) : MPI_DATATYPE_NULL;
    MPI_Aint lb = 0, extent = 0;
    MPI_Count size = 0;
    if (pair_type_ == nullptr)
        why =
            "a non-contiguous array section as a buffer MPI keeps using after the call (attached, or without "
            "its own count and datatype): pass a contiguous array";
    else if (PMPI_Type_get_extent(base, &lb, &extent) != MPI_SUCCESS || PMPI_Type_size_c(base, &size) != MPI_SUCCESS ||
             lb != 0 || extent != static_cast<MPI_Aint>(d_->elem_len) || size != extent)
        why =
            "a non-contiguous array section as a buffer MPI keeps using after the call (one-sided, persistent "
            "or split-collective), with a datatype other than one contiguous element of the array: pass a "
            "contiguous array, or describe the section with a datatype";
    else if (pair_count_ != static_cast<MPI_Count>(elements(d_)))
        why =
            "a non-contiguous array section as a buffer MPI keeps using after the call (one-sided, persistent "
            "or split-collective), with a count other than the section's size";
    if (why != nullptr) return fail(target, MPI_ERR_BUFFER, call, why);
    MPI_Datatype t = base;
    for (int i = 0; i < d_->rank; ++i) {
        MPI_Datatype next = MPI_DATATYPE_NULL;
        PMPI_Type_create_hvector_c(d_->dim[i].extent, 1, d_->dim[i].sm, t, &next);
        if (t != base) PMPI_Type_free(&t);
        t = next;
    }
    PMPI_Type_commit(&t);
    typed_ = t;
    typed_f_ = PMPI_Type_c2f(t);
    return MPI_SUCCESS;
}

bool Section::ready(const char *call, ErrorTarget target, MPI_Fint *ierr) {
    if (use_ == Use::address || d_->rank == 0 || contiguous(d_)) return true;
    if (use_ == Use::contiguous_only) {
        const int rc = describe(call, target);
        set_ierr(ierr, rc);
        return rc == MPI_SUCCESS;
    }
    copy_ = std::make_shared<std::vector<char>>(elements(d_) * d_->elem_len);
    char *dst = copy_->data();
    each(d_, [&](char *p) {
        std::memcpy(dst, p, d_->elem_len);
        dst += d_->elem_len;
    });
    addr_ = copy_->data();
    return true;
}

namespace {

// What copying a section back at its request's release needs: the
// descriptor (the caller's is gone by then) and the contiguous copy.
struct Pending {
    std::vector<char> desc;
    std::shared_ptr<std::vector<char>> copy;
    bool output;
};

void copy_back_at_release(void *ctx, int error) {
    std::unique_ptr<Pending> p(static_cast<Pending *>(ctx));
    if (p->output && (error == MPI_SUCCESS || error == MPI_ERR_TRUNCATE))
        copy_back(reinterpret_cast<const CFI_cdesc_t *>(p->desc.data()), *p->copy);
}

}  // namespace

void Section::finish(MPI_Fint rc, const MPI_Fint *request) {
    if (!copy_) return;
    if (rc != MPI_SUCCESS || use_ != Use::request || request == nullptr) {
        if (rc == MPI_SUCCESS && output_) copy_back(d_, *copy_);
        return;
    }
    // The copy lives until the request is released, however the user ends
    // it (a wait, a test, or MPI_Request_free and its completion).
    auto p = std::make_unique<Pending>();
    p->desc.resize(sizeof(CFI_cdesc_t) + static_cast<std::size_t>(d_->rank) * sizeof(CFI_dim_t));
    std::memcpy(p->desc.data(), d_, p->desc.size());
    p->copy = copy_;
    p->output = output_;
    if (mpi::add_request_release_hook(PMPI_Request_f2c(*request), copy_back_at_release, p.get()) == MPI_SUCCESS)
        p.release();
}

}  // namespace ftmpi::fortran
