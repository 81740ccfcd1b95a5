// Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv.
#include "mpi/checks.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/ulfm.hpp"

namespace ftmpi::mpi {
namespace {

int check_probe(const char *call, int source, int tag, MPI_Comm comm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_source(call, comm, source));
    FTMPI_CHECK(check_recv_tag(call, comm, tag));
    return check_not_revoked(call, comm);  // MPI_PROC_NULL too
}

// A probe's status: MPI_ERROR is left alone (copy_status).
void fill_status(MPI_Status *status, const Unexpected &u) {
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = u.source_rank;
    status->MPI_TAG = u.tag;
    status->ftmpi_cancelled = 0;
    status->ftmpi_count = u.length;
}

void proc_null_status(MPI_Status *status) {
    empty_status(status);
    if (status != MPI_STATUS_IGNORE) status->MPI_SOURCE = MPI_PROC_NULL;
}

// One look for a match, after one turn of progress (*events: what it
// handled). Returns MPI_SUCCESS with *found set (null: nothing matches yet),
// the error of a named source that failed with nothing left from it, or
// MPI_ERR_REVOKED once comm is revoked (a blocking probe never waits on a
// revoked communicator).
int look(const char *call, int source, int tag, MPI_Comm comm, const Unexpected **found, int *events) {
    *events = progress();
    FTMPI_TRY(check_not_revoked(call, comm));
    *found = comm->queue->peek_unexpected(source, tag);
    if (*found != nullptr || ft::failures().epoch() == 0) return MPI_SUCCESS;
    if (source != MPI_ANY_SOURCE && ft::failures().is_failed(comm->procs[static_cast<std::size_t>(source)]))
        return raise(comm, MPI_ERR_PROC_FAILED, call, "rank %d of %s failed", source, comm_label(comm));
    if (source == MPI_ANY_SOURCE && any_source_disabled(comm))
        return raise(comm, MPI_ERR_PROC_FAILED, call,
                     "MPI_ANY_SOURCE on %s, which has unacknowledged failures (see MPIX_Comm_failure_ack)",
                     comm_label(comm));
    return MPI_SUCCESS;
}

// The blocking probes: looks until a message matches. Between looks the wait
// ends its turn (end_turn): under MPI_THREAD_MULTIPLE the other threads get
// the library lock, and one of them may send the message this one waits for
// (to its own rank), or probe and take it first. The lock is held from the
// look that finds *found to the caller's use of it.
int look_until(const char *call, int source, int tag, MPI_Comm comm, const Unexpected **found) {
    for (;;) {
        int events = 0;
        FTMPI_TRY(look(call, source, tag, comm, found, &events));
        if (*found != nullptr) return MPI_SUCCESS;
        end_turn(events);
    }
}

// The matched message for `u`, which a look just found (the lock held since):
// that very message leaves the queue, so no other receive or probe, of this
// thread or another, can match it.
MPI_Message take_message(const Unexpected *u, MPI_Comm comm) {
    auto m = new ftmpi_message_s;
    m->comm = comm;
    m->msg = comm->queue->take_unexpected(u).release();
    return m;
}

int check_message(const char *call, MPI_Message *message) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, message, "message"));
    if (*message == MPI_MESSAGE_NULL || (*message)->magic != Magic::message)
        return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, call, "argument message is not a matched message");
    return MPI_SUCCESS;
}

// Starts receive request `r` on matched message *message (consumed).
void start_matched(MPI_Request r, MPI_Message *message) {
    MPI_Message m = *message;
    r->complete = false;
    if (m == MPI_MESSAGE_NO_PROC) {
        r->peer = MPI_PROC_NULL;
        start_recv(r);
    } else {
        std::unique_ptr<Unexpected> u(m->msg);
        deliver(r, u->arrival());
        m->magic = Magic::dead;
        delete m;
    }
    *message = MPI_MESSAGE_NULL;
}

int check_mrecv(const char *call, void *buf, int count, MPI_Datatype datatype, MPI_Message *message) {
    FTMPI_TRY(check_message(call, message));
    MPI_Comm comm = (*message)->comm ? (*message)->comm : MPI_COMM_WORLD;
    FTMPI_CHECK(check_count(call, comm, count));
    FTMPI_CHECK(check_comm_type(call, comm, datatype));
    FTMPI_CHECK(check_typed_buffer(call, comm, buf, count, datatype));
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    FTMPI_TRY(check_probe("MPI_Iprobe", source, tag, comm));
    FTMPI_CHECK(check_nonnull("MPI_Iprobe", comm, flag, "flag"));
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    const Unexpected *u = nullptr;
    int events = 0;
    FTMPI_TRY(look("MPI_Iprobe", source, tag, comm, &u, &events));
    *flag = u != nullptr;
    if (u) fill_status(status, *u);
    return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    FTMPI_TRY(check_probe("MPI_Probe", source, tag, comm));
    if (source == MPI_PROC_NULL) {
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    const Unexpected *u = nullptr;
    FTMPI_TRY(look_until("MPI_Probe", source, tag, comm, &u));
    fill_status(status, *u);
    return MPI_SUCCESS;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    FTMPI_TRY(check_probe("MPI_Improbe", source, tag, comm));
    FTMPI_CHECK(check_nonnull("MPI_Improbe", comm, flag, "flag"));
    FTMPI_CHECK(check_nonnull("MPI_Improbe", comm, message, "message"));
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    const Unexpected *u = nullptr;
    int events = 0;
    FTMPI_TRY(look("MPI_Improbe", source, tag, comm, &u, &events));
    *flag = u != nullptr;
    if (!u) return MPI_SUCCESS;
    fill_status(status, *u);
    *message = take_message(u, comm);
    return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    FTMPI_TRY(check_probe("MPI_Mprobe", source, tag, comm));
    FTMPI_CHECK(check_nonnull("MPI_Mprobe", comm, message, "message"));
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    const Unexpected *u = nullptr;
    FTMPI_TRY(look_until("MPI_Mprobe", source, tag, comm, &u));
    fill_status(status, *u);
    *message = take_message(u, comm);
    return MPI_SUCCESS;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status) {
    FTMPI_TRY(check_mrecv("MPI_Mrecv", buf, count, datatype, message));
    MPI_Comm comm = (*message)->comm ? (*message)->comm : MPI_COMM_SELF;
    MPI_Request r = new_request(ftmpi_request_s::Kind::recv, comm, buf, count, datatype, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                comm->context);
    start_matched(r, message);
    wait_complete(r);
    int err = retire_request(&r, status);
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    return raise(comm, err, "MPI_Mrecv", "receive of a matched message failed");
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request) {
    FTMPI_TRY(check_mrecv("MPI_Imrecv", buf, count, datatype, message));
    FTMPI_CHECK(check_nonnull("MPI_Imrecv", MPI_COMM_NULL, request, "request"));
    MPI_Comm comm = (*message)->comm ? (*message)->comm : MPI_COMM_SELF;
    MPI_Request r = new_request(ftmpi_request_s::Kind::recv, comm, buf, count, datatype, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                comm->context);
    start_matched(r, message);
    *request = r;
    return MPI_SUCCESS;
}

}  // extern "C"
