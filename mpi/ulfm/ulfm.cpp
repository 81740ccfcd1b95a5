// Failure queries and acknowledgement: the ULFM calls (MPIX_Comm_failure_ack,
// _failure_get_acked, _get_failed, _ack_failed) and the 2011 draft's calls
// (MPI_Comm_group_failed, _remote_group_failed, _reenable_any_source,
// _validate_local, _get_failed_local), all on one per-communicator view of
// the process's failure record (spec 004's set L).
//
// The failures of a communicator are those of its procs, the group that
// point-to-point ranks address: the whole group of an intra-communicator, the
// remote group of an inter-communicator (MPI_Comm_group_failed alone reports
// the local group there, as spec 000 §17.4.1 asks).
#include <algorithm>
#include <climits>
#include <vector>

#include "mpi-ext.h"
#include "mpi/checks.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/ulfm.hpp"

namespace ftmpi::mpi {

void refresh_failed_slow(MPI_Comm c) {
    const auto &order = ft::failures().in_order();
    for (; c->failed.scanned < order.size(); ++c->failed.scanned) {
        const int p = order[c->failed.scanned];
        const auto it = std::find(c->procs.begin(), c->procs.end(), p);
        if (it != c->procs.end()) c->failed.ranks.push_back(static_cast<int>(it - c->procs.begin()));
    }
}

void acknowledge(MPI_Comm c, std::size_t n) {
    refresh_failed(c);
    c->failed.acked = std::max(c->failed.acked, std::min(n, c->failed.ranks.size()));
    if (c->failed.acked < c->failed.ranks.size()) return;
    for (MPI_Request r : c->queue->posted())
        if (r->comm == c) r->failure_pending = false;
}

void apply_failures_to_posted() {
    auto &f = ft::failures();
    // Completed after the walk: a completion's release may delete a freed
    // communicator's queues (Engine::destroy) under it.
    std::vector<MPI_Request> failed;
    for (auto &qp : g.engine->queues()) {
        auto &posted = qp->posted();
        for (auto it = posted.begin(); it != posted.end();) {
            MPI_Request r = *it;
            bool fail = false;
            if (coll_gated(r) && collectively_inactive(r->comm)) fail = true;  // spec 000 §17.7
            else if (r->peer != MPI_ANY_SOURCE) fail = f.is_failed(r->comm->procs[static_cast<std::size_t>(r->peer)]);
            else if (any_source_disabled(r->comm)) fail = r->blocking, r->failure_pending = !r->blocking;
            if (!fail) {
                ++it;
                continue;
            }
            it = posted.erase(it);
            r->posted = false;
            r->status.MPI_SOURCE = r->peer;
            r->status.MPI_TAG = r->tag;
            failed.push_back(r);
        }
    }
    for (MPI_Request r : failed) complete_request(r, MPI_ERR_PROC_FAILED, 0);
}

namespace {
// The elements of `a` not in `b`, in a's order.
std::vector<int> minus(const std::vector<int> &a, const std::vector<int> &b) {
    std::vector<int> out;
    for (int x : a)
        if (std::find(b.begin(), b.end(), x) == b.end()) out.push_back(x);
    return out;
}

}  // namespace

bool collectives_active(MPI_Comm c) {
    refresh_failed(c);
    if (c->failed.ranks.size() > c->failed.global.size()) return false;
    for (int r : c->failed.ranks)
        if (!recognized(c, r)) return false;
    return true;
}

void set_recognized(MPI_Comm c, std::vector<int> global) {
    auto &f = c->failed;
    f.global_new = minus(global, f.global);
    f.local_new = minus(global, f.local);
    f.global = std::move(global);
    f.local = f.global;
    f.validated = true;
    c->coll_ranks.clear();
    if (f.global.empty()) return;
    for (int r = 0; r < c->size; ++r)
        if (!recognized(c, r)) c->coll_ranks.push_back(r);
}

void inherit_recognized(MPI_Comm parent, MPI_Comm child) {
    child->failed.validated = parent->failed.validated;
    if (parent->failed.global.empty()) return;
    std::vector<int> g;
    for (int r = 0; r < child->size; ++r) {
        const auto it =
            std::find(parent->procs.begin(), parent->procs.end(), child->procs[static_cast<std::size_t>(r)]);
        if (it != parent->procs.end() && recognized(parent, static_cast<int>(it - parent->procs.begin())))
            g.push_back(r);
    }
    set_recognized(child, std::move(g));
    child->failed.global_new.clear();
    child->failed.local_new.clear();
}

namespace {

int check_ft_comm(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    progress();  // take in whatever failure news is waiting
    refresh_failed(comm);
    return MPI_SUCCESS;
}

int copy_failed(const char *call, MPI_Comm comm, int failed_type, const std::vector<int> &all,
                const std::vector<int> &added, int failed_array[]) {
    if (failed_type != MPI_FAILED_ALL && failed_type != MPI_FAILED_NEW)
        return raise(comm, MPI_ERR_ARG, call, "invalid failed_type %d (expected MPI_FAILED_ALL or MPI_FAILED_NEW)",
                     failed_type);
    const std::vector<int> &v = failed_type == MPI_FAILED_ALL ? all : added;
    if (!v.empty()) FTMPI_CHECK(check_nonnull(call, comm, failed_array, "failed_array"));
    std::copy(v.begin(), v.end(), failed_array);
    return MPI_SUCCESS;
}

std::vector<int> job_ranks(MPI_Comm c, std::size_t from, std::size_t to) {
    std::vector<int> out;
    for (std::size_t i = from; i < to; ++i) out.push_back(c->procs[static_cast<std::size_t>(c->failed.ranks[i])]);
    return out;
}

int get_failed_call(const char *call, MPI_Comm comm, MPI_Group *failedgrp) {
    FTMPI_TRY(check_ft_comm(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, failedgrp, "failedgrp"));
    *failedgrp = group_or_empty(job_ranks(comm, 0, comm->failed.ranks.size()));
    return MPI_SUCCESS;
}

// Acknowledges the first num_to_ack failures of get_failed's group;
// num_acked is how many are acknowledged after the call.
int ack_failed_call(const char *call, MPI_Comm comm, int num_to_ack, int *num_acked) {
    FTMPI_TRY(check_ft_comm(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, num_acked, "num_acked"));
    if (num_to_ack < 0) return raise(comm, MPI_ERR_ARG, call, "negative num_to_ack %d", num_to_ack);
    acknowledge(comm, static_cast<std::size_t>(num_to_ack));
    *num_acked = static_cast<int>(comm->failed.acked);
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPIX_Comm_failure_ack(MPI_Comm comm) {
    FTMPI_TRY(check_ft_comm("MPIX_Comm_failure_ack", comm));
    acknowledge(comm, SIZE_MAX);
    return MPI_SUCCESS;
}

int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp) {
    FTMPI_TRY(check_ft_comm("MPIX_Comm_failure_get_acked", comm));
    FTMPI_CHECK(check_nonnull("MPIX_Comm_failure_get_acked", comm, failedgrp, "failedgrp"));
    *failedgrp = group_or_empty(job_ranks(comm, 0, comm->failed.acked));
    return MPI_SUCCESS;
}

int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp) {
    return get_failed_call("MPIX_Comm_get_failed", comm, failedgrp);
}
int MPI_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp) {
    return get_failed_call("MPI_Comm_get_failed", comm, failedgrp);
}
int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked) {
    return ack_failed_call("MPIX_Comm_ack_failed", comm, num_to_ack, num_acked);
}
int MPI_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked) {
    return ack_failed_call("MPI_Comm_ack_failed", comm, num_to_ack, num_acked);
}

