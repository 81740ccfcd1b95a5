// The tools information interface (MPI_T, MPI 3.1 chapter 14).
//
// Control variables: one per FTMPI_* knob (runtime/config.hpp's table), named
// as the environment variable ("FTMPI_EAGER_LIMIT"), described by the knob's
// help text. A read returns the value in force: the one MPI_Init parsed, or,
// before MPI_Init, the one it will parse (MPI_T_init_thread loads the
// configuration the same way). Knobs are read at MPI_Init, so their variables
// are MPI_T_SCOPE_READONLY and a write returns MPI_T_ERR_CVAR_SET_NEVER; the
// exception is FTMPI_LOG, which the logger reads at every message: it is
// writable (MPI_T_SCOPE_LOCAL) and takes effect at once.
//
// Performance variables ("ftmpi_<layer>_<what>"): the point-to-point counters
// (mpi/state.hpp P2pCounts), the buffered sends in flight, the failures this
// process knows (ft/failures.hpp), and the MPI state. Every value is per
// process.
//
// Categories: "ftmpi" holds one category per layer (runtime, transport, ft,
// mpi with mpi_p2p inside it, testing); every variable is in exactly one
// layer's category.
//
// Thread level: MPI_T_init_thread grants MPI_THREAD_SERIALIZED at most, and
// once MPI_Init_thread granted MPI_THREAD_MULTIPLE every MPI_T call holds the
// library lock (mpi/api/api_lock.hpp): MPI_T calls never overlap each other or MPI
// calls, so handles and sessions need no lock of their own.
// Every call works before MPI_Init and after MPI_Finalize, returns MPI_SUCCESS
// or an MPI_T_ERR_ class, and never invokes an error handler.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ft/failures.hpp"
#include "mpi/p2p/bsend.hpp"
#include "mpi/state.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "transport/refused.hpp"

char ftmpi_pvar_all_handles_marker;

struct ftmpi_t_enum_s {
    struct Item {
        int value;
        std::string name;
    };
    std::string name;
    std::vector<Item> items;
};

struct ftmpi_t_cvar_handle_s {
    int index;
    int count;  // elements of the variable's datatype (MPI_T_cvar_handle_alloc's count)
};

// A performance variable as one session sees it (the session owns it). For a
// variable that accumulates (a counter), `base` is what it gained up to
// `mark`, the raw value when it last started or was reset or written; for one
// that shows the current state (level, state), `base` is the value when it
// was stopped.
struct ftmpi_t_pvar_handle_s {
    int index;
    bool running;
    std::uint64_t base;
    std::uint64_t mark;
};

struct ftmpi_t_pvar_session_s {
    std::vector<std::unique_ptr<ftmpi_t_pvar_handle_s>> handles;
};

