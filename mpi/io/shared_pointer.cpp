// MPI-IO: the shared file pointer's counter.
//
// The counter (etypes of the view, 8 bytes) lives in a sidecar file next to
// the file, ".<name>.ftmpi-shfp-<id>" (id: the file's hidden communicator's,
// the same at every member), read and updated under an fcntl lock. A process
// moves it without any other process's progress, on any node that sees the
// directory. The sidecar is made by the first process that needs it (a
// missing or empty sidecar reads as 0) and removed by MPI_File_close.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>

#include "mpi/io/file.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {

std::string shared_pointer_path(const std::string &path, std::uint64_t id) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    char suffix[40];
    std::snprintf(suffix, sizeof suffix, ".ftmpi-shfp-%016" PRIx64, id);
    return dir + "." + base + suffix;
}

namespace {

// The sidecar's descriptor, opened (and created) on first use; -1 with errno.
int sidecar(ftmpi_file_s &f) {
    if (f.shfp_fd < 0) f.shfp_fd = ::open(f.shfp_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    return f.shfp_fd;
}

// Locks or unlocks the counter's bytes; 0 or an errno.
int lock_counter(int fd, short type) {
    struct flock l {};
    l.l_type = type;
    l.l_whence = SEEK_SET;
    l.l_start = 0;
    l.l_len = sizeof(std::int64_t);
    while (::fcntl(fd, type == F_UNLCK ? F_SETLK : F_SETLKW, &l) != 0)
        if (errno != EINTR) return errno;
    return 0;
}

// Under the lock: *value = the counter, then the counter = update(*value).
template <typename Update>
int update_counter(ftmpi_file_s &f, MPI_Offset *value, Update update) {
    const int fd = sidecar(f);
    if (fd < 0) return errno;
    if (const int e = lock_counter(fd, F_WRLCK); e != 0) return e;
    std::int64_t v = 0;
    int err = 0;
    const ssize_t n = ::pread(fd, &v, sizeof v, 0);
    if (n < 0) err = errno;
    else if (n != static_cast<ssize_t>(sizeof v)) v = 0;  // not written yet
    if (err == 0) {
        const std::int64_t next = update(static_cast<MPI_Offset>(v));
        if (next != v && ::pwrite(fd, &next, sizeof next, 0) != static_cast<ssize_t>(sizeof next))
            err = errno != 0 ? errno : EIO;
    }
    lock_counter(fd, F_UNLCK);
    *value = static_cast<MPI_Offset>(v);
    return err;
}

}  // namespace

int shared_fetch_add(ftmpi_file_s &f, MPI_Offset add, MPI_Offset *before) {
    const int err = update_counter(f, before, [add](MPI_Offset v) { return v + add; });
    runtime::test_kill_point("io.shared");  // tests: a death between the reservation and the access
    return err;
}

int shared_store(ftmpi_file_s &f, MPI_Offset value) {
    MPI_Offset old;
    return update_counter(f, &old, [value](MPI_Offset) { return value; });
}

void shared_pointer_close(ftmpi_file_s &f) {
    if (f.shfp_fd >= 0) ::close(f.shfp_fd);
    f.shfp_fd = -1;
}

}  // namespace ftmpi::mpi
