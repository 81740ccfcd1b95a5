// MPI-IO: data access (MPI 3.1 §13.4) with explicit offsets, the individual
// file pointer and the shared file pointer; blocking, nonblocking and
// collective (_all, _ordered).
//
// Every access is one path: the memory side is packed into (or unpacked
// from) a staging buffer unless the datatype is contiguous, and the view
// turns the range of data positions into file runs moved with pwrite/pread.
// Nonblocking calls do the access at once and return a completed request.
// Collective calls with an offset or the individual pointer go through the
// aggregators when two_phase (aggregate.cpp) decides so, or do this
// process's access; then they share every member's outcome: the call returns
// the same class at every member (the first member's failure in rank order)
// when no process fails, and an error without waiting when one did
// (mpi/io/ft.cpp). Shared file pointer calls first reserve
// their etypes with the pointer's counter (mpi/io/shared_pointer.cpp): one
// fetch-and-add per call, or one for the whole group in rank order (_ordered).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/io/file.hpp"
#include "mpi/p2p/requests.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {
namespace {

enum class Dir { read, write };
// An explicit offset, the individual file pointer, the shared file pointer
// (one process's reservation), or the shared pointer in rank order (collective).
enum class Where { at, individual, shared, ordered };

// In atomic mode, an fcntl lock on the bytes an access spans, held while it
// runs (shared for reads, exclusive for writes). Released when destroyed.
class RangeLock {
public:
    RangeLock(const ftmpi_file_s &f, const std::vector<Extent> &runs, Dir dir) {
        if (!f.atomic || runs.empty()) return;
        struct flock l {};
        l.l_type = dir == Dir::write ? F_WRLCK : F_RDLCK;
        l.l_whence = SEEK_SET;
        l.l_start = static_cast<off_t>(runs.front().off);
        l.l_len = static_cast<off_t>(runs.back().off + static_cast<MPI_Offset>(runs.back().len) - runs.front().off);
        while (::fcntl(f.fd, F_SETLKW, &l) != 0)
            if (errno != EINTR) {
                error_ = errno;
                return;
            }
        fd_ = f.fd;
        lock_ = l;
    }
    ~RangeLock() {
        if (fd_ < 0) return;
        lock_.l_type = F_UNLCK;
        ::fcntl(fd_, F_SETLK, &lock_);
    }
    RangeLock(const RangeLock &) = delete;
    RangeLock &operator=(const RangeLock &) = delete;
    int error() const { return error_; }

private:
    int fd_ = -1;
    int error_ = 0;
    struct flock lock_ {};
};

// Moves `bytes` between `data` and the file runs. Returns 0 or an errno;
// *moved: bytes moved (a read stops at the end of the file).
int move_runs(int fd, Dir dir, const std::vector<Extent> &runs, char *data, std::size_t *moved) {
    *moved = 0;
    for (const Extent &r : runs) {
        std::size_t done = 0;
        while (done < r.len) {
            const off_t at = static_cast<off_t>(r.off + static_cast<MPI_Offset>(done));
            const ssize_t n = dir == Dir::write ? ::pwrite(fd, data + *moved, r.len - done, at)
                                                : ::pread(fd, data + *moved, r.len - done, at);
            if (n < 0) {
                if (errno == EINTR) continue;
                return errno;
            }
            if (n == 0) return dir == Dir::write ? EIO : 0;  // read: end of file
            done += static_cast<std::size_t>(n);
            *moved += static_cast<std::size_t>(n);
        }
    }
    return 0;
}

// A collective write this process did itself, large enough: the kernel
// starts writing its pages to the device now (without waiting), while this
// process waits for the other members' outcomes, so that a later
// MPI_File_sync has less left to do. MPICH gets that overlap differently:
// its collective returns without waiting, and the first rank's fsync runs
// while the others still write. Below the threshold the page cache is left
// to batch small writes.
constexpr std::size_t k_early_writeback = std::size_t{8} << 20;

void start_writeback(int fd, const std::vector<Extent> &runs, std::size_t moved) {
    if (moved < k_early_writeback || runs.empty()) return;
    MPI_Offset lo = runs.front().off, hi = lo;
    for (const Extent &r : runs) {
        lo = std::min(lo, r.off);
        hi = std::max(hi, r.off + static_cast<MPI_Offset>(r.len));
    }
    // A hint: if the file system cannot, the sync does it all, as before.
    (void)::sync_file_range(fd, static_cast<off_t>(lo), static_cast<off_t>(hi - lo), SYNC_FILE_RANGE_WRITE);
}

// What one call asks for, checked; `why` says what was wrong.
struct FileAccess {
    MPI_File f;
    Dir dir;
    Where where;
    MPI_Offset offset;  // Where::at (and shared, once reserved): in etypes of the view
    void *buf;
    int count;
    MPI_Datatype type;
};

// The local argument checks of a data access: MPI_SUCCESS or the class, with
// the reason in `why`.
int check_access(const FileAccess &a, char *why, std::size_t why_len) {
    MPI_File f = a.f;
    auto fail = [&](int cls, const char *text) {
        std::snprintf(why, why_len, "%s", text);
        return cls;
    };
    if ((f->amode & MPI_MODE_SEQUENTIAL) != 0 && (a.where == Where::at || a.where == Where::individual))
        return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                    "the file was opened MPI_MODE_SEQUENTIAL (only shared file pointer calls are allowed)");
    if (a.dir == Dir::write && (f->amode & MPI_MODE_RDONLY) != 0)
        return fail(MPI_ERR_ACCESS, "write to a file opened MPI_MODE_RDONLY");
    if (a.dir == Dir::read && (f->amode & MPI_MODE_WRONLY) != 0)
        return fail(MPI_ERR_ACCESS, "read from a file opened MPI_MODE_WRONLY");
    if (a.count < 0) return fail(MPI_ERR_COUNT, "negative count (argument count)");
    if (!valid_type(a.type)) return fail(MPI_ERR_TYPE, "invalid datatype (argument datatype)");
    if (!a.type->committed) return fail(MPI_ERR_TYPE, "datatype not committed (argument datatype)");
    if (f->rep != nullptr) {
        int err = MPI_SUCCESS;
        if (datarep_problem(*f->rep, a.type, &err, why, why_len) != nullptr) return err;
    }
    if (!buffer_ok(a.buf, a.count, a.type))
        return fail(MPI_ERR_BUFFER, "argument buf is NULL (MPI_BOTTOM) and the datatype's data starts at 0");
    if (a.where == Where::at && a.offset < 0) return fail(MPI_ERR_ARG, "negative offset (argument offset)");
    const std::size_t bytes = static_cast<std::size_t>(a.count) * a.type->size;
    if (bytes % f->etype->size != 0)
        return fail(MPI_ERR_TYPE, "the data is not a whole number of etypes of the view (arguments count, datatype)");
    return MPI_SUCCESS;
}

