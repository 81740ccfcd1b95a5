// MPI-IO: file views (MPI 3.1 §13.3) and the individual file pointer.
//
// A view is a displacement, an etype and a filetype: the file's visible data
// are the filetype's data bytes, tiled every filetype extent from disp. A
// position in the view counts data bytes (etypes times the etype's size)
// from the view's beginning; view_extents turns a range of positions into
// file byte runs.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "mpi/checks.hpp"
#include "mpi/io/file.hpp"

namespace ftmpi::mpi {

void install_view(ftmpi_file_s &f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype) {
    dt_acquire(etype);
    dt_acquire(filetype);
    if (f.etype != nullptr) dt_release(f.etype);
    if (f.filetype != nullptr) dt_release(f.filetype);
    f.disp = disp;
    f.etype = etype;
    f.filetype = filetype;
    const Layout l = layout_of(filetype);
    f.blocks = flat_blocks(l);
    f.starts.clear();
    std::size_t before = 0;
    for (const Block &b : f.blocks) {
        f.starts.push_back(before);
        before += b.len;
    }
    f.tile_bytes = before;
    f.tile_extent = l.extent();
    f.pos = 0;
}

std::vector<Extent> view_extents(const ftmpi_file_s &f, MPI_Offset start, std::size_t bytes) {
    std::vector<Extent> out;
    if (bytes == 0 || f.tile_bytes == 0) return out;
    auto add = [&out](MPI_Offset off, std::size_t len) {
        if (!out.empty() && out.back().off + static_cast<MPI_Offset>(out.back().len) == off) out.back().len += len;
        else out.push_back(Extent{off, len});
    };
    const auto tile_bytes = static_cast<MPI_Offset>(f.tile_bytes);
    MPI_Offset tile = start / tile_bytes;
    std::size_t within = static_cast<std::size_t>(start % tile_bytes);
    // A dense filetype (one run filling its extent): one run of the file.
    if (f.blocks.size() == 1 && f.blocks[0].off == 0 && static_cast<MPI_Aint>(f.tile_bytes) == f.tile_extent) {
        add(f.disp + start, bytes);
        return out;
    }
    // The run holding data byte `within` of the tile.
    std::size_t j =
        static_cast<std::size_t>(std::upper_bound(f.starts.begin(), f.starts.end(), within) - f.starts.begin()) - 1;
    std::size_t skip = within - f.starts[j];
    while (bytes > 0) {
        const Block &b = f.blocks[j];
        const std::size_t len = std::min(b.len - skip, bytes);
        add(f.disp + tile * f.tile_extent + b.off + static_cast<MPI_Offset>(skip), len);
        bytes -= len;
        skip = 0;
        if (++j == f.blocks.size()) j = 0, ++tile;
    }
    return out;
}

MPI_Offset view_bytes_before(const ftmpi_file_s &f, MPI_Offset end) {
    if (end <= f.disp || f.tile_bytes == 0 || f.tile_extent <= 0) return 0;
    const MPI_Offset rel = end - f.disp;
    const MPI_Offset tiles = rel / f.tile_extent;
    const MPI_Offset rest = rel % f.tile_extent;
    MPI_Offset n = tiles * static_cast<MPI_Offset>(f.tile_bytes);
    for (const Block &b : f.blocks) n += std::clamp<MPI_Offset>(rest - b.off, 0, static_cast<MPI_Offset>(b.len));
    return n;
}

// Why `rep` cannot describe `t` in a file here (null: it can): ftmpi takes a
// representation only where the file extent of every predefined type in t's
// signature is its native size. *err: the class (the extent function's own
// if that failed).
const char *datarep_problem(const Datarep &rep, MPI_Datatype t, int *err, char *why, std::size_t why_len) {
    for (const SigRun &run : layout_of(t).sig) {
        MPI_Aint extent = 0;
        if (const int rc = rep.extent(run.type, &extent, rep.extra); rc != MPI_SUCCESS) {
            *err = rc;
            std::snprintf(why, why_len, "the dtype_file_extent_fn of data representation \"%.64s\" returned %d",
                          rep.name.c_str(), rc);
            return why;
        }
        if (extent != static_cast<MPI_Aint>(run.type->size)) {
            *err = MPI_ERR_UNSUPPORTED_DATAREP;
            std::snprintf(why, why_len,
                          "data representation \"%.64s\" gives %s a file extent of %ld bytes, not its native %zu "
                          "(ftmpi supports only representations of native sizes)",
                          rep.name.c_str(), run.type->name, static_cast<long>(extent), run.type->size);
            return why;
        }
    }
    return nullptr;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

namespace {

// The type constraints of MPI 3.1 §13.3, with the classes ROMIO (MPICH
// 4.0.2) gives: a filetype built from whole etypes (MPI_ERR_ARG); an etype
// and a filetype whose displacements are nonnegative and monotonically
// nondecreasing, and, in a file that can be written, do not overlap
// (MPI_ERR_IO; MPICH's test/mpi/io/tst_fileview). Null when fine; *err the
// class.
const char *layout_problem(const Layout &l, const char *what, bool writable, char *why, std::size_t why_len) {
    MPI_Aint last = 0, end = 0;
    for (const Block &b : flat_blocks(l)) {
        const char *p = b.off < 0                 ? "a negative displacement"
                        : b.off < last            ? "decreasing displacements"
                        : writable && b.off < end ? "overlapping data (allowed only in a file opened MPI_MODE_RDONLY)"
                                                  : nullptr;
        if (p != nullptr) {
            std::snprintf(why, why_len, "the %s has %s", what, p);
            return why;
        }
        last = b.off;
        end = std::max<MPI_Aint>(end, b.off + static_cast<MPI_Aint>(b.len));
    }
    return nullptr;
}

const char *view_type_problem(MPI_Datatype etype, MPI_Datatype filetype, bool writable, int *err, char *why,
                              std::size_t why_len) {
    const Layout &l = type_layout(filetype);
    const char *p = etype->size == 0                ? "the etype has no data"
                    : l.size % etype->size != 0     ? "the filetype's size is not a whole number of etypes"
                    : l.size > 0 && l.extent() <= 0 ? "the filetype has data but no positive extent"
                                                    : nullptr;
    if (p != nullptr) {
        *err = MPI_ERR_ARG;
        return p;
    }
    p = layout_problem(type_layout(etype), "etype", writable, why, why_len);
    if (p == nullptr) p = layout_problem(l, "filetype", writable, why, why_len);
    if (p != nullptr) *err = MPI_ERR_IO;
    return p;
}

// The external32 representation (MPI 3.1 §13.5.2): its conversions are
// MPI_Pack_external's (mpi/dt/external32.cpp), and a type's file extent is
// its external32 size (so, as for registered representations, the types of
// a view and of an access must have their native sizes: all but MPI_LONG,
// MPI_UNSIGNED_LONG, MPI_LONG_INT and MPI_WCHAR, MPI_ERR_UNSUPPORTED_DATAREP).
int external32_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset, void *) {
    pack_external32(userbuf, static_cast<std::size_t>(count), datatype, filebuf);
    return MPI_SUCCESS;
}
int external32_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset, void *) {
    unpack_external32(filebuf, static_cast<std::size_t>(count), userbuf, datatype);
    return MPI_SUCCESS;
}
int external32_extent(MPI_Datatype datatype, MPI_Aint *extent, void *) {
    *extent = static_cast<MPI_Aint>(external32_size(datatype));
    return MPI_SUCCESS;
}
const Datarep k_external32{"external32", external32_read, external32_write, external32_extent, nullptr};

// Where a seek to `offset` from `whence` lands, in etypes, with the pointer
// now at `current`: MPI_SUCCESS and *to, or the class with the reason in `why`.
int seek_target(const ftmpi_file_s &f, MPI_Offset offset, int whence, MPI_Offset current, MPI_Offset *to, char *why,
                std::size_t why_len) {
    MPI_Offset base = 0;
    switch (whence) {
    case MPI_SEEK_SET: break;
    case MPI_SEEK_CUR: base = current; break;
    case MPI_SEEK_END: {
        struct stat st;
        if (::fstat(f.fd, &st) != 0) {
            std::snprintf(why, why_len, "%s: %s", f.path.c_str(), std::strerror(errno));
            return io_error_class(errno);
        }
        const auto esize = static_cast<MPI_Offset>(f.etype->size);
        base = (view_bytes_before(f, static_cast<MPI_Offset>(st.st_size)) + esize - 1) / esize;
        break;
    }
    default:
        std::snprintf(why, why_len, "invalid whence %d (argument whence; MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END)",
                      whence);
        return MPI_ERR_ARG;
    }
    if (base + offset < 0) {
        std::snprintf(why, why_len, "the position would be negative (%lld etypes)",
                      static_cast<long long>(base + offset));
        return MPI_ERR_ARG;
    }
    *to = base + offset;
    return MPI_SUCCESS;
}

// Registered data representations, by name; never removed.
std::deque<Datarep> g_datareps;

const Datarep *find_datarep(const char *name) {
    for (const Datarep &d : g_datareps)
        if (d.name == name) return &d;
    return nullptr;
}

// A short hash of a representation's name, voted on with the etype's extent.
long long name_hash(const char *s) {
    unsigned long long h = 1469598103934665603ull;
    for (; *s != '\0'; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
    return static_cast<long long>(h >> 24);
}

// MPI_Register_datarep and _c: checks `datarep` (the name as given, may be
// null) and keeps `rep`.
int register_datarep(const char *call, Datarep rep, const char *datarep) {
    // Errors go to MPI_FILE_NULL's handler (no file is involved).
    FTMPI_TRY(check_init(call));
    if (datarep == nullptr) return raise_file_null(MPI_ERR_ARG, call, "argument datarep is NULL");
    if (rep.extent == nullptr) return raise_file_null(MPI_ERR_ARG, call, "argument dtype_file_extent_fn is NULL");
    if (datarep[0] == '\0' || std::strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return raise_file_null(MPI_ERR_ARG, call, "the name must have 1 to %d characters (argument datarep)",
                               MPI_MAX_DATAREP_STRING - 1);
    for (const char *taken : {"native", "internal", "external32"})
        if (std::strcmp(datarep, taken) == 0)
            return raise_file_null(MPI_ERR_DUP_DATAREP, call, "\"%s\" is a predefined data representation", datarep);
    if (find_datarep(datarep) != nullptr)
        return raise_file_null(MPI_ERR_DUP_DATAREP, call, "data representation \"%.64s\" is already registered",
                               datarep);
    g_datareps.push_back(std::move(rep));
    return MPI_SUCCESS;
}

int check_committed(const char *call, MPI_File f, MPI_Datatype t, const char *arg) {
    FTMPI_TRY(check_type(call, f->comm, t, arg));
    if (t->committed) return MPI_SUCCESS;
    return raise(f->comm, MPI_ERR_TYPE, call, "datatype not committed (argument %s)", arg);
}

}  // namespace

extern "C" {

// Collective: the etype's extent and datarep must agree at every member;
// disp and filetype may differ. Resets the individual file pointer.
int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                      MPI_Info info) {
    const char *call = "MPI_File_set_view";
    FTMPI_TRY(check_live_file(call, fh));
    FTMPI_CHECK(check_committed(call, fh, etype, "etype"));
    FTMPI_CHECK(check_committed(call, fh, filetype, "filetype"));
    FTMPI_CHECK(check_nonnull(call, fh->comm, datarep, "datarep"));
    FTMPI_CHECK(check_info_arg(call, fh->comm, info));
    int err = MPI_SUCCESS;
    char why[256] = "";
    const Datarep *rep = nullptr;
    const bool sequential = (fh->amode & MPI_MODE_SEQUENTIAL) != 0;
    if (disp == MPI_DISPLACEMENT_CURRENT && !sequential) {
        err = MPI_ERR_ARG;
        std::snprintf(why, sizeof why, "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL");
    } else if (disp == MPI_DISPLACEMENT_CURRENT) {
        // The byte position of the shared file pointer in the current view.
        MPI_Offset shared = 0;
        if (const int sys = shared_fetch_add(*fh, 0, &shared); sys != 0) {
            err = io_error_class(sys);
            std::snprintf(why, sizeof why, "cannot read the shared file pointer: %s", std::strerror(sys));
        } else {
            const auto runs = view_extents(*fh, shared * static_cast<MPI_Offset>(fh->etype->size), 1);
            disp = runs.empty() ? fh->disp : runs.front().off;
        }
    } else if (disp < 0) {
        err = MPI_ERR_ARG;
        std::snprintf(why, sizeof why, "negative displacement %lld (argument disp)", static_cast<long long>(disp));
    } else if (std::strcmp(datarep, "native") != 0 &&
               (rep = std::strcmp(datarep, "external32") == 0 ? &k_external32 : find_datarep(datarep)) == nullptr) {
        err = MPI_ERR_UNSUPPORTED_DATAREP;
        std::snprintf(why, sizeof why,
                      "data representation \"%.64s\" (\"native\", \"external32\" or one registered with "
                      "MPI_Register_datarep; \"internal\" is not supported)",
                      datarep);
    } else if (const char *p =
                   view_type_problem(etype, filetype, (fh->amode & MPI_MODE_RDONLY) == 0, &err, why, sizeof why)) {
        if (p != why) std::snprintf(why, sizeof why, "%s (arguments etype and filetype)", p);
    } else if (rep != nullptr && (datarep_problem(*rep, etype, &err, why, sizeof why) != nullptr ||
                                  datarep_problem(*rep, filetype, &err, why, sizeof why) != nullptr)) {
        // err and why are set
    }
    // Every member's outcome, and the etype's extent and datarep, which must agree.
    int first;
    bool same;
    vote(fh->comm, err, static_cast<long long>(etype->extent) ^ name_hash(datarep), &first, &same);
    if (first == MPI_SUCCESS && !same) {
        first = MPI_ERR_NOT_SAME;
        std::snprintf(why, sizeof why,
                      "the etype's extent or the data representation differs between processes (%ld, \"%.64s\" here)",
                      static_cast<long>(etype->extent), datarep);
    }
    if (first != MPI_SUCCESS)
        return raise(fh->comm, first, call, "%s", why[0] != '\0' ? why : "failed at another process");
    install_view(*fh, disp, etype, filetype);
    fh->rep = rep;
    merge_hints(fh->info, info, HintKind::file);
    // The shared file pointer goes back to 0 too (nothing to do while no
    // process has used it: no sidecar).
    int sys = 0;
    if (fh->comm->rank == file_leader(fh->comm) && ::access(fh->shfp_path.c_str(), F_OK) == 0)
        sys = shared_store(*fh, 0);
    if (const int e = file_uniform(fh, sys != 0 ? io_error_class(sys) : MPI_SUCCESS); e != MPI_SUCCESS)
        return raise(fh->comm, e, call, "cannot reset the shared file pointer: %s",
                     sys != 0 ? std::strerror(sys) : "failed at another process");
    return MPI_SUCCESS;
}

// Derived etype and filetype come back as new handles the caller frees.
int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep) {
    const char *call = "MPI_File_get_view";
    FTMPI_TRY(check_file(call, fh));
    FTMPI_CHECK(check_nonnull(call, fh->comm, disp, "disp"));
    FTMPI_CHECK(check_nonnull(call, fh->comm, etype, "etype"));
    FTMPI_CHECK(check_nonnull(call, fh->comm, filetype, "filetype"));
    FTMPI_CHECK(check_nonnull(call, fh->comm, datarep, "datarep"));
    *disp = fh->disp;
    dt_new_handle(fh->etype);
    dt_new_handle(fh->filetype);
    *etype = fh->etype;
    *filetype = fh->filetype;
    std::snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", fh->rep != nullptr ? fh->rep->name.c_str() : "native");
    return MPI_SUCCESS;
}

// Local (MPI 3.1 §13.5.3). The names "native", "internal" and "external32"
// are taken.
int MPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                         MPI_Datarep_conversion_function *write_conversion_fn,
                         MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state) {
    return register_datarep(
        "MPI_Register_datarep",
        {datarep != nullptr ? datarep : "", read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state},
        datarep);
}

