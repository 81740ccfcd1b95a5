// Partitioned point-to-point communication (MPI 4.0 chapter 4).
//
// A partitioned send or receive is a persistent request of kind coll that
// owns a Part. Each partition travels as one internal message on the
// communicator's collective context: an 8-byte header (the partition's
// number and the pair's identity) and the partition's data, packed. At each
// MPI_Start the receiver posts one receive per partition from the sender;
// MPI_Pready sends a partition. Partitions may arrive in any order: each
// receive reads the header and unpacks into its partition, and
// MPI_Parrived reports it. The request completes when every partition went
// (or came); after a failure of the peer the internal transfers fail and
// the request completes with that error (ULFM's rules), after a revoke
// with MPI_ERR_REVOKED; nothing waits for a dead peer.
//
// Matching: the k-th partitioned send initialized towards a process with a
// tag pairs with the k-th partitioned receive initialized from that process
// with that tag (MPI 4.0 §4.2.2: in init order). Both sides derive the same
// internal tag from (tag, k): a cross tag under the sequence's top bit,
// which no other cross exchange uses; the header's identity catches the
// rare pair of live requests whose internal tags agree (the request then
// fails with MPI_ERR_INTERN, never with another pair's data).
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/p2p/internal_tag.hpp"
#include "mpi/p2p/requests.hpp"

