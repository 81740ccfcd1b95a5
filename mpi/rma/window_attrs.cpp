// The window's attributes, group, name, info hints and error handlers (the
// MPI_Win_get_attr ... MPI_Win_call_errhandler calls).
#include <cstdio>
#include <cstring>

#include "mpi/comm/attributes.hpp"
#include "mpi/checks.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/info.hpp"
#include "mpi/rma/window.hpp"

using namespace ftmpi::mpi;

extern "C" {

int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag) {
    FTMPI_TRY(check_win("MPI_Win_get_attr", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_attr", win->comm, attribute_val, "attribute_val"));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_attr", win->comm, flag, "flag"));
    auto out = static_cast<void **>(attribute_val);
    *flag = 1;
    switch (keyval) {
    case MPI_WIN_BASE: *out = win->base; break;
    case MPI_WIN_SIZE: *out = &win->size; break;
    case MPI_WIN_DISP_UNIT: *out = &win->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: *out = &win->flavor; break;
    case MPI_WIN_MODEL: *out = &win->model; break;
    default: return get_user_attr("MPI_Win_get_attr", win, keyval, attribute_val, flag);
    }
    return MPI_SUCCESS;
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group) {
    FTMPI_TRY(check_win("MPI_Win_get_group", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_group", win->comm, group, "group"));
    *group = new_group(win->comm->procs);
    return MPI_SUCCESS;
}

int MPI_Win_set_name(MPI_Win win, const char *name) {
    FTMPI_TRY(check_win("MPI_Win_set_name", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_set_name", win->comm, name, "win_name"));
    std::snprintf(win->comm->name, sizeof win->comm->name, "%s", name);
    return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char *name, int *resultlen) {
    FTMPI_TRY(check_win("MPI_Win_get_name", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_name", win->comm, name, "win_name"));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_name", win->comm, resultlen, "resultlen"));
    std::strcpy(name, win->comm->name);  // set_name bounds it
    *resultlen = static_cast<int>(std::strlen(name));
    return MPI_SUCCESS;
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
    FTMPI_TRY(check_win("MPI_Win_set_info", win));
    if (info == MPI_INFO_NULL || info->magic != Magic::info)
        return raise(win->comm, MPI_ERR_INFO, "MPI_Win_set_info", "invalid info (argument info)");
    merge_hints(win->info, info, HintKind::win);
    return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used) {
    FTMPI_TRY(check_win("MPI_Win_get_info", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_info", win->comm, info_used, "info_used"));
    *info_used = info_of(win->info);
    return MPI_SUCCESS;
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler) {
    FTMPI_CHECK(
        check_nonnull("MPI_Win_create_errhandler", MPI_COMM_NULL, reinterpret_cast<void *>(fn), "win_errhandler_fn"));
    FTMPI_CHECK(check_nonnull("MPI_Win_create_errhandler", MPI_COMM_NULL, errhandler, "errhandler"));
    *errhandler = new ftmpi_errhandler_s{Magic::errhandler, ftmpi_errhandler_s::Kind::user,
                                         reinterpret_cast<MPI_Comm_errhandler_function *>(fn), false};
    return MPI_SUCCESS;
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
    FTMPI_TRY(check_win("MPI_Win_set_errhandler", win));
    if (errhandler == MPI_ERRHANDLER_NULL || errhandler->magic != Magic::errhandler)
        return raise(win->comm, MPI_ERR_ARG, "MPI_Win_set_errhandler", "invalid error handler (argument errhandler)");
    errhandler_retain(errhandler);
    errhandler_release(win->comm->errhandler);
    win->comm->errhandler = errhandler;
    return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler) {
    FTMPI_TRY(check_win("MPI_Win_get_errhandler", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_get_errhandler", win->comm, errhandler, "errhandler"));
    errhandler_retain(win->comm->errhandler);
    *errhandler = win->comm->errhandler;
    return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode) {
    FTMPI_TRY(check_win("MPI_Win_call_errhandler", win));
    raise(win->comm, errorcode, "MPI_Win_call_errhandler", "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}

}  // extern "C"