namespace ftmpi::mpi {
namespace {

using runtime::KnobLayer;

// ---- enumerations ----------------------------------------------------------

ftmpi_t_enum_s make_log_levels() {
    ftmpi_t_enum_s e{"ftmpi_log_level", {}};
    for (int v = 0; runtime::level_name(v) != nullptr; ++v) e.items.push_back({v, runtime::level_name(v)});
    return e;
}

ftmpi_t_enum_s g_log_levels = make_log_levels();

// The values of the ftmpi_mpi_state performance variable.
enum MpiState : int { state_not_initialized = 0, state_initialized = 1, state_finalized = 2 };
ftmpi_t_enum_s g_mpi_states{"ftmpi_mpi_state",
                            {{state_not_initialized, "not_initialized"},
                             {state_initialized, "initialized"},
                             {state_finalized, "finalized"}}};

bool valid_enum(MPI_T_enum e) { return e == &g_log_levels || e == &g_mpi_states; }

// ---- categories ------------------------------------------------------------

enum Cat : int { cat_root, cat_runtime, cat_transport, cat_ft, cat_mpi, cat_p2p, cat_testing, cat_count };

struct Category {
    const char *name;
    const char *desc;
    std::vector<int> cvars, pvars, subcats;
};

Cat category_of(KnobLayer layer) {
    switch (layer) {
    case KnobLayer::runtime: return cat_runtime;
    case KnobLayer::transport: return cat_transport;
    case KnobLayer::ft: return cat_ft;
    case KnobLayer::mpi: return cat_mpi;
    case KnobLayer::testing: return cat_testing;
    }
    return cat_root;
}

// The categories never change after the first MPI_T call: one stamp forever.
constexpr int k_categories_stamp = 1;

// ---- control variables -----------------------------------------------------

// A string knob's variable holds at least this many characters (with the
// terminating null), more when its value is longer.
constexpr int k_string_capacity = 256;

// How a knob of C++ type T reads as an MPI_T value.
template <typename T>
struct KnobValue;

template <>
struct KnobValue<int> {
    static MPI_Datatype datatype() { return MPI_INT; }
    static int count(const int &) { return 1; }
    static void store(const int &v, void *buf, int) { std::memcpy(buf, &v, sizeof v); }
};

static_assert(sizeof(std::size_t) == sizeof(unsigned long), "size_t knobs are read as MPI_UNSIGNED_LONG");
template <>
struct KnobValue<std::size_t> {
    static MPI_Datatype datatype() { return MPI_UNSIGNED_LONG; }
    static int count(const std::size_t &) { return 1; }
    static void store(const std::size_t &v, void *buf, int) {
        const unsigned long u = v;
        std::memcpy(buf, &u, sizeof u);
    }
};

template <>
struct KnobValue<std::string> {
    static MPI_Datatype datatype() { return MPI_CHAR; }
    static int count(const std::string &v) { return std::max(k_string_capacity, static_cast<int>(v.size()) + 1); }
    // Writes at most count - 1 characters and a null (the value may have grown
    // since the handle was allocated: the environment, before MPI_Init).
    static void store(const std::string &v, void *buf, int count) {
        const std::size_t n = std::min(v.size(), static_cast<std::size_t>(count - 1));
        std::memcpy(buf, v.data(), n);
        static_cast<char *>(buf)[n] = '\0';
    }
};

struct Cvar {
    const char *name;
    const char *desc;
    MPI_Datatype datatype;
    KnobLayer layer;
    int verbosity;
    int scope;
    MPI_T_enum enumtype;
    int (*count)();
    void (*read)(void *buf, int count);
    void (*write)(const void *buf);  // null: read-only
};

int log_level_count() { return 1; }
void read_log_level(void *buf, int) {
    const int v = runtime::log_level();
    std::memcpy(buf, &v, sizeof v);
}
void write_log_level(const void *buf) {
    int v;
    std::memcpy(&v, buf, sizeof v);
    runtime::set_log_level(v);
}

std::vector<Cvar> make_cvars() {
    std::vector<Cvar> v;
#define FTMPI_KNOB_CVAR(NAME, T, DEF, LAYER, HELP)                                                             \
    v.push_back({"FTMPI_" #NAME, HELP, KnobValue<T>::datatype(), KnobLayer::LAYER,                            \
                 KnobLayer::LAYER == KnobLayer::testing ? MPI_T_VERBOSITY_MPIDEV_ALL : MPI_T_VERBOSITY_USER_BASIC, \
                 MPI_T_SCOPE_READONLY, MPI_T_ENUM_NULL,                                                       \
                 [] { return KnobValue<T>::count(runtime::config().NAME); },                                  \
                 [](void *buf, int count) { KnobValue<T>::store(runtime::config().NAME, buf, count); }, nullptr});
    FTMPI_KNOBS(FTMPI_KNOB_CVAR)
#undef FTMPI_KNOB_CVAR
    // The logger reads its level at every message (runtime/log.hpp), so
    // FTMPI_LOG can change at any time.
    for (Cvar &c : v)
        if (std::strcmp(c.name, "FTMPI_LOG") == 0) {
            c.scope = MPI_T_SCOPE_LOCAL;
            c.enumtype = &g_log_levels;
            c.count = &log_level_count;
            c.read = &read_log_level;
            c.write = &write_log_level;
        }
    return v;
}

const std::vector<Cvar> &cvars() {
    static const std::vector<Cvar> table = make_cvars();
    return table;
}

// ---- performance variables -------------------------------------------------

struct Pvar {
    const char *name;
    const char *desc;
    int var_class;
    MPI_Datatype datatype;  // MPI_UNSIGNED_LONG_LONG, or MPI_INT with an enumeration
    MPI_T_enum enumtype;
    Cat category;
    bool readonly, continuous, atomic;
    std::uint64_t (*value)();  // the process-wide raw value
};

std::vector<Pvar> make_pvars() {
    // Counters a session can start, stop, reset and write: each handle counts
    // from its own start (a read and a reset are one call, so they are atomic).
    auto counter = [](const char *name, const char *desc, std::uint64_t (*value)()) {
        return Pvar{name, desc, MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, MPI_T_ENUM_NULL, cat_p2p,
                    false, false, true, value};
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

const std::vector<Pvar> &pvars() {
    static const std::vector<Pvar> table = make_pvars();
    return table;
}

std::vector<Category> make_categories() {
    std::vector<Category> c(cat_count);
    c[cat_root] = {"ftmpi", "every ftmpi variable, by layer", {}, {}, {cat_runtime, cat_transport, cat_ft, cat_mpi, cat_testing}};
    c[cat_runtime] = {"ftmpi_runtime", "the runtime: process manager (PMIx, Slurm) and logging", {}, {}, {}};
    c[cat_transport] = {"ftmpi_transport", "the libfabric transport: providers, interfaces, eager and rendezvous",
                        {}, {}, {}};
    c[cat_ft] = {"ftmpi_ft", "fault tolerance: the failure detector and the failure record", {}, {}, {}};
    c[cat_mpi] = {"ftmpi_mpi", "the MPI layer: progress, error handlers, one-sided communication", {}, {}, {cat_p2p}};
    c[cat_p2p] = {"ftmpi_mpi_p2p", "point-to-point communication", {}, {}, {}};
    c[cat_testing] = {"ftmpi_testing", "knobs for ftmpi's own tests", {}, {}, {}};
    for (int i = 0; i < static_cast<int>(cvars().size()); ++i)
        c[category_of(cvars()[static_cast<std::size_t>(i)].layer)].cvars.push_back(i);
    for (int i = 0; i < static_cast<int>(pvars().size()); ++i)
        c[pvars()[static_cast<std::size_t>(i)].category].pvars.push_back(i);
    return c;
}

const std::vector<Category> &categories() {
    static const std::vector<Category> table = make_categories();
    return table;
}

// ---- interface state -------------------------------------------------------

struct Tools {
    int refs = 0;  // MPI_T_init_thread calls not yet matched by MPI_T_finalize
    std::vector<std::unique_ptr<ftmpi_t_cvar_handle_s>> cvar_handles;
    std::vector<std::unique_ptr<ftmpi_t_pvar_session_s>> sessions;
} g_tools;

#define FTMPI_T_CHECK(cond, err) \
    do {                         \
        if (!(cond)) return err; \
    } while (0)
#define FTMPI_T_CHECK_INIT() FTMPI_T_CHECK(g_tools.refs > 0, MPI_T_ERR_NOT_INITIALIZED)

template <typename T>
bool in_range(int index, const std::vector<T> &table) {
    return index >= 0 && static_cast<std::size_t>(index) < table.size();
}

// Owned pointer p among `list`, or list.end().
template <typename T>
auto find_owned(std::vector<std::unique_ptr<T>> &list, const T *p) {
    return std::find_if(list.begin(), list.end(), [p](const auto &u) { return u.get() == p; });
}

// Whether `list` owns p (p is never dereferenced: it may be stale or garbage).
template <typename T>
bool owns(std::vector<std::unique_ptr<T>> &list, const T *p) {
    return find_owned(list, p) != list.end();
}

// Appends a new T{args...} to `list` and returns it in *out; MPI_T_ERR_MEMORY
// when memory runs out.
template <typename T, typename... Args>
int add_owned(std::vector<std::unique_ptr<T>> &list, T **out, Args &&...args) {
    try {
        list.push_back(std::make_unique<T>(T{std::forward<Args>(args)...}));
    } catch (const std::bad_alloc &) {
        return MPI_T_ERR_MEMORY;
    }
    *out = list.back().get();
    return MPI_SUCCESS;
}

// Destroys *slot, which `list` owns, and nulls it; `invalid` when `list` does
// not own it.
template <typename T>
int remove_owned(std::vector<std::unique_ptr<T>> &list, T **slot, int invalid) {
    auto it = find_owned(list, *slot);
    if (it == list.end()) return invalid;
    list.erase(it);
    *slot = nullptr;
    return MPI_SUCCESS;
}

// MPI_T's string convention (MPI 3.1 §14.3.3): at most *len - 1 characters
// and a null into buf; *len becomes the full length plus one. A null buf or a
// zero *len returns the length only; a null len returns nothing.
void copy_out(const char *src, char *buf, int *len) {
    if (len == nullptr) return;
    const int need = static_cast<int>(std::strlen(src)) + 1;
    if (buf != nullptr && *len > 0) {
        const int n = std::min(*len - 1, need - 1);
        std::memcpy(buf, src, static_cast<std::size_t>(n));
        buf[n] = '\0';
    }
    *len = need;
}

template <typename T>
void put(T *out, T value) {
    if (out != nullptr) *out = value;
}

// Index of the row of `table` whose name is `name` (and passes `also`), or -1.
template <typename Row, typename Pred>
int index_of(const std::vector<Row> &table, const char *name, Pred also) {
    for (std::size_t i = 0; i < table.size(); ++i)
        if (std::strcmp(table[i].name, name) == 0 && also(table[i])) return static_cast<int>(i);
    return -1;
}

int category_list(int cat_index, int len, int indices[], std::vector<int> Category::*member) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(in_range(cat_index, categories()), MPI_T_ERR_INVALID_INDEX);
    FTMPI_T_CHECK(len >= 0 && (len == 0 || indices != nullptr), MPI_T_ERR_INVALID);
    const std::vector<int> &list = categories()[static_cast<std::size_t>(cat_index)].*member;
    const std::size_t n = std::min(list.size(), static_cast<std::size_t>(len));
    std::copy_n(list.begin(), n, indices);
    return MPI_SUCCESS;
}

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
int check_session(MPI_T_pvar_session s) {
    return owns(g_tools.sessions, s) ? MPI_SUCCESS : MPI_T_ERR_INVALID_SESSION;
}

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

// Drops every handle and session (the last MPI_T_finalize).
void release_all() {
    g_tools.cvar_handles.clear();
    g_tools.sessions.clear();
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_T_init_thread(int required, int *provided) {
    FTMPI_T_CHECK(provided != nullptr && required >= MPI_THREAD_SINGLE && required <= MPI_THREAD_MULTIPLE,
                  MPI_T_ERR_INVALID);
    // Before MPI_Init, the variables show what MPI_Init will read: the
    // environment, parsed by the same code (no other ftmpi thread runs yet).
    if (g_tools.refs == 0 && !g.initialized && !g.finalized) {
        try {
            ftmpi::runtime::load_config();
        } catch (const std::exception &e) {
            FTMPI_ERROR("MPI_T_init_thread: %s", e.what());
            return MPI_T_ERR_CANNOT_INIT;
        }
    }
    ++g_tools.refs;
    *provided = std::min(required, static_cast<int>(MPI_THREAD_SERIALIZED));
    return MPI_SUCCESS;
}

int MPI_T_finalize(void) {
    FTMPI_T_CHECK_INIT();
    if (--g_tools.refs == 0) release_all();
    return MPI_SUCCESS;
}

int MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(valid_enum(enumtype), MPI_T_ERR_INVALID_HANDLE);
    put(num, static_cast<int>(enumtype->items.size()));
    copy_out(enumtype->name.c_str(), name, name_len);
    return MPI_SUCCESS;
}

int MPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(valid_enum(enumtype), MPI_T_ERR_INVALID_HANDLE);
    FTMPI_T_CHECK(in_range(index, enumtype->items), MPI_T_ERR_INVALID_ITEM);
    const auto &item = enumtype->items[static_cast<std::size_t>(index)];
    put(value, item.value);
    copy_out(item.name.c_str(), name, name_len);
    return MPI_SUCCESS;
}

// ---- control variables ----

int MPI_T_cvar_get_num(int *num_cvar) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(num_cvar != nullptr, MPI_T_ERR_INVALID);
    *num_cvar = static_cast<int>(cvars().size());
    return MPI_SUCCESS;
}

int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                        MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(in_range(cvar_index, cvars()), MPI_T_ERR_INVALID_INDEX);
    const Cvar &c = cvars()[static_cast<std::size_t>(cvar_index)];
    copy_out(c.name, name, name_len);
    put(verbosity, c.verbosity);
    put(datatype, c.datatype);
    put(enumtype, c.enumtype);
    copy_out(c.desc, desc, desc_len);
    put(bind, static_cast<int>(MPI_T_BIND_NO_OBJECT));
    put(scope, c.scope);
    return MPI_SUCCESS;
}

