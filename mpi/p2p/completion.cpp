// The Wait/Test family, Request_free, Request_get_status (and MPI 4.1's
// _any/_all/_some), Cancel.
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"

namespace ftmpi::mpi {
namespace {

int check_requests(const char *call, int count, MPI_Request reqs[]) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_count(call, MPI_COMM_NULL, count));
    if (count > 0) FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, reqs, "array_of_requests"));
#if FTMPI_ARG_CHECKS
    for (int i = 0; i < count; ++i)
        if (reqs[i] != MPI_REQUEST_NULL && reqs[i]->magic != Magic::request)
            return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, call, "array_of_requests[%d] is not a valid request", i);
#endif
    return MPI_SUCCESS;
}

int check_request(const char *call, MPI_Request *request) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, request, "request"));
    if (*request != MPI_REQUEST_NULL && (*request)->magic != Magic::request)
        return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, call, "argument request is not a valid request");
    return MPI_SUCCESS;
}

int report(const char *call, MPI_Comm comm, int err) {
    if (err == MPI_SUCCESS) return MPI_SUCCESS;
    if (comm == MPI_COMM_NULL) return raise(comm, err, call, "generalized request completed with an error");
    return raise(comm, err, call, "request completed with an error on %s", comm_label(comm));
}

// The status and code of the completed request in slot i: the Wait and Test
// calls retire it (retire_request); MPI_Request_get_status and its MPI 4.1
// array forms only read them, leaving the request as it is.
int take(MPI_Request reqs[], int i, MPI_Status *status, bool retire) {
    if (retire) return retire_request(&reqs[i], status);
    MPI_Request r = reqs[i];
    const int err = r->kind == ftmpi_request_s::Kind::generalized ? grequest_query(r) : r->status.MPI_ERROR;
    copy_status(status, r->status);
    return err;
}

// After a multi-request call: MPI_ERR_IN_STATUS when any failed (the caller
// then sets every status's MPI_ERROR: MPI_SUCCESS for the good ones, and
// leaves them alone otherwise, MPI-3.1 §3.2.5); the error handler of the
// first failed request's communicator gets that request's code (as Open
// MPI's ULFM: handlers switch on MPIX_ERR_PROC_FAILED / MPIX_ERR_REVOKED).
int in_status(const char *call, MPI_Comm comm, int first_err, int errors) {
    if (errors == 0) return MPI_SUCCESS;
    return raise_in_status(comm, first_err, call, "%d request(s) failed; first error %s", errors,
                           error_class_name(first_err));
}

// A wildcard receive left pending by a failure: reported, not completed.
bool failure_pending(MPI_Request r) { return !r->complete && r->failure_pending; }

// Such a request stays active: its status is empty, and the call's code is
// MPI_ERR_PROC_FAILED_PENDING (in MPI_ERROR too for the calls of several
// statuses, which set it for every request they report).
int report_pending(const char *call, MPI_Request r, MPI_Status *status) {
    empty_status(status);
    return raise(r->comm, MPI_ERR_PROC_FAILED_PENDING, call,
                 "MPI_ANY_SOURCE receive on %s stays pending: the communicator has unacknowledged failures",
                 comm_label(r->comm));
}

// Index of a completed (or failure-pending) active request, -1 if none yet,
// -2 if none active.
int find_complete(int count, MPI_Request reqs[]) {
    bool any_active = false;
    for (int i = 0; i < count; ++i) {
        if (!is_active(reqs[i])) continue;
        any_active = true;
        if (reqs[i]->complete || reqs[i]->failure_pending) return i;
    }
    return any_active ? -1 : -2;
}

// Retires every completed active request; returns how many.
int collect_some(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[], bool retire,
                 CommRef &err_comm, int *first_err, int *errors) {
    int n = 0;
    std::vector<int> codes(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        if (!is_active(reqs[i]) || (!reqs[i]->complete && !reqs[i]->failure_pending)) continue;
        const CommRef c(reqs[i]->comm);
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        int e = MPI_ERR_PROC_FAILED_PENDING;
        if (failure_pending(reqs[i])) empty_status(st);
        else e = take(reqs, i, st, retire);
        codes[static_cast<std::size_t>(n)] = e;
        if (e != MPI_SUCCESS && (*errors)++ == 0) {
            *first_err = e;
            err_comm.reset(c.get());
        }
        indices[n++] = i;
    }
    *outcount = n;
    if (*errors > 0 && statuses != MPI_STATUSES_IGNORE)
        for (int j = 0; j < n; ++j) statuses[j].MPI_ERROR = codes[static_cast<std::size_t>(j)];
    return n;
}

