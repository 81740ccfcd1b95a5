#include "mpi/errors.hpp"

#include <unistd.h>

#include <strings.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "runtime/config.hpp"
#include "mpi/fortran_hooks.hpp"
#include "mpi/objects.hpp"
#include "mpi/state.hpp"

// One table: class, name, description.
#define FTMPI_ERROR_CLASSES(X)                                                                         \
    X(MPI_SUCCESS, "no error")                                                                         \
    X(MPI_ERR_BUFFER, "invalid buffer pointer")                                                        \
    X(MPI_ERR_COUNT, "invalid count argument")                                                         \
    X(MPI_ERR_TYPE, "invalid datatype")                                                                \
    X(MPI_ERR_TAG, "invalid tag")                                                                      \
    X(MPI_ERR_COMM, "invalid communicator")                                                            \
    X(MPI_ERR_RANK, "invalid rank")                                                                    \
    X(MPI_ERR_REQUEST, "invalid request")                                                              \
    X(MPI_ERR_ROOT, "invalid root")                                                                    \
    X(MPI_ERR_GROUP, "invalid group")                                                                  \
    X(MPI_ERR_OP, "invalid reduction operation")                                                       \
    X(MPI_ERR_TOPOLOGY, "invalid topology")                                                            \
    X(MPI_ERR_DIMS, "invalid dimension argument")                                                      \
    X(MPI_ERR_ARG, "invalid argument")                                                                 \
    X(MPI_ERR_UNKNOWN, "unknown error")                                                                \
    X(MPI_ERR_TRUNCATE, "message truncated")                                                           \
    X(MPI_ERR_OTHER, "other error")                                                                    \
    X(MPI_ERR_INTERN, "internal error")                                                                \
    X(MPI_ERR_IN_STATUS, "error code is in status")                                                    \
    X(MPI_ERR_PENDING, "pending request")                                                              \
    X(MPI_ERR_ACCESS, "permission denied")                                                             \
    X(MPI_ERR_AMODE, "invalid access mode")                                                            \
    X(MPI_ERR_ASSERT, "invalid assert argument")                                                       \
    X(MPI_ERR_BAD_FILE, "invalid file name")                                                           \
    X(MPI_ERR_BASE, "invalid base")                                                                    \
    X(MPI_ERR_CONVERSION, "data conversion error")                                                     \
    X(MPI_ERR_DISP, "invalid displacement")                                                            \
    X(MPI_ERR_DUP_DATAREP, "data representation already defined")                                      \
    X(MPI_ERR_FILE_EXISTS, "file exists")                                                              \
    X(MPI_ERR_FILE_IN_USE, "file in use")                                                              \
    X(MPI_ERR_FILE, "invalid file handle")                                                             \
    X(MPI_ERR_INFO_KEY, "info key too long")                                                           \
    X(MPI_ERR_INFO_NOKEY, "info key not defined")                                                      \
    X(MPI_ERR_INFO_VALUE, "info value too long")                                                       \
    X(MPI_ERR_INFO, "invalid info object")                                                             \
    X(MPI_ERR_IO, "I/O error")                                                                         \
    X(MPI_ERR_KEYVAL, "invalid attribute key")                                                         \
    X(MPI_ERR_LOCKTYPE, "invalid lock type")                                                           \
    X(MPI_ERR_NAME, "invalid service name")                                                            \
    X(MPI_ERR_NO_MEM, "out of memory")                                                                 \
    X(MPI_ERR_NOT_SAME, "arguments differ between processes")                                          \
    X(MPI_ERR_NO_SPACE, "no space left")                                                               \
    X(MPI_ERR_NO_SUCH_FILE, "no such file")                                                            \
    X(MPI_ERR_PORT, "invalid port name")                                                               \
    X(MPI_ERR_QUOTA, "quota exceeded")                                                                 \
    X(MPI_ERR_READ_ONLY, "read-only file or file system")                                              \
    X(MPI_ERR_RMA_CONFLICT, "conflicting RMA accesses")                                                \
    X(MPI_ERR_RMA_SYNC, "wrong RMA synchronization")                                                   \
    X(MPI_ERR_SERVICE, "invalid service")                                                              \
    X(MPI_ERR_SIZE, "invalid size")                                                                    \
    X(MPI_ERR_SPAWN, "spawn error")                                                                    \
    X(MPI_ERR_UNSUPPORTED_DATAREP, "unsupported data representation")                                  \
    X(MPI_ERR_UNSUPPORTED_OPERATION, "operation not supported by ftmpi")                               \
    X(MPI_ERR_WIN, "invalid window")                                                                   \
    X(MPI_ERR_RMA_RANGE, "RMA target out of range")                                                    \
    X(MPI_ERR_RMA_ATTACH, "memory cannot be attached")                                                 \
    X(MPI_ERR_RMA_SHARED, "memory cannot be shared")                                                   \
    X(MPI_ERR_RMA_FLAVOR, "wrong window flavor")                                                       \
    X(MPI_ERR_PROC_ABORTED, "a process aborted")                                                       \
    X(MPI_ERR_VALUE_TOO_LARGE, "value too large")                                                      \
    X(MPI_ERR_ERRHANDLER, "invalid error handler")                                                     \
    X(MPI_ERR_PROC_FAILED, "a process involved in the operation failed")                               \
    X(MPI_ERR_PROC_FAILED_PENDING, "a potential sender failed; the request is pending")                \
    X(MPI_ERR_REVOKED, "the communicator was revoked")                                                 \
    X(MPI_T_ERR_MEMORY, "MPI_T: out of memory")                                                        \
    X(MPI_T_ERR_NOT_INITIALIZED, "MPI_T: the tools interface is not initialized")                      \
    X(MPI_T_ERR_CANNOT_INIT, "MPI_T: the tools interface cannot be initialized")                       \
    X(MPI_T_ERR_INVALID_INDEX, "MPI_T: invalid variable or category index")                            \
    X(MPI_T_ERR_INVALID_ITEM, "MPI_T: invalid enumeration item index")                                 \
    X(MPI_T_ERR_INVALID_HANDLE, "MPI_T: invalid handle")                                               \
    X(MPI_T_ERR_OUT_OF_HANDLES, "MPI_T: no more handles available")                                    \
    X(MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T: no more sessions available")                                  \
    X(MPI_T_ERR_INVALID_SESSION, "MPI_T: invalid performance variable session")                        \
    X(MPI_T_ERR_CVAR_SET_NOT_NOW, "MPI_T: the control variable cannot be set now")                     \
    X(MPI_T_ERR_CVAR_SET_NEVER, "MPI_T: the control variable can never be set")                        \
    X(MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T: the performance variable cannot be started or stopped")     \
    X(MPI_T_ERR_PVAR_NO_WRITE, "MPI_T: the performance variable cannot be written or reset")           \
    X(MPI_T_ERR_PVAR_NO_ATOMIC, "MPI_T: the performance variable cannot be read and reset atomically") \
    X(MPI_T_ERR_INVALID_NAME, "MPI_T: no variable or category has this name")                          \
    X(MPI_T_ERR_INVALID, "MPI_T: invalid use of the interface or invalid argument")                    \
    X(MPI_ERR_SESSION, "invalid session")

