// The tools interface's control variables (MPI_T_cvar_*).
//
// Control variables: one per FTMPI_* knob (runtime/config.hpp's table), named
// as the environment variable ("FTMPI_EAGER_LIMIT"), described by the knob's
// help text. A read returns the value in force: the one MPI_Init parsed, or,
// before MPI_Init, the one it will parse (MPI_T_init_thread loads the
// configuration the same way). Knobs are read at MPI_Init, so their variables
// are MPI_T_SCOPE_READONLY and a write returns MPI_T_ERR_CVAR_SET_NEVER; the
// exception is FTMPI_LOG, which the logger reads at every message: it is
// writable (MPI_T_SCOPE_LOCAL) and takes effect at once.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "mpi/tools/mpit_internal.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"

namespace ftmpi::mpi::mpit {
namespace {

ftmpi_t_enum_s make_log_levels() {
    ftmpi_t_enum_s e{"ftmpi_log_level", {}};
    for (int v = 0; runtime::level_name(v) != nullptr; ++v) e.items.push_back({v, runtime::level_name(v)});
    return e;
}

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
#define FTMPI_KNOB_CVAR(NAME, T, DEF, LAYER, HELP)                                                                  \
    v.push_back({"FTMPI_" #NAME, HELP, KnobValue<T>::datatype(), KnobLayer::LAYER,                                  \
                 KnobLayer::LAYER == KnobLayer::testing ? MPI_T_VERBOSITY_MPIDEV_ALL : MPI_T_VERBOSITY_USER_BASIC,  \
                 MPI_T_SCOPE_READONLY, MPI_T_ENUM_NULL, [] { return KnobValue<T>::count(runtime::config().NAME); }, \
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

}  // namespace

ftmpi_t_enum_s g_log_levels = make_log_levels();

const std::vector<Cvar> &cvars() {
    static const std::vector<Cvar> table = make_cvars();
    return table;
}

}  // namespace ftmpi::mpi::mpit

using namespace ftmpi::mpi::mpit;

extern "C" {

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

}  // extern "C"
