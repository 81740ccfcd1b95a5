#include "mpi/p2p/bsend.hpp"

#include <cstring>
#include <map>

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/p2p/requests.hpp"

namespace ftmpi::mpi {
namespace {

struct Attached {
    char *base = nullptr;
    std::size_t size = 0;
    std::map<std::size_t, std::size_t> used;  // offset -> length (overhead included)
    int pending = 0;
} g_buffer;

// First fit. Returns the offset, or size when nothing fits.
std::size_t allocate(std::size_t need) {
    std::size_t at = 0;
    for (const auto &[off, len] : g_buffer.used) {
        if (off - at >= need) break;
        at = off + len;
    }
    if (at + need > g_buffer.size) return g_buffer.size;
    g_buffer.used[at] = need;
    return at;
}

}  // namespace

int bsend_start(const char *call, MPI_Comm comm, const void *buf, int count, MPI_Datatype type, int dest, int tag) {
    const std::size_t bytes = static_cast<std::size_t>(count) * type->size;
    if (g_buffer.base == nullptr)
        return raise(comm, MPI_ERR_BUFFER, call, "no buffer attached (MPI_Buffer_attach) for a %zu-byte message",
                     bytes);
    // Exactly the standard's sizing (size + MPI_BSEND_OVERHEAD per message); the
    // bookkeeping lives outside the user's buffer.
    const std::size_t need = bytes + MPI_BSEND_OVERHEAD;
    std::size_t off = allocate(need);
    if (off == g_buffer.size && g_buffer.pending > 0) {
        // Buffered sends that are finished may not be reaped yet: one turn of
        // progress frees their space before we give up.
        progress();
        off = allocate(need);
    }
    if (off == g_buffer.size)
        return raise(comm, MPI_ERR_BUFFER, call,
                     "attached buffer of %zu bytes has no room for a %zu-byte message (+%d overhead)", g_buffer.size,
                     bytes, MPI_BSEND_OVERHEAD);
    char *chunk = g_buffer.base + off;
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
    ++g_buffer.pending;
    start_send(r);
    return MPI_SUCCESS;
}

void bsend_chunk_done(MPI_Request r) {
    g_buffer.used.erase(r->bsend_offset);
    --g_buffer.pending;
}

int bsend_pending() { return g_buffer.pending; }

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Buffer_attach(void *buffer, int size) {
    FTMPI_TRY(check_init("MPI_Buffer_attach"));
    if (buffer == nullptr && size > 0)
        return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach", "buffer is NULL with size %d", size);
    if (size < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Buffer_attach", "negative size %d", size);
    if (g_buffer.base != nullptr)
        return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach", "a buffer is already attached");
    g_buffer.base = static_cast<char *>(buffer);
    g_buffer.size = static_cast<std::size_t>(size);
    return MPI_SUCCESS;
}

int MPI_Buffer_detach(void *buffer_addr, int *size) {
    FTMPI_TRY(check_init("MPI_Buffer_detach"));
    FTMPI_CHECK(check_nonnull("MPI_Buffer_detach", MPI_COMM_NULL, buffer_addr, "buffer_addr"));
    FTMPI_CHECK(check_nonnull("MPI_Buffer_detach", MPI_COMM_NULL, size, "size"));
    // Blocks until every buffered message is sent (or failed with its peer).
    while (g_buffer.pending > 0) progress_wait();
    *static_cast<void **>(buffer_addr) = g_buffer.base;
    *size = static_cast<int>(g_buffer.size);
    g_buffer = Attached{};
    return MPI_SUCCESS;
}

}  // extern "C"
