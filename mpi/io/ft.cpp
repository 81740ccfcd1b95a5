// MPI-IO under process failure (spec 000 §17.4.3, §17.12.1; spec 001 §1.2.4,
// §1.3.3): the failure-aware sync, revoke (invalidate), the failed group,
// and validate.
//
// Writes synchronize on MPI_File_sync (spec 001 §1.2.4): a collective access
// reports a failure it meets (its exchange on the hidden communicator fails,
// it never waits for a dead member), but only sync promises the same answer
// at every live member. Sync is one agreement on the hidden communicator
// (agree_internal, which completes despite failures and on a revoked
// communicator) on two bits, "fsync succeeded here" and "the file is not
// revoked here", together with the agreed failures: the same facts at every
// survivor, from which each computes the same class.
//
// Revoke is the hidden communicator's reliable revoke: every member's file is
// revoked, its calls blocked in an exchange on the file return
// MPI_ERR_REVOKED, and every later non-local call on the file fails at once
// (check_live_file). Validate is the hidden communicator's validate: its
// agreed failures are recognized, and the file's collectives run over the
// other members.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ft/failures.hpp"
#include "mpi/checks.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/io/file.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/state.hpp"
#include "mpi/ulfm/ulfm.hpp"

namespace ftmpi::mpi {

int check_live_file(const char *call, MPI_File f) {
    FTMPI_TRY(check_file(call, f));
    progress();  // a revoke from another member is taken in here
    if (!f->comm->revoked) return MPI_SUCCESS;
    return raise(f->comm, MPI_ERR_REVOKED, call, "%s: the file was revoked", f->path.c_str());
}

int file_leader(MPI_Comm c) {
    for (int r = 0; r < c->size; ++r)
        if (!recognized(c, r) && !ftmpi::ft::failures().is_failed(c->procs[static_cast<std::size_t>(r)])) return r;
    return c->rank;  // every other member failed
}

void failures_at_open(ftmpi_file_s &f) {
    for (int r : f.comm->failed.global) f.sync_reported.push_back(f.comm->procs[static_cast<std::size_t>(r)]);
    std::sort(f.sync_reported.begin(), f.sync_reported.end());
}

namespace {

// The bits of the sync agreement (ANDed over the live members).
constexpr int k_synced = 1;       // fsync succeeded here
constexpr int k_not_revoked = 2;  // this member had not seen the file revoked

// The members of f's group among `failed` (job ranks, ascending), ascending.
std::vector<int> members_among(const ftmpi_file_s &f, const std::vector<int> &failed) {
    std::vector<int> out;
    for (int p : f.comm->procs)
        if (std::binary_search(failed.begin(), failed.end(), p)) out.push_back(p);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

// Collective. Every member's writes reach the storage device (fsync); then
// one agreement gives every live member the same class: MPI_ERR_REVOKED when
// some member saw the file revoked, else MPI_ERR_PROC_FAILED when the agreed
// failures include a member no earlier sync reported, else MPI_ERR_IO when an
// fsync failed somewhere, else success. Never waits for a dead member. A
// revoke preempts it (spec 001 §1.3.3: an invalidated file preempts every
// non-local completion call): on a revoked file it fails at once, and a
// revoke that comes while it waits aborts its agreement, in which members
// that will never call it (they learned of the revoke first) take part with
// zeros, so every member in it returns MPI_ERR_REVOKED.
int MPI_File_sync(MPI_File fh) {
    const char *call = "MPI_File_sync";
    FTMPI_TRY(check_file(call, fh));
    progress();
    if (fh->comm->revoked) return raise(fh->comm, MPI_ERR_REVOKED, call, "%s: the file was revoked", fh->path.c_str());
    const int sys = ::fsync(fh->fd) != 0 ? errno : 0;
    int flag = (sys == 0 ? k_synced : 0) | k_not_revoked;
    std::vector<int> agreed;
    agree_internal(fh->comm, &flag, &agreed, true);
    std::vector<int> failed = members_among(*fh, agreed);
    std::vector<int> fresh;
    std::set_difference(failed.begin(), failed.end(), fh->sync_reported.begin(), fh->sync_reported.end(),
                        std::back_inserter(fresh));
    std::vector<int> reported;
    std::set_union(failed.begin(), failed.end(), fh->sync_reported.begin(), fh->sync_reported.end(),
                   std::back_inserter(reported));
    fh->sync_reported = std::move(reported);
    if ((flag & k_not_revoked) == 0)
        return raise(fh->comm, MPI_ERR_REVOKED, call, "%s: the file was revoked", fh->path.c_str());
    if (!fresh.empty())
        return raise(fh->comm, MPI_ERR_PROC_FAILED, call,
                     "%s: %zu member(s) failed since the last sync (job rank %d%s)", fh->path.c_str(), fresh.size(),
                     fresh.front(), fresh.size() > 1 ? ", ..." : "");
    if ((flag & k_synced) == 0)
        return raise(fh->comm, MPI_ERR_IO, call, "%s: %s", fh->path.c_str(),
                     sys != 0 ? std::strerror(sys) : "fsync failed at another process");
    return MPI_SUCCESS;
}

// Spec 001 §1.3.3 (MPI_File_invalidate) under the ULFM-style MPIX name of
// MPIX_Comm_revoke and MPIX_Win_revoke. Local; the revoke reaches every member.
int MPIX_File_revoke(MPI_File fh) {
    FTMPI_TRY(check_file("MPIX_File_revoke", fh));
    return MPIX_Comm_revoke(fh->comm);
}

int MPI_File_invalidate(MPI_File fh) {
    FTMPI_TRY(check_file("MPI_File_invalidate", fh));
    return MPIX_Comm_revoke(fh->comm);
}

int MPIX_File_is_revoked(MPI_File fh, int *flag) {
    FTMPI_TRY(check_file("MPIX_File_is_revoked", fh));
    FTMPI_CHECK(check_nonnull("MPIX_File_is_revoked", fh->comm, flag, "flag"));
    progress();
    *flag = fh->comm->revoked ? 1 : 0;
    return MPI_SUCCESS;
}

// Spec 000 §17.4.3. Local: the members of the file's group known failed here.
int MPI_File_get_group_failed(MPI_File fh, MPI_Group *failed) {
    FTMPI_TRY(check_file("MPI_File_get_group_failed", fh));
    FTMPI_CHECK(check_nonnull("MPI_File_get_group_failed", fh->comm, failed, "failed"));
    progress();
    std::vector<int> procs;
    for (int p : fh->comm->procs)
        if (ftmpi::ft::failures().is_failed(p)) procs.push_back(p);
    *failed = group_or_empty(std::move(procs));
    return MPI_SUCCESS;
}

// Spec 000 §17.12.1: the same failed group at every live member (the
// validate agreement of the hidden communicator), which re-enables the
// file's collectives over the other members.
int MPI_File_validate(MPI_File fh, MPI_Group *failed) {
    FTMPI_TRY(check_file("MPI_File_validate", fh));
    return MPI_Comm_validate(fh->comm, failed);
}

int MPI_Ifile_validate(MPI_File fh, MPI_Group *failed, MPI_Request *request) {
    FTMPI_TRY(check_file("MPI_Ifile_validate", fh));
    return MPI_Icomm_validate(fh->comm, failed, request);
}

// Local: false once a failure not recognized by a validate is known here.
int MPI_File_collectives_enabled(MPI_File fh, int *active) {
    FTMPI_TRY(check_file("MPI_File_collectives_enabled", fh));
    FTMPI_CHECK(check_nonnull("MPI_File_collectives_enabled", fh->comm, active, "active"));
    progress();
    *active = collectives_active(fh->comm) ? 1 : 0;
    return MPI_SUCCESS;
}

}  // extern "C"