int MPI_T_cvar_get_index(const char *name, int *cvar_index) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(name != nullptr && cvar_index != nullptr, MPI_T_ERR_INVALID);
    const int i = index_of(cvars(), name, [](const Cvar &) { return true; });
    FTMPI_T_CHECK(i >= 0, MPI_T_ERR_INVALID_NAME);
    *cvar_index = i;
    return MPI_SUCCESS;
}

// Every control variable is bound to no object: obj_handle is ignored.
int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count) {
    (void)obj_handle;
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(in_range(cvar_index, cvars()), MPI_T_ERR_INVALID_INDEX);
    FTMPI_T_CHECK(handle != nullptr && count != nullptr, MPI_T_ERR_INVALID);
    const int n = cvars()[static_cast<std::size_t>(cvar_index)].count();
    if (int rc = add_owned(g_tools.cvar_handles, handle, cvar_index, n); rc != MPI_SUCCESS) return rc;
    *count = n;
    return MPI_SUCCESS;
}

int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(handle != nullptr, MPI_T_ERR_INVALID);
    return remove_owned(g_tools.cvar_handles, handle, MPI_T_ERR_INVALID_HANDLE);
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(owns(g_tools.cvar_handles, handle), MPI_T_ERR_INVALID_HANDLE);
    FTMPI_T_CHECK(buf != nullptr, MPI_T_ERR_INVALID);
    cvars()[static_cast<std::size_t>(handle->index)].read(buf, handle->count);
    return MPI_SUCCESS;
}

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(owns(g_tools.cvar_handles, handle), MPI_T_ERR_INVALID_HANDLE);
    const Cvar &c = cvars()[static_cast<std::size_t>(handle->index)];
    FTMPI_T_CHECK(c.write != nullptr, MPI_T_ERR_CVAR_SET_NEVER);
    FTMPI_T_CHECK(buf != nullptr, MPI_T_ERR_INVALID);
    c.write(buf);
    return MPI_SUCCESS;
}

