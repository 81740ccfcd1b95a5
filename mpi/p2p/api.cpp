// Point-to-point entry points: argument checks, then the request engine.
#include <cstring>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/p2p/bsend.hpp"
#include "mpi/p2p/requests.hpp"

namespace ftmpi::mpi {
namespace {

int check_send(const char *call, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_count(call, comm, count));
    FTMPI_CHECK(check_comm_type(call, comm, type));
    FTMPI_CHECK(check_typed_buffer(call, comm, buf, count, type));
    FTMPI_CHECK(check_dest(call, comm, dest));
    FTMPI_CHECK(check_send_tag(call, comm, tag));
    return MPI_SUCCESS;
}

int check_recv(const char *call, const void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_count(call, comm, count));
    FTMPI_CHECK(check_comm_type(call, comm, type));
    FTMPI_CHECK(check_typed_buffer(call, comm, buf, count, type));
    FTMPI_CHECK(check_source(call, comm, source));
    FTMPI_CHECK(check_recv_tag(call, comm, tag));
    return MPI_SUCCESS;
}

MPI_Request make_send(MPI_Comm comm, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                      transport::SendMode mode) {
    MPI_Request r = new_request(ftmpi_request_s::Kind::send, comm, buf, count, type, dest, tag, comm->context);
    r->mode = mode;
    return r;
}

MPI_Request make_recv(MPI_Comm comm, void *buf, int count, MPI_Datatype type, int source, int tag) {
    return new_request(ftmpi_request_s::Kind::recv, comm, buf, count, type, source, tag, comm->context);
}

// Finishes a blocking call on request `r`: waits, reports its error on comm.
int finish_blocking(const char *call, MPI_Request r, MPI_Status *status) {
    wait_complete(r);
    MPI_Comm comm = r->comm;  // the caller's: not freed during this call
    const int peer = r->peer;
    const int err = retire_request(&r, status);
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    if (peer == MPI_ANY_SOURCE && err == MPI_ERR_PROC_FAILED)
        return raise(comm, err, call, "MPI_ANY_SOURCE receive on %s, which has unacknowledged failures",
                     comm_label(comm));
    return raise(comm, err, call, "operation with rank %d of %s failed", peer, comm_label(comm));
}

int blocking_send(const char *call, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  transport::SendMode mode) {
    FTMPI_TRY(check_send(call, buf, count, type, dest, tag, comm));
    if (mode == transport::SendMode::standard && send_now(comm, buf, count, type, dest, tag)) return MPI_SUCCESS;
    MPI_Request r = make_send(comm, buf, count, type, dest, tag, mode);
    start_send(r);
    return finish_blocking(call, r, MPI_STATUS_IGNORE);
}

int nonblocking_send(const char *call, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request *request, transport::SendMode mode) {
    FTMPI_TRY(check_send(call, buf, count, type, dest, tag, comm));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    MPI_Request r = make_send(comm, buf, count, type, dest, tag, mode);
    start_send(r);
    *request = r;
    return MPI_SUCCESS;
}

int persistent_send(const char *call, const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request, transport::SendMode mode) {
    FTMPI_TRY(check_send(call, buf, count, type, dest, tag, comm));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    MPI_Request r = make_send(comm, buf, count, type, dest, tag, mode);
    r->persistent = true;
    *request = r;
    return MPI_SUCCESS;
}

// A send-receive pair's code and status (MPI_Sendrecv, MPI_Isendrecv): the
// failure's own class, the receive's when both failed, as Open MPI's ULFM
// returns it (there is one status: MPI_ERR_IN_STATUS is not its error), and
// a status that names the failed peer.
int pair_result(MPI_Status &st, int rerr, int serr, int dest) {
    if (rerr == MPI_SUCCESS && serr != MPI_SUCCESS) st.MPI_SOURCE = dest;
    return rerr != MPI_SUCCESS ? rerr : serr;
}

// What MPI_(I)Sendrecv_replace sends: a copy of buf, packed (and sent as
// MPI_PACKED bytes) for a non-contiguous type.
std::vector<char> replace_copy(const void *buf, int count, MPI_Datatype type, int *scount, MPI_Datatype *stype) {
    std::vector<char> copy(static_cast<std::size_t>(count) * type->size);
    *scount = count, *stype = type;
    if (!type->contiguous) {
        pack(buf, static_cast<std::size_t>(count), type, copy.data());
        *scount = static_cast<int>(copy.size()), *stype = MPI_PACKED;
    } else if (!copy.empty()) {
        std::memcpy(copy.data(), buf, copy.size());
    }
    return copy;
}

// MPI_Isendrecv(_replace): an internal send and receive under one user
// request (of kind coll, as a nonblocking collective's), complete when both
// are, with the receive's status. The receive is marked blocking: an
// MPI_ANY_SOURCE one fails at a failure instead of staying pending, which
// the pair's request could not show.
struct Pair {
    MPI_Request user;
    int pending = 2, dest, serr = MPI_SUCCESS, rerr = MPI_SUCCESS;
    MPI_Status rst{};
    std::vector<char> copy;  // _replace: the data sent
};

