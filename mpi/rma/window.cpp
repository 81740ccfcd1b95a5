// One-sided communication: windows made and freed (MPI_Win_create, _allocate,
// _allocate_shared, _create_dynamic, _free), their memory, and the checks the
// other window calls share. The operations are in mpi/rma/window_ops.cpp, the
// synchronization in window_sync.cpp, the queries in window_attrs.cpp, failure
// handling in window_ft.cpp; the protocol is in mpi/rma/protocol.cpp; see
// mpi/rma/window.hpp for the design.
#include "mpi/rma/window.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>
#include <vector>

#include "mpi/comm/attributes.hpp"
#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/info.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/rma/protocol.hpp"
#include "mpi/rma/window_internal.hpp"
#include "runtime/config.hpp"
#include "runtime/shm_segment.hpp"

namespace ftmpi::mpi {

namespace {

bool on_this_node(int job_rank) {
    const auto &local = g.pm->job().local_peers;
    return std::find(local.begin(), local.end(), job_rank) != local.end();
}

// What each member tells the others when a window is made: its memory's size
// and unit, whether that memory could be allocated, and the name of its
// shared-memory segment (MPI_Win_allocate: the members on its node map it).
struct Shape {
    std::int64_t size;
    std::int32_t disp_unit;
    std::int32_t ok;
    char segment[48];
    std::uint64_t base;  // MPI_Win_create's memory, in the member's address space
    std::int64_t pid;
};

// The shared flavor: the lowest rank makes the one segment, the others map it
// (`shared`, null where that failed). Returns the error of the segment name's
// broadcast.
// The segment of MPI_Win_allocate_shared: the members' memory, rank after
// rank, then their accumulate locks.
std::size_t shared_bytes(std::size_t memory, std::size_t members) {
    return rma::acc_lock_offset(static_cast<MPI_Aint>(memory)) + members * rma::k_acc_lock_bytes;
}

// A member's segment of MPI_Win_allocate: its memory, then its accumulate lock.
std::size_t own_bytes(MPI_Aint size) { return rma::acc_lock_offset(size) + rma::k_acc_lock_bytes; }

int share_segment(MPI_Comm comm, MPI_Comm hidden, const std::vector<Shape> &shapes, runtime::Segment &seg,
                  char *&shared, std::vector<std::pair<void *, std::size_t>> &mappings) {
    std::size_t total = 0;
    for (const Shape &sh : shapes) total += static_cast<std::size_t>(sh.size);
    total = shared_bytes(total, shapes.size());
    char name[48] = {};
    if (comm->rank == 0) {
        seg = runtime::create_segment(total);
        std::snprintf(name, sizeof name, "%s", seg.addr != nullptr ? seg.name.c_str() : "");
        shared = static_cast<char *>(seg.addr);
    }
    const int err = team_bcast(hidden, 0, name, sizeof name);
    if (err == MPI_SUCCESS && comm->rank != 0 && name[0] != '\0') {
        shared = static_cast<char *>(runtime::map_segment(name, total));
        if (shared != nullptr) mappings.emplace_back(shared, total);
    }
    return err;
}

// A creation that failed at some member: releases what it set up here, so
// that nothing of the window is left anywhere.
void undo_create(MPI_Comm hidden, const std::vector<std::pair<void *, std::size_t>> &mappings,
                 const runtime::Segment &seg, void *private_mem) {
    if (hidden != MPI_COMM_NULL) discard_comm(hidden);
    for (auto [addr, len] : mappings) runtime::unmap_segment(addr, len);
    if (seg.addr != nullptr) {
        runtime::unmap_segment(seg.addr, seg.size);
        runtime::unlink_segment(seg.name);
    }
    std::free(private_mem);
}

// The window object over `hidden` (which becomes the window's: its handler,
// its name), with every member's shape; its memory is not placed yet.
MPI_Win new_window(MPI_Comm hidden, MPI_Aint size, int disp_unit, int flavor, MPI_Info info,
                   const std::vector<Shape> &shapes) {
    auto w = new ftmpi_win_s;
    w->comm = hidden;
    hidden->win = w;
    hidden->handler_of = ftmpi_comm_s::HandlerOf::win;
    hidden->name[0] = '\0';
    errhandler_release(hidden->errhandler);  // the parent's: a window starts with MPI_ERRORS_ARE_FATAL
    hidden->errhandler = MPI_ERRORS_ARE_FATAL;
    errhandler_retain(MPI_ERRORS_ARE_FATAL);
    w->size = size;
    w->disp_unit = disp_unit;
    w->flavor = flavor;
    merge_hints(w->info, info, HintKind::win);
    const std::size_t n = shapes.size();
    w->targets.resize(n);
    w->sources.resize(n);
    w->direct.assign(n, nullptr);
    w->acc_locks.assign(n, nullptr);
    w->acc_holder = (static_cast<std::uint64_t>(hidden->rank) + 1) << 32 | static_cast<std::uint32_t>(::getpid());
    for (std::size_t r = 0; r < n; ++r) {
        w->targets[r].size = shapes[r].size;
        w->targets[r].disp_unit = shapes[r].disp_unit;
    }
    return w;
}

// Creation over `comm`, at every member alike (spec 000 §17.11): the hidden
// communicator, then an agreement on every member's outcome, so the window
// exists everywhere or nowhere.
//
// MPI_Win_allocate puts each member's memory in a shared-memory segment,
// which the members on its node map: their puts and gets to it are plain
// copies (the rest, and every other member, use messages).
// MPI_Win_allocate_shared makes one segment for all (members on one node),
// rank after rank, contiguous. `base` is MPI_Win_create's memory, else null.
int create(const char *call, MPI_Comm comm, void *base, MPI_Aint size, int disp_unit, int flavor, MPI_Info info,
           MPI_Win *win, void *baseptr) {
    MPI_Comm hidden = MPI_COMM_NULL;
    int err = make_hidden_comm(comm, &hidden);
    runtime::Segment seg;
    const bool mapped = flavor == MPI_WIN_FLAVOR_ALLOCATE && runtime::config().RMA_SHM != 0;
    void *private_mem = nullptr;  // MPI_Win_allocate without shared memory
    if (mapped) seg = runtime::create_segment(own_bytes(size));
    else if (flavor == MPI_WIN_FLAVOR_ALLOCATE)
        private_mem = std::calloc(size > 0 ? static_cast<std::size_t>(size) : 1, 1);
    std::vector<Shape> shapes(static_cast<std::size_t>(comm->size));
    Shape mine{size,
               disp_unit,
               flavor != MPI_WIN_FLAVOR_ALLOCATE || seg.addr != nullptr || private_mem != nullptr ? 1 : 0,
               {},
               reinterpret_cast<std::uintptr_t>(base),
               static_cast<std::int64_t>(::getpid())};
    std::snprintf(mine.segment, sizeof mine.segment, "%s", seg.name.c_str());
    if (hidden != MPI_COMM_NULL) err = team_allgather(hidden, &mine, sizeof mine, shapes.data());
    std::vector<std::pair<void *, std::size_t>> mappings;
    char *shared = nullptr;
    if (flavor == MPI_WIN_FLAVOR_SHARED && err == MPI_SUCCESS)
        err = share_segment(comm, hidden, shapes, seg, shared, mappings);
    int ok = err == MPI_SUCCESS ? 1 : 0;
    for (const Shape &sh : shapes) ok = ok && sh.ok;
    if (flavor == MPI_WIN_FLAVOR_SHARED) ok = ok && shared != nullptr;
    agree_internal(comm, &ok, nullptr, true);
    if (!ok) {
        undo_create(hidden, mappings, seg, private_mem);
        if (err == MPI_SUCCESS && mine.ok == 0)
            return raise(comm, MPI_ERR_NO_MEM, call, "cannot allocate %ld bytes of shared memory for the window",
                         static_cast<long>(size));
        return raise(comm, err != MPI_SUCCESS ? err : MPI_ERR_PROC_FAILED, call,
                     "window creation over %s failed at some member", comm_label(comm));
    }
    MPI_Win w = new_window(hidden, size, disp_unit, flavor, info, shapes);
    const std::size_t n = static_cast<std::size_t>(comm->size);
    if (seg.addr != nullptr) {
        w->segment = seg.name;
        mappings.emplace_back(seg.addr, seg.size);
    }
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        w->base = base;
        for (std::size_t r = 0; r < n; ++r)
            if (static_cast<int>(r) != comm->rank && shapes[r].size > 0 && on_this_node(comm->procs[r]) &&
                shapes[r].pid > 0 && shapes[r].pid <= INT32_MAX) {
                w->targets[r].remote_base = shapes[r].base;
                w->targets[r].pid = static_cast<int>(shapes[r].pid);
            }
    } else if (!mapped && flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        w->base = private_mem;
        w->private_memory = private_mem;
    } else if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        w->base = seg.addr;
        w->direct[static_cast<std::size_t>(comm->rank)] = static_cast<char *>(seg.addr);
        for (std::size_t r = 0; r < n; ++r) {
            if (static_cast<int>(r) == comm->rank || shapes[r].size == 0 || !on_this_node(comm->procs[r])) continue;
            void *p = runtime::map_segment(shapes[r].segment, own_bytes(shapes[r].size));
            if (p == nullptr) continue;  // messages, then
            w->direct[r] = static_cast<char *>(p);
            mappings.emplace_back(p, own_bytes(shapes[r].size));
        }
        for (std::size_t r = 0; r < n; ++r)
            if (w->direct[r] != nullptr)
                w->acc_locks[r] = reinterpret_cast<rma::AccLock *>(w->direct[r] + rma::acc_lock_offset(shapes[r].size));
    } else if (flavor == MPI_WIN_FLAVOR_SHARED) {
        std::size_t off = 0;
        for (std::size_t r = 0; r < n; ++r) {
            w->direct[r] = shared + off;
            off += static_cast<std::size_t>(shapes[r].size);
        }
        auto *locks = reinterpret_cast<rma::AccLock *>(shared + rma::acc_lock_offset(static_cast<MPI_Aint>(off)));
        for (std::size_t r = 0; r < n; ++r) w->acc_locks[r] = &locks[r];
        w->base = w->direct[static_cast<std::size_t>(comm->rank)];
    }
    w->mappings = std::move(mappings);
    rma::open_window(w);
    *win = w;
    if (baseptr != nullptr) *static_cast<void **>(baseptr) = w->base;
    return MPI_SUCCESS;
}