// MPI_Test and MPI_Request_get_status.
int test_one(const char *call, MPI_Request *request, int *flag, MPI_Status *status, bool retire) {
    FTMPI_TRY(check_request(call, request));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, flag, "flag"));
    MPI_Request r = *request;
    if (!is_active(r)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!r->complete) progress();
    *flag = r->complete ? 1 : 0;
    if (failure_pending(r)) return report_pending(call, r, status);
    if (!*flag) return MPI_SUCCESS;
    const CommRef comm(r->comm);  // its handler, even if the user freed it meanwhile
    return report(call, comm.get(), take(request, 0, status, retire));
}

// Every status of a completed MPI_Waitall / MPI_Testall /
// MPI_Request_get_status_all; a failure-pending receive stays active.
int all_statuses(const char *call, int count, MPI_Request reqs[], MPI_Status statuses[], bool retire) {
    int errors = 0, first_err = MPI_SUCCESS;
    CommRef err_comm(MPI_COMM_NULL);
    std::vector<int> codes(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        MPI_Request r = reqs[i];
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        int e = MPI_SUCCESS;
        if (!is_active(r)) {
            empty_status(st);
        } else if (failure_pending(r)) {
            e = MPI_ERR_PROC_FAILED_PENDING;
            if (errors++ == 0) {
                first_err = e;
                err_comm.reset(r->comm);
            }
        } else {
            const CommRef c(r->comm);
            e = take(reqs, i, st, retire);
            if (e != MPI_SUCCESS && errors++ == 0) {
                first_err = e;
                err_comm.reset(c.get());
            }
        }
        codes[static_cast<std::size_t>(i)] = e;
    }
    if (errors > 0 && statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < count; ++i) statuses[i].MPI_ERROR = codes[static_cast<std::size_t>(i)];
    return in_status(call, err_comm.get(), first_err, errors);
}

// MPI_Testall and MPI_Request_get_status_all.
int test_all(const char *call, int count, MPI_Request reqs[], int *flag, MPI_Status statuses[], bool retire) {
    FTMPI_TRY(check_requests(call, count, reqs));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, flag, "flag"));
    progress();
    for (int i = 0; i < count; ++i) {
        if (is_active(reqs[i]) && !reqs[i]->complete && !reqs[i]->failure_pending) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return all_statuses(call, count, reqs, statuses, retire);
}

// MPI_Testany and MPI_Request_get_status_any.
int test_any(const char *call, int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status, bool retire) {
    FTMPI_TRY(check_requests(call, count, reqs));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, index, "index"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, flag, "flag"));
    progress();
    int i = find_complete(count, reqs);
    if (i == -2) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *index = i;
    if (failure_pending(reqs[i])) {
        *flag = 0;
        return report_pending(call, reqs[i], status);
    }
    *flag = 1;
    const CommRef comm(reqs[i]->comm);
    return report(call, comm.get(), take(reqs, i, status, retire));
}

// MPI_Waitsome (after waiting), MPI_Testsome and MPI_Request_get_status_some.
int test_some(const char *call, int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[],
              bool retire) {
    FTMPI_TRY(check_requests(call, incount, reqs));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, outcount, "outcount"));
    if (incount > 0) FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, indices, "array_of_indices"));
    progress();
    if (find_complete(incount, reqs) == -2) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int errors = 0, first_err = MPI_SUCCESS;
    CommRef err_comm(MPI_COMM_NULL);
    collect_some(incount, reqs, outcount, indices, statuses, retire, err_comm, &first_err, &errors);
    return in_status(call, err_comm.get(), first_err, errors);
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    FTMPI_TRY(check_request("MPI_Wait", request));
    MPI_Request r = *request;
    if (!is_active(r)) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    wait_complete(r);
    if (failure_pending(r)) return report_pending("MPI_Wait", r, status);
    const CommRef comm(r->comm);  // its handler, even if the user freed it meanwhile
    return report("MPI_Wait", comm.get(), retire_request(request, status));
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    return test_one("MPI_Test", request, flag, status, true);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    return test_one("MPI_Request_get_status", &request, flag, status, false);
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
    FTMPI_TRY(check_requests("MPI_Waitall", count, array_of_requests));
    for (int i = 0; i < count; ++i)
        if (is_active(array_of_requests[i])) wait_complete(array_of_requests[i]);
    return all_statuses("MPI_Waitall", count, array_of_requests, array_of_statuses, true);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]) {
    return test_all("MPI_Testall", count, array_of_requests, flag, array_of_statuses, true);
}

