// The objects behind the MPI handles. Internal to libftmpi.
//
// Every object starts with a magic number so an argument check can tell a
// handle of the right kind from a handle of another kind or a stale one.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "transport/transport.hpp"

namespace ftmpi::mpi {
enum class Magic : std::uint32_t {
    comm = 0x434f4d4d,
    datatype = 0x44545950,
    request = 0x52455155,
    op = 0x4f505f5f,
    group = 0x47525550,
    errhandler = 0x45525248,
    message = 0x4d534731,
    info = 0x494e464f,
    win = 0x57494e44,
    file = 0x46494c45,
    session = 0x53455353,
    dead = 0xdeadbeef,
};
class MatchQueue;
struct Unexpected;
struct Topology;
// The attributes of a communicator, datatype or window: (keyval, value) in
// the order each keyval was first set on the object.
using AttrList = std::vector<std::pair<int, void *>>;
}  // namespace ftmpi::mpi

struct ftmpi_datatype_s {
    ftmpi::mpi::Magic magic;
    std::size_t size;  // bytes of data in one element
    MPI_Aint lb;
    MPI_Aint extent;
    const char *name;
    bool predefined;
    // mpi/dt: the fields below have the values of a predefined type by default.
    // contiguous: `count` elements are exactly count*size bytes at buf (the
    // zero-copy path); otherwise p2p packs/unpacks through request->pack_buf.
    bool contiguous = true;
    bool committed = true;
    std::size_t align = 1;  // alignment of the strictest basic type in it
    // Derived types only (null for predefined): layout, reference count, name.
    struct ftmpi_dt_derived_s *derived = nullptr;
};

struct ftmpi_op_s {
    ftmpi::mpi::Magic magic;
    int id;
    MPI_User_function *fn;
    bool commute;
    bool predefined;
    MPI_User_function_c *fn_c = nullptr;  // MPI_Op_create_c's (fn is null then)
    bool fortran = false;                 // fn is Fortran's (mpi/fortran_hooks.hpp)
};

struct ftmpi_errhandler_s {
    ftmpi::mpi::Magic magic;
    enum class Kind { fatal, ret, abort, user } kind;
    MPI_Comm_errhandler_function *fn;
    bool predefined;
    int refs = 1;  // the user's handle plus every communicator using it
    // fn is Fortran's: it gets the handle as to_fortran makes it (mpi/fortran_hooks.hpp)
    MPI_Fint (*to_fortran)(const void *handle) = nullptr;
};

struct ftmpi_group_s {
    ftmpi::mpi::Magic magic = ftmpi::mpi::Magic::group;
    std::vector<int> procs;  // group rank -> job rank
    bool predefined = false;
    struct ftmpi_session_s *session = nullptr;  // MPI_Group_from_session_pset's
};

