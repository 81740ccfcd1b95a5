// The tools information interface (MPI_T, MPI 3.1 chapter 14): its state, its
// initialization, the enumerations and the categories. The control variables
// are in mpi/tools/mpit_cvar.cpp, the performance variables in mpit_pvar.cpp,
// the events in mpit_events.cpp.
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
#include "mpi/tools/mpit_internal.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <vector>

#include "mpi/state.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::mpi::mpit {

Tools g_tools;

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

namespace {

bool valid_enum(MPI_T_enum e) { return e == &g_log_levels || e == &g_mpi_states || e == &g_failure_paths; }

// ---- categories ------------------------------------------------------------

struct Category {
    const char *name;
    const char *desc;
    std::vector<int> cvars, pvars, subcats, events;
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

std::vector<Category> make_categories() {
    std::vector<Category> c(cat_count);
    c[cat_root] = {
        "ftmpi", "every ftmpi variable, by layer", {}, {}, {cat_runtime, cat_transport, cat_ft, cat_mpi, cat_testing},
        {}};
    c[cat_runtime] = {"ftmpi_runtime", "the runtime: process manager (PMIx, Slurm) and logging", {}, {}, {}, {}};
    c[cat_transport] = {
        "ftmpi_transport", "the libfabric transport: providers, interfaces, eager and rendezvous", {}, {}, {}, {}};
    c[cat_ft] = {"ftmpi_ft", "fault tolerance: the failure detector, the failure record and the recovery events",
                 {},         {},
                 {},         {}};
    for (int i = 0; i < ftmpi::runtime::k_event_types; ++i) c[cat_ft].events.push_back(i);
    c[cat_mpi] = {"ftmpi_mpi", "the MPI layer: progress, error handlers, one-sided communication", {}, {}, {cat_p2p},
                  {}};
    c[cat_p2p] = {"ftmpi_mpi_p2p", "point-to-point communication", {}, {}, {}, {}};
    c[cat_testing] = {"ftmpi_testing", "knobs for ftmpi's own tests", {}, {}, {}, {}};
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

int category_list(int cat_index, int len, int indices[], std::vector<int> Category::*member) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(in_range(cat_index, categories()), MPI_T_ERR_INVALID_INDEX);
    FTMPI_T_CHECK(len >= 0 && (len == 0 || indices != nullptr), MPI_T_ERR_INVALID);
    const std::vector<int> &list = categories()[static_cast<std::size_t>(cat_index)].*member;
    const std::size_t n = std::min(list.size(), static_cast<std::size_t>(len));
    std::copy_n(list.begin(), n, indices);
    return MPI_SUCCESS;
}

// Drops every handle and session (the last MPI_T_finalize).
void release_all() {
    g_tools.cvar_handles.clear();
    g_tools.sessions.clear();
    release_events();
}

}  // namespace
}  // namespace ftmpi::mpi::mpit

using namespace ftmpi::mpi;
using namespace ftmpi::mpi::mpit;

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

int MPI_T_category_get_num_events(int cat_index, int *num_events) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(in_range(cat_index, categories()), MPI_T_ERR_INVALID_INDEX);
    FTMPI_T_CHECK(num_events != nullptr, MPI_T_ERR_INVALID);
    *num_events = static_cast<int>(categories()[static_cast<std::size_t>(cat_index)].events.size());
    return MPI_SUCCESS;
}

int MPI_T_category_get_events(int cat_index, int len, int indices[]) {
    return category_list(cat_index, len, indices, &Category::events);
}

int MPI_T_category_changed(int *stamp) {
    FTMPI_T_CHECK_INIT();
    FTMPI_T_CHECK(stamp != nullptr, MPI_T_ERR_INVALID);
    *stamp = k_categories_stamp;
    return MPI_SUCCESS;
}

}  // extern "C"