int check_create(const char *call, MPI_Comm comm, MPI_Aint size, int disp_unit, MPI_Info info, const void *win) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, win, "win"));
    if (comm->inter) return raise(comm, MPI_ERR_COMM, call, "windows are created over intra-communicators only");
    if (size < 0) return raise(comm, MPI_ERR_SIZE, call, "negative size %ld", static_cast<long>(size));
    if (disp_unit <= 0) return raise(comm, MPI_ERR_DISP, call, "invalid disp_unit %d (must be positive)", disp_unit);
    FTMPI_CHECK(check_info_arg(call, comm, info));
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
    FTMPI_TRY(check_init("MPI_Alloc_mem"));
    FTMPI_CHECK(check_nonnull("MPI_Alloc_mem", MPI_COMM_NULL, baseptr, "baseptr"));
    if (size < 0)
        return raise(MPI_COMM_NULL, MPI_ERR_SIZE, "MPI_Alloc_mem", "negative size %ld", static_cast<long>(size));
    FTMPI_CHECK(check_info_arg("MPI_Alloc_mem", MPI_COMM_NULL, info));
    void *p = nullptr;
    if (posix_memalign(&p, 64, size > 0 ? static_cast<std::size_t>(size) : 1) != 0)
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes",
                     static_cast<long>(size));
    *static_cast<void **>(baseptr) = p;
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base) {
    FTMPI_TRY(check_init("MPI_Free_mem"));
    std::free(base);
    return MPI_SUCCESS;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    FTMPI_TRY(check_create("MPI_Win_create", comm, size, disp_unit, info, win));
    if (base == nullptr && size > 0)
        return raise(comm, MPI_ERR_BASE, "MPI_Win_create", "base is NULL with size %ld", static_cast<long>(size));
    return create("MPI_Win_create", comm, base, size, disp_unit, MPI_WIN_FLAVOR_CREATE, info, win, nullptr);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    FTMPI_TRY(check_create("MPI_Win_allocate", comm, size, disp_unit, info, win));
    FTMPI_CHECK(check_nonnull("MPI_Win_allocate", comm, baseptr, "baseptr"));
    return create("MPI_Win_allocate", comm, nullptr, size, disp_unit, MPI_WIN_FLAVOR_ALLOCATE, info, win, baseptr);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    FTMPI_TRY(check_create("MPI_Win_allocate_shared", comm, size, disp_unit, info, win));
    FTMPI_CHECK(check_nonnull("MPI_Win_allocate_shared", comm, baseptr, "baseptr"));
    // Every member sees the same answer: the processes of comm are all on one node or not.
    for (int p : comm->procs)
        if (!on_this_node(p))
            return raise(comm, MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared",
                         "%s spans several nodes (job rank %d is on another); split it with "
                         "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) first",
                         comm_label(comm), p);
    return create("MPI_Win_allocate_shared", comm, nullptr, size, disp_unit, MPI_WIN_FLAVOR_SHARED, info, win, baseptr);
}