// Does the access; returns the class, *moved the bytes moved, *sys an errno.
// `aggregate`: a collective access every member makes, through two_phase
// (which a member whose `err` is a failure joins with no data).
int perform(const FileAccess &a, int err, bool aggregate, std::size_t *moved, int *sys) {
    MPI_File f = a.f;
    const bool write = a.dir == Dir::write;
    const std::size_t bytes = static_cast<std::size_t>(a.count) * a.type->size;
    std::vector<char> stage;
    char *data = static_cast<char *>(a.buf);
    // A registered representation's conversion moves the data between the
    // user's buffer and the file's form (packed, the sizes native).
    const bool convert = f->rep != nullptr && f->rep->converts(write);
    if (err == MPI_SUCCESS && (!a.type->contiguous || convert) && bytes > 0) {
        stage.resize(bytes);
        data = stage.data();
        if (write && convert) err = f->rep->convert(true, a.buf, a.type, a.count, data);
        else if (write) pack(a.buf, static_cast<std::size_t>(a.count), a.type, data);
    }
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS) {
        if (aggregate) two_phase(*f, write, {}, nullptr, err, &cls, moved, sys);
        return err;
    }
    const MPI_Offset first = a.where == Where::individual ? f->pos : a.offset;
    const auto esize = static_cast<MPI_Offset>(f->etype->size);
    const std::vector<Extent> runs = view_extents(*f, first * esize, bytes);
    *moved = 0;
    if (!aggregate || !two_phase(*f, write, runs, data, MPI_SUCCESS, &cls, moved, sys)) {
        RangeLock lock(*f, runs, a.dir);
        *sys = lock.error();
        if (*sys == 0) *sys = move_runs(f->fd, a.dir, runs, data, moved);
        cls = *sys != 0 ? io_error_class(*sys) : MPI_SUCCESS;
        if (aggregate && write && *sys == 0) start_writeback(f->fd, runs, *moved);
    }
    if (!write && !stage.empty() && *moved > 0) {
        if (!convert) {
            unpack(data, *moved, a.buf, a.type);
        } else if (const auto whole = static_cast<MPI_Count>(*moved / a.type->size); whole > 0) {
            // Whole elements only: a read that ended inside one leaves it be.
            if (const int rc = f->rep->convert(false, a.buf, a.type, whole, data);
                rc != MPI_SUCCESS && cls == MPI_SUCCESS)
                cls = rc;
        }
    }
    if (a.where == Where::individual) f->pos = first + static_cast<MPI_Offset>(*moved) / esize;
    return cls;
}