void pair_step(Pair *p) {
    if (--p->pending > 0) return;
    MPI_Request u = p->user;
    const int err = pair_result(p->rst, p->rerr, p->serr, p->dest);
    u->status = p->rst;
    u->owner = nullptr;
    delete p;
    complete_request(u, err, u->status.ftmpi_count);
}

void pair_recv_done(MPI_Request r) {
    auto *p = static_cast<Pair *>(r->owner);
    p->rerr = r->status.MPI_ERROR;
    p->rst = r->status;
    pair_step(p);
}

void pair_send_done(MPI_Request r) {
    auto *p = static_cast<Pair *>(r->owner);
    p->serr = r->status.MPI_ERROR;
    pair_step(p);
}

MPI_Request start_pair(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                       std::vector<char> copy) {
    auto *p = new Pair{};
    p->dest = dest;
    p->copy = std::move(copy);
    MPI_Request u = new_request(ftmpi_request_s::Kind::coll, comm, nullptr, 0, nullptr, 0, 0, 0);
    u->complete = false;
    u->owner = p;
    p->user = u;
    MPI_Request rr = make_recv(comm, recvbuf, recvcount, recvtype, source, recvtag);
    MPI_Request sr = make_send(comm, p->copy.empty() ? sendbuf : p->copy.data(), sendcount, sendtype, dest, sendtag,
                               transport::SendMode::standard);
    rr->blocking = true;
    rr->on_complete = pair_recv_done, sr->on_complete = pair_send_done;
    rr->owner = sr->owner = p;
    rr->user_freed = sr->user_freed = true;  // released by complete_request after on_complete
    start_recv(rr);
    start_send(sr);  // both may complete here, and with them u
    return u;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;
using ftmpi::transport::SendMode;

extern "C" {

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    return blocking_send("MPI_Send", buf, count, datatype, dest, tag, comm, SendMode::standard);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    return blocking_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, SendMode::sync);
}

// A ready send may be a standard send: the receive is known to be posted.
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    return blocking_send("MPI_Rsend", buf, count, datatype, dest, tag, comm, SendMode::standard);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    FTMPI_TRY(check_send("MPI_Bsend", buf, count, datatype, dest, tag, comm));
    FTMPI_TRY(check_not_revoked("MPI_Bsend", comm));  // its internal send's error would be lost
    if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
    return bsend_start("MPI_Bsend", comm, buf, count, datatype, dest, tag);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
    return nonblocking_send("MPI_Isend", buf, count, datatype, dest, tag, comm, request, SendMode::standard);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    return nonblocking_send("MPI_Issend", buf, count, datatype, dest, tag, comm, request, SendMode::sync);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    return nonblocking_send("MPI_Irsend", buf, count, datatype, dest, tag, comm, request, SendMode::standard);
}

