// The tools interface's performance variables (MPI_T_pvar_*), their sessions
// and handles.
//
// Performance variables ("ftmpi_<layer>_<what>"): the point-to-point counters
// (mpi/state.hpp P2pCounts), the buffered sends in flight, the failures this
// process knows (ft/failures.hpp), and the MPI state. Every value is per
// process.
#include <cstdint>
#include <cstring>
#include <vector>

#include "ft/failures.hpp"
#include "mpi/p2p/bsend.hpp"
#include "mpi/state.hpp"
#include "mpi/tools/mpit_internal.hpp"
#include "transport/refused.hpp"

char ftmpi_pvar_all_handles_marker;

namespace ftmpi::mpi::mpit {

// The values of the ftmpi_mpi_state performance variable.
enum MpiState : int { state_not_initialized = 0, state_initialized = 1, state_finalized = 2 };
ftmpi_t_enum_s g_mpi_states{
    "ftmpi_mpi_state",
    {{state_not_initialized, "not_initialized"}, {state_initialized, "initialized"}, {state_finalized, "finalized"}}};

namespace {

std::vector<Pvar> make_pvars() {
    // Counters a session can start, stop, reset and write: each handle counts
    // from its own start (a read and a reset are one call, so they are atomic).
    auto counter = [](const char *name, const char *desc, std::uint64_t (*value)()) {
        return Pvar{
            name, desc, MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, MPI_T_ENUM_NULL, cat_p2p, false, false,
            true, value};
    };
    return {
        counter("ftmpi_p2p_messages_sent",
                "point-to-point messages this process handed to the transport (standard, synchronous, ready and "
                "buffered sends; not those to MPI_PROC_NULL or to a process known failed)",
                [] { return g.p2p.messages_sent; }),
        counter("ftmpi_p2p_bytes_sent", "bytes of the messages counted by ftmpi_p2p_messages_sent",
                [] { return g.p2p.bytes_sent; }),
        counter("ftmpi_p2p_messages_received",
                "point-to-point receives this process completed with a message (truncated ones included; cancelled "
                "ones and receives from MPI_PROC_NULL not)",
                [] { return g.p2p.messages_received; }),
        counter("ftmpi_p2p_bytes_received", "bytes delivered by the receives counted by ftmpi_p2p_messages_received",
                [] { return g.p2p.bytes_received; }),
        Pvar{"ftmpi_p2p_bsend_pending", "buffered sends (MPI_Bsend, MPI_Ibsend) started and not yet complete",
             MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED_LONG_LONG, MPI_T_ENUM_NULL, cat_p2p, true, true, false,
             [] { return static_cast<std::uint64_t>(bsend_pending()); }},
        Pvar{"ftmpi_ft_failures_seen",
             "processes this process knows to have failed since MPI_Init (its failure record: launcher events, "
             "the failure detector, transport errors); what MPIX_Comm_get_failed on MPI_COMM_WORLD reports",
             MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, MPI_T_ENUM_NULL, cat_ft, true, true, false,
             [] { return static_cast<std::uint64_t>(ft::failures().in_order().size()); }},
        Pvar{"ftmpi_ft_heartbeat_gap_max_ms",
             "the longest silence, in ms, between two heartbeats of the process this one's failure detector "
             "watches (its predecessor in the ring), as this detector saw it: how close a live process came to "
             "being suspected (FTMPI_FT_TIMEOUT_MS)",
             MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_UNSIGNED_LONG_LONG, MPI_T_ENUM_NULL, cat_ft, true, true, false,
             [] { return static_cast<std::uint64_t>(ft::failures().heartbeat_gap_max_ms()); }},
        Pvar{"ftmpi_refused_messages",
             "input that this process refused and never acted on: datagrams to the failure detector's socket "
             "from a process that is not one of the job's (or runs as another user), malformed agreement messages",
             MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, MPI_T_ENUM_NULL, cat_ft, true, true, false,
             [] { return transport::refused_count(); }},
        Pvar{"ftmpi_mpi_state", "where this process is in MPI's life: not_initialized, initialized, finalized",
             MPI_T_PVAR_CLASS_STATE, MPI_INT, &g_mpi_states, cat_mpi, true, true, false,
             [] {
                 return static_cast<std::uint64_t>(g.finalized     ? state_finalized
                                                   : g.initialized ? state_initialized
                                                                   : state_not_initialized);
             }},
    };
}

}  // namespace

const std::vector<Pvar> &pvars() {
    static const std::vector<Pvar> table = make_pvars();
    return table;
}

namespace {

// ---- performance variable handles ------------------------------------------

const Pvar &pvar_of(const ftmpi_t_pvar_handle_s *h) { return pvars()[static_cast<std::size_t>(h->index)]; }

// Counters, aggregates and timers gain while started; the other classes show
// the current state.
bool accumulates(const Pvar &p) {
    return p.var_class == MPI_T_PVAR_CLASS_COUNTER || p.var_class == MPI_T_PVAR_CLASS_AGGREGATE ||
           p.var_class == MPI_T_PVAR_CLASS_TIMER;
}

std::uint64_t value_of(const ftmpi_t_pvar_handle_s *h) {
    const Pvar &p = pvar_of(h);
    if (!h->running) return h->base;
    const std::uint64_t raw = p.value();
    return accumulates(p) ? h->base + (raw - h->mark) : raw;
}

// Sets the handle's value to v from now on.
void set_value(ftmpi_t_pvar_handle_s *h, std::uint64_t v) {
    h->base = v;
    h->mark = pvar_of(h).value();
}

void start_handle(ftmpi_t_pvar_handle_s *h) {
    if (h->running) return;
    h->mark = pvar_of(h).value();
    h->running = true;
}

void stop_handle(ftmpi_t_pvar_handle_s *h) {
    if (!h->running) return;
    h->base = value_of(h);
    h->running = false;
}

void store_value(const Pvar &p, std::uint64_t v, void *buf) {
    if (p.datatype == MPI_INT) {
        const int i = static_cast<int>(v);
        std::memcpy(buf, &i, sizeof i);
    } else {
        const unsigned long long u = v;
        std::memcpy(buf, &u, sizeof u);
    }
}

std::uint64_t load_value(const Pvar &p, const void *buf) {
    if (p.datatype == MPI_INT) {
        int i;
        std::memcpy(&i, buf, sizeof i);
        return static_cast<std::uint64_t>(i);
    }
    unsigned long long u;
    std::memcpy(&u, buf, sizeof u);
    return u;
}

// MPI_T_ERR_INVALID_SESSION unless `s` is a live session.
int check_session(MPI_T_pvar_session s) { return owns(g_tools.sessions, s) ? MPI_SUCCESS : MPI_T_ERR_INVALID_SESSION; }

// MPI_T_ERR_INVALID_HANDLE unless `h` is a handle of session `s` (MPI_T_PVAR_ALL_HANDLES only if `all_ok`).
int check_handle(MPI_T_pvar_session s, MPI_T_pvar_handle h, bool all_ok) {
    FTMPI_T_CHECK_INIT();
    if (int rc = check_session(s); rc != MPI_SUCCESS) return rc;
    if (h == MPI_T_PVAR_ALL_HANDLES) return all_ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
    return owns(s->handles, h) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

// MPI_T_pvar_start and _stop: `op` on one handle, or on every handle of the
// session that can be started and stopped (continuous ones are skipped).
int start_stop(MPI_T_pvar_session s, MPI_T_pvar_handle h, void (*op)(ftmpi_t_pvar_handle_s *)) {
    if (int rc = check_handle(s, h, true); rc != MPI_SUCCESS) return rc;
    if (h == MPI_T_PVAR_ALL_HANDLES) {
        for (auto &each : s->handles)
            if (!pvar_of(each.get()).continuous) op(each.get());
        return MPI_SUCCESS;
    }
    FTMPI_T_CHECK(!pvar_of(h).continuous, MPI_T_ERR_PVAR_NO_STARTSTOP);
    op(h);
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi::mpit

using namespace ftmpi::mpi::mpit;

extern "C" {

int MPI_T_pvar_get_num(int *num_pvar) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(num_pvar != nullptr, MPI_T_ERR_INVALID);
    *num_pvar = static_cast<int>(pvars().size());
    return MPI_SUCCESS;
}

int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                        int *readonly, int *continuous, int *atomic) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(in_range(pvar_index, pvars()), MPI_T_ERR_INVALID_INDEX);
    const Pvar &p = pvars()[static_cast<std::size_t>(pvar_index)];
    copy_out(p.name, name, name_len);
    put(verbosity, static_cast<int>(MPI_T_VERBOSITY_USER_BASIC));
    put(var_class, p.var_class);
    put(datatype, p.datatype);
    put(enumtype, p.enumtype);
    copy_out(p.desc, desc, desc_len);
    put(bind, static_cast<int>(MPI_T_BIND_NO_OBJECT));
    put(readonly, p.readonly ? 1 : 0);
    put(continuous, p.continuous ? 1 : 0);
    put(atomic, p.atomic ? 1 : 0);
    return MPI_SUCCESS;
}

int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(name != nullptr && pvar_index != nullptr, MPI_T_ERR_INVALID);
    FTMPI_T_CHECK(var_class >= MPI_T_PVAR_CLASS_STATE && var_class <= MPI_T_PVAR_CLASS_GENERIC, MPI_T_ERR_INVALID);
    const int i = index_of(pvars(), name, [var_class](const Pvar &p) { return p.var_class == var_class; });
    FTMPI_T_CHECK(i >= 0, MPI_T_ERR_INVALID_NAME);
    *pvar_index = i;
    return MPI_SUCCESS;
}

int MPI_T_pvar_session_create(MPI_T_pvar_session *session) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(session != nullptr, MPI_T_ERR_INVALID);
    return add_owned(g_tools.sessions, session);
}

