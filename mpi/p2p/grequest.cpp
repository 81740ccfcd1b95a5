// Generalized requests (MPI 3.1 §12.2): MPI_Grequest_start and
// MPI_Grequest_complete. The Wait/Test family, MPI_Request_free,
// MPI_Request_get_status and MPI_Cancel treat them like any request; the
// user's callbacks run where the standard says:
//   query_fn  when Wait/Test (or Request_get_status) returns the request's status;
//   free_fn   after that query in Wait/Test, at MPI_Request_free of a complete
//             request, or at MPI_Grequest_complete of one already freed;
//   cancel_fn at MPI_Cancel, told whether the request is complete.
//
// MPI_Grequest_complete may come from another thread than the one waiting
// (the usual way of driving a generalized request): it only publishes the
// completion (atomically), which the waiter's progress loop sees. Completing
// a request already freed with MPI_Request_free releases it, which must not
// race with other MPI calls (this library provides MPI_THREAD_SERIALIZED).
#include <atomic>

#include "mpi/checks.hpp"
#include "mpi/p2p/requests.hpp"

namespace ftmpi::mpi {
namespace {

struct Generalized {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *extra_state;
};

Generalized *callbacks(MPI_Request r) { return static_cast<Generalized *>(r->owner); }

}  // namespace

int grequest_query(MPI_Request r) {
    Generalized *g = callbacks(r);
    if (g == nullptr || g->query == nullptr) return MPI_SUCCESS;
    return g->query(g->extra_state, &r->status);
}

int grequest_free(MPI_Request r) {
    Generalized *g = callbacks(r);
    if (g == nullptr) return MPI_SUCCESS;  // already run
    r->owner = nullptr;
    const int rc = g->free != nullptr ? g->free(g->extra_state) : MPI_SUCCESS;
    delete g;
    return rc;
}

int grequest_cancel(MPI_Request r) {
    Generalized *g = callbacks(r);
    if (g == nullptr || g->cancel == nullptr) return MPI_SUCCESS;
    return g->cancel(g->extra_state, std::atomic_ref<bool>(r->complete).load(std::memory_order_acquire) ? 1 : 0);
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request) {
    const char *call = "MPI_Grequest_start";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, request, "request"));
    MPI_Request r = new_request(ftmpi_request_s::Kind::generalized, nullptr, nullptr, 0, nullptr, 0, 0, 0);
    r->owner = new Generalized{query_fn, free_fn, cancel_fn, extra_state};
    r->status.MPI_SOURCE = MPI_UNDEFINED;
    r->status.MPI_TAG = MPI_UNDEFINED;
    *request = r;
    return MPI_SUCCESS;
}

int MPI_Grequest_complete(MPI_Request request) {
    const char *call = "MPI_Grequest_complete";
    FTMPI_TRY(check_init(call));
    if (request == MPI_REQUEST_NULL || request->magic != Magic::request ||
        request->kind != ftmpi_request_s::Kind::generalized)
        return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, call, "argument request is %s",
                     request == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "not a generalized request");
    if (std::atomic_ref<bool>(request->complete).load(std::memory_order_acquire))
        return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, call, "the generalized request is already complete");
    if (request->user_freed) {  // MPI_Request_free came first: nobody will wait for it
        request->complete = true;
        release_request(request);
        return MPI_SUCCESS;
    }
    std::atomic_ref<bool>(request->complete).store(true, std::memory_order_release);
    return MPI_SUCCESS;
}

}  // extern "C"