int MPI_Request_get_status_all(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]) {
    return test_all("MPI_Request_get_status_all", count, array_of_requests, flag, array_of_statuses, false);
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status) {
    FTMPI_TRY(check_requests("MPI_Waitany", count, array_of_requests));
    FTMPI_CHECK(check_nonnull("MPI_Waitany", MPI_COMM_NULL, index, "index"));
    for (;;) {
        int i = find_complete(count, array_of_requests);
        if (i == -2) {
            *index = MPI_UNDEFINED;
            empty_status(status);
            return MPI_SUCCESS;
        }
        if (i >= 0) {
            *index = i;
            if (failure_pending(array_of_requests[i]))
                return report_pending("MPI_Waitany", array_of_requests[i], status);
            const CommRef comm(array_of_requests[i]->comm);
            return report("MPI_Waitany", comm.get(), retire_request(&array_of_requests[i], status));
        }
        progress_wait();
    }
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status) {
    return test_any("MPI_Testany", count, array_of_requests, index, flag, status, true);
}

int MPI_Request_get_status_any(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status) {
    return test_any("MPI_Request_get_status_any", count, array_of_requests, index, flag, status, false);
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]) {
    FTMPI_TRY(check_requests("MPI_Waitsome", incount, array_of_requests));
    FTMPI_CHECK(check_nonnull("MPI_Waitsome", MPI_COMM_NULL, outcount, "outcount"));
    for (;;) {
        const int i = find_complete(incount, array_of_requests);
        if (i == -2 || i >= 0) break;
        progress_wait();
    }
    return test_some("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, true);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]) {
    return test_some("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, true);
}

int MPI_Request_get_status_some(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                                MPI_Status array_of_statuses[]) {
    return test_some("MPI_Request_get_status_some", incount, array_of_requests, outcount, array_of_indices,
                     array_of_statuses, false);
}

int MPI_Request_free(MPI_Request *request) {
    FTMPI_TRY(check_request("MPI_Request_free", request));
    MPI_Request r = *request;
    if (r == MPI_REQUEST_NULL)
        return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Request_free", "argument request is MPI_REQUEST_NULL");
    if (r->complete || (r->persistent && !r->active)) release_request(r);
    else r->user_freed = true;
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

// Receives that have not matched are cancelled; a send is never cancelled
// (allowed by the standard: MPI_Test_cancelled then reports false).
int MPI_Cancel(MPI_Request *request) {
    FTMPI_TRY(check_request("MPI_Cancel", request));
    MPI_Request r = *request;
    if (r == MPI_REQUEST_NULL)
        return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Cancel", "argument request is MPI_REQUEST_NULL");
    if (r->kind == ftmpi_request_s::Kind::generalized) {
        if (const int rc = grequest_cancel(r); rc != MPI_SUCCESS)
            return raise(MPI_COMM_NULL, rc, "MPI_Cancel", "the generalized request's cancel callback failed");
        return MPI_SUCCESS;
    }
    if (r->kind == ftmpi_request_s::Kind::recv && r->posted && queue_of(r).remove_posted(r)) {
        r->status.ftmpi_cancelled = 1;
        r->status.MPI_SOURCE = MPI_ANY_SOURCE;
        r->status.MPI_TAG = MPI_ANY_TAG;
        complete_request(r, MPI_SUCCESS, 0);
    }
    return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag) {
    FTMPI_CHECK(check_nonnull("MPI_Test_cancelled", MPI_COMM_NULL, status, "status"));
    FTMPI_CHECK(check_nonnull("MPI_Test_cancelled", MPI_COMM_NULL, flag, "flag"));
    *flag = status->ftmpi_cancelled;
    return MPI_SUCCESS;
}

}  // extern "C"