namespace ftmpi::mpi {
namespace {
struct ClassRow {
    int cls;
    const char *name;
    const char *text;
};
#define FTMPI_ROW(cls, text) {cls, #cls, text},
constexpr ClassRow k_classes[] = {FTMPI_ERROR_CLASSES(FTMPI_ROW)};
#undef FTMPI_ROW
static_assert(sizeof k_classes / sizeof k_classes[0] == MPI_ERR_LASTCODE + 1,
              "every error class up to MPI_ERR_LASTCODE has a row");

const ClassRow *find(int cls) {
    for (const auto &r : k_classes)
        if (r.cls == cls) return &r;
    return nullptr;
}

// Classes and codes added with MPI_Add_error_class / MPI_Add_error_code.
struct UserCode {
    int cls;
    std::string text;
    bool has_text = false;  // set by MPI_Add_error_string, cleared by MPI_Remove_error_string
};
std::map<int, UserCode> g_user_codes;
int g_last_code = MPI_ERR_LASTCODE;

// The class of a built-in or user-added code; -1 when unknown.
int class_of_code(int code) {
    if (find(code) != nullptr) return code;
    auto it = g_user_codes.find(code);
    return it == g_user_codes.end() ? -1 : it->second.cls;
}
}  // namespace

int last_used_error_code() { return g_last_code; }

void errhandler_retain(MPI_Errhandler h) {
    if (h != nullptr && !h->predefined) h->refs++;
}

void errhandler_release(MPI_Errhandler h) {
    if (h == nullptr || h->predefined || --h->refs > 0) return;
    h->magic = Magic::dead;
    delete h;
}

const char *error_class_name(int cls) {
    const ClassRow *r = find(cls);
    return r ? r->name : nullptr;
}

const char *error_class_text(int cls) {
    const ClassRow *r = find(cls);
    return r ? r->text : nullptr;
}

MPI_Errhandler predefined_errhandler(const char *name) {
    if (strcasecmp(name, "mpi_errors_are_fatal") == 0) return MPI_ERRORS_ARE_FATAL;
    if (strcasecmp(name, "mpi_errors_return") == 0) return MPI_ERRORS_RETURN;
    if (strcasecmp(name, "mpi_errors_abort") == 0) return MPI_ERRORS_ABORT;
    return nullptr;
}

MPI_Errhandler initial_errhandler() {
    // Also before MPI_Init (an error raised then), when config() holds the defaults.
    std::string v;
    try {
        v = ftmpi::runtime::config_from_environment().ERRHANDLER;
    } catch (const std::exception &) {
        v = ftmpi::runtime::config().ERRHANDLER;  // another knob is malformed: MPI_Init will say so
    }
    MPI_Errhandler h = predefined_errhandler(v.c_str());
    return h ? h : MPI_ERRORS_ARE_FATAL;
}

namespace {
// A communicator whose object is alive: valid, or freed by the user while a
// request held it (which still does, while its error is reported).
bool alive(MPI_Comm comm) {
    return comm != MPI_COMM_NULL && (comm->magic == Magic::comm || (comm->magic == Magic::dead && comm->freed));
}
}  // namespace

const char *comm_label(MPI_Comm comm) {
    if (comm == MPI_COMM_NULL) return "MPI_COMM_NULL";
    if (!alive(comm)) return "(invalid communicator)";
    if (comm->name[0] != '\0') return comm->name;
    switch (comm->handler_of) {
    case ftmpi_comm_s::HandlerOf::win: return comm->win != nullptr ? "(unnamed window)" : "(freed window)";
    case ftmpi_comm_s::HandlerOf::file: return comm->file != nullptr ? "(unnamed file)" : "(freed file)";
    case ftmpi_comm_s::HandlerOf::comm: break;
    }
    return comm->magic == Magic::comm ? "(unnamed communicator)" : "(freed communicator)";
}

namespace {

// The call the user made, when an MPI call runs on its behalf (CallAlias).
thread_local const char *t_call_alias = nullptr;

// Acts on one error as handler `h` says: MPI_ERRORS_RETURN and user handlers
// (run by `invoke(h, &code)`) return `returned`; the others print the message
// and end the job. `label` names the object the handler is attached to.
template <typename Invoke>
int act(MPI_Errhandler h, int code, int returned, const char *call, const char *msg, const char *label, Invoke invoke) {
    if (t_call_alias != nullptr) call = t_call_alias;
    if (h->kind == ftmpi_errhandler_s::Kind::ret) return returned;
    if (h->kind == ftmpi_errhandler_s::Kind::user && h->fn != nullptr) {
        int c = code;
        invoke(h, &c);
        return returned;
    }
    const int cls = class_of_code(code);
    const char *cname = cls >= 0 && find(cls) ? error_class_name(cls) : "user-defined error class";
    char line[1024];
    const int rank = g.pm ? g.pm->job().rank : 0;
    // MPI_ERRORS_ABORT should end only the communicator's processes; here it
    // ends the job, as MPI_ERRORS_ARE_FATAL does, and says which handler acted.
    int n =
        h->kind == ftmpi_errhandler_s::Kind::abort
            ? std::snprintf(line, sizeof line,
                            "ftmpi: rank %d: error in %s: %s (%s); MPI_ERRORS_ABORT on %s: aborting\n", rank, call, msg,
                            cname, label)
            : std::snprintf(line, sizeof line, "ftmpi: rank %d: fatal error in %s: %s (%s)\n", rank, call, msg, cname);
    ssize_t ignored = ::write(STDERR_FILENO, line, static_cast<size_t>(n > 0 ? n : 0));
    (void)ignored;
    if (g.pm) g.pm->abort(code, std::string(call) + ": " + msg);
    ::_exit(code != 0 ? code : 1);
}

// Calls a user's handler with a pointer to its object's handle (a Fortran
// handler: with the handle's Fortran number).
void call_handler(MPI_Errhandler eh, void *handle, int *code) {
    if (eh->to_fortran != nullptr) {
        MPI_Fint f = eh->to_fortran(handle);
        reinterpret_cast<void (*)(MPI_Fint *, int *)>(eh->fn)(&f, code);
        return;
    }
    reinterpret_cast<void (*)(void *, int *, ...)>(eh->fn)(handle, code);
}

// Invokes comm's error handler with `code`; the call then returns `returned`.
// A communicator the user freed while a request on it was pending still has
// its handler (MPI: the object lives until its pending operations complete;
// the reporter holds it). A window's or a file's hidden communicator gives
// its handler the window or the file (MPI_Win_errhandler_function,
// MPI_File_errhandler_function), MPI_WIN_NULL / MPI_FILE_NULL once that was
// freed. An invalid comm or MPI_COMM_NULL: MPI_COMM_WORLD's handler.
int vraise(MPI_Comm comm, int code, int returned, const char *call, const char *fmt, va_list ap) {
    char msg[768];
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    MPI_Comm target = alive(comm) ? comm : MPI_COMM_WORLD;
    MPI_Errhandler h = target->errhandler ? target->errhandler : initial_errhandler();
    return act(h, code, returned, call, msg, comm_label(target), [target](MPI_Errhandler eh, int *c) {
        switch (target->handler_of) {
        case ftmpi_comm_s::HandlerOf::win: {
            MPI_Win w = target->win != nullptr ? target->win : MPI_WIN_NULL;
            call_handler(eh, &w, c);
            break;
        }
        case ftmpi_comm_s::HandlerOf::file: {
            MPI_File f = target->file != nullptr ? target->file : MPI_FILE_NULL;
            call_handler(eh, &f, c);
            break;
        }
        case ftmpi_comm_s::HandlerOf::comm: {
            MPI_Comm cm = target;
            call_handler(eh, &cm, c);
            break;
        }
        }
    });
}

// The handler of MPI_FILE_NULL (MPI 3.1 §13.7): MPI_ERRORS_RETURN until set.
MPI_Errhandler g_file_default = nullptr;

}  // namespace

CallAlias::CallAlias(const char *call) : prev_(t_call_alias) {
    if (prev_ == nullptr) t_call_alias = call;
}
CallAlias::~CallAlias() { t_call_alias = prev_; }

int raise(MPI_Comm comm, int code, const char *call, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const int rc = vraise(comm, code, code, call, fmt, ap);
    va_end(ap);
    return rc;
}

namespace {
int vraise_via(MPI_Errhandler h, void *object, const char *label, int code, const char *call, const char *fmt,
               va_list ap) {
    char msg[768];
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    return act(h != nullptr ? h : MPI_ERRORS_ARE_FATAL, code, code, call, msg, label,
               [object](MPI_Errhandler eh, int *c) { call_handler(eh, object, c); });
}
}  // namespace

int raise_file_null(int code, const char *call, const char *fmt, ...) {
    MPI_File f = MPI_FILE_NULL;
    va_list ap;
    va_start(ap, fmt);
    const int rc = vraise_via(file_default_errhandler(), &f, "MPI_FILE_NULL", code, call, fmt, ap);
    va_end(ap);
    return rc;
}

int raise_via(MPI_Errhandler h, void *object, const char *label, int code, const char *call, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const int rc = vraise_via(h, object, label, code, call, fmt, ap);
    va_end(ap);
    return rc;
}

MPI_Errhandler file_default_errhandler() { return g_file_default ? g_file_default : MPI_ERRORS_RETURN; }

void set_file_default_errhandler(MPI_Errhandler h) {
    errhandler_retain(h);
    errhandler_release(g_file_default);
    g_file_default = h;
}

int raise_in_status(MPI_Comm comm, int code, const char *call, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const int rc = vraise(comm, code, MPI_ERR_IN_STATUS, call, fmt, ap);
    va_end(ap);
    return rc;
}

int set_errhandler_fortran(MPI_Errhandler errhandler, MPI_Fint (*to_fortran)(const void *handle)) {
    if (errhandler == MPI_ERRHANDLER_NULL || errhandler->magic != Magic::errhandler || errhandler->predefined)
        return raise(MPI_COMM_NULL, MPI_ERR_ERRHANDLER, "MPI_Comm_create_errhandler", "not a user's error handler");
    errhandler->to_fortran = to_fortran;
    return MPI_SUCCESS;
}

}  // namespace ftmpi::mpi

