#include "mpi/p2p/bsend.hpp"

#include <cstring>
#include <cstdlib>
#include <map>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/session/session.hpp"

namespace ftmpi::mpi {
namespace {

// A buffer for buffered sends (MPI 4.1 §3.6): the process's, a
// communicator's or a session's. MPI_BUFFER_AUTOMATIC: each message gets its
// own heap copy, freed when sent.
struct Attached {
    char *base = nullptr;
    std::size_t size = 0;
    bool automatic = false;
    std::map<std::size_t, std::size_t> used;  // offset -> length (overhead included)
    int pending = 0;
    std::vector<MPI_Request> flushes;  // MPI_*_iflush_buffer requests waiting for pending == 0
    bool attached() const { return base != nullptr || automatic; }
};
Attached g_buffer;
std::map<const void *, Attached> g_owned;  // a communicator's or a session's, by its handle

// First fit. Returns the offset, or size when nothing fits.
std::size_t allocate(Attached &b, std::size_t need) {
    std::size_t at = 0;
    for (const auto &[off, len] : b.used) {
        if (off - at >= need) break;
        at = off + len;
    }
    if (at + need > b.size) return b.size;
    b.used[at] = need;
    return at;
}

// The buffer a buffered send on comm uses: the communicator's, else its
// session's, else the process's.
Attached &buffer_for(MPI_Comm comm) {
    for (const void *owner : {static_cast<const void *>(comm), static_cast<const void *>(comm->session)})
        if (auto it = g_owned.find(owner); owner != nullptr && it != g_owned.end()) return it->second;
    return g_buffer;
}

// A chunk of need bytes in b: its address, or null when full.
char *chunk_in(Attached &b, std::size_t need, std::size_t *off) {
    if (b.automatic) return static_cast<char *>(std::malloc(need == 0 ? 1 : need));
    *off = allocate(b, need);
    if (*off == b.size && b.pending > 0) {
        // Buffered sends that are finished may not be reaped yet: one turn of
        // progress frees their space before we give up.
        progress();
        *off = allocate(b, need);
    }
    return *off == b.size ? nullptr : b.base + *off;
}

}  // namespace

int bsend_start(const char *call, MPI_Comm comm, const void *buf, int count, MPI_Datatype type, int dest, int tag) {
    const std::size_t bytes = static_cast<std::size_t>(count) * type->size;
    Attached &b = buffer_for(comm);
    if (!b.attached())
        return raise(comm, MPI_ERR_BUFFER, call, "no buffer attached (MPI_Buffer_attach) for a %zu-byte message",
                     bytes);
    // Exactly the standard's sizing (size + MPI_BSEND_OVERHEAD per message); the
    // bookkeeping lives outside the user's buffer.
    std::size_t off = 0;
    char *chunk = chunk_in(b, bytes + MPI_BSEND_OVERHEAD, &off);
    if (chunk == nullptr)
        return raise(comm, MPI_ERR_BUFFER, call,
                     "attached buffer of %zu bytes has no room for a %zu-byte message (+%d overhead)", b.size, bytes,
                     MPI_BSEND_OVERHEAD);
    if (!type->contiguous) {  // non-contiguous datatype: the chunk holds it packed
        pack(buf, static_cast<std::size_t>(count), type, chunk);
        type = MPI_PACKED;
        count = static_cast<int>(bytes);
    } else if (bytes > 0) {
        std::memcpy(chunk, buf, bytes);
    }
    MPI_Request r = new_request(ftmpi_request_s::Kind::send, comm, chunk, count, type, dest, tag, comm->context);
    r->buffered = true;
    r->user_freed = true;  // nobody waits on it; it frees itself
    r->bsend_offset = off;
    r->owner = &b;
    ++b.pending;
    start_send(r);
    return MPI_SUCCESS;
}

void bsend_chunk_done(MPI_Request r) {
    auto &b = *static_cast<Attached *>(r->owner);
    r->owner = nullptr;
    if (b.automatic) std::free(r->buf);
    else b.used.erase(r->bsend_offset);
    if (--b.pending > 0) return;
    std::vector<MPI_Request> flushes;
    flushes.swap(b.flushes);
    for (MPI_Request f : flushes) complete_request(f, MPI_SUCCESS, 0);
}

void bsend_forget(const void *owner) {
    auto it = g_owned.find(owner);
    if (it == g_owned.end()) return;
    while (it->second.pending > 0) progress_wait();
    g_owned.erase(it);
}

int bsend_pending() {
    int n = g_buffer.pending;
    for (const auto &[owner, b] : g_owned) n += b.pending;
    return n;
}

namespace {

int attach(const char *call, Attached &b, void *buffer, MPI_Count size) {
    if (buffer == nullptr && size > 0)
        return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, call, "buffer is NULL with size %lld",
                     static_cast<long long>(size));
    if (size < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative size %lld", static_cast<long long>(size));
    if (b.attached()) return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, call, "a buffer is already attached");
    b.automatic = buffer == MPI_BUFFER_AUTOMATIC;
    b.base = b.automatic ? nullptr : static_cast<char *>(buffer);
    b.size = b.automatic ? 0 : static_cast<std::size_t>(size);
    return MPI_SUCCESS;
}

// Blocks until every buffered message of b is sent (or failed with its peer).
void flush(Attached &b) {
    while (b.pending > 0) progress_wait();
}

int detach(const char *call, Attached &b, void *buffer_addr, MPI_Count *size) {
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, buffer_addr, "buffer_addr"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, size, "size"));
    if (!b.attached()) return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, call, "no buffer is attached");
    flush(b);
    *static_cast<void **>(buffer_addr) = b.automatic ? MPI_BUFFER_AUTOMATIC : b.base;
    *size = static_cast<MPI_Count>(b.size);
    b = Attached{};
    return MPI_SUCCESS;
}

