// MPI_T events (MPI 4.0 section 15.3.8): the event types of
// runtime/tool_events.hpp, one source (the events' clock), registrations
// with a callback per safety level, and the dropped-event handlers.
//
// Where callbacks run: an event raised on an application's thread (inside
// MPI: the progress engine, an agreement, a revoke) is delivered at once to
// the registration's callback of the lowest level that allows an
// MPI-restricted context (MPI_T_CB_REQUIRE_MPI_RESTRICTED or above); one
// raised on ftmpi's own threads (the failure detector's, the launcher
// events') to a callback of level MPI_T_CB_REQUIRE_THREAD_SAFE or above.
// Otherwise the event waits in the registration (at most k_pending_max,
// then it is dropped and counted) until a thread can run the callback it
// has: the progress engine when it takes in failures (MPI-restricted), or
// the next MPI_T event call (no restriction: MPI_T_CB_REQUIRE_NONE). A
// dropped-event handler is called there too, before the events that follow
// the drop.
//
// No lock is held while a callback runs, so it may call any MPI_T function;
// a registration freed meanwhile gets its free callback once the last
// delivery to it ends.
#include <mpi.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "mpi/tools/mpit_internal.hpp"
#include "runtime/tool_events.hpp"

using ftmpi::runtime::EventRecord;
namespace rt = ftmpi::runtime;

struct ftmpi_t_event_instance_s {
    const EventRecord *record;
};

struct ftmpi_t_event_registration_s {
    int type;
    MPI_T_event_cb_function *cb[4] = {};
    void *user[4] = {};
    MPI_T_event_dropped_cb_function *dropped = nullptr;
    std::deque<EventRecord> pending;
    MPI_Count lost = 0;  // dropped since the handler last heard
    int busy = 0;        // deliveries running now
    bool freed = false;
    MPI_T_event_free_cb_function *free_cb = nullptr;  // freed while busy: called by the last delivery
    void *free_user = nullptr;
};