extern "C" {

int MPI_Error_class(int errorcode, int *errorclass) {
    if (errorclass == nullptr)
        return ftmpi::mpi::raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
    const int cls = ftmpi::mpi::class_of_code(errorcode);
    if (cls < 0)
        return ftmpi::mpi::raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class", "unknown error code %d", errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen) {
    if (string == nullptr || resultlen == nullptr)
        return ftmpi::mpi::raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string", "%s is NULL",
                                 string == nullptr ? "string" : "resultlen");
    using namespace ftmpi::mpi;
    int n;
    if (const char *name = error_class_name(errorcode)) {
        n = std::snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", name, error_class_text(errorcode));
    } else {
        auto it = g_user_codes.find(errorcode);
        if (it == g_user_codes.end())
            return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string", "unknown error code %d", errorcode);
        n = std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", it->second.text.c_str());
    }
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

int MPI_Add_error_class(int *errorclass) {
    using namespace ftmpi::mpi;
    if (errorclass == nullptr)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_class", "argument errorclass is NULL");
    const int c = ++g_last_code;
    g_user_codes[c] = UserCode{c, ""};
    *errorclass = c;
    return MPI_SUCCESS;
}

int MPI_Add_error_code(int errorclass, int *errorcode) {
    using namespace ftmpi::mpi;
    if (errorcode == nullptr)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_code", "argument errorcode is NULL");
    if (class_of_code(errorclass) != errorclass)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_code", "%d is not an error class (argument errorclass)",
                     errorclass);
    const int c = ++g_last_code;
    g_user_codes[c] = UserCode{errorclass, ""};
    *errorcode = c;
    return MPI_SUCCESS;
}