int iflush(const char *call, Attached &b, MPI_Comm comm, MPI_Request *request) {
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, request, "request"));
    if (b.pending == 0) {
        *request = completed_request(comm);
        return MPI_SUCCESS;
    }
    MPI_Request r = new_request(ftmpi_request_s::Kind::coll, comm, nullptr, 0, nullptr, 0, 0, 0);
    r->complete = false;
    b.flushes.push_back(r);
    *request = r;
    return MPI_SUCCESS;
}

int owned_detach(const char *call, const void *owner, void *buffer_addr, MPI_Count *size) {
    auto it = g_owned.find(owner);
    if (it == g_owned.end()) return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, call, "no buffer is attached");
    FTMPI_TRY(detach(call, it->second, buffer_addr, size));
    g_owned.erase(it);
    return MPI_SUCCESS;
}

Attached &owned(const void *owner) { return g_owned[owner]; }
Attached none_attached;
Attached &owned_or_none(const void *owner) {
    auto it = g_owned.find(owner);
    return it == g_owned.end() ? none_attached : it->second;
}

int int_size(const char *call, MPI_Count n, int *out) {
    if (n > INT32_MAX)
        return raise(MPI_COMM_NULL, MPI_ERR_VALUE_TOO_LARGE, call,
                     "the buffer's size %lld does not fit an int (use %s_c)", static_cast<long long>(n), call);
    *out = static_cast<int>(n);
    return MPI_SUCCESS;
}

// The int-sized detaches: a size that does not fit an int is an error.
int owned_detach_int(const char *call, const void *owner, void *buffer_addr, int *size) {
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, size, "size"));
    MPI_Count n = 0;
    FTMPI_TRY(owned_detach(call, owner, buffer_addr, &n));
    return int_size(call, n, size);
}


}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Buffer_attach(void *buffer, int size) {
    FTMPI_TRY(check_init("MPI_Buffer_attach"));
    return attach("MPI_Buffer_attach", g_buffer, buffer, size);
}
int MPI_Buffer_attach_c(void *buffer, MPI_Count size) {
    FTMPI_TRY(check_init("MPI_Buffer_attach_c"));
    return attach("MPI_Buffer_attach_c", g_buffer, buffer, size);
}

