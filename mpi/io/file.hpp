// MPI-IO on POSIX files (MPI 3.1 chapter 13): the file object and what its
// calls share.
//
// A file is a POSIX descriptor per process plus a hidden communicator (a dup
// of the one it was opened over, like a window's): the file's collective
// calls run their exchanges on its collective context, so they never meet
// user traffic, and errors raised on it go to the file's handler (it points
// back at the file through ftmpi_comm_s::file).
//
// Data moves with pread/pwrite at the offsets the view gives (view.cpp):
// nothing is cached, so a write is in the file (the page cache) when the call
// returns, and MPI_File_sync adds fsync. Collective calls either aggregate the
// members' pieces (two-phase, aggregate.cpp) or are each process's own
// accesses, followed by an exchange of outcomes.
//
// Under failure (mpi/io/ft.cpp): sync is an agreement, revoke is the hidden
// communicator's, validate recognizes failures on it.
//
// Threading: like the rest of libftmpi's MPI layer, one thread at a time (under
// MPI_THREAD_MULTIPLE, the one holding the library lock: mpi/api/api_lock.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mpi/dt/derived.hpp"
#include "mpi/info.hpp"
#include "mpi/objects.hpp"

namespace ftmpi::mpi {
// A data representation registered with MPI_Register_datarep (they last
// until the process ends, as the standard says).
struct Datarep {
    std::string name;
    MPI_Datarep_conversion_function *read = nullptr;  // null (and read_c null): the file holds native data
    MPI_Datarep_conversion_function *write = nullptr;
    MPI_Datarep_extent_function *extent = nullptr;
    void *extra = nullptr;
    // MPI_Register_datarep_c's conversions (MPI_Count counts), instead of read and write.
    MPI_Datarep_conversion_function_c *read_c = nullptr;
    MPI_Datarep_conversion_function_c *write_c = nullptr;

    bool converts(bool writing) const {
        return writing ? write != nullptr || write_c != nullptr : read != nullptr || read_c != nullptr;
    }
    // Runs the conversion of that direction on `count` elements.
    int convert(bool writing, void *userbuf, MPI_Datatype t, MPI_Count count, void *filebuf) const {
        if (MPI_Datarep_conversion_function_c *c = writing ? write_c : read_c)
            return c(userbuf, t, count, filebuf, 0, extra);
        return (writing ? write : read)(userbuf, t, static_cast<int>(count), filebuf, 0, extra);
    }
};
// Why `rep` cannot describe `t` in a file here (null: it can): ftmpi takes a
// representation only where the file extent of every predefined type in t's
// signature is its native size. *err: the class (the extent function's own
// if that failed); the reason is written to why. mpi/io/view.cpp.
const char *datarep_problem(const Datarep &rep, MPI_Datatype t, int *err, char *why, std::size_t why_len);
}  // namespace ftmpi::mpi

struct ftmpi_file_s {
    ftmpi::mpi::Magic magic = ftmpi::mpi::Magic::file;
    MPI_Comm comm = nullptr;  // hidden: collectives, and the file's error handler
    int fd = -1;
    int amode = 0;
    std::string path;        // as given to MPI_File_open
    ftmpi::mpi::Hints info;  // hints as set (MPI_File_get_info)
    bool atomic = false;     // MPI_File_set_atomicity: accesses take fcntl range locks
    // The view (MPI_File_set_view; initially disp 0, MPI_BYTE, MPI_BYTE, "native").
    MPI_Offset disp = 0;
    MPI_Datatype etype = MPI_BYTE;
    MPI_Datatype filetype = MPI_BYTE;
    std::vector<ftmpi::mpi::Block> blocks;     // the filetype's data runs in one tile
    std::vector<std::size_t> starts;           // data bytes before each run
    std::size_t tile_bytes = 1;                // data bytes in one tile (the filetype's size)
    MPI_Aint tile_extent = 1;                  // the filetype's extent: the stride of tiles
    MPI_Offset pos = 0;                        // individual file pointer, in etypes of the view
    const ftmpi::mpi::Datarep *rep = nullptr;  // the view's registered representation; null: "native"
    // The shared file pointer's counter (shared_pointer.cpp): its sidecar
    // file, and the descriptor once this process used it.
    std::string shfp_path;
    int shfp_fd = -1;
    // The split collective in progress (MPI_File_*_begin ... _end; one at a
    // time per file): its buffer and outcome.
    bool split_active = false;
    const void *split_buf = nullptr;
    MPI_Status split_status{};
    // The members' failures (job ranks, ascending) the last MPI_File_sync
    // agreed on: the next one reports only failures not among them (mpi/io/ft.cpp).
    std::vector<int> sync_reported;
};