// MPI-4.0 §12.2.3: any window with memory of its own. A member's memory is
// returned where this process can load and store it: every member's of
// MPI_Win_allocate_shared; one's own; and, of MPI_Win_allocate, the members'
// on this node whose segments it mapped. Elsewhere (MPI_Win_create, or
// FTMPI_RMA_SHM=0) the memory is not shared: size 0 and NULL. MPI_PROC_NULL:
// the lowest member whose memory is returned and not empty.
int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr) {
    FTMPI_TRY(check_win("MPI_Win_shared_query", win));
    FTMPI_CHECK(check_nonnull("MPI_Win_shared_query", win->comm, size, "size"));
    FTMPI_CHECK(check_nonnull("MPI_Win_shared_query", win->comm, disp_unit, "disp_unit"));
    FTMPI_CHECK(check_nonnull("MPI_Win_shared_query", win->comm, baseptr, "baseptr"));
    if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return raise(win->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query",
                     "a dynamic window has no memory of its own (attached memory is not shared)");
    if (rank != MPI_PROC_NULL) FTMPI_CHECK(check_target("MPI_Win_shared_query", win, rank, "rank"));
    auto reachable = [win](int r) -> void * {
        if (r == win->comm->rank) return win->base;
        return win->direct[static_cast<std::size_t>(r)];
    };
    int r = rank;
    if (r == MPI_PROC_NULL) {
        r = 0;
        while (r < win->comm->size - 1 &&
               (win->targets[static_cast<std::size_t>(r)].size == 0 || reachable(r) == nullptr))
            ++r;
    }
    const Target &t = win->targets[static_cast<std::size_t>(r)];
    void *base = reachable(r);
    *size = base != nullptr ? t.size : 0;
    *disp_unit = t.disp_unit;
    *static_cast<void **>(baseptr) = base;
    return MPI_SUCCESS;
}