int MPI_Buffer_detach(void *buffer_addr, int *size) {
    FTMPI_TRY(check_init("MPI_Buffer_detach"));
    FTMPI_CHECK(check_nonnull("MPI_Buffer_detach", MPI_COMM_NULL, size, "size"));
    MPI_Count n = 0;
    FTMPI_TRY(detach("MPI_Buffer_detach", g_buffer, buffer_addr, &n));
    return int_size("MPI_Buffer_detach", n, size);
}
int MPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size) {
    FTMPI_TRY(check_init("MPI_Buffer_detach_c"));
    return detach("MPI_Buffer_detach_c", g_buffer, buffer_addr, size);
}

int MPI_Buffer_flush(void) {
    FTMPI_TRY(check_init("MPI_Buffer_flush"));
    flush(g_buffer);
    return MPI_SUCCESS;
}
int MPI_Buffer_iflush(MPI_Request *request) {
    FTMPI_TRY(check_init("MPI_Buffer_iflush"));
    return iflush("MPI_Buffer_iflush", g_buffer, MPI_COMM_SELF, request);
}

int MPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size) {
    FTMPI_TRY(check_init("MPI_Comm_attach_buffer"));
    FTMPI_CHECK(check_comm("MPI_Comm_attach_buffer", comm));
    return attach("MPI_Comm_attach_buffer", owned(comm), buffer, size);
}
int MPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size) {
    FTMPI_TRY(check_init("MPI_Comm_attach_buffer_c"));
    FTMPI_CHECK(check_comm("MPI_Comm_attach_buffer_c", comm));
    return attach("MPI_Comm_attach_buffer_c", owned(comm), buffer, size);
}
int MPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size) {
    FTMPI_TRY(check_init("MPI_Comm_detach_buffer"));
    FTMPI_CHECK(check_comm("MPI_Comm_detach_buffer", comm));
    return owned_detach_int("MPI_Comm_detach_buffer", comm, buffer_addr, size);
}
int MPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size) {
    FTMPI_TRY(check_init("MPI_Comm_detach_buffer_c"));
    FTMPI_CHECK(check_comm("MPI_Comm_detach_buffer_c", comm));
    return owned_detach("MPI_Comm_detach_buffer_c", comm, buffer_addr, size);
}
int MPI_Comm_flush_buffer(MPI_Comm comm) {
    FTMPI_TRY(check_init("MPI_Comm_flush_buffer"));
    FTMPI_CHECK(check_comm("MPI_Comm_flush_buffer", comm));
    flush(owned_or_none(comm));
    return MPI_SUCCESS;
}
int MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request) {
    FTMPI_TRY(check_init("MPI_Comm_iflush_buffer"));
    FTMPI_CHECK(check_comm("MPI_Comm_iflush_buffer", comm));
    return iflush("MPI_Comm_iflush_buffer", owned_or_none(comm), comm, request);
}

int MPI_Session_attach_buffer(MPI_Session session, void *buffer, int size) {
    FTMPI_TRY(check_session("MPI_Session_attach_buffer", &session));
    return attach("MPI_Session_attach_buffer", owned(session), buffer, size);
}
int MPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size) {
    FTMPI_TRY(check_session("MPI_Session_attach_buffer_c", &session));
    return attach("MPI_Session_attach_buffer_c", owned(session), buffer, size);
}
int MPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size) {
    FTMPI_TRY(check_session("MPI_Session_detach_buffer", &session));
    return owned_detach_int("MPI_Session_detach_buffer", session, buffer_addr, size);
}
int MPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size) {
    FTMPI_TRY(check_session("MPI_Session_detach_buffer_c", &session));
    return owned_detach("MPI_Session_detach_buffer_c", session, buffer_addr, size);
}
int MPI_Session_flush_buffer(MPI_Session session) {
    FTMPI_TRY(check_session("MPI_Session_flush_buffer", &session));
    flush(owned_or_none(session));
    return MPI_SUCCESS;
}
int MPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request) {
    FTMPI_TRY(check_session("MPI_Session_iflush_buffer", &session));
    return iflush("MPI_Session_iflush_buffer", owned_or_none(session), MPI_COMM_SELF, request);
}

}  // extern "C"