struct ftmpi_comm_s {
    ftmpi::mpi::Magic magic = ftmpi::mpi::Magic::comm;
    std::uint32_t context = 0;  // point-to-point context; context + 1 carries collectives
    int rank = 0;
    int size = 0;
    std::vector<int> procs;                        // comm rank -> job rank
    ftmpi::mpi::MatchQueue *queue = nullptr;       // user traffic
    ftmpi::mpi::MatchQueue *coll_queue = nullptr;  // internal collective traffic
    MPI_Errhandler errhandler = nullptr;
    char name[MPI_MAX_OBJECT_NAME] = {};
    bool predefined = false;
    std::uint32_t coll_seq = 0;  // sequence number of internal collectives (tags)
    ftmpi::mpi::AttrList attrs;  // (keyval, value) in the order first set (mpi/comm/attributes.cpp)
    // Inter-communicators: procs/size above are the REMOTE group (the group
    // point-to-point addresses); rank is this process's rank in its own group,
    // local_procs. `local` is a hidden intra-communicator over local_procs for
    // the local half of the inter-communicator's collectives.
    bool inter = false;
    std::vector<int> local_procs;
    ftmpi_comm_s *local = nullptr;
    // Inter-communicators: `ft` is a hidden view over both groups (the group
    // whose first process has the lower job rank first) on the same context
    // slot; revoke, agree and shrink run on it (mpi/ulfm/revoke.cpp, agree.cpp, shrink.cpp), and it
    // points back at its inter-communicator through `ft_owner`.
    ftmpi_comm_s *ft = nullptr;
    ftmpi_comm_s *ft_owner = nullptr;
    // Failures among procs (the group point-to-point addresses), as comm ranks
    // in the order they became known here; mpi/ulfm/ulfm.cpp keeps it up to date.
    struct Failed {
        std::size_t scanned = 0;  // entries of the process's failure record looked at
        std::vector<int> ranks;
        std::size_t acked = 0;  // the first `acked` ranks are acknowledged
        // 2011 API (spec 004): L as of the last validate (local or global) and
        // what that validate added to it (MPI_FAILED_ALL / MPI_FAILED_NEW).
        std::vector<int> local, local_new;
        // G: the failures every member recognized at the last MPI_Comm_validate
        // (comm ranks, ascending), and what that validate added to it.
        std::vector<int> global, global_new;
        // A validate ran on this communicator (or the one it was made from):
        // the 2011 API is in use, and with it collective (in)activity.
        bool validated = false;
    } failed;
    // Collectives skip the recognized failures (spec 000 §17.7): with `global`
    // not empty they run over these comm ranks (virtual rank -> comm rank).
    std::vector<int> coll_ranks;
    bool revoked = false;  // MPIX_Comm_revoke (mpi/ulfm/revoke.cpp)
    // The session it derives from (MPI_Comm_create_from_group over a process
    // set's group, and what is made from that): its buffered sends may use
    // the session's buffer (mpi/p2p/bsend.cpp).
    struct ftmpi_session_s *session = nullptr;
    // References to this communicator: its requests, and whatever else holds
    // it (comm_retain / CommRef in mpi/comm/comm_internal.hpp). MPI_Comm_free lets
    // pending operations complete normally: `freed` is set (and magic is dead
    // for the user) at once, the communicator is retired (context released,
    // queues closed, mpi/comm/comm_create.cpp) when the last reference is
    // released, and the object, with its error handler and name, goes when
    // nothing refers to it any more.
    int refs = 0;
    bool freed = false;
    bool retired = false;
    // An inter-communicator's view that outlived its owner (operations on it
    // pending when the owner retired): it releases their shared context slot
    // when it retires, so that no new communicator takes the slot (and the
    // view's fault-tolerance messages) while the view still answers there.
    bool releases_slot = false;
    // Transfers on it started and not yet complete (ftmpi_request_s::counted):
    // what MPI_Comm_disconnect waits for. A request that completed, or a
    // persistent one not started, holds a reference but is not pending.
    int pending = 0;
    // What `errhandler` handles: this communicator's errors, or those of the
    // window or file whose hidden communicator this is. Kept after the window
    // or file is freed (win / file are then null), so that an error of a
    // request still pending then reaches a handler of the right kind.
    enum class HandlerOf : std::uint8_t { comm, win, file } handler_of = HandlerOf::comm;
    // The same at every member and (with high probability) different from any
    // earlier communicator on this context slot: fault-tolerance messages
    // carry it, so a late revoke of a freed communicator never hits the next.
    std::uint64_t uid = 0;
    std::uint64_t agree_seq = 0;     // agreements (agree, shrink, validate) started on this communicator
    std::uint64_t internal_seq = 0;  // internal agreements (creations, file sync): a sequence of their own
    // The hidden communicator of a window (mpi/rma): errors raised on it go to
    // the window's handler, which gets the window.
    struct ftmpi_win_s *win = nullptr;
    // The hidden communicator of a file (mpi/io): errors raised on it go to
    // the file's handler, which gets the file; `name` is the file's name.
    struct ftmpi_file_s *file = nullptr;
    // The process topology (mpi/topo), owned; null when the communicator has none.
    ftmpi::mpi::Topology *topo = nullptr;
    // Hints set by MPI_Comm_set_info / MPI_Comm_dup_with_info (MPI_Comm_get_info).
    std::vector<std::pair<std::string, std::string>> info;
};

struct ftmpi_info_s {
    ftmpi::mpi::Magic magic = ftmpi::mpi::Magic::info;
    std::vector<std::pair<std::string, std::string>> entries;  // in the order keys were first set
};

struct ftmpi_message_s {
    ftmpi::mpi::Magic magic = ftmpi::mpi::Magic::message;
    MPI_Comm comm = nullptr;
    ftmpi::mpi::Unexpected *msg = nullptr;  // null for MPI_MESSAGE_NO_PROC
};