// MPI 4.0: conversions with MPI_Count counts.
int MPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                           MPI_Datarep_conversion_function_c *write_conversion_fn,
                           MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state) {
    Datarep rep{datarep != nullptr ? datarep : "", nullptr, nullptr, dtype_file_extent_fn, extra_state};
    rep.read_c = read_conversion_fn;
    rep.write_c = write_conversion_fn;
    return register_datarep("MPI_Register_datarep_c", std::move(rep), datarep);
}


// "native": a type's extent in the file is its extent in memory.
int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent) {
    const char *call = "MPI_File_get_type_extent";
    FTMPI_TRY(check_file(call, fh));
    FTMPI_CHECK(check_type(call, fh->comm, datatype));
    FTMPI_CHECK(check_nonnull(call, fh->comm, extent, "extent"));
    if (fh->rep != nullptr) {
        int err = MPI_SUCCESS;
        char why[256];
        if (datarep_problem(*fh->rep, datatype, &err, why, sizeof why) != nullptr)
            return raise(fh->comm, err, call, "%s", why);
    }
    *extent = datatype->extent;  // the representation's sizes are native
    return MPI_SUCCESS;
}

// The absolute byte position of the etype `offset` etypes into the view.
int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp) {
    const char *call = "MPI_File_get_byte_offset";
    FTMPI_TRY(check_file(call, fh));
    FTMPI_CHECK(check_nonnull(call, fh->comm, disp, "disp"));
    if (offset < 0) return raise(fh->comm, MPI_ERR_ARG, call, "negative offset %lld", static_cast<long long>(offset));
    const auto runs = view_extents(*fh, offset * static_cast<MPI_Offset>(fh->etype->size), 1);
    *disp = runs.empty() ? fh->disp : runs.front().off;
    return MPI_SUCCESS;
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
    const char *call = "MPI_File_seek";
    FTMPI_TRY(check_file(call, fh));
    if ((fh->amode & MPI_MODE_SEQUENTIAL) != 0)
        return raise(fh->comm, MPI_ERR_UNSUPPORTED_OPERATION, call,
                     "the file was opened MPI_MODE_SEQUENTIAL (no individual file pointer)");
    MPI_Offset to = 0;
    char why[160];
    if (const int err = seek_target(*fh, offset, whence, fh->pos, &to, why, sizeof why); err != MPI_SUCCESS)
        return raise(fh->comm, err, call, "%s", why);
    fh->pos = to;
    return MPI_SUCCESS;
}