int MPI_Add_error_string(int errorcode, const char *string) {
    using namespace ftmpi::mpi;
    if (string == nullptr) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string", "argument string is NULL");
    auto it = g_user_codes.find(errorcode);
    if (it == g_user_codes.end())
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string",
                     "%d is not a user-added error code or class (argument errorcode)", errorcode);
    it->second.text.assign(string, strnlen(string, MPI_MAX_ERROR_STRING - 1));
    it->second.has_text = true;
    return MPI_SUCCESS;
}

// MPI 4.1 §9.5: a class goes after its codes, a code after its string.
// Removed values are not handed out again (MPI_LASTUSEDCODE only grows).
int MPI_Remove_error_class(int errorclass) {
    using namespace ftmpi::mpi;
    auto it = g_user_codes.find(errorclass);
    if (it == g_user_codes.end() || it->second.cls != errorclass)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Remove_error_class",
                     "%d is not an error class added by MPI_Add_error_class (argument errorclass)", errorclass);
    for (const auto &[code, uc] : g_user_codes)
        if (uc.cls == errorclass && code != errorclass)
            return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Remove_error_class",
                         "error class %d still has error code %d (remove it first)", errorclass, code);
    g_user_codes.erase(it);
    return MPI_SUCCESS;
}

int MPI_Remove_error_code(int errorcode) {
    using namespace ftmpi::mpi;
    auto it = g_user_codes.find(errorcode);
    if (it == g_user_codes.end() || it->second.cls == errorcode)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Remove_error_code",
                     "%d is not an error code added by MPI_Add_error_code (argument errorcode)", errorcode);
    if (it->second.has_text)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Remove_error_code",
                     "error code %d still has a string (MPI_Remove_error_string first)", errorcode);
    g_user_codes.erase(it);
    return MPI_SUCCESS;
}

int MPI_Remove_error_string(int errorcode) {
    using namespace ftmpi::mpi;
    auto it = g_user_codes.find(errorcode);
    if (it == g_user_codes.end() || !it->second.has_text)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Remove_error_string",
                     "%d has no string added by MPI_Add_error_string (argument errorcode)", errorcode);
    it->second.text.clear();
    it->second.has_text = false;
    return MPI_SUCCESS;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler) {
    using namespace ftmpi::mpi;
    if (fn == nullptr)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_create_errhandler", "argument comm_errhandler_fn is NULL");
    if (errhandler == nullptr)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_create_errhandler", "argument errhandler is NULL");
    *errhandler = new ftmpi_errhandler_s{Magic::errhandler, ftmpi_errhandler_s::Kind::user, fn, false};
    return MPI_SUCCESS;
}

// Invokes comm's handler; returns MPI_SUCCESS once a handler returned.
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    using namespace ftmpi::mpi;
    if (comm == MPI_COMM_NULL || comm->magic != Magic::comm)
        return raise(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_call_errhandler", "invalid communicator (argument comm)");
    raise(comm, errorcode, "MPI_Comm_call_errhandler", "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}

}  // extern "C"
