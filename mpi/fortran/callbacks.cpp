// Callbacks written in Fortran (fortran_kinds.SPECIAL): user ops and error
// handlers, which the core calls with Fortran handles (mpi/fortran_hooks.hpp);
// attribute copy and delete functions and generalized requests, which get
// their extra_state and so go through trampolines here; and the predefined
// attribute functions, callable from Fortran.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "mpi/fortran/support.hpp"
#include "mpi/fortran_hooks.hpp"

using ftmpi::fortran::set_ierr;

namespace {

template <typename H, MPI_Fint (*C2F)(H)>
MPI_Fint handle_of(const void *h) {
    return C2F(*static_cast<const H *>(h));
}

template <typename Create, typename Fn>
void create_errhandler(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr, Create create, Fn *,
                       MPI_Fint (*to_fortran)(const void *)) {
    MPI_Errhandler c = MPI_ERRHANDLER_NULL;
    int rc = create(reinterpret_cast<Fn *>(fn), &c);
    if (rc == MPI_SUCCESS) rc = ftmpi::mpi::set_errhandler_fortran(c, to_fortran);
    if (rc == MPI_SUCCESS) *errhandler = PMPI_Errhandler_c2f(c);
    set_ierr(ierr, rc);
}

// A keyval made in Fortran: its functions and extra_state, which the C
// functions below get as their extra_state. MPI-1's (MPI_Keyval_create)
// take default INTEGERs for the value and extra_state.
struct Keyval {
    void *copy;
    void *del;
    MPI_Aint extra;
    bool mpi1;
};

// Keyvals live as long as the process (MPI_*_free_keyval leaves the
// attributes that use one in place).
std::mutex g_keyvals_lock;
std::vector<std::unique_ptr<Keyval>> g_keyvals;

Keyval *new_keyval(void *copy, void *del, MPI_Aint extra, bool mpi1) {
    std::lock_guard<std::mutex> guard(g_keyvals_lock);
    g_keyvals.push_back(std::make_unique<Keyval>(Keyval{copy, del, extra, mpi1}));
    return g_keyvals.back().get();
}

using CopyAint = void (*)(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Aint *, MPI_Fint *, MPI_Fint *);
using CopyInt = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
using DeleteAint = void (*)(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *);
using DeleteInt = void (*)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

// Values set from Fortran are stored as the pointer's bits.
template <typename H, MPI_Fint (*C2F)(H)>
int copy_attr(H old, int keyval, void *extra, void *in, void *out, int *flag) {
    auto *k = static_cast<Keyval *>(extra);
    MPI_Fint h = C2F(old), kv = keyval, f = 0, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint e = static_cast<MPI_Fint>(k->extra), vin = static_cast<MPI_Fint>(reinterpret_cast<intptr_t>(in));
        MPI_Fint vout = 0;
        reinterpret_cast<CopyInt>(k->copy)(&h, &kv, &e, &vin, &vout, &f, &ierr);
        *static_cast<void **>(out) = reinterpret_cast<void *>(static_cast<intptr_t>(vout));
    } else {
        MPI_Aint vin = reinterpret_cast<MPI_Aint>(in), vout = 0;
        reinterpret_cast<CopyAint>(k->copy)(&h, &kv, &k->extra, &vin, &vout, &f, &ierr);
        *static_cast<void **>(out) = reinterpret_cast<void *>(vout);
    }
    *flag = f != 0;
    return ierr;
}

template <typename H, MPI_Fint (*C2F)(H)>
int delete_attr(H obj, int keyval, void *value, void *extra) {
    auto *k = static_cast<Keyval *>(extra);
    MPI_Fint h = C2F(obj), kv = keyval, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint e = static_cast<MPI_Fint>(k->extra), v = static_cast<MPI_Fint>(reinterpret_cast<intptr_t>(value));
        reinterpret_cast<DeleteInt>(k->del)(&h, &kv, &v, &e, &ierr);
    } else {
        MPI_Aint v = reinterpret_cast<MPI_Aint>(value);
        reinterpret_cast<DeleteAint>(k->del)(&h, &kv, &v, &k->extra, &ierr);
    }
    return ierr;
}

template <typename H, MPI_Fint (*C2F)(H), typename CopyFn, typename DeleteFn, typename Create>
void create_keyval(void *copy, void *del, MPI_Fint *keyval, MPI_Aint extra, bool mpi1, MPI_Fint *ierr, Create create) {
    Keyval *k = new_keyval(copy, del, extra, mpi1);
    set_ierr(ierr, create(reinterpret_cast<CopyFn *>(&copy_attr<H, C2F>),
                          reinterpret_cast<DeleteFn *>(&delete_attr<H, C2F>), keyval, k));
}

// A generalized request made in Fortran.
struct Grequest {
    void (*query)(MPI_Aint *, MPI_Fint *, MPI_Fint *);
    void (*free)(MPI_Aint *, MPI_Fint *);
    void (*cancel)(MPI_Aint *, MPI_Fint *, MPI_Fint *);
    MPI_Aint extra;
};

int grequest_query(void *extra, MPI_Status *status) {
    auto *g = static_cast<Grequest *>(extra);
    MPI_Fint f[MPI_F_STATUS_SIZE], ierr = MPI_SUCCESS;
    std::memcpy(f, status, sizeof f);
    g->query(&g->extra, f, &ierr);
    std::memcpy(status, f, sizeof f);
    return ierr;
}

int grequest_free(void *extra) {
    std::unique_ptr<Grequest> g(static_cast<Grequest *>(extra));
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(&g->extra, &ierr);
    return ierr;
}