// Displacements are addresses at the target (MPI_Get_address there); the
// target checks that an operation falls in memory it attached, and refuses
// it otherwise (MPI_ERR_RMA_RANGE at the origin's next synchronization).
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    FTMPI_TRY(check_create("MPI_Win_create_dynamic", comm, 0, 1, info, win));
    return create("MPI_Win_create_dynamic", comm, nullptr, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, info, win, nullptr);
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
    FTMPI_TRY(check_win("MPI_Win_attach", win));
    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return raise(win->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach",
                     "the window was not made by MPI_Win_create_dynamic");
    if (size < 0) return raise(win->comm, MPI_ERR_SIZE, "MPI_Win_attach", "negative size %ld", static_cast<long>(size));
    if (base == nullptr && size > 0)
        return raise(win->comm, MPI_ERR_BASE, "MPI_Win_attach", "base is NULL with size %ld", static_cast<long>(size));
    // The neighbours in address order: the first region at or after base,
    // and the one before it.
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    const auto len = static_cast<std::size_t>(size);
    auto next = win->attached.lower_bound(b);
    const bool hits_next = next != win->attached.end() && (next->first == b || next->first < b + len);
    const bool hits_prev = next != win->attached.begin() && std::prev(next)->first + std::prev(next)->second > b;
    if (hits_next || hits_prev) {
        const auto &[other, other_len] = hits_next ? *next : *std::prev(next);
        return raise(win->comm, MPI_ERR_RMA_ATTACH, "MPI_Win_attach",
                     "memory at %p (%ld bytes) overlaps memory already attached at %p (%zu bytes)", base,
                     static_cast<long>(size), reinterpret_cast<void *>(other), other_len);
    }
    win->attached.emplace(b, len);
    return MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void *base) {
    FTMPI_TRY(check_win("MPI_Win_detach", win));
    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return raise(win->comm, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach",
                     "the window was not made by MPI_Win_create_dynamic");
    if (win->attached.erase(reinterpret_cast<std::uintptr_t>(base)) == 0)
        return raise(win->comm, MPI_ERR_RMA_ATTACH, "MPI_Win_detach", "no memory is attached at %p (argument base)",
                     base);
    return MPI_SUCCESS;
}

// Completes at every survivor, whatever failed (spec 000 §17.11): this
// process's operations complete (or fail), then every live member's FENCE
// says its operations here are done, so none still targets the memory.
int MPI_Win_free(MPI_Win *win) {
    FTMPI_CHECK(check_nonnull("MPI_Win_free", MPI_COMM_NULL, win, "win"));
    FTMPI_TRY(check_win("MPI_Win_free", *win));
    MPI_Win w = *win;
    // On a revoked window the epochs cannot be closed any more: free ends them.
    if (!w->comm->revoked && (passive_epoch(w) || w->access_open || w->exposure_open))
        return raise(w->comm, MPI_ERR_RMA_SYNC, "MPI_Win_free", "an %s epoch is still open on %s (end it first)",
                     passive_epoch(w) ? "MPI_Win_lock or MPI_Win_lock_all"
                     : w->access_open ? "MPI_Win_start"
                                      : "MPI_Win_post",
                     comm_label(w->comm));
    if (const int rc = delete_attributes(w); rc != MPI_SUCCESS)
        return raise(w->comm, rc, "MPI_Win_free", "an attribute's delete callback failed");
    complete_all(w);
    exchange_free(w);
    rma::close_window(w);
    w->comm->win = nullptr;
    discard_comm(w->comm);
    for (auto [addr, len] : w->mappings) ftmpi::runtime::unmap_segment(addr, len);
    if (!w->segment.empty()) ftmpi::runtime::unlink_segment(w->segment);
    std::free(w->private_memory);
    w->magic = Magic::dead;
    delete w;
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

}  // extern "C"
