// The Fortran wrappers mpi/api/fortran.py cannot generate (fortran_kinds.SPECIAL):
// calls whose Fortran form differs from C's (MPI_Init, the functions),
// pointers returned as INTEGER(KIND=MPI_ADDRESS_KIND) (attributes), and
// strings whose lengths are arguments (MPI_Info_get, MPI_Info_get_string).
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "mpi/fortran/support.hpp"

using namespace ftmpi::fortran;

namespace {

// A predefined attribute's C value points to its value (MPI_WIN_BASE is
// the base address itself): Fortran gets the value.
MPI_Aint comm_value(int keyval, void *v) {
    switch (keyval) {
    case MPI_TAG_UB:
    case MPI_HOST:
    case MPI_IO:
    case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE:
    case MPI_APPNUM:
    case MPI_LASTUSEDCODE:
    case MPI_FT: return *static_cast<int *>(v);
    default: return reinterpret_cast<MPI_Aint>(v);
    }
}

MPI_Aint win_value(int keyval, void *v) {
    switch (keyval) {
    case MPI_WIN_SIZE: return *static_cast<MPI_Aint *>(v);
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL: return *static_cast<int *>(v);
    default: return reinterpret_cast<MPI_Aint>(v);
    }
}

template <typename H, typename Get>
void get_attr(H h, MPI_Fint keyval, MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierr, Get get,
              MPI_Aint (*value_of)(int, void *)) {
    void *v = nullptr;
    int f = 0;
    const int rc = get(h, keyval, &v, &f);
    if (rc == MPI_SUCCESS && f) *value = value_of(keyval, v);
    *flag = f != 0;
    set_ierr(ierr, rc);
}

MPI_Aint plain_value(int, void *v) { return reinterpret_cast<MPI_Aint>(v); }

void *as_pointer(MPI_Aint v) { return reinterpret_cast<void *>(v); }

// An output string whose C length counts the NUL (MPI_Info_get_string,
// MPI_Session_get_nth_pset): Fortran's `len` in and out counts none.
template <typename Call>
void string_with_length(char *value, std::size_t value_len, MPI_Fint *len, MPI_Fint *flag, MPI_Fint *ierr, Call call) {
    std::vector<char> buf(static_cast<std::size_t>(*len > 0 ? *len : 0) + 1, '\0');
    int clen = *len > 0 ? *len + 1 : 0;
    int f = 1;
    const int rc = call(&clen, buf.data(), &f);
    if (rc == MPI_SUCCESS && f) {
        if (*len > 0) to_fortran(buf.data(), value, value_len);
        *len = clen > 0 ? clen - 1 : 0;
    }
    if (flag != nullptr) *flag = f != 0;
    set_ierr(ierr, rc);
}

}  // namespace

extern "C" {

void mpi_init_(MPI_Fint *ierr) { set_ierr(ierr, PMPI_Init(nullptr, nullptr)); }

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Init_thread(nullptr, nullptr, *required, provided));
}

void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierr) {
    MPI_Info c = MPI_INFO_NULL;
    const int rc = PMPI_Info_create_env(0, nullptr, &c);
    if (rc == MPI_SUCCESS) *info = PMPI_Info_c2f(c);
    set_ierr(ierr, rc);
}

void mpi_pcontrol_(MPI_Fint *level) { PMPI_Pcontrol(*level); }

double mpi_wtime_() { return PMPI_Wtime(); }
double mpi_wtick_() { return PMPI_Wtick(); }
MPI_Aint mpi_aint_add_(MPI_Aint *base, MPI_Aint *disp) { return PMPI_Aint_add(*base, *disp); }
MPI_Aint mpi_aint_diff_(MPI_Aint *addr1, MPI_Aint *addr2) { return PMPI_Aint_diff(*addr1, *addr2); }

// BUFFER_ADDR is a choice argument in Fortran: the C address is not returned.
void mpi_buffer_detach_(void *, MPI_Fint *size, MPI_Fint *ierr) {
    void *addr = nullptr;
    set_ierr(ierr, PMPI_Buffer_detach(&addr, size));
}

void mpi_comm_detach_buffer_(MPI_Fint *comm, void *, MPI_Fint *size, MPI_Fint *ierr) {
    void *addr = nullptr;
    set_ierr(ierr, PMPI_Comm_detach_buffer(PMPI_Comm_f2c(*comm), &addr, size));
}

void mpi_session_detach_buffer_(MPI_Fint *session, void *, MPI_Fint *size, MPI_Fint *ierr) {
    void *addr = nullptr;
    set_ierr(ierr, PMPI_Session_detach_buffer(PMPI_Session_f2c(*session), &addr, size));
}

// MPI_SIZEOF's specifics (mpi/api/fortran_text.py, SIZEOF_TYPES): the
// size of X's type, whatever X's rank. mpi and mpi_f08 share them; an absent
// ierror is null.
#define FTMPI_FORTRAN_SIZEOF(NAME, BYTES)               \
    void NAME(void *, MPI_Fint *size, MPI_Fint *ierr) { \
        *size = BYTES;                                  \
        set_ierr(ierr, MPI_SUCCESS);                    \
    }
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_integer1_, 1)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_integer2_, 2)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_integer4_, 4)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_integer8_, 8)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_integer16_, 16)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_real4_, 4)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_real8_, 8)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_real16_, 16)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_complex4_, 8)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_complex8_, 16)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_complex16_, 32)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_logical1_, 1)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_logical2_, 2)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_logical4_, 4)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_logical8_, 8)
FTMPI_FORTRAN_SIZEOF(mpi_sizeof_character1_, 1)