// Collective: offset and whence must be the same at every member; rank 0
// moves the shared file pointer and every member learns the outcome.
int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
    const char *call = "MPI_File_seek_shared";
    FTMPI_TRY(check_live_file(call, fh));
    int first;
    bool same;
    vote(fh->comm, MPI_SUCCESS, offset * 8 + (whence - MPI_SEEK_SET), &first, &same);
    if (first == MPI_SUCCESS && !same)
        return raise(fh->comm, MPI_ERR_NOT_SAME, call, "arguments offset and whence differ between processes");
    if (first != MPI_SUCCESS) return raise(fh->comm, first, call, "the exchange with the other processes failed");
    int err = MPI_SUCCESS;
    char why[160] = "failed at another process";
    if (fh->comm->rank == file_leader(fh->comm)) {
        MPI_Offset now = 0, to = 0;
        int sys = shared_fetch_add(*fh, 0, &now);
        if (sys == 0) {
            err = seek_target(*fh, offset, whence, now, &to, why, sizeof why);
            if (err == MPI_SUCCESS) sys = shared_store(*fh, to);
        }
        if (sys != 0) {
            err = io_error_class(sys);
            std::snprintf(why, sizeof why, "the shared file pointer: %s", std::strerror(sys));
        }
    }
    if (const int e = file_uniform(fh, err); e != MPI_SUCCESS) return raise(fh->comm, e, call, "%s", why);
    return MPI_SUCCESS;
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset) {
    const char *call = "MPI_File_get_position_shared";
    FTMPI_TRY(check_file(call, fh));
    FTMPI_CHECK(check_nonnull(call, fh->comm, offset, "offset"));
    if (const int sys = shared_fetch_add(*fh, 0, offset); sys != 0)
        return raise(fh->comm, io_error_class(sys), call, "the shared file pointer: %s", std::strerror(sys));
    return MPI_SUCCESS;
}

int MPI_File_get_position(MPI_File fh, MPI_Offset *offset) {
    const char *call = "MPI_File_get_position";
    FTMPI_TRY(check_file(call, fh));
    FTMPI_CHECK(check_nonnull(call, fh->comm, offset, "offset"));
    if ((fh->amode & MPI_MODE_SEQUENTIAL) != 0)
        return raise(fh->comm, MPI_ERR_UNSUPPORTED_OPERATION, call,
                     "the file was opened MPI_MODE_SEQUENTIAL (no individual file pointer)");
    *offset = fh->pos;
    return MPI_SUCCESS;
}

}  // extern "C"
