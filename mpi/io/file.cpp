// MPI-IO: opening, closing and managing files, their hints, atomicity and
// error handlers. See mpi/io/file.hpp for the design.
#include "mpi/io/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/ulfm/ulfm.hpp"

namespace ftmpi::mpi {

bool valid_file(MPI_File f) { return f != MPI_FILE_NULL && f->magic == Magic::file; }

int check_file(const char *call, MPI_File f) {
    FTMPI_TRY(check_init(call));
    if (valid_file(f)) return MPI_SUCCESS;
    return raise_file_null(MPI_ERR_FILE, call, "invalid file (argument fh is %s)",
                           f == MPI_FILE_NULL ? "MPI_FILE_NULL" : "not a file");
}

int io_error_class(int err) {
    switch (err) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case ENOSPC: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP: return MPI_ERR_BAD_FILE;
    default: return MPI_ERR_IO;
    }
}

// One member's contribution to a vote: its outcome so far and a value that
// must be the same everywhere.
struct Ballot {
    int err;
    int pad;
    long long value;
};

void vote(MPI_Comm team, int err, long long value, int *first_err, bool *same) {
    std::vector<Ballot> all(static_cast<std::size_t>(team->size));
    Ballot mine{err, 0, value};
    const int xerr = team_allgather(team, &mine, static_cast<int>(sizeof mine), all.data());
    *first_err = MPI_SUCCESS;
    *same = true;
    const Ballot *ref = nullptr;
    for (int r = 0; r < team->size; ++r) {
        if (recognized(team, r)) continue;  // after a validate: its entry was not exchanged
        const Ballot &b = all[static_cast<std::size_t>(r)];
        if (*first_err == MPI_SUCCESS) *first_err = b.err;
        if (ref == nullptr) ref = &b;
        if (b.value != ref->value) *same = false;
    }
    if (xerr != MPI_SUCCESS) *first_err = xerr;
}

namespace {

int vote_err(MPI_Comm team, int err) {
    int first;
    bool same;
    vote(team, err, 0, &first, &same);
    return first;
}

constexpr int k_access_modes = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR;
constexpr int k_all_modes = k_access_modes | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE |
                            MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;

// Why `amode` is not a valid access mode (MPI 3.1 §13.2.1), or null.
const char *amode_problem(int amode) {
    if ((amode & ~k_all_modes) != 0) return "unknown bits set";
    const int access = amode & k_access_modes;
    if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR)
        return "exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR is required";
    if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)) != 0)
        return "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
    if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL) != 0) return "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
    return nullptr;
}

int open_flags(int amode) {
    if (amode & MPI_MODE_RDONLY) return O_RDONLY;
    return (amode & MPI_MODE_WRONLY) ? O_WRONLY : O_RDWR;
}

// The file's size, or -1 with errno set.
MPI_Offset file_size(int fd) {
    struct stat st;
    if (::fstat(fd, &st) != 0) return -1;
    return static_cast<MPI_Offset>(st.st_size);
}

// The ranks' attempts to open: the leader first (it creates the file when asked),
// then the others, each step's outcome shared. Returns the uniform class;
// *fd is this process's descriptor (-1 on failure here) and *sys its errno
// (0 when it opened, or did not try).
int open_everywhere(MPI_Comm hidden, const char *path, int amode, int *fd, int *sys) {
    int flags = open_flags(amode) | O_CLOEXEC;
    int err = MPI_SUCCESS;
    const int leader = file_leader(hidden);
    if (hidden->rank == leader) {
        int first = flags;
        if (amode & MPI_MODE_CREATE) first |= O_CREAT;
        if (amode & MPI_MODE_EXCL) first |= O_EXCL;
        *fd = ::open(path, first, 0666);
        if (*fd < 0) *sys = errno, err = io_error_class(errno);
    }
    FTMPI_TRY(vote_err(hidden, err));
    if (hidden->rank != leader) {
        *fd = ::open(path, flags);
        if (*fd < 0) *sys = errno, err = io_error_class(errno);
    }
    return vote_err(hidden, err);
}