namespace ftmpi::mpi {

bool valid_file(MPI_File f);
// A valid file; errors on an invalid one go to MPI_FILE_NULL's handler.
int check_file(const char *call, MPI_File f);

// check_file, then MPI_ERR_REVOKED (raised on f) when f was revoked
// (MPIX_File_revoke): the check of every non-local call on a file.
int check_live_file(const char *call, MPI_File f);

// The member of a file's hidden communicator that acts alone for the group
// on shared state (creation at open, set_size and preallocate, the shared
// file pointer in collectives, removal at close): the lowest member neither
// recognized failed by a validate nor known failed here. Rank 0 until a
// failure; the same at every member once the failures are known everywhere
// (a collective that meets an unknown one fails anyway).
int file_leader(MPI_Comm hidden);

// At open: the failures recognized on the hidden communicator (inherited
// from a validated communicator) predate the file, so syncs do not report them.
void failures_at_open(ftmpi_file_s &f);

// The MPI error class of a failed system call's errno.
int io_error_class(int err);

// One contiguous run of the file.
struct Extent {
    MPI_Offset off;
    std::size_t len;
};

// The file byte runs of `bytes` data bytes of f's view starting `start` data
// bytes from the view's beginning, in order, adjacent runs merged.
std::vector<Extent> view_extents(const ftmpi_file_s &f, MPI_Offset start, std::size_t bytes);

// The data bytes of f's view that lie before file offset `end` (the view's
// end of file for a file of `end` bytes).
MPI_Offset view_bytes_before(const ftmpi_file_s &f, MPI_Offset end);

// Sets f's view to (disp, etype, filetype), taking references on the types
// and releasing the previous view's; resets the individual file pointer.
void install_view(ftmpi_file_s &f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype);

// Every member's (err, value) exchanged on `team` (a file's hidden
// communicator): *first_err is the first failure in rank order
// (MPI_ERR_PROC_FAILED when the exchange failed) and *same says whether every
// member gave the same value. The same answers at every member when no
// process fails.
void vote(MPI_Comm team, int err, long long value, int *first_err, bool *same);

// Two-phase collective access (mpi/io/aggregate.cpp). Collective over f's
// hidden communicator: every member calls it for the same collective read or
// write, `err` being its outcome so far (a member that failed takes part
// with no data). `runs` are this member's file runs (view_extents, in order)
// and `data` their bytes (written from, or read into). Returns false, having
// moved nothing, when each member should do its own access instead (hints,
// a failure somewhere, atomic mode, or automatic mode finding no interleaved
// small pieces); the answer is the same at every member. Otherwise the
// access is done: *cls is its class here (MPI_ERR_PROC_FAILED when an
// exchange failed), *moved the bytes moved, *sys an errno.
bool two_phase(ftmpi_file_s &f, bool write, const std::vector<Extent> &runs, char *data, int err, int *cls,
               std::size_t *moved, int *sys);

// The same outcome at every member of f's hidden communicator: the first
// non-success class among the members' `mine` (in rank order), or
// MPI_ERR_PROC_FAILED when the exchange itself failed.
int file_uniform(MPI_File f, int mine);

// The shared file pointer (mpi/io/shared_pointer.cpp), in etypes of the
// view. The sidecar file holding it for the file at `path` whose hidden
// communicator has uid `id`.
std::string shared_pointer_path(const std::string &path, std::uint64_t id);
// Atomically: *before = the pointer, then the pointer += add. 0 or an errno.
int shared_fetch_add(ftmpi_file_s &f, MPI_Offset add, MPI_Offset *before);
// Sets the pointer. 0 or an errno.
int shared_store(ftmpi_file_s &f, MPI_Offset value);
// Closes this process's descriptor of the sidecar (MPI_File_close).
void shared_pointer_close(ftmpi_file_s &f);

}  // namespace ftmpi::mpi