// ---- performance variables ----

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
    if (int rc = add_owned(session->handles, handle, pvar_index, continuous, zero, zero); rc != MPI_SUCCESS)
        return rc;
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

// ---- categories ----

int MPI_T_category_get_num(int *num_cat) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(num_cat != nullptr, MPI_T_ERR_INVALID);
    *num_cat = static_cast<int>(categories().size());
    return MPI_SUCCESS;
}

int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                            int *num_pvars, int *num_categories) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(in_range(cat_index, categories()), MPI_T_ERR_INVALID_INDEX);
    const Category &c = categories()[static_cast<std::size_t>(cat_index)];
    copy_out(c.name, name, name_len);
    copy_out(c.desc, desc, desc_len);
    put(num_cvars, static_cast<int>(c.cvars.size()));
    put(num_pvars, static_cast<int>(c.pvars.size()));
    put(num_categories, static_cast<int>(c.subcats.size()));
    return MPI_SUCCESS;
}

int MPI_T_category_get_index(const char *name, int *cat_index) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(name != nullptr && cat_index != nullptr, MPI_T_ERR_INVALID);
    const int i = index_of(categories(), name, [](const Category &) { return true; });
    FTMPI_T_CHECK(i >= 0, MPI_T_ERR_INVALID_NAME);
    *cat_index = i;
    return MPI_SUCCESS;
}

int MPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
    return category_list(cat_index, len, indices, &Category::cvars);
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
    return category_list(cat_index, len, indices, &Category::pvars);
}

int MPI_T_category_get_categories(int cat_index, int len, int indices[]) {
    return category_list(cat_index, len, indices, &Category::subcats);
}

int MPI_T_category_changed(int *stamp) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(stamp != nullptr, MPI_T_ERR_INVALID);
    *stamp = k_categories_stamp;
    return MPI_SUCCESS;
}

}  // extern "C"