// Fixed-size storage of the predefined objects (see mpi.h): the exported
// symbol's size never changes when the object behind it grows.
template <typename T, std::size_t Size>
struct ftmpi_predefined {
    static_assert(sizeof(T) <= Size, "grow the predefined object's storage (an ABI change)");
    T obj;
    unsigned char pad[Size - sizeof(T)] = {};
};
struct ftmpi_predefined_comm_s : ftmpi_predefined<ftmpi_comm_s, 1024> {};
struct ftmpi_predefined_group_s : ftmpi_predefined<ftmpi_group_s, 128> {};
struct ftmpi_predefined_message_s : ftmpi_predefined<ftmpi_message_s, 64> {};
struct ftmpi_predefined_errhandler_s : ftmpi_predefined<ftmpi_errhandler_s, 64> {};
struct ftmpi_predefined_datatype_s : ftmpi_predefined<ftmpi_datatype_s, 256> {};
struct ftmpi_predefined_op_s : ftmpi_predefined<ftmpi_op_s, 64> {};
struct ftmpi_predefined_info_s : ftmpi_predefined<ftmpi_info_s, 64> {};

// The persistent requests that are neither a send nor a receive: start
// runs the operation again (MPI_Start); release frees what the request owns.
struct ftmpi_persist_ops {
    void (*start)(MPI_Request r);
    void (*release)(MPI_Request r);
};

struct ftmpi_request_s {
    ftmpi::transport::Op op;  // first member: a transport completion names the request
    ftmpi::mpi::Magic magic = ftmpi::mpi::Magic::request;
    // coll: a nonblocking collective (mpi/coll); generalized: MPI_Grequest_start's (mpi/p2p/grequest.cpp)
    enum class Kind : std::uint8_t { send, recv, done, coll, generalized } kind = Kind::send;
    bool complete = false;
    bool persistent = false;
    bool active = false;      // persistent: started and not yet completed by Wait/Test
    bool user_freed = false;  // MPI_Request_free'd while still in progress
    bool buffered = false;    // a Bsend's internal send: owns a chunk of the attached buffer
    bool bsend_init = false;  // MPI_Bsend_init's: each start copies the message into the attached buffer
    bool posted = false;      // a receive sitting in its match queue
    bool blocking = false;    // the receive of a blocking call (MPI_Recv, MPI_Sendrecv)
    bool counted = false;     // started (start_send / start_recv), not complete: in comm->pending
    // A nonblocking MPI_ANY_SOURCE receive, not matched, on a communicator with
    // unacknowledged failures: Wait/Test report MPI_ERR_PROC_FAILED_PENDING and
    // leave it pending (cleared when the failures are acknowledged).
    bool failure_pending = false;
    ftmpi::transport::SendMode mode = ftmpi::transport::SendMode::standard;
    MPI_Status status{};
    MPI_Comm comm = nullptr;
    void *buf = nullptr;
    int count = 0;
    MPI_Datatype datatype = nullptr;
    int peer = 0;  // destination or source rank in comm (or MPI_ANY_SOURCE)
    int tag = 0;
    std::uint32_t context = 0;
    std::size_t capacity = 0;      // bytes: send length, or receive buffer size
    std::size_t msg_length = 0;    // receive: length of the matched message
    std::size_t bsend_offset = 0;  // buffered send: its chunk of the attached buffer
    // Non-contiguous datatypes (mpi/dt): the packed staging buffer the transport
    // sees instead of `buf`; owned by the request.
    void *pack_buf = nullptr;
    // Called by complete_request after the status is set (nonblocking
    // collectives in mpi/coll chain their steps with it). May be null.
    void (*on_complete)(MPI_Request r) = nullptr;
    void *owner = nullptr;  // whatever on_complete needs
    // A receive that consumes eager data itself (a collective's combining
    // receive, mpi/coll/sched.cpp): called by deliver with the data (the
    // matched message's length is r->msg_length) in place of the copy into
    // buf; true when it took it. May be null.
    bool (*take_eager)(MPI_Request r, const void *data) = nullptr;
    const void *operand = nullptr;  // take_eager's: what the data combines with
    // A persistent collective's or partitioned request's (mpi/coll/sched.cpp,
    // mpi/p2p/partitioned.cpp): what MPI_Start and release_request do with it.
    const struct ftmpi_persist_ops *persist = nullptr;
    // Run once with the request's error when it is released: its operation
    // done and the user done with it (mpi/fortran_hooks.hpp). A list on the
    // heap, so that the request stays trivially copyable (its pool resets it
    // by a copy).
    struct ftmpi_release_hook *release_hooks = nullptr;
};

struct ftmpi_release_hook {
    void (*fn)(void *ctx, int error);
    void *ctx;
    ftmpi_release_hook *next;
};