void set_status(MPI_Status *status, std::size_t bytes) {
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->ftmpi_cancelled = 0;
    status->ftmpi_count = bytes;
}

MPI_Offset etypes_of(const FileAccess &a) {
    return static_cast<MPI_Offset>(static_cast<std::size_t>(a.count) * a.type->size / a.f->etype->size);
}

// Where::shared: reserves the access's etypes at the shared file pointer.
// Where::ordered (collective, run even when `err` already failed here, which
// then reserves nothing): the group's accesses, one after the other in rank
// order. Sets a.offset; returns the class (`err` first), *sys an errno.
int reserve(FileAccess &a, int err, int *sys) {
    MPI_File f = a.f;
    if (a.where == Where::shared) {
        if (err != MPI_SUCCESS) return err;
        *sys = shared_fetch_add(*f, etypes_of(a), &a.offset);
        return *sys != 0 ? io_error_class(*sys) : MPI_SUCCESS;
    }
    if (a.where != Where::ordered) return err;
    const MPI_Offset mine = err == MPI_SUCCESS ? etypes_of(a) : 0;
    std::vector<MPI_Offset> all(static_cast<std::size_t>(f->comm->size));
    const int xerr = team_allgather(f->comm, &mine, static_cast<int>(sizeof mine), all.data());
    MPI_Offset total = 0, before = 0;
    for (int r = 0; r < f->comm->size; ++r) {
        if (r < f->comm->rank) before += all[static_cast<std::size_t>(r)];
        total += all[static_cast<std::size_t>(r)];
    }
    struct {
        MPI_Offset base;
        int sys;
        int pad;
    } start{0, 0, 0};
    const int leader = file_leader(f->comm);
    if (f->comm->rank == leader && xerr == MPI_SUCCESS) start.sys = shared_fetch_add(*f, total, &start.base);
    const int berr = team_bcast(f->comm, leader, &start, static_cast<int>(sizeof start));
    a.offset = start.base + before;
    if (err != MPI_SUCCESS) return err;
    if (xerr != MPI_SUCCESS || berr != MPI_SUCCESS) return xerr != MPI_SUCCESS ? xerr : berr;
    *sys = start.sys;
    return *sys != 0 ? io_error_class(*sys) : MPI_SUCCESS;
}

