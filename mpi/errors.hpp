// Error classes, their strings, and the error handlers.
#pragma once

#include <mpi.h>

namespace ftmpi::mpi {

// Short name ("MPI_ERR_RANK") and description of an error class; nullptr if unknown.
const char *error_class_name(int cls);
const char *error_class_text(int cls);

// Raises error `code` from `call` (e.g. "MPI_Send") on `comm` (may be null: the
// handler of MPI_COMM_WORLD applies). The message names the call and the
// argument. Under MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT it prints the message
// and aborts the job; under MPI_ERRORS_RETURN it returns `code`.
[[gnu::format(printf, 4, 5)]] int raise(MPI_Comm comm, int code, const char *call, const char *fmt, ...);
// While one is alive, errors raised on this thread name `call`: a
// large-count function that runs its int twin (MPI_Send_c's errors name
// MPI_Send_c). Nested aliases: the outermost wins.
class CallAlias {
public:
    explicit CallAlias(const char *call);
    ~CallAlias();
    CallAlias(const CallAlias &) = delete;
    CallAlias &operator=(const CallAlias &) = delete;

private:
    const char *prev_;
};

// The same for a call that completed several requests (Waitall, Testall,
// Waitsome, Testsome), as Open MPI's ULFM does: the handler gets `code`, the
// first failed request's, and the call returns MPI_ERR_IN_STATUS (the
// statuses say which requests failed).
[[gnu::format(printf, 4, 5)]] int raise_in_status(MPI_Comm comm, int code, const char *call, const char *fmt, ...);

// Raises error `code` from `call` on the handler of MPI_FILE_NULL (the
// default file error handler: errors of MPI_File_open and MPI_File_delete,
// and of calls given no valid file), as raise() does.
[[gnu::format(printf, 3, 4)]] int raise_file_null(int code, const char *call, const char *fmt, ...);
// The handler of MPI_FILE_NULL, which new files start with (MPI_ERRORS_RETURN
// until MPI_File_set_errhandler(MPI_FILE_NULL, ...) changes it; holds a reference).
MPI_Errhandler file_default_errhandler();
// Reports an error to handler h (null: MPI_ERRORS_ARE_FATAL), a user one
// getting `object` (the address of the handle: MPI_Session *, MPI_Comm *);
// `label` names the object in a fatal message. For the calls whose errors
// go to no communicator, window or file: the sessions'.
[[gnu::format(printf, 6, 7)]] int raise_via(MPI_Errhandler h, void *object, const char *label, int code,
                                            const char *call, const char *fmt, ...);
void set_file_default_errhandler(MPI_Errhandler h);

// The predefined handler named `name` (mpi_errors_are_fatal, mpi_errors_return
// or mpi_errors_abort, any case), or nullptr.
MPI_Errhandler predefined_errhandler(const char *name);

// The handler MPI_COMM_WORLD and MPI_COMM_SELF start with, and that errors
// raised before MPI_Init get: FTMPI_ERRHANDLER's (ftmpirun
// -initial-errhandler), read from the environment (load_config validated it
// at init); MPI_ERRORS_ARE_FATAL when unset or invalid.
MPI_Errhandler initial_errhandler();

// Error handler reference counts: communicators hold their handler.
void errhandler_retain(MPI_Errhandler h);
void errhandler_release(MPI_Errhandler h);

// Largest error code in use (MPI_LASTUSEDCODE), user-added ones included.
int last_used_error_code();

// The name printed for a communicator ("MPI_COMM_WORLD", or its set name).
const char *comm_label(MPI_Comm comm);

}  // namespace ftmpi::mpi