// Frees the session's handles too.
int MPI_T_pvar_session_free(MPI_T_pvar_session *session) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(session != nullptr, MPI_T_ERR_INVALID);
    return remove_owned(g_tools.sessions, session, MPI_T_ERR_INVALID_SESSION);
}

// A continuous variable's handle runs from now on; any other's is stopped and
// reads 0 until started. Every variable is bound to no object.
int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
                            int *count) {
    (void)obj_handle;
    FTMPI_T_CHECK_INIT();
    if (int rc = check_session(session); rc != MPI_SUCCESS) return rc;
    FTMPI_T_CHECK(in_range(pvar_index, pvars()), MPI_T_ERR_INVALID_INDEX);
    FTMPI_T_CHECK(handle != nullptr && count != nullptr, MPI_T_ERR_INVALID);
    const bool continuous = pvars()[static_cast<std::size_t>(pvar_index)].continuous;
    // A continuous counter counts from MPI_Init (base and mark 0).
    const std::uint64_t zero = 0;
    if (int rc = add_owned(session->handles, handle, pvar_index, continuous, zero, zero); rc != MPI_SUCCESS) return rc;
    *count = 1;
    return MPI_SUCCESS;
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(handle != nullptr, MPI_T_ERR_INVALID);
    if (int rc = check_handle(session, *handle, false); rc != MPI_SUCCESS) return rc;
    return remove_owned(session->handles, handle, MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    return start_stop(session, handle, &start_handle);
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    return start_stop(session, handle, &stop_handle);
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
    if (int rc = check_handle(session, handle, false); rc != MPI_SUCCESS) return rc;
    FTMPI_T_CHECK(buf != nullptr, MPI_T_ERR_INVALID);
    store_value(pvar_of(handle), value_of(handle), buf);
    return MPI_SUCCESS;
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf) {
    if (int rc = check_handle(session, handle, false); rc != MPI_SUCCESS) return rc;
    FTMPI_T_CHECK(!pvar_of(handle).readonly, MPI_T_ERR_PVAR_NO_WRITE);
    FTMPI_T_CHECK(buf != nullptr, MPI_T_ERR_INVALID);
    set_value(handle, load_value(pvar_of(handle), buf));
    return MPI_SUCCESS;
}

// With MPI_T_PVAR_ALL_HANDLES: every handle of the session that can be reset
// (read-only ones are skipped).
int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    if (int rc = check_handle(session, handle, true); rc != MPI_SUCCESS) return rc;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (auto &each : session->handles)
            if (!pvar_of(each.get()).readonly) set_value(each.get(), 0);
        return MPI_SUCCESS;
    }
    FTMPI_T_CHECK(!pvar_of(handle).readonly, MPI_T_ERR_PVAR_NO_WRITE);
    set_value(handle, 0);
    return MPI_SUCCESS;
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
    if (int rc = check_handle(session, handle, false); rc != MPI_SUCCESS) return rc;
    const Pvar &p = pvar_of(handle);
    FTMPI_T_CHECK(!p.readonly, MPI_T_ERR_PVAR_NO_WRITE);
    FTMPI_T_CHECK(p.atomic, MPI_T_ERR_PVAR_NO_ATOMIC);
    FTMPI_T_CHECK(buf != nullptr, MPI_T_ERR_INVALID);
    store_value(p, value_of(handle), buf);
    set_value(handle, 0);
    return MPI_SUCCESS;
}

}  // extern "C"
