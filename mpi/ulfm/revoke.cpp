// Revoke (ULFM; spec 001 §1.3, spec 003): ft/revoke.hpp's broadcast,
// delivered here. The first time a process learns that a communicator is
// revoked, it marks it, fails every pending operation on it with
// MPI_ERR_REVOKED, and notifies its live BMG neighbours in it.
#include "mpi-ext.h"
#include "ft/revoke.hpp"
#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/recovery_internal.hpp"
#include "runtime/log.hpp"
#include "runtime/test_hooks.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::mpi {

void revoke_local(MPI_Comm c) {
    if (c->revoked) return;
    // The failed requests' release may retire a freed communicator (its
    // last ones): c, and the inter-communicator whose queues a view shares,
    // stay until this is over.
    MPI_Comm owner = c->ft_owner;
    comm_retain(c);
    if (owner != nullptr) comm_retain(owner);
    const auto notify = ft::revoke_notice(c->revoked, CommView(c));
    abort_creations(c);
    if (owner != nullptr) {  // an inter-communicator's view
        owner->revoked = true;
        // Its collectives run their group-internal steps on the hidden local
        // communicator: those must stop too.
        if (owner->local != nullptr) revoke_local(owner->local);
    }
    FTMPI_INFO("%s is revoked", comm_label(c));
    for (MatchQueue *q : {c->queue, c->coll_queue}) {
        auto &posted = q->posted();
        while (!posted.empty()) {
            MPI_Request r = posted.front();
            posted.pop_front();
            r->posted = false;
            r->status.MPI_SOURCE = r->peer;
            r->status.MPI_TAG = r->tag;
            complete_request(r, MPI_ERR_REVOKED, 0);
        }
    }
    g.transport->cancel_sends(c->uid, c->context, c->context + 1, transport::Err::revoked);
    int sent = 0;
    for (int peer : notify) {
        ft_send(c, peer, revoke_tag, nullptr, 0);
        if (++sent == 2) runtime::test_kill_point("revoke");  // tests: a partial revoke notice
    }
    comm_release(c);
    if (owner != nullptr) comm_release(owner);
}

namespace {

int revoke_call(const char *call, MPI_Comm comm) {
    FTMPI_TRY(check_any(call, comm));
    if (!ft_view(comm)->revoked) runtime::emit(runtime::EventType::comm_revoked, comm->context, 0);
    revoke_local(ft_view(comm));
    return MPI_SUCCESS;
}

int is_revoked_call(const char *call, MPI_Comm comm, int *flag) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, flag, "flag"));
    progress();
    *flag = comm->revoked ? 1 : 0;
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

// The ULFM names (Open MPI 5, MPICH) and the 2011 draft's (spec 001).
extern "C" {
int MPIX_Comm_revoke(MPI_Comm comm) { return revoke_call("MPIX_Comm_revoke", comm); }
int MPI_Comm_invalidate(MPI_Comm comm) { return revoke_call("MPI_Comm_invalidate", comm); }
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag) { return is_revoked_call("MPIX_Comm_is_revoked", comm, flag); }
int MPI_Comm_revoke(MPI_Comm comm) { return revoke_call("MPI_Comm_revoke", comm); }
int MPI_Comm_is_revoked(MPI_Comm comm, int *flag) { return is_revoked_call("MPI_Comm_is_revoked", comm, flag); }
}  // extern "C"