// Blocking, independent or collective.
int access_blocking(const char *call, FileAccess a, bool collective, MPI_Status *status) {
    FTMPI_TRY(check_live_file(call, a.f));
    char why[160] = "";
    int err = check_access(a, why, sizeof why);
    std::size_t moved = 0;
    int sys = 0;
    err = reserve(a, err, &sys);
    const bool aggregate = collective && (a.where == Where::at || a.where == Where::individual);
    if (err == MPI_SUCCESS || aggregate) err = perform(a, err, aggregate, &moved, &sys);
    const int local = err;
    if (collective) runtime::test_kill_point("io.collective");  // tests: a death inside the collective
    if (collective) err = file_uniform(a.f, err);
    if (err != MPI_SUCCESS) {
        if (local == MPI_SUCCESS) std::snprintf(why, sizeof why, "failed at another process");
        else if (sys != 0) std::snprintf(why, sizeof why, "%s", std::strerror(sys));
        return raise(a.f->comm, err, call, "%s: %s", a.f->path.c_str(), why);
    }
    set_status(status, moved);
    return MPI_SUCCESS;
}

// Nonblocking: argument errors are raised at once; the access's own outcome
// is in the request (raised by the call that completes it).
int access_nonblocking(const char *call, FileAccess a, MPI_Request *request) {
    FTMPI_TRY(check_live_file(call, a.f));
    FTMPI_CHECK(check_nonnull(call, a.f->comm, request, "request"));
    char why[160] = "";
    if (const int err = check_access(a, why, sizeof why); err != MPI_SUCCESS)
        return raise(a.f->comm, err, call, "%s: %s", a.f->path.c_str(), why);
    std::size_t moved = 0;
    int sys = 0;
    int err = reserve(a, MPI_SUCCESS, &sys);
    if (err == MPI_SUCCESS) err = perform(a, err, false, &moved, &sys);
    *request = completed_request(a.f->comm, err, moved);
    return MPI_SUCCESS;
}

// A split collective's _begin: the whole collective access, its status kept
// for _end (MPI 3.1 §13.4.5 lets the access happen in either call).
int split_begin(const char *call, FileAccess a) {
    FTMPI_TRY(check_live_file(call, a.f));
    if (a.f->split_active)
        return raise(a.f->comm, MPI_ERR_OTHER, call, "%s: a split collective is already active on this file",
                     a.f->path.c_str());
    FTMPI_TRY(access_blocking(call, a, true, &a.f->split_status));
    a.f->split_active = true;
    a.f->split_buf = a.buf;
    return MPI_SUCCESS;
}

// Local: the access happened in _begin, so _end also ends a split collective
// on a file revoked since (a later _begin could never start otherwise).
int split_end(const char *call, MPI_File f, const void *buf, MPI_Status *status) {
    FTMPI_TRY(check_file(call, f));
    if (!f->split_active)
        return raise(f->comm, MPI_ERR_OTHER, call, "%s: no split collective is active on this file", f->path.c_str());
    if (buf != f->split_buf)
        return raise(f->comm, MPI_ERR_ARG, call, "argument buf is not the buffer its _begin call was given");
    f->split_active = false;
    copy_status(status, f->split_status);
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_read_at", {fh, Dir::read, Where::at, offset, buf, count, datatype}, false, status);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                         MPI_Status *status) {
    return access_blocking("MPI_File_read_at_all", {fh, Dir::read, Where::at, offset, buf, count, datatype}, true,
                           status);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status) {
    return access_blocking("MPI_File_write_at",
                           {fh, Dir::write, Where::at, offset, const_cast<void *>(buf), count, datatype}, false,
                           status);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status) {
    return access_blocking("MPI_File_write_at_all",
                           {fh, Dir::write, Where::at, offset, const_cast<void *>(buf), count, datatype}, true, status);
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Request *request) {
    return access_nonblocking("MPI_File_iread_at", {fh, Dir::read, Where::at, offset, buf, count, datatype}, request);
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request) {
    return access_nonblocking("MPI_File_iwrite_at",
                              {fh, Dir::write, Where::at, offset, const_cast<void *>(buf), count, datatype}, request);
}

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_read", {fh, Dir::read, Where::individual, 0, buf, count, datatype}, false, status);
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_read_all", {fh, Dir::read, Where::individual, 0, buf, count, datatype}, true,
                           status);
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_write",
                           {fh, Dir::write, Where::individual, 0, const_cast<void *>(buf), count, datatype}, false,
                           status);
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_write_all",
                           {fh, Dir::write, Where::individual, 0, const_cast<void *>(buf), count, datatype}, true,
                           status);
}

