// Handles that C writes when a request completes (MPI_Comm_idup's newcomm,
// MPI_Comm_ishrink's, MPI_Icomm_validate's group): C writes them to a cell
// here, and the Fortran MPI_Wait/MPI_Test family (generated, through
// Completions) converts the cell into the user's INTEGER once the request is
// done.
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "mpi/fortran/support.hpp"

using ftmpi::fortran::set_ierr;

namespace {

// Handles C writes at completion, by their request's Fortran number. Each
// has a sequence number: a wait or test finishes only those registered
// before it began (a request number freed inside it may be handed out
// again, in another thread or in an error handler, before it looks).
struct Entry {
    std::uint64_t seq;
    std::function<void()> write;
};
std::mutex g_lock;
std::unordered_map<MPI_Fint, std::vector<Entry>> g_outputs;
std::vector<std::function<void()>> g_orphans;  // of requests freed before they completed: kept, never run
std::uint64_t g_seq = 0;
std::atomic<bool> g_any{false};

void at_completion(MPI_Fint request, std::function<void()> write) {
    std::lock_guard<std::mutex> guard(g_lock);
    g_outputs[request].push_back({g_seq++, std::move(write)});
    g_any.store(true, std::memory_order_relaxed);
}

template <typename Out, MPI_Fint (*C2F)(Out), typename Start>
void start(MPI_Fint *out, MPI_Fint *request, MPI_Fint *ierr, Start start_call) {
    auto cell = std::make_shared<Out>();
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = start_call(cell.get(), &r);
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        at_completion(*request, [cell, out] { *out = C2F(*cell); });
    }
    set_ierr(ierr, rc);
}

}  // namespace

namespace ftmpi::fortran {

Completions::Completions(const MPI_Fint *requests, int n, bool run) : run_(run) {
    if (!g_any.load(std::memory_order_relaxed) || n <= 0) return;
    std::lock_guard<std::mutex> guard(g_lock);
    start_ = g_seq;
    before_.assign(requests, requests + n);
}

void Completions::finish(const MPI_Fint *requests) const {
    if (before_.empty()) return;
    std::vector<std::function<void()>> due;
    {
        std::lock_guard<std::mutex> guard(g_lock);
        for (std::size_t i = 0; i < before_.size(); ++i) {
            if (requests[i] != 0 || before_[i] == 0) continue;  // not completed here
            auto it = g_outputs.find(before_[i]);
            if (it == g_outputs.end()) continue;
            auto &entries = it->second;
            for (auto e = entries.begin(); e != entries.end();) {
                if (e->seq >= start_) {  // registered after this call began: another request's
                    ++e;
                    continue;
                }
                (run_ ? due : g_orphans).push_back(std::move(e->write));
                e = entries.erase(e);
            }
            if (entries.empty()) g_outputs.erase(it);
        }
        if (g_outputs.empty()) g_any.store(false, std::memory_order_relaxed);
    }
    for (auto &write : due) write();  // outside the lock: it makes MPI calls
}

}  // namespace ftmpi::fortran

extern "C" {

void mpi_comm_idup_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierr) {
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    start<MPI_Comm, PMPI_Comm_c2f>(newcomm, request, ierr,
                                   [&](MPI_Comm *out, MPI_Request *r) { return PMPI_Comm_idup(c, out, r); });
}

void mpi_comm_idup_with_info_(MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierr) {
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    const MPI_Info i = PMPI_Info_f2c(*info);
    start<MPI_Comm, PMPI_Comm_c2f>(
        newcomm, request, ierr, [&](MPI_Comm *out, MPI_Request *r) { return PMPI_Comm_idup_with_info(c, i, out, r); });
}

void mpi_comm_ishrink_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierr) {
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    start<MPI_Comm, PMPI_Comm_c2f>(newcomm, request, ierr,
                                   [&](MPI_Comm *out, MPI_Request *r) { return PMPI_Comm_ishrink(c, out, r); });
}

void mpix_comm_ishrink_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierr) {
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    start<MPI_Comm, PMPI_Comm_c2f>(newcomm, request, ierr,
                                   [&](MPI_Comm *out, MPI_Request *r) { return PMPIX_Comm_ishrink(c, out, r); });
}

void mpi_icomm_validate_(MPI_Fint *comm, MPI_Fint *failed, MPI_Fint *request, MPI_Fint *ierr) {
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    start<MPI_Group, PMPI_Group_c2f>(failed, request, ierr,
                                     [&](MPI_Group *out, MPI_Request *r) { return PMPI_Icomm_validate(c, out, r); });
}

void mpi_iwin_validate_(MPI_Fint *win, MPI_Fint *failed, MPI_Fint *request, MPI_Fint *ierr) {
    const MPI_Win w = PMPI_Win_f2c(*win);
    start<MPI_Group, PMPI_Group_c2f>(failed, request, ierr,
                                     [&](MPI_Group *out, MPI_Request *r) { return PMPI_Iwin_validate(w, out, r); });
}

void mpi_ifile_validate_(MPI_Fint *fh, MPI_Fint *failed, MPI_Fint *request, MPI_Fint *ierr) {
    const MPI_File f = PMPI_File_f2c(*fh);
    start<MPI_Group, PMPI_Group_c2f>(failed, request, ierr,
                                     [&](MPI_Group *out, MPI_Request *r) { return PMPI_Ifile_validate(f, out, r); });
}

}  // extern "C"