int grequest_cancel(void *extra, int complete) {
    auto *g = static_cast<Grequest *>(extra);
    MPI_Fint c = complete != 0, ierr = MPI_SUCCESS;
    g->cancel(&g->extra, &c, &ierr);
    return ierr;
}

}  // namespace

extern "C" {

void mpi_op_create_(void *fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierr) {
    MPI_Op c = MPI_OP_NULL;
    int rc = PMPI_Op_create(reinterpret_cast<MPI_User_function *>(fn), *commute, &c);
    if (rc == MPI_SUCCESS) rc = ftmpi::mpi::set_op_fortran(c);
    if (rc == MPI_SUCCESS) *op = PMPI_Op_c2f(c);
    set_ierr(ierr, rc);
}

void mpi_comm_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr) {
    create_errhandler(fn, errhandler, ierr, PMPI_Comm_create_errhandler,
                      static_cast<MPI_Comm_errhandler_function *>(nullptr), handle_of<MPI_Comm, PMPI_Comm_c2f>);
}

void mpi_errhandler_create_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr) {
    mpi_comm_create_errhandler_(fn, errhandler, ierr);
}

void mpi_win_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr) {
    create_errhandler(fn, errhandler, ierr, PMPI_Win_create_errhandler,
                      static_cast<MPI_Win_errhandler_function *>(nullptr), handle_of<MPI_Win, PMPI_Win_c2f>);
}

void mpi_file_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr) {
    create_errhandler(fn, errhandler, ierr, PMPI_File_create_errhandler,
                      static_cast<MPI_File_errhandler_function *>(nullptr), handle_of<MPI_File, PMPI_File_c2f>);
}

void mpi_session_create_errhandler_(void *fn, MPI_Fint *errhandler, MPI_Fint *ierr) {
    create_errhandler(fn, errhandler, ierr, PMPI_Session_create_errhandler,
                      static_cast<MPI_Session_errhandler_function *>(nullptr),
                      handle_of<MPI_Session, PMPI_Session_c2f>);
}

void mpi_comm_create_keyval_(void *copy, void *del, MPI_Fint *keyval, MPI_Aint *extra, MPI_Fint *ierr) {
    create_keyval<MPI_Comm, PMPI_Comm_c2f, MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function>(
        copy, del, keyval, *extra, false, ierr, PMPI_Comm_create_keyval);
}

void mpi_keyval_create_(void *copy, void *del, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *ierr) {
    create_keyval<MPI_Comm, PMPI_Comm_c2f, MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function>(
        copy, del, keyval, *extra, true, ierr, PMPI_Comm_create_keyval);
}

void mpi_type_create_keyval_(void *copy, void *del, MPI_Fint *keyval, MPI_Aint *extra, MPI_Fint *ierr) {
    create_keyval<MPI_Datatype, PMPI_Type_c2f, MPI_Type_copy_attr_function, MPI_Type_delete_attr_function>(
        copy, del, keyval, *extra, false, ierr, PMPI_Type_create_keyval);
}

void mpi_win_create_keyval_(void *copy, void *del, MPI_Fint *keyval, MPI_Aint *extra, MPI_Fint *ierr) {
    create_keyval<MPI_Win, PMPI_Win_c2f, MPI_Win_copy_attr_function, MPI_Win_delete_attr_function>(
        copy, del, keyval, *extra, false, ierr, PMPI_Win_create_keyval);
}

void mpi_grequest_start_(void *query, void *free_fn, void *cancel, MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierr) {
    auto *g = new Grequest{reinterpret_cast<decltype(Grequest::query)>(query),
                           reinterpret_cast<decltype(Grequest::free)>(free_fn),
                           reinterpret_cast<decltype(Grequest::cancel)>(cancel), *extra};
    MPI_Request c = MPI_REQUEST_NULL;
    const int rc = PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, g, &c);
    if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(c);
    else delete g;
    set_ierr(ierr, rc);
}

// The predefined attribute functions, for Fortran (MPI_COMM_DUP_FN ...):
// the value is an INTEGER(KIND=MPI_ADDRESS_KIND), MPI-1's a default INTEGER.
#define FTMPI_FORTRAN_ATTR_FNS(PREFIX, V)                                                               \
    void PREFIX##null_copy_fn_(MPI_Fint *, MPI_Fint *, V *, V *, V *, MPI_Fint *flag, MPI_Fint *ierr) { \
        *flag = 0;                                                                                      \
        *ierr = MPI_SUCCESS;                                                                            \
    }                                                                                                   \
    void PREFIX##dup_fn_(MPI_Fint *, MPI_Fint *, V *, V *in, V *out, MPI_Fint *flag, MPI_Fint *ierr) {  \
        *out = *in;                                                                                     \
        *flag = 1;                                                                                      \
        *ierr = MPI_SUCCESS;                                                                            \
    }                                                                                                   \
    void PREFIX##null_delete_fn_(MPI_Fint *, MPI_Fint *, V *, V *, MPI_Fint *ierr) { *ierr = MPI_SUCCESS; }
FTMPI_FORTRAN_ATTR_FNS(mpi_comm_, MPI_Aint)
FTMPI_FORTRAN_ATTR_FNS(mpi_type_, MPI_Aint)
FTMPI_FORTRAN_ATTR_FNS(mpi_win_, MPI_Aint)
FTMPI_FORTRAN_ATTR_FNS(mpi_, MPI_Fint)

}  // extern "C"