int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    return access_nonblocking("MPI_File_iread", {fh, Dir::read, Where::individual, 0, buf, count, datatype}, request);
}

int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    return access_nonblocking(
        "MPI_File_iwrite", {fh, Dir::write, Where::individual, 0, const_cast<void *>(buf), count, datatype}, request);
}

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_read_shared", {fh, Dir::read, Where::shared, 0, buf, count, datatype}, false,
                           status);
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_write_shared",
                           {fh, Dir::write, Where::shared, 0, const_cast<void *>(buf), count, datatype}, false, status);
}

int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    return access_nonblocking("MPI_File_iread_shared", {fh, Dir::read, Where::shared, 0, buf, count, datatype},
                              request);
}

int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    return access_nonblocking("MPI_File_iwrite_shared",
                              {fh, Dir::write, Where::shared, 0, const_cast<void *>(buf), count, datatype}, request);
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_read_ordered", {fh, Dir::read, Where::ordered, 0, buf, count, datatype}, true,
                           status);
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    return access_blocking("MPI_File_write_ordered",
                           {fh, Dir::write, Where::ordered, 0, const_cast<void *>(buf), count, datatype}, true, status);
}

// Nonblocking collective accesses: each process's access is its own (no
// exchange, so the call never waits for the others); the request carries its
// outcome.
int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                          MPI_Request *request) {
    return access_nonblocking("MPI_File_iread_at_all", {fh, Dir::read, Where::at, offset, buf, count, datatype},
                              request);
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request) {
    return access_nonblocking("MPI_File_iwrite_at_all",
                              {fh, Dir::write, Where::at, offset, const_cast<void *>(buf), count, datatype}, request);
}

int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    return access_nonblocking("MPI_File_iread_all", {fh, Dir::read, Where::individual, 0, buf, count, datatype},
                              request);
}

int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    return access_nonblocking("MPI_File_iwrite_all",
                              {fh, Dir::write, Where::individual, 0, const_cast<void *>(buf), count, datatype},
                              request);
}

// Split collectives.
int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype) {
    return split_begin("MPI_File_read_at_all_begin", {fh, Dir::read, Where::at, offset, buf, count, datatype});
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    return split_end("MPI_File_read_at_all_end", fh, buf, status);
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype) {
    return split_begin("MPI_File_write_at_all_begin",
                       {fh, Dir::write, Where::at, offset, const_cast<void *>(buf), count, datatype});
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    return split_end("MPI_File_write_at_all_end", fh, buf, status);
}

int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) {
    return split_begin("MPI_File_read_all_begin", {fh, Dir::read, Where::individual, 0, buf, count, datatype});
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    return split_end("MPI_File_read_all_end", fh, buf, status);
}

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) {
    return split_begin("MPI_File_write_all_begin",
                       {fh, Dir::write, Where::individual, 0, const_cast<void *>(buf), count, datatype});
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    return split_end("MPI_File_write_all_end", fh, buf, status);
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) {
    return split_begin("MPI_File_read_ordered_begin", {fh, Dir::read, Where::ordered, 0, buf, count, datatype});
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status) {
    return split_end("MPI_File_read_ordered_end", fh, buf, status);
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) {
    return split_begin("MPI_File_write_ordered_begin",
                       {fh, Dir::write, Where::ordered, 0, const_cast<void *>(buf), count, datatype});
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status) {
    return split_end("MPI_File_write_ordered_end", fh, buf, status);
}

}  // extern "C"