// Collective and uniform: rank 0 applies `op` to the file (set_size,
// preallocate), the others wait for its outcome. `size` must be the same at
// every member.
template <typename Op>
int resize_collectively(const char *call, MPI_File f, MPI_Offset size, Op op) {
    int err = MPI_SUCCESS;
    const char *why = "";
    if (size < 0) err = MPI_ERR_ARG, why = "negative size";
    else if ((f->amode & MPI_MODE_RDONLY) != 0) err = MPI_ERR_ACCESS, why = "the file was opened MPI_MODE_RDONLY";
    else if ((f->amode & MPI_MODE_SEQUENTIAL) != 0)
        err = MPI_ERR_UNSUPPORTED_OPERATION, why = "the file was opened MPI_MODE_SEQUENTIAL";
    int first;
    bool same;
    vote(f->comm, err, size, &first, &same);
    if (first == MPI_SUCCESS && !same)
        return raise(f->comm, MPI_ERR_NOT_SAME, call, "argument size differs between processes (%lld here)",
                     static_cast<long long>(size));
    if (first != MPI_SUCCESS)
        return raise(f->comm, first, call, "%s", err != MPI_SUCCESS ? why : "failed at another process");
    int sys = 0;
    if (f->comm->rank == file_leader(f->comm) && op(f->fd, size) != 0) sys = errno;
    first = vote_err(f->comm, sys != 0 ? io_error_class(sys) : MPI_SUCCESS);
    if (first != MPI_SUCCESS)
        return raise(f->comm, first, call, "%s (size %lld of %s)", sys != 0 ? std::strerror(sys) : "failed at rank 0",
                     static_cast<long long>(size), f->path.c_str());
    return MPI_SUCCESS;
}

// The handler a file call raises on: MPI_FILE_NULL's for a null file.
int raise_on(MPI_File f, int code, const char *call, const char *text) {
    if (f == MPI_FILE_NULL) return raise_file_null(code, call, "%s", text);
    return raise(f->comm, code, call, "%s", text);
}

bool valid_errhandler(MPI_Errhandler h) { return h != MPI_ERRHANDLER_NULL && h->magic == Magic::errhandler; }

}  // namespace

int file_uniform(MPI_File f, int mine) { return vote_err(f->comm, mine); }

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

// Collective over comm and uniform: the file is open at every member or at
// none (every member gets the class of the first member that failed).
// Errors go to MPI_FILE_NULL's handler.
int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
    const char *call = "MPI_File_open";
    FTMPI_TRY(check_init(call));
    if (!valid_comm(comm) || comm->inter)
        return raise_file_null(MPI_ERR_COMM, call, "invalid communicator (argument comm is %s)",
                               comm == MPI_COMM_NULL ? "MPI_COMM_NULL"
                               : !valid_comm(comm)   ? "not a communicator"
                                                     : "an inter-communicator");
    if (filename == nullptr) return raise_file_null(MPI_ERR_ARG, call, "argument filename is NULL");
    if (fh == nullptr) return raise_file_null(MPI_ERR_ARG, call, "argument fh is NULL");
    if (info != MPI_INFO_NULL && info->magic != Magic::info)
        return raise_file_null(MPI_ERR_INFO, call, "invalid info (argument info)");
    *fh = MPI_FILE_NULL;
    const char *bad = amode_problem(amode);
    MPI_Comm hidden = MPI_COMM_NULL;
    int err = make_hidden_comm(comm, &hidden);                      // at every member or at none
    if (hidden != MPI_COMM_NULL) inherit_recognized(comm, hidden);  // a validated comm's collectives skip them
    int fd = -1;
    const char *why = "failed at another process";
    if (hidden != MPI_COMM_NULL) {
        int first;
        bool same;
        vote(hidden, bad != nullptr ? MPI_ERR_AMODE : MPI_SUCCESS, amode, &first, &same);
        if (first == MPI_SUCCESS && !same) first = MPI_ERR_NOT_SAME, why = "argument amode differs between processes";
        if (bad != nullptr) why = bad;
        if (first == MPI_SUCCESS) {
            int sys = 0;
            first = open_everywhere(hidden, filename, amode, &fd, &sys);
            if (first != MPI_SUCCESS) why = sys != 0 ? std::strerror(sys) : "cannot open the file at another process";
        }
        err = first;
    }
    int ok = err == MPI_SUCCESS ? 1 : 0;
    if (hidden != MPI_COMM_NULL) agree_internal(hidden, &ok);
    if (!ok) {
        if (fd >= 0) ::close(fd);
        if (hidden != MPI_COMM_NULL) discard_comm(hidden);
        return raise_file_null(err != MPI_SUCCESS ? err : MPI_ERR_PROC_FAILED, call, "%s: %s (amode 0x%x)", filename,
                               why, amode);
    }
    auto f = new ftmpi_file_s;
    f->comm = hidden;
    f->fd = fd;
    f->amode = amode;
    f->path = filename;
    failures_at_open(*f);
    merge_hints(f->info, info, HintKind::file);
    hidden->file = f;
    hidden->handler_of = ftmpi_comm_s::HandlerOf::file;
    std::snprintf(hidden->name, sizeof hidden->name, "%s", filename);
    errhandler_release(hidden->errhandler);  // the parent's: a file starts with MPI_FILE_NULL's
    hidden->errhandler = file_default_errhandler();
    errhandler_retain(hidden->errhandler);
    f->shfp_path = shared_pointer_path(f->path, hidden->uid);
    install_view(*f, 0, MPI_BYTE, MPI_BYTE);
    if (amode & MPI_MODE_APPEND) {
        // Both file pointers start at the end (the default view counts bytes).
        const MPI_Offset size = file_size(fd);
        f->pos = size > 0 ? size : 0;
        const int sys = hidden->rank == file_leader(hidden) ? shared_store(*f, f->pos) : 0;
        if (const int e = file_uniform(f, sys != 0 ? io_error_class(sys) : MPI_SUCCESS); e != MPI_SUCCESS) {
            *fh = f;
            MPI_File_close(fh);
            return raise_file_null(e, call, "%s: cannot set the shared file pointer: %s", filename,
                                   sys != 0 ? std::strerror(sys) : "failed at another process");
        }
    }
    *fh = f;
    return MPI_SUCCESS;
}