namespace ftmpi::mpi::mpit {

ftmpi_t_enum_s g_failure_paths = [] {
    ftmpi_t_enum_s e;
    e.name = "ftmpi_failure_path";
    for (int i = 0; i < static_cast<int>(rt::FailurePath::count); ++i) e.items.push_back({i, rt::failure_path_name(i)});
    return e;
}();

namespace {

constexpr std::size_t k_pending_max = 1024;

std::mutex g_lock;  // the registrations and what they hold
std::vector<std::unique_ptr<ftmpi_t_event_registration_s>> g_regs;

// The datatype and displacement of each field of an event type.
MPI_Datatype field_type(rt::FieldKind k) { return k == rt::FieldKind::i32 ? MPI_INT : MPI_UINT64_T; }
std::size_t field_size(rt::FieldKind k) { return k == rt::FieldKind::i32 ? 4 : 8; }
std::size_t field_offset(const rt::EventTypeInfo &t, int i) {
    std::size_t off = 0;
    for (int j = 0;; ++j) {
        const std::size_t sz = field_size(t.field[j].kind);
        off = (off + sz - 1) / sz * sz;
        if (j == i) return off;
        off += sz;
    }
}
std::size_t record_bytes(const rt::EventTypeInfo &t) {
    const int last = t.fields - 1;
    return field_offset(t, last) + field_size(t.field[last].kind);
}
void store_field(const rt::EventTypeInfo &t, const EventRecord &r, int i, char *out) {
    if (t.field[i].kind == rt::FieldKind::i32) {
        const auto v = static_cast<std::int32_t>(r.v[i]);
        std::memcpy(out, &v, sizeof v);
    } else {
        const auto v = static_cast<std::uint64_t>(r.v[i]);
        std::memcpy(out, &v, sizeof v);
    }
}

// The level of the callback that runs in a context that needs `need`, or -1.
int pick(const ftmpi_t_event_registration_s &g, int need) {
    for (int l = need; l <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE; ++l)
        if (g.cb[l] != nullptr) return l;
    return -1;
}

struct Delivery {
    ftmpi_t_event_registration_s *reg;
    int level;
    std::vector<EventRecord> records;
    MPI_Count lost;
};

// Runs the deliveries collected under the lock (each holds its registration
// busy), then ends them.
void run(std::vector<Delivery> &work) {
    for (Delivery &d : work) {
        const auto level = static_cast<MPI_T_cb_safety>(d.level);
        if (d.lost > 0 && d.reg->dropped != nullptr) d.reg->dropped(d.lost, d.reg, 0, level, d.reg->user[d.level]);
        for (const EventRecord &r : d.records) {
            ftmpi_t_event_instance_s inst{&r};
            if (MPI_T_event_cb_function *cb = d.reg->cb[d.level]) cb(&inst, d.reg, level, d.reg->user[d.level]);
        }
        MPI_T_event_free_cb_function *free_cb = nullptr;
        {
            std::lock_guard<std::mutex> hold(g_lock);
            if (--d.reg->busy == 0 && d.reg->freed) std::swap(free_cb, d.reg->free_cb);
        }
        if (free_cb != nullptr) free_cb(d.reg, level, d.reg->free_user);
    }
}

void sink(const EventRecord &r, bool service) {
    const int need = service ? MPI_T_CB_REQUIRE_THREAD_SAFE : MPI_T_CB_REQUIRE_MPI_RESTRICTED;
    std::vector<Delivery> work;
    {
        std::lock_guard<std::mutex> hold(g_lock);
        for (auto &u : g_regs) {
            ftmpi_t_event_registration_s &g = *u;
            if (g.freed || g.type != r.type) continue;
            const int level = pick(g, need);
            if (level >= 0 && g.pending.empty() && g.lost == 0) {
                ++g.busy;
                work.push_back({&g, level, {r}, 0});
            } else if (g.pending.size() < k_pending_max) {
                g.pending.push_back(r);
            } else {
                ++g.lost;
            }
        }
    }
    run(work);
}

// Delivers what waits for a context that needs `need` (see the file's header).
void drain_at(int need) {
    std::vector<Delivery> work;
    {
        std::lock_guard<std::mutex> hold(g_lock);
        for (auto &u : g_regs) {
            ftmpi_t_event_registration_s &g = *u;
            const int level = g.freed ? -1 : pick(g, need);
            if (level < 0 || (g.pending.empty() && g.lost == 0)) continue;
            ++g.busy;
            work.push_back({&g, level, {g.pending.begin(), g.pending.end()}, g.lost});
            g.pending.clear();
            g.lost = 0;
        }
    }
    run(work);
}

void drain_restricted() { drain_at(MPI_T_CB_REQUIRE_MPI_RESTRICTED); }

// Which event types have a live registration with a callback.
void update_sink() {
    std::uint32_t mask = 0;
    for (auto &u : g_regs)
        if (!u->freed) mask |= 1u << u->type;
    rt::set_event_sink(mask != 0 ? &sink : nullptr, &drain_restricted, mask);
}

bool valid_event(int index) { return index >= 0 && index < rt::k_event_types; }

// The live registration `g` (under g_lock), or null.
ftmpi_t_event_registration_s *live(MPI_T_event_registration g) {
    if (!owns(g_regs, g)) return nullptr;
    return g->freed ? nullptr : g;
}

int new_info(MPI_Info *out) {
    FTMPI_T_CHECK(out != nullptr, MPI_T_ERR_INVALID);
    return MPI_Info_create(out) == MPI_SUCCESS ? MPI_SUCCESS : MPI_T_ERR_MEMORY;
}

bool valid_info(MPI_Info info) { return info == MPI_INFO_NULL || info != nullptr; }

}  // namespace

void release_events() {
    rt::set_event_sink(nullptr, nullptr, 0);
    std::lock_guard<std::mutex> hold(g_lock);
    std::erase_if(g_regs, [](const auto &u) { return u->busy == 0; });
}

}  // namespace ftmpi::mpi::mpit

using namespace ftmpi::mpi::mpit;

extern "C" {

int MPI_T_source_get_num(int *num_sources) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(num_sources != nullptr, MPI_T_ERR_INVALID);
    *num_sources = 1;
    return MPI_SUCCESS;
}

int MPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                          MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                          MPI_Info *info) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(source_index == 0, MPI_T_ERR_INVALID_INDEX);
    copy_out("ftmpi_clock", name, name_len);
    copy_out("the system's real-time clock (CLOCK_REALTIME) in nanoseconds: every event of ftmpi", desc, desc_len);
    put(ordering, MPI_T_SOURCE_UNORDERED);  // an event kept for later arrives after newer ones
    put(ticks_per_second, MPI_Count{1000000000});
    put(max_ticks, MPI_Count{0x7fffffffffffffffLL});
    if (info != nullptr) return new_info(info);
    return MPI_SUCCESS;
}

int MPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(source_index == 0, MPI_T_ERR_INVALID_INDEX);
    FTMPI_T_CHECK(timestamp != nullptr, MPI_T_ERR_INVALID);
    drain_at(MPI_T_CB_REQUIRE_NONE);
    *timestamp = rt::event_clock_ns();
    return MPI_SUCCESS;
}

int MPI_T_event_get_num(int *num_events) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(num_events != nullptr, MPI_T_ERR_INVALID);
    *num_events = rt::k_event_types;
    return MPI_SUCCESS;
}

int MPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity, MPI_Datatype array_of_datatypes[],
                         MPI_Aint array_of_displacements[], int *num_elements, MPI_T_enum *enumtype, MPI_Info *info,
                         char *desc, int *desc_len, int *bind) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(valid_event(event_index), MPI_T_ERR_INVALID_INDEX);
    const rt::EventTypeInfo &t = rt::event_type_info(event_index);
    copy_out(t.name, name, name_len);
    copy_out(t.desc, desc, desc_len);
    put(verbosity, static_cast<int>(MPI_T_VERBOSITY_USER_BASIC));
    if (num_elements != nullptr) {
        // On input the length of the arrays (which may be null): that many are filled.
        const int room = (array_of_datatypes != nullptr || array_of_displacements != nullptr) ? *num_elements : 0;
        for (int i = 0; i < t.fields && i < room; ++i) {
            if (array_of_datatypes != nullptr) array_of_datatypes[i] = field_type(t.field[i].kind);
            if (array_of_displacements != nullptr)
                array_of_displacements[i] = static_cast<MPI_Aint>(field_offset(t, i));
        }
        *num_elements = t.fields;
    }
    put(enumtype,
        event_index == static_cast<int>(rt::EventType::failure_detected) ? &g_failure_paths : MPI_T_ENUM_NULL);
    put(bind, static_cast<int>(MPI_T_BIND_NO_OBJECT));
    if (info != nullptr) return new_info(info);
    return MPI_SUCCESS;
}

int MPI_T_event_get_index(const char *name, int *event_index) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(name != nullptr && event_index != nullptr, MPI_T_ERR_INVALID);
    for (int i = 0; i < rt::k_event_types; ++i)
        if (std::strcmp(rt::event_type_info(i).name, name) == 0) {
            *event_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

int MPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                             MPI_T_event_registration *event_registration) {
    (void)obj_handle;  // every event type binds to no object
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(valid_event(event_index), MPI_T_ERR_INVALID_INDEX);
    FTMPI_T_CHECK(event_registration != nullptr && valid_info(info), MPI_T_ERR_INVALID);
    drain_at(MPI_T_CB_REQUIRE_NONE);
    std::lock_guard<std::mutex> hold(g_lock);
    try {
        g_regs.push_back(std::make_unique<ftmpi_t_event_registration_s>());
    } catch (const std::bad_alloc &) {
        return MPI_T_ERR_MEMORY;
    }
    g_regs.back()->type = event_index;
    *event_registration = g_regs.back().get();
    update_sink();
    return MPI_SUCCESS;
}

int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info) {
    FTMPI_T_CHECK_INIT();
    std::lock_guard<std::mutex> hold(g_lock);
    FTMPI_T_CHECK(live(event_registration) != nullptr, MPI_T_ERR_INVALID_HANDLE);
    FTMPI_T_CHECK(valid_info(info), MPI_T_ERR_INVALID);
    return MPI_SUCCESS;  // ftmpi knows no hint for registrations
}

int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used) {
    FTMPI_T_CHECK_INIT();
    {
        std::lock_guard<std::mutex> hold(g_lock);
        FTMPI_T_CHECK(live(event_registration) != nullptr, MPI_T_ERR_INVALID_HANDLE);
    }
    return new_info(info_used);
}

int MPI_T_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, MPI_Info info,
                                  void *user_data, MPI_T_event_cb_function *event_cb_function) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(
        cb_safety >= MPI_T_CB_REQUIRE_NONE && cb_safety <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE && valid_info(info),
        MPI_T_ERR_INVALID);
    {
        std::lock_guard<std::mutex> hold(g_lock);
        ftmpi_t_event_registration_s *g = live(event_registration);
        FTMPI_T_CHECK(g != nullptr, MPI_T_ERR_INVALID_HANDLE);
        g->cb[cb_safety] = event_cb_function;  // null removes it
        g->user[cb_safety] = user_data;
    }
    drain_at(MPI_T_CB_REQUIRE_NONE);
    return MPI_SUCCESS;
}