// MPI_F_SYNC_REG: an external call the compiler must assume reads and
// writes the buffer; nothing more.
void mpi_f_sync_reg_(void *) {}
void mpi_f_sync_reg_f08ts_(void *) {}

// mpi_f08's status conversions: a Fortran status and a TYPE(MPI_Status)
// hold the same integers.
void mpi_status_f2f08_f08_(MPI_Fint *f_status, MPI_F08_status *f08_status, MPI_Fint *ierr) {
    MPI_Status c;
    std::memcpy(&c, f_status, sizeof c);
    set_ierr(ierr, PMPI_Status_c2f08(&c, f08_status));
}

void mpi_status_f082f_f08_(MPI_F08_status *f08_status, MPI_Fint *f_status, MPI_Fint *ierr) {
    MPI_Status c;
    std::memcpy(&c, f08_status, sizeof c);
    set_ierr(ierr, PMPI_Status_c2f(&c, f_status));
}

// mpi_f08's forms: BUFFER_ADDR is a TYPE(C_PTR), the C address.
void mpi_buffer_detach_f08_(void **buffer_addr, MPI_Fint *size, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Buffer_detach(buffer_addr, size));
}

void mpi_comm_detach_buffer_f08_(MPI_Fint *comm, void **buffer_addr, MPI_Fint *size, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Comm_detach_buffer(PMPI_Comm_f2c(*comm), buffer_addr, size));
}

void mpi_session_detach_buffer_f08_(MPI_Fint *session, void **buffer_addr, MPI_Fint *size, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Session_detach_buffer(PMPI_Session_f2c(*session), buffer_addr, size));
}

[[gnu::alias("mpi_buffer_detach_f08_")]] void pmpi_buffer_detach_f08_(void **, MPI_Fint *, MPI_Fint *);
[[gnu::alias("mpi_comm_detach_buffer_f08_")]] void pmpi_comm_detach_buffer_f08_(MPI_Fint *, void **, MPI_Fint *,
                                                                                MPI_Fint *);
[[gnu::alias("mpi_session_detach_buffer_f08_")]] void pmpi_session_detach_buffer_f08_(MPI_Fint *, void **, MPI_Fint *,
                                                                                      MPI_Fint *);

// Attributes set from Fortran are stored by value.
void mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierr) {
    get_attr(PMPI_Comm_f2c(*comm), *keyval, value, flag, ierr, PMPI_Comm_get_attr, comm_value);
}

void mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Comm_set_attr(PMPI_Comm_f2c(*comm), *keyval, as_pointer(*value)));
}

void mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierr) {
    get_attr(PMPI_Win_f2c(*win), *keyval, value, flag, ierr, PMPI_Win_get_attr, win_value);
}

void mpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Win_set_attr(PMPI_Win_f2c(*win), *keyval, as_pointer(*value)));
}

void mpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag, MPI_Fint *ierr) {
    get_attr(PMPI_Type_f2c(*type), *keyval, value, flag, ierr, PMPI_Type_get_attr, plain_value);
}

void mpi_type_set_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Type_set_attr(PMPI_Type_f2c(*type), *keyval, as_pointer(*value)));
}

// MPI-1's forms: the value is a default INTEGER.
void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag, MPI_Fint *ierr) {
    MPI_Aint v = 0;
    get_attr(PMPI_Comm_f2c(*comm), *keyval, &v, flag, ierr, PMPI_Attr_get, comm_value);
    if (*flag) *value = static_cast<MPI_Fint>(v);
}

void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *ierr) {
    set_ierr(ierr, PMPI_Attr_put(PMPI_Comm_f2c(*comm), *keyval, as_pointer(*value)));
}

void mpi_info_get_(MPI_Fint *info, const char *key, MPI_Fint *valuelen, char *value, MPI_Fint *flag, MPI_Fint *ierr,
                   std::size_t key_len, std::size_t value_len) {
    StringIn k(key, key_len);
    std::vector<char> buf(static_cast<std::size_t>(*valuelen > 0 ? *valuelen : 0) + 1, '\0');
    int f = 0;
    const int rc = PMPI_Info_get(PMPI_Info_f2c(*info), k.get(), *valuelen, buf.data(), &f);
    if (rc == MPI_SUCCESS && f) to_fortran(buf.data(), value, value_len);
    *flag = f != 0;
    set_ierr(ierr, rc);
}

void mpi_info_get_string_(MPI_Fint *info, const char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                          MPI_Fint *ierr, std::size_t key_len, std::size_t value_len) {
    StringIn k(key, key_len);
    const MPI_Info c = PMPI_Info_f2c(*info);
    string_with_length(value, value_len, buflen, flag, ierr,
                       [&](int *len, char *buf, int *f) { return PMPI_Info_get_string(c, k.get(), len, buf, f); });
}

void mpi_session_get_nth_pset_(MPI_Fint *session, MPI_Fint *info, MPI_Fint *n, MPI_Fint *pset_len, char *pset_name,
                               MPI_Fint *ierr, std::size_t name_len) {
    const MPI_Session s = PMPI_Session_f2c(*session);
    const MPI_Info i = PMPI_Info_f2c(*info);
    string_with_length(pset_name, name_len, pset_len, nullptr, ierr,
                       [&](int *len, char *buf, int *) { return PMPI_Session_get_nth_pset(s, i, *n, len, buf); });
}

}  // extern "C"