// Collective: every member closes its descriptor, then (MPI_MODE_DELETE_ON_CLOSE)
// rank 0 removes the file. The handle is freed even when that fails.
int MPI_File_close(MPI_File *fh) {
    const char *call = "MPI_File_close";
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, fh, "fh"));
    FTMPI_TRY(check_file(call, *fh));
    MPI_File f = *fh;
    shared_pointer_close(*f);
    int sys = ::close(f->fd) != 0 ? errno : 0;
    int err = file_uniform(f, sys != 0 ? io_error_class(sys) : MPI_SUCCESS);
    const bool leader = f->comm->rank == file_leader(f->comm);
    if (leader) ::unlink(f->shfp_path.c_str());  // every member closed it; ENOENT: never used
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) != 0) {
        int del = 0;
        if (leader && ::unlink(f->path.c_str()) != 0) del = errno;
        const int e = file_uniform(f, del != 0 ? io_error_class(del) : MPI_SUCCESS);
        if (err == MPI_SUCCESS) err = e;
        if (sys == 0) sys = del;
    }
    // Raised while the handle still exists: the file's handler gets the file.
    const int rc = err == MPI_SUCCESS ? MPI_SUCCESS
                                      : raise(f->comm, err, call, "%s: %s", f->path.c_str(),
                                              sys != 0 ? std::strerror(sys) : "failed at another process");
    f->comm->file = nullptr;
    discard_comm(f->comm);
    dt_release(f->etype);
    dt_release(f->filetype);
    f->magic = Magic::dead;
    delete f;
    *fh = MPI_FILE_NULL;
    return rc;
}

int MPI_File_delete(const char *filename, MPI_Info info) {
    const char *call = "MPI_File_delete";
    FTMPI_TRY(check_init(call));
    if (filename == nullptr) return raise_file_null(MPI_ERR_ARG, call, "argument filename is NULL");
    if (info != MPI_INFO_NULL && info->magic != Magic::info)
        return raise_file_null(MPI_ERR_INFO, call, "invalid info (argument info)");
    if (::unlink(filename) != 0) {
        const int e = errno;
        return raise_file_null(io_error_class(e), call, "%s: %s", filename, std::strerror(e));
    }
    return MPI_SUCCESS;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
    FTMPI_TRY(check_live_file("MPI_File_set_size", fh));
    return resize_collectively("MPI_File_set_size", fh, size,
                               [](int fd, MPI_Offset n) { return ::ftruncate(fd, static_cast<off_t>(n)); });
}

// Storage for the first `size` bytes; never shrinks the file.
int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
    FTMPI_TRY(check_live_file("MPI_File_preallocate", fh));
    return resize_collectively("MPI_File_preallocate", fh, size, [](int fd, MPI_Offset n) {
        if (n == 0) return 0;
        const int e = ::posix_fallocate(fd, 0, static_cast<off_t>(n));
        errno = e;
        return e;
    });
}

int MPI_File_get_size(MPI_File fh, MPI_Offset *size) {
    FTMPI_TRY(check_file("MPI_File_get_size", fh));
    FTMPI_CHECK(check_nonnull("MPI_File_get_size", fh->comm, size, "size"));
    const MPI_Offset n = file_size(fh->fd);
    if (n < 0) {
        const int e = errno;
        return raise(fh->comm, io_error_class(e), "MPI_File_get_size", "%s: %s", fh->path.c_str(), std::strerror(e));
    }
    *size = n;
    return MPI_SUCCESS;
}