int MPI_Comm_group_failed(MPI_Comm comm, MPI_Group *failed) {
    FTMPI_TRY(check_ft_comm("MPI_Comm_group_failed", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_group_failed", comm, failed, "failed"));
    if (!comm->inter) {
        *failed = group_or_empty(job_ranks(comm, 0, comm->failed.ranks.size()));
        return MPI_SUCCESS;
    }
    std::vector<int> procs;
    for (int p : ftmpi::ft::failures().in_order())
        if (std::find(comm->local_procs.begin(), comm->local_procs.end(), p) != comm->local_procs.end())
            procs.push_back(p);
    *failed = group_or_empty(std::move(procs));
    return MPI_SUCCESS;
}

int MPI_Comm_remote_group_failed(MPI_Comm comm, MPI_Group *failed) {
    FTMPI_TRY(check_ft_comm("MPI_Comm_remote_group_failed", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_remote_group_failed", comm, failed, "failed"));
    if (!comm->inter)
        return raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_group_failed", "%s is not an inter-communicator",
                     comm_label(comm));
    *failed = group_or_empty(job_ranks(comm, 0, comm->failed.ranks.size()));
    return MPI_SUCCESS;
}

int MPI_Comm_reenable_any_source(MPI_Comm comm, MPI_Group *failed) {
    FTMPI_TRY(check_ft_comm("MPI_Comm_reenable_any_source", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_reenable_any_source", comm, failed, "failed"));
    acknowledge(comm, SIZE_MAX);
    *failed = group_or_empty(job_ranks(comm, 0, comm->failed.acked));
    return MPI_SUCCESS;
}

int MPI_Comm_validate_local(MPI_Comm comm, int *num_failed, int *num_new) {
    FTMPI_TRY(check_ft_comm("MPI_Comm_validate_local", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_validate_local", comm, num_failed, "num_failed"));
    FTMPI_CHECK(check_nonnull("MPI_Comm_validate_local", comm, num_new, "num_new"));
    auto &f = comm->failed;
    f.local_new = minus(f.ranks, f.local);
    f.local.insert(f.local.end(), f.local_new.begin(), f.local_new.end());
    *num_failed = static_cast<int>(f.local.size());
    *num_new = static_cast<int>(f.local_new.size());
    return MPI_SUCCESS;
}

// L as of the last validate (MPI_FAILED_ALL), or what that validate found new
// (MPI_FAILED_NEW): comm ranks in detection order (after a global validate,
// ascending).
int MPI_Comm_get_failed_local(MPI_Comm comm, int failed_type, int failed_array[]) {
    FTMPI_TRY(check_ft_comm("MPI_Comm_get_failed_local", comm));
    return copy_failed("MPI_Comm_get_failed_local", comm, failed_type, comm->failed.local, comm->failed.local_new,
                       failed_array);
}

// G as of the last MPI_Comm_validate / validate_global, or what it added.
int MPI_Comm_get_failed_global(MPI_Comm comm, int failed_type, int failed_array[]) {
    FTMPI_TRY(check_ft_comm("MPI_Comm_get_failed_global", comm));
    return copy_failed("MPI_Comm_get_failed_global", comm, failed_type, comm->failed.global, comm->failed.global_new,
                       failed_array);
}

int MPI_Comm_collectives_enabled(MPI_Comm comm, int *active) {
    FTMPI_TRY(check_ft_comm("MPI_Comm_collectives_enabled", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_collectives_enabled", comm, active, "active"));
    *active = collectives_active(comm) ? 1 : 0;
    return MPI_SUCCESS;
}

}  // extern "C"
