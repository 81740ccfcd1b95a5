// Handle conversions between C handles and Fortran integer handles
// (MPI_Comm_c2f ... MPI_Session_f2c), and MPI_Status_c2f/f2c.
//
// C handles are pointers; the Fortran side is an int. Each kind of handle has
// a table. The predefined handles come first, numbered from 1 in mpi.h's
// order (the generated fortran_handles.h; mpif.h's constants are the same
// numbers). Other handles are numbered at their first conversion, and the
// number names that address from then on (an object created later at the
// address of a freed one takes over its number). 0 is the null handle.
// MPI_*_f2c of a number never handed out returns the null handle.
#include <cstring>
#include <span>
#include <unordered_map>
#include <vector>

#include "mpi/checks.hpp"

namespace ftmpi::mpi {
namespace {

#include "fortran_handles.h"

template <typename H>
struct HandleTable {
    std::vector<H> by_index{H{}};  // [0]: the null handle
    std::unordered_map<H, MPI_Fint> index;

    explicit HandleTable(std::span<const H> predefined) {
        for (H h : predefined) {
            if (h != H{}) index.emplace(h, static_cast<MPI_Fint>(by_index.size()));
            by_index.push_back(h);  // a handle this build lacks keeps its number, null
        }
    }

    MPI_Fint c2f(H h) {
        if (h == H{}) return 0;
        auto [it, added] = index.try_emplace(h, static_cast<MPI_Fint>(by_index.size()));
        if (added) by_index.push_back(h);
        return it->second;
    }
    H f2c(MPI_Fint i) const {
        return i > 0 && static_cast<std::size_t>(i) < by_index.size() ? by_index[static_cast<std::size_t>(i)] : H{};
    }
};

template <typename H>
HandleTable<H> &table() {
    static HandleTable<H> t(fortran_predefined(static_cast<H *>(nullptr)));
    return t;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

#define FTMPI_HANDLE_CONVERSIONS(NAME, H)                        \
    MPI_Fint MPI_##NAME##_c2f(H h) { return table<H>().c2f(h); } \
    H MPI_##NAME##_f2c(MPI_Fint i) { return table<H>().f2c(i); }

extern "C" {

static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "MPI_F_STATUS_SIZE is a whole number of MPI_Fint");

// Distinct addresses that no Fortran status array can have.
static MPI_Fint f_status_ignore_storage[1];
static MPI_Fint f_statuses_ignore_storage[1];
MPI_Fint *MPI_F_STATUS_IGNORE = f_status_ignore_storage;
MPI_Fint *MPI_F_STATUSES_IGNORE = f_statuses_ignore_storage;

FTMPI_HANDLE_CONVERSIONS(Comm, MPI_Comm)
FTMPI_HANDLE_CONVERSIONS(Type, MPI_Datatype)
FTMPI_HANDLE_CONVERSIONS(Group, MPI_Group)
FTMPI_HANDLE_CONVERSIONS(Request, MPI_Request)
FTMPI_HANDLE_CONVERSIONS(Op, MPI_Op)
FTMPI_HANDLE_CONVERSIONS(Errhandler, MPI_Errhandler)
FTMPI_HANDLE_CONVERSIONS(Info, MPI_Info)
FTMPI_HANDLE_CONVERSIONS(Win, MPI_Win)
FTMPI_HANDLE_CONVERSIONS(Message, MPI_Message)
FTMPI_HANDLE_CONVERSIONS(File, MPI_File)
FTMPI_HANDLE_CONVERSIONS(Session, MPI_Session)

static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "an MPI_F08_status holds a C status's bytes");
static MPI_F08_status f08_status_ignore_storage[1];
static MPI_F08_status f08_statuses_ignore_storage[1];
MPI_F08_status *MPI_F08_STATUS_IGNORE = f08_status_ignore_storage;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = f08_statuses_ignore_storage;

}  // extern "C"

namespace {

// A Fortran status (MPI_F_STATUS_SIZE integers) and a Fortran 2008 one hold
// the C status's bytes: every conversion is a copy, once both arguments are
// checked (`ignore1`, `ignore2`: the input's two "ignore" values).
int convert_status(const char *call, const void *in, const char *in_name, const void *ignore1, const void *ignore2,
                   void *out, const char *out_name) {
    if (in != nullptr && (in == ignore1 || in == ignore2))
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "argument %s is an \"ignore\" status", in_name);
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, in, in_name));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, out, out_name));
    std::memcpy(out, in, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status) {
    return convert_status("MPI_Status_c2f", c_status, "c_status", MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, f_status,
                          "f_status");
}

int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status) {
    return convert_status("MPI_Status_f2c", f_status, "f_status", MPI_F_STATUS_IGNORE, MPI_F_STATUSES_IGNORE, c_status,
                          "c_status");
}

int MPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status) {
    return convert_status("MPI_Status_c2f08", c_status, "c_status", MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, f08_status,
                          "f08_status");
}

int MPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status) {
    return convert_status("MPI_Status_f082c", f08_status, "f08_status", MPI_F08_STATUS_IGNORE, MPI_F08_STATUSES_IGNORE,
                          c_status, "c_status");
}

int MPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status) {
    return convert_status("MPI_Status_f082f", f08_status, "f08_status", MPI_F08_STATUS_IGNORE, MPI_F08_STATUSES_IGNORE,
                          f_status, "f_status");
}

int MPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status) {
    return convert_status("MPI_Status_f2f08", f_status, "f_status", MPI_F_STATUS_IGNORE, MPI_F_STATUSES_IGNORE,
                          f08_status, "f08_status");
}

}  // extern "C"