int MPI_File_get_group(MPI_File fh, MPI_Group *group) {
    FTMPI_TRY(check_file("MPI_File_get_group", fh));
    FTMPI_CHECK(check_nonnull("MPI_File_get_group", fh->comm, group, "group"));
    *group = new_group(fh->comm->procs);
    return MPI_SUCCESS;
}

int MPI_File_get_amode(MPI_File fh, int *amode) {
    FTMPI_TRY(check_file("MPI_File_get_amode", fh));
    FTMPI_CHECK(check_nonnull("MPI_File_get_amode", fh->comm, amode, "amode"));
    *amode = fh->amode;
    return MPI_SUCCESS;
}

// The hints files take (merge_hints) are kept; the others are ignored.
int MPI_File_set_info(MPI_File fh, MPI_Info info) {
    FTMPI_TRY(check_file("MPI_File_set_info", fh));
    if (info != MPI_INFO_NULL) {
        if (info->magic != Magic::info)
            return raise(fh->comm, MPI_ERR_INFO, "MPI_File_set_info", "invalid info (argument info)");
        merge_hints(fh->info, info, HintKind::file);
    }
    return MPI_SUCCESS;
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info_used) {
    FTMPI_TRY(check_file("MPI_File_get_info", fh));
    FTMPI_CHECK(check_nonnull("MPI_File_get_info", fh->comm, info_used, "info_used"));
    *info_used = info_of(fh->info);
    return MPI_SUCCESS;
}

// Collective; flag must be the same at every member.
int MPI_File_set_atomicity(MPI_File fh, int flag) {
    FTMPI_TRY(check_live_file("MPI_File_set_atomicity", fh));
    int first;
    bool same;
    vote(fh->comm, MPI_SUCCESS, flag != 0, &first, &same);
    if (first == MPI_SUCCESS && !same)
        return raise(fh->comm, MPI_ERR_NOT_SAME, "MPI_File_set_atomicity",
                     "argument flag differs between processes (%d here)", flag);
    if (first != MPI_SUCCESS)
        return raise(fh->comm, first, "MPI_File_set_atomicity", "the exchange with the other processes failed");
    fh->atomic = flag != 0;
    return MPI_SUCCESS;
}

int MPI_File_get_atomicity(MPI_File fh, int *flag) {
    FTMPI_TRY(check_file("MPI_File_get_atomicity", fh));
    FTMPI_CHECK(check_nonnull("MPI_File_get_atomicity", fh->comm, flag, "flag"));
    *flag = fh->atomic ? 1 : 0;
    return MPI_SUCCESS;
}

int MPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler) {
    const char *call = "MPI_File_create_errhandler";
    if (fn == nullptr) return raise_file_null(MPI_ERR_ARG, call, "argument file_errhandler_fn is NULL");
    if (errhandler == nullptr) return raise_file_null(MPI_ERR_ARG, call, "argument errhandler is NULL");
    *errhandler = new ftmpi_errhandler_s{Magic::errhandler, ftmpi_errhandler_s::Kind::user,
                                         reinterpret_cast<MPI_Comm_errhandler_function *>(fn), false};
    return MPI_SUCCESS;
}

// On MPI_FILE_NULL: the default file error handler (new files start with it).
int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
    const char *call = "MPI_File_set_errhandler";
    if (file != MPI_FILE_NULL) FTMPI_TRY(check_file(call, file));
    if (!valid_errhandler(errhandler))
        return raise_on(file, MPI_ERR_ARG, call, "invalid error handler (argument errhandler)");
    if (file == MPI_FILE_NULL) {
        set_file_default_errhandler(errhandler);
        return MPI_SUCCESS;
    }
    errhandler_retain(errhandler);
    errhandler_release(file->comm->errhandler);
    file->comm->errhandler = errhandler;
    return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler) {
    const char *call = "MPI_File_get_errhandler";
    if (file != MPI_FILE_NULL) FTMPI_TRY(check_file(call, file));
    if (errhandler == nullptr) return raise_on(file, MPI_ERR_ARG, call, "argument errhandler is NULL");
    *errhandler = file == MPI_FILE_NULL ? file_default_errhandler() : file->comm->errhandler;
    errhandler_retain(*errhandler);  // the returned handle is the user's to free
    return MPI_SUCCESS;
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode) {
    const char *call = "MPI_File_call_errhandler";
    if (fh == MPI_FILE_NULL) {
        raise_file_null(errorcode, call, "error code %d raised by the application", errorcode);
        return MPI_SUCCESS;
    }
    FTMPI_TRY(check_file(call, fh));
    raise(fh->comm, errorcode, call, "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}

}  // extern "C"
