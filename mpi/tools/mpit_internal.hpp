// Internals shared by the files of the tools interface (mpi/tools/mpit*.cpp):
// the handle objects, the variable tables, the interface state and helpers.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "runtime/config.hpp"

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

namespace ftmpi::mpi::mpit {

using runtime::KnobLayer;

// The enumerations: FTMPI_LOG's levels (mpit_cvar.cpp), the values of the
// ftmpi_mpi_state performance variable (mpit_pvar.cpp).
extern ftmpi_t_enum_s g_log_levels;
extern ftmpi_t_enum_s g_mpi_states;
// How a failure was found: the path field of ftmpi_failure_detected (mpit_events.cpp).
extern ftmpi_t_enum_s g_failure_paths;

// Drops every event registration (the last MPI_T_finalize; mpit_events.cpp).
void release_events();

enum Cat : int { cat_root, cat_runtime, cat_transport, cat_ft, cat_mpi, cat_p2p, cat_testing, cat_count };

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

// The control variables, one per knob (mpit_cvar.cpp).
const std::vector<Cvar> &cvars();

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

// The performance variables (mpit_pvar.cpp).
const std::vector<Pvar> &pvars();

// ---- interface state -------------------------------------------------------

struct Tools {
    int refs = 0;  // MPI_T_init_thread calls not yet matched by MPI_T_finalize
    std::vector<std::unique_ptr<ftmpi_t_cvar_handle_s>> cvar_handles;
    std::vector<std::unique_ptr<ftmpi_t_pvar_session_s>> sessions;
};
extern Tools g_tools;

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
void copy_out(const char *src, char *buf, int *len);

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

}  // namespace ftmpi::mpi::mpit