int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                  MPI_Info info) {
    FTMPI_T_CHECK_INIT();
    std::lock_guard<std::mutex> hold(g_lock);
    ftmpi_t_event_registration_s *g = live(event_registration);
    FTMPI_T_CHECK(g != nullptr, MPI_T_ERR_INVALID_HANDLE);
    FTMPI_T_CHECK(cb_safety >= MPI_T_CB_REQUIRE_NONE && cb_safety <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE &&
                      g->cb[cb_safety] != nullptr && valid_info(info),
                  MPI_T_ERR_INVALID);
    return MPI_SUCCESS;  // no hint for callbacks either
}

int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                  MPI_Info *info_used) {
    FTMPI_T_CHECK_INIT();
    {
        std::lock_guard<std::mutex> hold(g_lock);
        ftmpi_t_event_registration_s *g = live(event_registration);
        FTMPI_T_CHECK(g != nullptr, MPI_T_ERR_INVALID_HANDLE);
        FTMPI_T_CHECK(cb_safety >= MPI_T_CB_REQUIRE_NONE && cb_safety <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE &&
                          g->cb[cb_safety] != nullptr,
                      MPI_T_ERR_INVALID);
    }
    return new_info(info_used);
}

int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                            MPI_T_event_free_cb_function *free_cb_function) {
    FTMPI_T_CHECK_INIT();
    bool now = false;
    {
        std::lock_guard<std::mutex> hold(g_lock);
        ftmpi_t_event_registration_s *g = live(event_registration);
        FTMPI_T_CHECK(g != nullptr, MPI_T_ERR_INVALID_HANDLE);
        g->freed = true;
        g->pending.clear();
        now = g->busy == 0;
        if (!now) {
            g->free_cb = free_cb_function;
            g->free_user = user_data;
        }
        update_sink();
    }
    if (now && free_cb_function != nullptr) free_cb_function(event_registration, MPI_T_CB_REQUIRE_NONE, user_data);
    return MPI_SUCCESS;
}

int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                    MPI_T_event_dropped_cb_function *dropped_cb_function) {
    FTMPI_T_CHECK_INIT();
    std::lock_guard<std::mutex> hold(g_lock);
    ftmpi_t_event_registration_s *g = live(event_registration);
    FTMPI_T_CHECK(g != nullptr, MPI_T_ERR_INVALID_HANDLE);
    g->dropped = dropped_cb_function;
    return MPI_SUCCESS;
}

// The instance calls run inside callbacks, on any thread: no lock, no check
// of the tools' state (an instance exists only while its callback runs).
int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer) {
    FTMPI_T_CHECK(event_instance != nullptr && buffer != nullptr, MPI_T_ERR_INVALID);
    const EventRecord &r = *event_instance->record;
    const rt::EventTypeInfo &t = rt::event_type_info(r.type);
    FTMPI_T_CHECK(element_index >= 0 && element_index < t.fields, MPI_T_ERR_INVALID_INDEX);
    store_field(t, r, element_index, static_cast<char *>(buffer));
    return MPI_SUCCESS;
}

int MPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer) {
    FTMPI_T_CHECK(event_instance != nullptr && buffer != nullptr, MPI_T_ERR_INVALID);
    const EventRecord &r = *event_instance->record;
    const rt::EventTypeInfo &t = rt::event_type_info(r.type);
    std::memset(buffer, 0, record_bytes(t));
    for (int i = 0; i < t.fields; ++i) store_field(t, r, i, static_cast<char *>(buffer) + field_offset(t, i));
    return MPI_SUCCESS;
}

int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp) {
    FTMPI_T_CHECK(event_instance != nullptr && event_timestamp != nullptr, MPI_T_ERR_INVALID);
    *event_timestamp = event_instance->record->ts_ns;
    return MPI_SUCCESS;
}

int MPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index) {
    FTMPI_T_CHECK(event_instance != nullptr && source_index != nullptr, MPI_T_ERR_INVALID);
    *source_index = 0;
    return MPI_SUCCESS;
}

}  // extern "C"
