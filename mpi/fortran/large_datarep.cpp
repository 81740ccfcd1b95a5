// From Fortran: data representations (MPI_Register_datarep and its
// large-count form), whose functions get their extra_state and so go
// through trampolines; the large-count user op (MPI_Op_create_c); and the
// large-count detaches.
#include <mpi.h>

#include <memory>
#include <mutex>
#include <vector>

#include "mpi/fortran/support.hpp"
#include "mpi/fortran_hooks.hpp"

using ftmpi::fortran::set_ierr;
using ftmpi::fortran::StringIn;

extern "C" {
// MPI_CONVERSION_FN_NULL(_C) for Fortran: recognized by address, never run.
void mpi_conversion_fn_null_(void *, MPI_Fint *, MPI_Fint *, void *, MPI_Offset *, MPI_Aint *, MPI_Fint *ierr) {
    *ierr = MPI_SUCCESS;
}
void mpi_conversion_fn_null_c_(void *, MPI_Fint *, MPI_Count *, void *, MPI_Offset *, MPI_Aint *, MPI_Fint *ierr) {
    *ierr = MPI_SUCCESS;
}
}

namespace {

template <typename Count>
using Conversion = void (*)(void *, MPI_Fint *, Count *, void *, MPI_Offset *, MPI_Aint *, MPI_Fint *);
using Extent = void (*)(MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *);

// A data representation registered from Fortran: its functions and extra_state.
struct Datarep {
    void *read;
    void *write;
    Extent extent;
    MPI_Aint extra;
};

// Registered representations live as long as the process.
std::mutex g_datareps_lock;
std::vector<std::unique_ptr<Datarep>> g_datareps;

template <typename Count, bool Read>
int convert(void *userbuf, MPI_Datatype datatype, Count count, void *filebuf, MPI_Offset position, void *extra) {
    auto *d = static_cast<Datarep *>(extra);
    MPI_Fint type = PMPI_Type_c2f(datatype), ierr = MPI_SUCCESS;
    Count n = count;
    reinterpret_cast<Conversion<Count>>(Read ? d->read : d->write)(userbuf, &type, &n, filebuf, &position, &d->extra,
                                                                   &ierr);
    return ierr;
}

int file_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra) {
    auto *d = static_cast<Datarep *>(extra);
    MPI_Fint type = PMPI_Type_c2f(datatype), ierr = MPI_SUCCESS;
    d->extent(&type, extent, &d->extra, &ierr);
    return ierr;
}

template <typename Count, typename Fn, typename Register>
void register_datarep(const char *name, std::size_t name_len, void *read, void *write, void *extent, MPI_Aint extra,
                      MPI_Fint *ierr, void *null_fn, Register reg) {
    StringIn n(name, name_len);
    Datarep *d = nullptr;
    {
        std::lock_guard<std::mutex> guard(g_datareps_lock);
        g_datareps.push_back(std::make_unique<Datarep>(Datarep{read, write, reinterpret_cast<Extent>(extent), extra}));
        d = g_datareps.back().get();
    }
    Fn *r = read == null_fn ? nullptr : &convert<Count, true>;
    Fn *w = write == null_fn ? nullptr : &convert<Count, false>;
    set_ierr(ierr, reg(n.get(), r, w, &file_extent, d));
}

}  // namespace

extern "C" {

void mpi_register_datarep_(const char *datarep, void *read, void *write, void *extent, MPI_Aint *extra, MPI_Fint *ierr,
                           std::size_t datarep_len) {
    register_datarep<int, MPI_Datarep_conversion_function>(datarep, datarep_len, read, write, extent, *extra, ierr,
                                                           reinterpret_cast<void *>(&mpi_conversion_fn_null_),
                                                           PMPI_Register_datarep);
}

void mpi_register_datarep_c_(const char *datarep, void *read, void *write, void *extent, MPI_Aint *extra,
                             MPI_Fint *ierr, std::size_t datarep_len) {
    register_datarep<MPI_Count, MPI_Datarep_conversion_function_c>(
        datarep, datarep_len, read, write, extent, *extra, ierr, reinterpret_cast<void *>(&mpi_conversion_fn_null_c_),
        PMPI_Register_datarep_c);
}

void mpi_op_create_c_(void *fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierr) {
    MPI_Op c = MPI_OP_NULL;
    int rc = PMPI_Op_create_c(reinterpret_cast<MPI_User_function_c *>(fn), *commute, &c);
    if (rc == MPI_SUCCESS) rc = ftmpi::mpi::set_op_fortran(c);
    if (rc == MPI_SUCCESS) *op = PMPI_Op_c2f(c);
    set_ierr(ierr, rc);
}

// The large-count detaches: mpif.h-style (the address is not returned) and
// mpi_f08's (a TYPE(C_PTR)).
void mpi_buffer_detach_c_(void *, MPI_Count *size, MPI_Fint *ierr) {
    void *addr = nullptr;
    set_ierr(ierr, PMPI_Buffer_detach_c(&addr, size));
}
void mpi_comm_detach_buffer_c_(MPI_Fint *comm, void *, MPI_Count *size, MPI_Fint *ierr) {
    void *addr = nullptr;
    set_ierr(ierr, PMPI_Comm_detach_buffer_c(PMPI_Comm_f2c(*comm), &addr, size));
}
void mpi_session_detach_buffer_c_(MPI_Fint *session, void *, MPI_Count *size, MPI_Fint *ierr) {
    void *addr = nullptr;
    set_ierr(ierr, PMPI_Session_detach_buffer_c(PMPI_Session_f2c(*session), &addr, size));
}
void mpi_buffer_detach_c_f08_(void **addr, MPI_Count *size, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Buffer_detach_c(addr, size));
}
void mpi_comm_detach_buffer_c_f08_(MPI_Fint *comm, void **addr, MPI_Count *size, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Comm_detach_buffer_c(PMPI_Comm_f2c(*comm), addr, size));
}
void mpi_session_detach_buffer_c_f08_(MPI_Fint *session, void **addr, MPI_Count *size, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Session_detach_buffer_c(PMPI_Session_f2c(*session), addr, size));
}
[[gnu::alias("mpi_buffer_detach_c_f08_")]] void pmpi_buffer_detach_c_f08_(void **, MPI_Count *, MPI_Fint *);
[[gnu::alias("mpi_comm_detach_buffer_c_f08_")]] void pmpi_comm_detach_buffer_c_f08_(MPI_Fint *, void **, MPI_Count *,
                                                                                    MPI_Fint *);
[[gnu::alias("mpi_session_detach_buffer_c_f08_")]] void pmpi_session_detach_buffer_c_f08_(MPI_Fint *, void **,
                                                                                          MPI_Count *, MPI_Fint *);

}  // extern "C"
