#include "mpi/p2p/requests.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "mpi/comm/comm_internal.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/bsend.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/fortran_hooks.hpp"
#include "mpi/ulfm/ulfm.hpp"
#include "runtime/test_hooks.hpp"
#include "transport/copy.hpp"

namespace ftmpi::mpi {
namespace {

std::vector<MPI_Request> g_pool;
std::vector<MPI_Request> g_zombies;  // finished, but libfabric still holds their Op

int class_of(transport::Err e) {
    switch (e) {
    case transport::Err::ok: return MPI_SUCCESS;
    case transport::Err::peer_failed: return MPI_ERR_PROC_FAILED;
    case transport::Err::truncated: return MPI_ERR_TRUNCATE;
    case transport::Err::canceled: return MPI_ERR_PROC_FAILED;  // collectively inactive (cancel_sends)
    case transport::Err::revoked: return MPI_ERR_REVOKED;
    case transport::Err::other: return MPI_ERR_OTHER;
    }
    return MPI_ERR_INTERN;
}

// The request's staging buffer for a non-contiguous datatype goes once
// libfabric no longer holds the request.
void drop_pack_buf(MPI_Request r) {
    std::free(r->pack_buf);
    r->pack_buf = nullptr;
}

// A message on the point-to-point context of its communicator (not a
// collective's, context + 1, nor the fault-tolerance layer's).
bool on_p2p_context(const ftmpi_request_s *r) { return r->comm != nullptr && r->context == r->comm->context; }

// Counts a receive that completed with `bytes` of a message (P2pCounts).
void count_received(const ftmpi_request_s *r, std::size_t bytes) {
    if (r->status.ftmpi_cancelled != 0 || r->status.MPI_SOURCE == MPI_PROC_NULL || !on_p2p_context(r)) return;
    ++g.p2p.messages_received;
    g.p2p.bytes_received += bytes;
}

// A send handed to the transport: counted when it went out on a
// point-to-point context (P2pCounts), then the tests' kill point with the
// message on its way. start_send and send_now alike.
void sent(bool counted, std::size_t bytes) {
    if (counted) {
        ++g.p2p.messages_sent;
        g.p2p.bytes_sent += bytes;
    }
    runtime::test_kill_point("p2p.send");
}

void on_op_done(transport::Op *op, transport::Err err, std::size_t bytes) {
    auto *r = reinterpret_cast<MPI_Request>(op);  // Op is the request's first member
    // An operation still pending when this process learned that its
    // communicator was revoked ends with MPI_ERR_REVOKED, whatever its
    // protocol stage (waiting for the rendezvous handshake, or moving its
    // data: the transfer is finished or withdrawn first, never left behind).
    // A peer that gave a transfer up tells why (transport cancel_sends): its
    // communicator was revoked, or became collectively inactive.
    const bool revoked = r->comm->revoked && !is_ft_context(r->context);
    complete_request(r, revoked ? MPI_ERR_REVOKED : class_of(err), bytes);
}

}  // namespace

// A fresh request's bytes, 16 at a time: GCC inlines a memcpy of this size
// as `rep movsq`, whose start-up made it a sixth of a small message's cost
// (osu_bibw at 4 B), and twice that in runs where the pool's requests and
// the blank lay at some distances modulo 4 KiB (message rates halved in
// about half the runs: the heap's layout, which the environment's size
// shifts, decided).
[[gnu::always_inline]] inline void copy_blank(char *dst, const char *src, std::size_t n) {
    struct alignas(1) Chunk {
        unsigned char b[16];
    };
    for (std::size_t i = 0; i + sizeof(Chunk) <= n; i += sizeof(Chunk)) {
        Chunk c;
        std::memcpy(&c, src + i, sizeof c);
        std::memcpy(dst + i, &c, sizeof c);
    }
    const std::size_t tail = n % sizeof(Chunk);
    std::memcpy(dst + n - tail, src + n - tail, tail);
}

MPI_Request new_request(ftmpi_request_s::Kind kind, MPI_Comm comm, const void *buf, int count, MPI_Datatype type,
                        int peer, int tag, std::uint32_t context) {
    MPI_Request r;
    if (!g_pool.empty()) {
        r = g_pool.back();
        g_pool.pop_back();
        // A fresh request but for libfabric's scratch space (the first 64
        // bytes, op.fabric_context, which libfabric fills itself): a copy of
        // the rest, cheaper than constructing all of it (rep stos).
        static const ftmpi_request_s blank{};
        constexpr std::size_t skip = sizeof(blank.op.fabric_context);
        static_assert(std::is_trivially_copyable_v<ftmpi_request_s>);
        static_assert(offsetof(transport::Op, fabric_context) == 0);
        copy_blank(reinterpret_cast<char *>(r) + skip, reinterpret_cast<const char *>(&blank) + skip,
                   sizeof blank - skip);
    } else {
        r = new ftmpi_request_s{};
    }
    r->op.done = &on_op_done;
    r->kind = kind;
    r->comm = comm;
    if (comm != nullptr) comm_retain(comm);
    r->buf = const_cast<void *>(buf);
    r->count = count;
    r->datatype = type;
    r->peer = peer;
    r->tag = tag;
    r->context = context;
    r->capacity = type ? static_cast<std::size_t>(count) * type->size : 0;
    if (type != nullptr && !type->predefined) dt_acquire(type);  // MPI_Type_free may come before completion
    return r;
}

void release_request(MPI_Request r) {
    for (ftmpi_release_hook *h = r->release_hooks; h != nullptr;) {
        ftmpi_release_hook *next = h->next;
        h->fn(h->ctx, r->status.MPI_ERROR);
        delete h;
        h = next;
    }
    r->release_hooks = nullptr;
    if (r->kind == ftmpi_request_s::Kind::generalized) grequest_free(r);
    if (r->persist != nullptr) r->persist->release(r);
    if (MPI_Comm c = r->comm) {
        r->comm = nullptr;
        comm_release(c);
    }
    if (r->datatype != nullptr && !r->datatype->predefined) {
        dt_release(r->datatype);
        r->datatype = nullptr;
    }
    if (r->op.in_fabric) {
        g_zombies.push_back(r);
        return;
    }
    r->magic = Magic::dead;
    if (r->pack_buf != nullptr) drop_pack_buf(r);
    g_pool.push_back(r);
}

int add_request_release_hook(MPI_Request r, void (*fn)(void *ctx, int error), void *ctx) {
    if (r == MPI_REQUEST_NULL || r->magic != Magic::request) return MPI_ERR_REQUEST;
    r->release_hooks = new ftmpi_release_hook{fn, ctx, r->release_hooks};
    return MPI_SUCCESS;
}

void free_request_pool() {
    for (MPI_Request r : g_pool) {
        drop_pack_buf(r);
        delete r;
    }
    g_pool.clear();
    for (auto it = g_zombies.begin(); it != g_zombies.end();) {
        if (!(*it)->op.in_fabric) {
            drop_pack_buf(*it);
            delete *it;
            it = g_zombies.erase(it);
        } else {
            ++it;
        }
    }
}

void complete_request(MPI_Request r, int err, std::size_t bytes) {
    if (r->counted) {
        r->counted = false;
        --r->comm->pending;
    }
    if (r->kind == ftmpi_request_s::Kind::recv) {
        r->status.ftmpi_count = bytes;
        if (err == MPI_SUCCESS && r->msg_length > r->capacity) err = MPI_ERR_TRUNCATE;
        if (err == MPI_SUCCESS || err == MPI_ERR_TRUNCATE) count_received(r, bytes);
        // Non-contiguous datatype: the data landed in the staging buffer.
        if (r->pack_buf != nullptr) {
            if (err == MPI_SUCCESS || err == MPI_ERR_TRUNCATE)
                unpack(r->pack_buf, std::min(bytes, r->capacity), r->buf, r->datatype);
            if (!r->op.in_fabric) drop_pack_buf(r);  // else at release
        }
    } else {
        r->status.ftmpi_count = bytes;
    }
    r->status.MPI_ERROR = err;
    r->complete = true;
    if (r->buffered) bsend_chunk_done(r);
    if (r->on_complete != nullptr) r->on_complete(r);
    if (r->user_freed) release_request(r);
}

void empty_status(MPI_Status *status) {
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->ftmpi_cancelled = 0;
    status->ftmpi_count = 0;
}

MPI_Request completed_request(MPI_Comm comm, int err, std::size_t bytes) {
    MPI_Request r = new_request(ftmpi_request_s::Kind::coll, comm, nullptr, 0, nullptr, 0, 0, 0);
    complete_request(r, err, bytes);
    return r;
}

static void complete_proc_null(MPI_Request r) {
    r->status.MPI_SOURCE = MPI_PROC_NULL;
    r->status.MPI_TAG = MPI_ANY_TAG;
    complete_request(r, MPI_SUCCESS, 0);
}

// The class a request must fail with before it starts, or MPI_SUCCESS:
// REVOKED on a revoked communicator (except its fault-tolerance traffic),
// whatever the peer, MPI_PROC_NULL included (Open MPI's ULFM);
// PROC_FAILED for collective traffic on a communicator made collectively
// inactive by a failure no validate recognized (spec 000 §17.7), so that no
// collective waits on a peer that already gave up on it.
static int refused(MPI_Request r) {
    if (r->comm->revoked && !is_ft_context(r->context)) return MPI_ERR_REVOKED;
    if (g.failures->epoch() != 0 && coll_gated(r) && collectively_inactive(r->comm)) return MPI_ERR_PROC_FAILED;
    return MPI_SUCCESS;
}

// Counts r as pending on its communicator until complete_request.
static void count_pending(MPI_Request r) {
    r->counted = true;
    ++r->comm->pending;
}

void start_send(MPI_Request r) {
    r->complete = false;
    r->status = MPI_Status{};
    count_pending(r);
    if (const int e = refused(r); e != MPI_SUCCESS) {  // before MPI_PROC_NULL: that fails too
        complete_request(r, e, 0);
        return;
    }
    if (r->peer == MPI_PROC_NULL) {
        complete_proc_null(r);
        return;
    }
    const int dest = r->comm->procs[static_cast<std::size_t>(r->peer)];
    const void *data = r->buf;
    if (!r->datatype->contiguous) {  // pack; a persistent send reuses its staging buffer
        if (r->pack_buf == nullptr) r->pack_buf = std::malloc(std::max<std::size_t>(r->capacity, 1));
        pack(r->buf, static_cast<std::size_t>(r->count), r->datatype, r->pack_buf);
        data = r->pack_buf;
    }
    const transport::Posted posted = g.transport->send(static_cast<transport::PeerId>(dest), r->context, r->comm->uid,
                                                       r->tag, r->comm->rank, data, r->capacity, r->mode, &r->op);
    sent(posted != transport::Posted::peer_failed && on_p2p_context(r), r->capacity);
    switch (posted) {
    case transport::Posted::complete: complete_request(r, MPI_SUCCESS, r->capacity); break;
    case transport::Posted::peer_failed: complete_request(r, MPI_ERR_PROC_FAILED, 0); break;
    case transport::Posted::pending: break;
    }
}

static bool inject_now(MPI_Comm comm, std::uint32_t context, const void *buf, int count, MPI_Datatype type, int dest,
                       int tag) {
    if (dest == MPI_PROC_NULL || !type->contiguous || comm->revoked) return false;
    return g.transport->inject(static_cast<transport::PeerId>(comm->procs[static_cast<std::size_t>(dest)]), context,
                               comm->uid, tag, comm->rank, buf, static_cast<std::size_t>(count) * type->size);
}

bool inject_coll(MPI_Comm comm, std::uint32_t context, const void *buf, int count, MPI_Datatype type, int dest,
                 int tag) {
    // After a failure a collective's sends go through start_send's rules (refused).
    return g.failures->epoch() == 0 && inject_now(comm, context, buf, count, type, dest, tag);
}

bool send_now(MPI_Comm comm, const void *buf, int count, MPI_Datatype type, int dest, int tag) {
    if (!inject_now(comm, comm->context, buf, count, type, dest, tag)) return false;
    sent(true, static_cast<std::size_t>(count) * type->size);  // comm->context: the point-to-point one
    return true;
}

void deliver(MPI_Request r, const transport::Arrival &a) {
    r->msg_length = a.length;
    r->status.MPI_SOURCE = a.source_rank;
    r->status.MPI_TAG = a.tag;
    const std::size_t bytes = std::min(a.length, r->capacity);
    if (!a.rendezvous) {
        if (r->take_eager != nullptr && r->take_eager(r, a.eager_data)) {
            complete_request(r, MPI_SUCCESS, bytes);
            return;
        }
        // Non-contiguous: unpack straight from the eager data (a staging buffer
        // still held from an earlier operation is unpacked by complete_request).
        if (!r->datatype->contiguous && r->pack_buf == nullptr) {
            if (bytes > 0) unpack(a.eager_data, bytes, r->buf, r->datatype);
        } else if (!r->datatype->contiguous) {
            if (bytes > 0) std::memcpy(r->pack_buf, a.eager_data, bytes);
        } else {
            transport::copy_payload(r->buf, a.eager_data, bytes);
        }
        complete_request(r, MPI_SUCCESS, bytes);
        return;
    }
    void *dst = r->buf;
    if (!r->datatype->contiguous) {  // stage; complete_request unpacks
        if (r->pack_buf == nullptr) r->pack_buf = std::malloc(std::max<std::size_t>(r->capacity, 1));
        dst = r->pack_buf;
    }
    switch (g.transport->accept(a, dst, r->capacity, &r->op)) {
    case transport::Posted::complete: complete_request(r, MPI_SUCCESS, bytes); break;
    case transport::Posted::peer_failed: complete_request(r, MPI_ERR_PROC_FAILED, 0); break;
    case transport::Posted::pending: break;
    }
}

void start_recv(MPI_Request r) {
    r->complete = false;
    r->failure_pending = false;
    r->status = MPI_Status{};
    count_pending(r);
    if (const int e = refused(r); e != MPI_SUCCESS) {  // before MPI_PROC_NULL: that fails too
        r->status.MPI_SOURCE = r->peer;
        r->status.MPI_TAG = r->tag;
        complete_request(r, e, 0);
        return;
    }
    if (r->peer == MPI_PROC_NULL) {
        complete_proc_null(r);
        return;
    }
    runtime::test_kill_point("p2p.recv");
    MatchQueue &q = queue_of(r);
    if (auto u = q.take_unexpected(r->peer, r->tag)) {
        deliver(r, u->arrival());
        return;
    }
    if (g.failures->epoch() != 0) {  // something failed: the ULFM rules (failure path only)
        if (r->peer != MPI_ANY_SOURCE) {
            // Nothing arrived from it before it failed: a named receive cannot complete.
            if (ft::failures().is_failed(r->comm->procs[static_cast<std::size_t>(r->peer)])) {
                r->status.MPI_SOURCE = r->peer;
                r->status.MPI_TAG = r->tag;
                complete_request(r, MPI_ERR_PROC_FAILED, 0);
                return;
            }
        } else if (any_source_disabled(r->comm)) {
            if (r->blocking) {
                r->status.MPI_SOURCE = MPI_ANY_SOURCE;
                r->status.MPI_TAG = r->tag;
                complete_request(r, MPI_ERR_PROC_FAILED, 0);
                return;
            }
            r->failure_pending = true;
        }
    }
    q.post(r);
    r->posted = true;
}

int retire_request(MPI_Request *slot, MPI_Status *status) {
    MPI_Request r = *slot;
    int err = r->status.MPI_ERROR;
    if (r->kind == ftmpi_request_s::Kind::generalized) {
        // The query callback gives the status and the call's code, then the
        // free callback runs (its code when the query succeeded).
        const int q = grequest_query(r);
        const int f = grequest_free(r);
        err = q != MPI_SUCCESS ? q : f;
    }
    copy_status(status, r->status);
    if (r->persistent) {
        r->active = false;
    } else {
        release_request(r);
        *slot = MPI_REQUEST_NULL;
    }
    return err;
}

namespace {
std::vector<void (*)()> &failure_handlers() {
    static std::vector<void (*)()> handlers;
    return handlers;
}
}  // namespace

void subscribe_failures(void (*handler)()) {
    auto &h = failure_handlers();
    if (std::find(h.begin(), h.end(), handler) == h.end()) h.push_back(handler);
}

// A failure became known: fail what it makes impossible (mpi/ulfm/ulfm.cpp),
// tell the layers that subscribed, and recycle requests that libfabric
// returned meanwhile.
void on_new_failures() {
    g.seen_epoch = ft::failures().epoch();
    apply_failures_to_posted();
    for (auto handler : failure_handlers()) handler();
    for (auto it = g_zombies.begin(); it != g_zombies.end();) {
        if (!(*it)->op.in_fabric) {
            (*it)->magic = Magic::dead;
            drop_pack_buf(*it);
            g_pool.push_back(*it);
            it = g_zombies.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace ftmpi::mpi