// The data is copied into the attached buffer at once, so the request is complete.
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    FTMPI_TRY(check_send("MPI_Ibsend", buf, count, datatype, dest, tag, comm));
    FTMPI_CHECK(check_nonnull("MPI_Ibsend", comm, request, "request"));
    // On a revoked communicator the request fails, as every send's does.
    const int err = comm->revoked ? MPI_ERR_REVOKED : MPI_SUCCESS;
    if (dest != MPI_PROC_NULL && err == MPI_SUCCESS)
        FTMPI_TRY(bsend_start("MPI_Ibsend", comm, buf, count, datatype, dest, tag));
    MPI_Request r = make_send(comm, buf, count, datatype, dest, tag, SendMode::standard);
    complete_request(r, err, err == MPI_SUCCESS ? r->capacity : 0);
    *request = r;
    return MPI_SUCCESS;
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    FTMPI_TRY(check_recv("MPI_Recv", buf, count, datatype, source, tag, comm));
    MPI_Request r = make_recv(comm, buf, count, datatype, source, tag);
    r->blocking = true;
    start_recv(r);
    return finish_blocking("MPI_Recv", r, status);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) {
    FTMPI_TRY(check_recv("MPI_Irecv", buf, count, datatype, source, tag, comm));
    FTMPI_CHECK(check_nonnull("MPI_Irecv", comm, request, "request"));
    MPI_Request r = make_recv(comm, buf, count, datatype, source, tag);
    start_recv(r);
    *request = r;
    return MPI_SUCCESS;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    FTMPI_TRY(check_send("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm));
    FTMPI_TRY(check_recv("MPI_Sendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm));
    MPI_Request rr = make_recv(comm, recvbuf, recvcount, recvtype, source, recvtag);
    rr->blocking = true;
    start_recv(rr);
    MPI_Request sr = make_send(comm, sendbuf, sendcount, sendtype, dest, sendtag, SendMode::standard);
    start_send(sr);
    wait_complete(sr);
    wait_complete(rr);
    const int serr = retire_request(&sr, MPI_STATUS_IGNORE);
    MPI_Status st{};
    const int rerr = retire_request(&rr, &st);
    const int err = pair_result(st, rerr, serr, dest);
    copy_status(status, st);
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    return raise(comm, err, "MPI_Sendrecv", "exchange with rank %d of %s failed (%s)", st.MPI_SOURCE, comm_label(comm),
                 error_class_name(err));
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status) {
    FTMPI_TRY(check_send("MPI_Sendrecv_replace", buf, count, datatype, dest, sendtag, comm));
    FTMPI_TRY(check_recv("MPI_Sendrecv_replace", buf, count, datatype, source, recvtag, comm));
    int scount;
    MPI_Datatype stype;
    std::vector<char> copy = replace_copy(buf, count, datatype, &scount, &stype);
    return MPI_Sendrecv(copy.data(), scount, stype, dest, sendtag, buf, count, datatype, source, recvtag, comm, status);
}

// MPI 4.0
int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request) {
    FTMPI_TRY(check_send("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm));
    FTMPI_TRY(check_recv("MPI_Isendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm));
    FTMPI_CHECK(check_nonnull("MPI_Isendrecv", comm, request, "request"));
    *request = start_pair(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                          comm, {});
    return MPI_SUCCESS;
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Request *request) {
    FTMPI_TRY(check_send("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag, comm));
    FTMPI_TRY(check_recv("MPI_Isendrecv_replace", buf, count, datatype, source, recvtag, comm));
    FTMPI_CHECK(check_nonnull("MPI_Isendrecv_replace", comm, request, "request"));
    int scount;
    MPI_Datatype stype;
    std::vector<char> copy = replace_copy(buf, count, datatype, &scount, &stype);
    *request =
        start_pair(nullptr, scount, stype, dest, sendtag, buf, count, datatype, source, recvtag, comm, std::move(copy));
    return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    return persistent_send("MPI_Send_init", buf, count, datatype, dest, tag, comm, request, SendMode::standard);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return persistent_send("MPI_Ssend_init", buf, count, datatype, dest, tag, comm, request, SendMode::sync);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return persistent_send("MPI_Rsend_init", buf, count, datatype, dest, tag, comm, request, SendMode::standard);
}

// Each MPI_Start copies the message into the attached buffer (as MPI_Bsend)
// and completes the request at once; the copy goes out on its own, and
// MPI_Buffer_detach waits for it.
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    FTMPI_TRY(persistent_send("MPI_Bsend_init", buf, count, datatype, dest, tag, comm, request, SendMode::standard));
    (*request)->bsend_init = true;
    return MPI_SUCCESS;
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    FTMPI_TRY(check_recv("MPI_Recv_init", buf, count, datatype, source, tag, comm));
    FTMPI_CHECK(check_nonnull("MPI_Recv_init", comm, request, "request"));
    MPI_Request r = make_recv(comm, buf, count, datatype, source, tag);
    r->persistent = true;
    *request = r;
    return MPI_SUCCESS;
}

static int start_one(const char *call, MPI_Request r) {
    if (r == MPI_REQUEST_NULL || r->magic != Magic::request || !r->persistent)
        return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, call, "request is not a persistent request");
    if (r->active) return raise(r->comm, MPI_ERR_REQUEST, call, "persistent request is already active");
    if (r->persist != nullptr) {  // a persistent collective or partitioned request
        r->active = true;
        r->persist->start(r);
        return MPI_SUCCESS;
    }
    if (r->bsend_init) {
        r->complete = false;
        r->status = MPI_Status{};
        if (r->peer != MPI_PROC_NULL)
            FTMPI_TRY(bsend_start(call, r->comm, r->buf, r->count, r->datatype, r->peer, r->tag));
        r->active = true;
        complete_request(r, MPI_SUCCESS, r->capacity);
        return MPI_SUCCESS;
    }
    r->active = true;
    if (r->kind == ftmpi_request_s::Kind::send) start_send(r);
    else start_recv(r);
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request) {
    FTMPI_TRY(check_init("MPI_Start"));
    FTMPI_CHECK(check_nonnull("MPI_Start", MPI_COMM_NULL, request, "request"));
    return start_one("MPI_Start", *request);
}

int MPI_Startall(int count, MPI_Request array_of_requests[]) {
    FTMPI_TRY(check_init("MPI_Startall"));
    FTMPI_CHECK(check_count("MPI_Startall", MPI_COMM_NULL, count));
    if (count > 0) FTMPI_CHECK(check_nonnull("MPI_Startall", MPI_COMM_NULL, array_of_requests, "array_of_requests"));
    for (int i = 0; i < count; ++i) FTMPI_TRY(start_one("MPI_Startall", array_of_requests[i]));
    return MPI_SUCCESS;
}

}  // extern "C"