namespace ftmpi::mpi {
namespace {

struct PartHeader {
    std::uint32_t partition;
    std::uint32_t ident;
};

struct Part {
    bool send;
    MPI_Comm comm;
    char *buf;
    int partitions;
    std::size_t elems;  // elements per partition
    MPI_Datatype type;
    std::size_t part_bytes;     // packed bytes per partition
    int peer, tag;              // user-level
    std::uint32_t ident;        // (tag, k) hashed: the header's check
    int itag;                   // the internal tag
    std::vector<char> staging;  // partitions * (header + part_bytes)
    std::vector<char> done;     // per partition: sent (send) or arrived (receive)
    int pending = 0;
    int err = MPI_SUCCESS;
    MPI_Request user = MPI_REQUEST_NULL;
    bool running = false;  // inside a completion: the release waits for its end
    bool orphaned = false;
};

// Partitioned inits so far per (communicator uid, peer process, tag, direction).
std::map<std::tuple<std::uint64_t, int, int, bool>, std::uint32_t> g_inits;

std::uint32_t mix(std::uint32_t h, std::uint32_t v) {
    h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h * 0x85ebca6bu;
}

char *slot(Part &p, std::size_t i) { return p.staging.data() + i * (sizeof(PartHeader) + p.part_bytes); }
char *partition_at(Part &p, std::size_t i) { return p.buf + static_cast<MPI_Aint>(i * p.elems) * p.type->extent; }

void finish_one(Part *p, int err) {
    if (err != MPI_SUCCESS && p->err == MPI_SUCCESS) p->err = err;
    if (--p->pending > 0) return;
    MPI_Request u = p->user;
    u->status.MPI_SOURCE = p->send ? MPI_ANY_SOURCE : p->peer;
    u->status.MPI_TAG = p->send ? MPI_ANY_TAG : p->tag;
    p->running = true;
    complete_request(u, p->err, p->send ? 0 : static_cast<std::size_t>(p->partitions) * p->part_bytes);
    p->running = false;
    if (p->orphaned) delete p;
}

void on_sent(MPI_Request r) { finish_one(static_cast<Part *>(r->owner), r->status.MPI_ERROR); }

void on_arrived(MPI_Request r) {
    auto *p = static_cast<Part *>(r->owner);
    int err = r->status.MPI_ERROR;
    if (err == MPI_SUCCESS) {
        PartHeader h;
        std::memcpy(&h, r->buf, sizeof h);
        const bool ok = h.ident == p->ident && h.partition < static_cast<std::uint32_t>(p->partitions) &&
                        !p->done[h.partition] && r->status.ftmpi_count == sizeof h + p->part_bytes;
        if (!ok) {
            err = MPI_ERR_INTERN;
        } else {
            unpack(static_cast<char *>(r->buf) + sizeof h, p->part_bytes, partition_at(*p, h.partition), p->type);
            p->done[h.partition] = 1;
        }
    }
    finish_one(p, err);
}

MPI_Request internal(Part &p, bool send, char *at) {
    const int bytes = static_cast<int>(sizeof(PartHeader) + p.part_bytes);
    MPI_Request r = new_request(send ? ftmpi_request_s::Kind::send : ftmpi_request_s::Kind::recv, p.comm, at, bytes,
                                MPI_BYTE, p.peer, p.itag, p.comm->context + 1);
    r->on_complete = send ? on_sent : on_arrived;
    r->owner = &p;
    r->user_freed = true;  // released by complete_request after on_complete
    return r;
}

void on_start(MPI_Request r) {
    auto *p = static_cast<Part *>(r->owner);
    r->complete = false;
    r->status = MPI_Status{};
    p->err = MPI_SUCCESS;
    std::fill(p->done.begin(), p->done.end(), 0);
    p->pending = p->peer == MPI_PROC_NULL ? 0 : p->partitions;
    if (p->pending == 0) {
        ++p->pending;
        finish_one(p, MPI_SUCCESS);
        return;
    }
    if (!p->send)
        for (int i = 0; i < p->partitions; ++i) start_recv(internal(*p, false, slot(*p, static_cast<std::size_t>(i))));
}

void on_release(MPI_Request r) {
    auto *p = static_cast<Part *>(r->owner);
    r->owner = nullptr;
    if (!p->type->predefined) dt_release(p->type);
    if (p->running) p->orphaned = true;
    else delete p;
}

constexpr ftmpi_persist_ops k_part_ops{on_start, on_release};

int init(const char *call, bool send, const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int peer,
         int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    if (partitions < 0) return raise(comm, MPI_ERR_ARG, call, "negative partitions %d", partitions);
    if (count < 0) return raise(comm, MPI_ERR_COUNT, call, "negative count %lld", static_cast<long long>(count));
    FTMPI_CHECK(check_comm_type(call, comm, type));
    FTMPI_CHECK(check_dest(call, comm, peer, send ? "dest" : "source"));
    FTMPI_CHECK(check_send_tag(call, comm, tag));
    FTMPI_CHECK(check_nonnull(call, comm, request, "request"));
    FTMPI_CHECK(check_info_arg(call, comm, info));
    const unsigned long long bytes = static_cast<unsigned long long>(count) * type->size;
    if (bytes + sizeof(PartHeader) > static_cast<unsigned long long>(INT32_MAX))
        return raise(comm, MPI_ERR_COUNT, call, "a partition of %llu bytes: ftmpi takes partitions below 2 GiB", bytes);
    if (static_cast<std::size_t>(partitions) * static_cast<std::size_t>(count) > 0)
        FTMPI_CHECK(check_typed_buffer(call, comm, buf, partitions * static_cast<int>(count), type));
    auto *p = new Part{};
    p->send = send;
    p->comm = comm;
    p->buf = static_cast<char *>(const_cast<void *>(buf));
    p->partitions = partitions;
    p->elems = static_cast<std::size_t>(count);
    p->type = type;
    if (!type->predefined) dt_acquire(type);
    p->part_bytes = static_cast<std::size_t>(bytes);
    p->peer = peer;
    p->tag = tag;
    const int peer_id = peer == MPI_PROC_NULL ? -1 : comm->procs[static_cast<std::size_t>(peer)];
    const std::uint32_t k = g_inits[{comm->uid, peer_id, tag, send}]++;
    p->ident = mix(mix(0x5041u, static_cast<std::uint32_t>(tag)), k);
    p->itag = itag::cross((std::uint32_t{1} << (itag::seq_width - 1)) |
                          (p->ident & ((std::uint32_t{1} << (itag::seq_width - 1)) - 1)));
    p->staging.resize(static_cast<std::size_t>(partitions) * (sizeof(PartHeader) + p->part_bytes));
    p->done.assign(static_cast<std::size_t>(partitions), 0);
    MPI_Request r = new_request(ftmpi_request_s::Kind::coll, comm, nullptr, 0, nullptr, 0, 0, 0);
    r->persistent = true;
    r->complete = true;  // inactive until started
    r->owner = p;
    r->persist = &k_part_ops;
    p->user = r;
    *request = r;
    return MPI_SUCCESS;
}

// A started partitioned request of the right direction, and its Part.
int check_part(const char *call, MPI_Request r, bool send, Part **out) {
    FTMPI_TRY(check_init(call));
    if (r == MPI_REQUEST_NULL || r->magic != Magic::request || r->persist != &k_part_ops)
        return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, call, "request is not a partitioned request");
    auto *p = static_cast<Part *>(r->owner);
    if (p->send != send)
        return raise(r->comm, MPI_ERR_REQUEST, call, "request is a partitioned %s", p->send ? "send" : "receive");
    *out = p;
    return MPI_SUCCESS;
}

int ready(const char *call, Part *p, int partition) {
    MPI_Request u = p->user;
    if (!u->active)
        return raise(u->comm, MPI_ERR_REQUEST, call, "the partitioned send is not started (MPI_Start first)");
    if (partition < 0 || partition >= p->partitions)
        return raise(u->comm, MPI_ERR_ARG, call, "invalid partition %d (the request has %d)", partition, p->partitions);
    const auto i = static_cast<std::size_t>(partition);
    if (p->done[i]) return raise(u->comm, MPI_ERR_ARG, call, "partition %d is already marked ready", partition);
    p->done[i] = 1;
    if (p->peer == MPI_PROC_NULL) return MPI_SUCCESS;
    char *at = slot(*p, i);
    const PartHeader h{static_cast<std::uint32_t>(partition), p->ident};
    std::memcpy(at, &h, sizeof h);
    pack(partition_at(*p, i), p->elems, p->type, at + sizeof h);
    start_send(internal(*p, true, at));
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return init("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm, info, request);
}

int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return init("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm, info, request);
}

int MPI_Pready(int partition, MPI_Request request) {
    Part *p = nullptr;
    FTMPI_TRY(check_part("MPI_Pready", request, true, &p));
    return ready("MPI_Pready", p, partition);
}

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
    Part *p = nullptr;
    FTMPI_TRY(check_part("MPI_Pready_range", request, true, &p));
    for (int i = partition_low; i <= partition_high; ++i) FTMPI_TRY(ready("MPI_Pready_range", p, i));
    return MPI_SUCCESS;
}

int MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request) {
    Part *p = nullptr;
    FTMPI_TRY(check_part("MPI_Pready_list", request, true, &p));
    if (length > 0)
        FTMPI_CHECK(check_nonnull("MPI_Pready_list", request->comm, array_of_partitions, "array_of_partitions"));
    for (int i = 0; i < length; ++i) FTMPI_TRY(ready("MPI_Pready_list", p, array_of_partitions[i]));
    return MPI_SUCCESS;
}

// An inactive request's partitions have all arrived (MPI 4.0 §4.2.3).
int MPI_Parrived(MPI_Request request, int partition, int *flag) {
    Part *p = nullptr;
    FTMPI_TRY(check_part("MPI_Parrived", request, false, &p));
    FTMPI_CHECK(check_nonnull("MPI_Parrived", request->comm, flag, "flag"));
    if (partition < 0 || partition >= p->partitions)
        return raise(request->comm, MPI_ERR_ARG, "MPI_Parrived", "invalid partition %d (the request has %d)", partition,
                     p->partitions);
    if (!request->active) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!p->done[static_cast<std::size_t>(partition)]) progress();
    *flag = p->done[static_cast<std::size_t>(partition)] || p->peer == MPI_PROC_NULL ? 1 : 0;
    return MPI_SUCCESS;
}

}  // extern "C"
