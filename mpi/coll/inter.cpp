// Collectives on inter-communicators: barrier, bcast, reduce, allreduce.
//
// Each group works over its hidden local intra-communicator (comm->local,
// mpi/intercomm.cpp); the two leaders (local rank 0) talk across on the
// inter-communicator's collective context. Root arguments follow the standard:
// MPI_ROOT at the root, MPI_PROC_NULL at the rest of its group, the root's
// rank in the remote group at every process of the other group.
#include "mpi/coll/inter.hpp"

#include <vector>

#include "mpi/checks.hpp"
#include "mpi/coll/barrier.hpp"
#include "mpi/coll/ops.hpp"
#include "mpi/comm_internal.hpp"
#include "mpi/p2p/requests.hpp"

namespace ftmpi::mpi {
namespace {

// One typed message across the inter-communicator (collective context).
int xfer(ftmpi_request_s::Kind kind, MPI_Comm comm, const void *buf, int count, MPI_Datatype type, int peer, int tag) {
    if (peer >= comm->size) return MPI_ERR_PROC_FAILED;  // a shrink left no remote group
    MPI_Request r = new_request(kind, comm, buf, count, type, peer, tag, comm->context + 1);
    if (kind == ftmpi_request_s::Kind::send) start_send(r);
    else start_recv(r);
    wait_complete(r);
    return retire_request(&r, MPI_STATUS_IGNORE);
}

int first_error(int a, int b) { return a != MPI_SUCCESS ? a : b; }

std::vector<char> scratch(int count, MPI_Datatype type) {
    return std::vector<char>(static_cast<std::size_t>(count) * static_cast<std::size_t>(type->extent) + 1);
}

}  // namespace

int inter_barrier(MPI_Comm comm) {
    int err = barrier(comm->local);
    const int tag = next_team_tag(comm);
    if (comm->rank == 0) {
        char out = 0, in = 0;
        err = first_error(err, team_swap(comm, 0, tag, &out, 1, &in, 1));
    }
    return first_error(err, barrier(comm->local));
}

int inter_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    const int tag = next_team_tag(comm);
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    if (root == MPI_ROOT) return xfer(ftmpi_request_s::Kind::send, comm, buf, count, type, 0, tag);
    int err = MPI_SUCCESS;
    if (comm->rank == 0) err = xfer(ftmpi_request_s::Kind::recv, comm, buf, count, type, root, tag);
    return first_error(err, MPI_Bcast(buf, count, type, 0, comm->local));
}

int inter_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                 MPI_Comm comm) {
    const int tag = next_team_tag(comm);
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    if (root == MPI_ROOT) return xfer(ftmpi_request_s::Kind::recv, comm, recvbuf, count, type, 0, tag);
    std::vector<char> partial = scratch(count, type);
    int err = MPI_Reduce(sendbuf, partial.data(), count, type, op, 0, comm->local);
    if (comm->rank == 0)
        err = first_error(err, xfer(ftmpi_request_s::Kind::send, comm, partial.data(), count, type, root, tag));
    return err;
}

// Every process gets the reduction of the OTHER group's contributions.
int inter_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    const int tag = next_team_tag(comm);
    std::vector<char> partial = scratch(count, type);
    int err = MPI_Reduce(sendbuf, partial.data(), count, type, op, 0, comm->local);
    if (comm->rank == 0) {
        MPI_Request rr = new_request(ftmpi_request_s::Kind::recv, comm, recvbuf, count, type, 0, tag, comm->context + 1);
        start_recv(rr);
        err = first_error(err, xfer(ftmpi_request_s::Kind::send, comm, partial.data(), count, type, 0, tag));
        wait_complete(rr);
        err = first_error(err, retire_request(&rr, MPI_STATUS_IGNORE));
    }
    return first_error(err, MPI_Bcast(recvbuf, count, type, 0, comm->local));
}

namespace {

int report(const char *call, MPI_Comm comm, int err) {
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    return raise(comm, err, call, "inter-communicator collective on %s failed", comm_label(comm));
}

int check_inter_root(const char *call, MPI_Comm comm, int root) {
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < comm->size)) return MPI_SUCCESS;
    return raise(comm, MPI_ERR_ROOT, call,
                 "invalid root %d (argument root: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of size %d)",
                 root, comm->size);
}

int check_data(const char *call, MPI_Comm comm, const void *buf, int count, MPI_Datatype type, const char *arg) {
    FTMPI_CHECK(check_count(call, comm, count));
    FTMPI_CHECK(check_type(call, comm, type));
    if (buf == MPI_IN_PLACE)
        return raise(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is not allowed on an inter-communicator (argument %s)",
                     arg);
    return MPI_SUCCESS;
}

}  // namespace

int inter_call_barrier(MPI_Comm comm) {
    FTMPI_TRY(check_init("MPI_Barrier"));
    FTMPI_TRY(check_not_revoked("MPI_Barrier", comm));
    return report("MPI_Barrier", comm, inter_barrier(comm));
}

int inter_call_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    FTMPI_TRY(check_init("MPI_Bcast"));
    FTMPI_TRY(check_not_revoked("MPI_Bcast", comm));  // a root of MPI_PROC_NULL too
    FTMPI_TRY(check_inter_root("MPI_Bcast", comm, root));
    FTMPI_TRY(check_data("MPI_Bcast", comm, buf, count, type, "buffer"));
    return report("MPI_Bcast", comm, inter_bcast(buf, count, type, root, comm));
}

int inter_call_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                      MPI_Comm comm) {
    FTMPI_TRY(check_init("MPI_Reduce"));
    FTMPI_TRY(check_not_revoked("MPI_Reduce", comm));  // a root of MPI_PROC_NULL too
    FTMPI_TRY(check_inter_root("MPI_Reduce", comm, root));
    FTMPI_TRY(check_data("MPI_Reduce", comm, root == MPI_ROOT ? recvbuf : sendbuf, count, type,
                         root == MPI_ROOT ? "recvbuf" : "sendbuf"));
    FTMPI_TRY(check_op("MPI_Reduce", comm, op));
    return report("MPI_Reduce", comm, inter_reduce(sendbuf, recvbuf, count, type, op, root, comm));
}

int inter_call_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm) {
    FTMPI_TRY(check_init("MPI_Allreduce"));
    FTMPI_TRY(check_not_revoked("MPI_Allreduce", comm));
    FTMPI_TRY(check_data("MPI_Allreduce", comm, sendbuf, count, type, "sendbuf"));
    FTMPI_TRY(check_op("MPI_Allreduce", comm, op));
    return report("MPI_Allreduce", comm, inter_allreduce(sendbuf, recvbuf, count, type, op, comm));
}

}  // namespace ftmpi::mpi
