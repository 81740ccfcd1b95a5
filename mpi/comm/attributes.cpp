// Keyvals and attributes of communicators, datatypes and windows
// (MPI_{Comm,Type,Win}_create_keyval ...), with the predefined communicator
// attributes MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
// MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_LASTUSEDCODE and MPI_FT (MPIX_FT). The
// window's predefined attributes (MPI_WIN_BASE ...) are in mpi/rma/window_attrs.cpp.
//
// One keyval table serves the three kinds of object: a keyval belongs to the
// kind that created it, and using it on another kind is MPI_ERR_KEYVAL.
#include "mpi/comm/attributes.hpp"

#include <algorithm>
#include <map>

#include "mpi/checks.hpp"
#include "mpi/rma/window.hpp"
#include "runtime/config.hpp"

namespace ftmpi::mpi {
namespace {

enum class AttrKind { comm, type, win };
using AnyFn = void (*)();

struct Keyval {
    AttrKind kind;
    AnyFn copy;  // the kind's copy callback (null: never copied)
    AnyFn del;   // the kind's delete callback (may be null)
    void *extra_state;
    bool freed = false;  // free_keyval called; lives on while attributes use it
    int uses = 0;        // attributes currently set with it
};

constexpr int k_first_user_keyval = 64;  // below: the predefined attribute keys
std::map<int, Keyval> g_keyvals;
int g_next_keyval = k_first_user_keyval;
// Datatypes keep their attributes here: predefined types have fixed-size
// storage (an ABI), and most types never carry any.
std::map<MPI_Datatype, AttrList> g_type_attrs;

static_assert(MPI_LASTUSEDCODE < MPI_FT && MPI_WIN_MODEL < k_first_user_keyval,
              "predefined keys are MPI_TAG_UB..MPI_WIN_MODEL");

// What differs between the kinds of object.
template <typename H>
struct Object;
template <>
struct Object<MPI_Comm> {
    static constexpr AttrKind kind = AttrKind::comm;
    static constexpr const char *what = "communicator";
    using Copy = MPI_Comm_copy_attr_function;
    using Del = MPI_Comm_delete_attr_function;
    static AttrList *attrs(MPI_Comm c, bool) { return &c->attrs; }
    static MPI_Comm errors(MPI_Comm c) { return c; }
    static int check(const char *call, MPI_Comm c) { return check_comm(call, c); }
};
template <>
struct Object<MPI_Datatype> {
    static constexpr AttrKind kind = AttrKind::type;
    static constexpr const char *what = "datatype";
    using Copy = MPI_Type_copy_attr_function;
    using Del = MPI_Type_delete_attr_function;
    static AttrList *attrs(MPI_Datatype t, bool create) {
        auto it = g_type_attrs.find(t);
        if (it != g_type_attrs.end()) return &it->second;
        return create ? &g_type_attrs[t] : nullptr;
    }
    static MPI_Comm errors(MPI_Datatype) { return MPI_COMM_NULL; }
    static int check(const char *call, MPI_Datatype t) { return check_type(call, MPI_COMM_NULL, t); }
};
template <>
struct Object<MPI_Win> {
    static constexpr AttrKind kind = AttrKind::win;
    static constexpr const char *what = "window";
    using Copy = MPI_Win_copy_attr_function;
    using Del = MPI_Win_delete_attr_function;
    static AttrList *attrs(MPI_Win w, bool) { return &w->attrs; }
    static MPI_Comm errors(MPI_Win w) { return w->comm; }
    static int check(const char *call, MPI_Win w) { return check_win(call, w); }
};

bool predefined_key(AttrKind kind, int k) {
    if (kind == AttrKind::comm) return k >= MPI_TAG_UB && k <= MPI_FT;
    if (kind == AttrKind::win) return k >= MPI_WIN_BASE && k <= MPI_WIN_MODEL;
    return false;
}

AttrList::iterator find_attr(AttrList &attrs, int keyval) {
    return std::find_if(attrs.begin(), attrs.end(), [keyval](const auto &a) { return a.first == keyval; });
}

Keyval *find(AttrKind kind, int keyval) {
    auto it = g_keyvals.find(keyval);
    return it == g_keyvals.end() || it->second.kind != kind ? nullptr : &it->second;
}

void drop_use(int keyval) {
    auto it = g_keyvals.find(keyval);
    if (it != g_keyvals.end() && --it->second.uses == 0 && it->second.freed) g_keyvals.erase(it);
}

// Runs keyval's delete callback for `value` on h; returns its code.
template <typename H>
int call_delete(H h, int keyval, void *value) {
    Keyval *k = find(Object<H>::kind, keyval);
    if (k == nullptr || k->del == nullptr) return MPI_SUCCESS;
    return reinterpret_cast<typename Object<H>::Del *>(k->del)(h, keyval, value, k->extra_state);
}

// An attribute removed from h: its delete callback, and the keyval's use goes.
template <typename H>
int run_delete(H h, int keyval, void *value) {
    const int rc = call_delete(h, keyval, value);
    drop_use(keyval);
    return rc;
}

// A user keyval of H's kind, live; or, with `freed_ok` (get and delete), one
// freed while attributes still use it: it lives on until the last goes.
template <typename H>
int check_keyval(const char *call, MPI_Comm err, int keyval, bool freed_ok = false) {
    constexpr AttrKind kind = Object<H>::kind;
    if (predefined_key(kind, keyval))
        return raise(err, MPI_ERR_KEYVAL, call, "keyval %d is a predefined attribute key and cannot be changed",
                     keyval);
    Keyval *k = find(kind, keyval);
    if (k == nullptr || (k->freed && !freed_ok))
        return raise(err, MPI_ERR_KEYVAL, call, "invalid keyval %d (not a live %s keyval)", keyval, Object<H>::what);
    return MPI_SUCCESS;
}

template <typename H>
int create_keyval(const char *call, typename Object<H>::Copy *copy, typename Object<H>::Del *del, int *keyval,
                  void *extra_state) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, keyval, "keyval"));
    const int k = g_next_keyval++;
    g_keyvals[k] = Keyval{Object<H>::kind, reinterpret_cast<AnyFn>(copy), reinterpret_cast<AnyFn>(del), extra_state};
    *keyval = k;
    return MPI_SUCCESS;
}

template <typename H>
int free_keyval(const char *call, int *keyval) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, keyval, "keyval"));
    FTMPI_TRY(check_keyval<H>(call, MPI_COMM_NULL, *keyval));
    auto it = g_keyvals.find(*keyval);
    if (it->second.uses == 0) g_keyvals.erase(it);
    else it->second.freed = true;
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

template <typename H>
int set_attr(const char *call, H h, int keyval, void *value) {
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(Object<H>::check(call, h));
    const MPI_Comm err = Object<H>::errors(h);
    FTMPI_TRY(check_keyval<H>(call, err, keyval));
    AttrList &attrs = *Object<H>::attrs(h, true);
    auto it = find_attr(attrs, keyval);
    if (it != attrs.end()) {  // the old value's delete callback first; the attribute keeps its place
        const int rc = call_delete(h, keyval, it->second);
        if (rc != MPI_SUCCESS) return raise(err, rc, call, "the delete callback of keyval %d failed", keyval);
        // The callback may have changed h's attributes: look again.
        AttrList &now = *Object<H>::attrs(h, true);
        if (auto again = find_attr(now, keyval); again != now.end()) {
            again->second = value;
            return MPI_SUCCESS;
        }
        now.emplace_back(keyval, value);
        find(Object<H>::kind, keyval)->uses++;
        return MPI_SUCCESS;
    }
    attrs.emplace_back(keyval, value);
    find(Object<H>::kind, keyval)->uses++;
    return MPI_SUCCESS;
}

// A user keyval's attribute (the caller handled the predefined keys).
template <typename H>
int get_attr(const char *call, H h, int keyval, void *attribute_val, int *flag) {
    if (find(Object<H>::kind, keyval) == nullptr)
        return raise(Object<H>::errors(h), MPI_ERR_KEYVAL, call, "invalid keyval %d (not a %s keyval)", keyval,
                     Object<H>::what);
    AttrList *attrs = Object<H>::attrs(h, false);
    *flag = 0;
    if (attrs == nullptr) return MPI_SUCCESS;
    auto it = find_attr(*attrs, keyval);
    *flag = it != attrs->end();
    if (*flag) *static_cast<void **>(attribute_val) = it->second;
    return MPI_SUCCESS;
}

template <typename H>
int delete_attr(const char *call, H h, int keyval) {
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(Object<H>::check(call, h));
    const MPI_Comm err = Object<H>::errors(h);
    FTMPI_TRY(check_keyval<H>(call, err, keyval, true));
    AttrList *attrs = Object<H>::attrs(h, false);
    auto it = attrs != nullptr ? find_attr(*attrs, keyval) : AttrList::iterator{};
    if (attrs == nullptr || it == attrs->end())
        return raise(err, MPI_ERR_KEYVAL, call, "keyval %d has no attribute on this %s", keyval, Object<H>::what);
    void *value = it->second;
    attrs->erase(it);
    const int rc = run_delete(h, keyval, value);
    if (rc != MPI_SUCCESS) return raise(err, rc, call, "the delete callback of keyval %d failed", keyval);
    return MPI_SUCCESS;
}

// Deletes every attribute of h, the last set first (MPI-3.1 §8.7.1 asks it
// of MPI_COMM_SELF at MPI_Finalize; MPICH and Open MPI do it everywhere).
// Every delete callback runs; the first error is returned.
template <typename H>
int delete_all(H h) {
    AttrList *held = Object<H>::attrs(h, false);
    if (held == nullptr) return MPI_SUCCESS;
    AttrList attrs = std::move(*held);
    held->clear();
    if constexpr (Object<H>::kind == AttrKind::type) g_type_attrs.erase(h);
    int first = MPI_SUCCESS;
    for (auto it = attrs.rbegin(); it != attrs.rend(); ++it) {
        const int rc = run_delete(h, it->first, it->second);
        if (first == MPI_SUCCESS) first = rc;
    }
    return first;
}

// Copies from's attributes to `to` in their order, through each keyval's
// copy callback (flag 0: not copied). A callback's error stops the copy: the
// attributes copied so far are deleted again (their delete callbacks run)
// and the error is returned.
template <typename H>
int copy_all(H from, H to) {
    const AttrList *attrs = Object<H>::attrs(from, false);
    if (attrs == nullptr) return MPI_SUCCESS;
    const AttrList snapshot = *attrs;  // a callback may set attributes on `from`
    for (const auto &[keyval, value] : snapshot) {
        Keyval *k = find(Object<H>::kind, keyval);
        if (k == nullptr || k->copy == nullptr) continue;
        void *out = nullptr;
        int flag = 0;
        const int rc =
            reinterpret_cast<typename Object<H>::Copy *>(k->copy)(from, keyval, k->extra_state, value, &out, &flag);
        if (rc != MPI_SUCCESS) {
            delete_all(to);
            return rc;
        }
        if (flag) {
            Object<H>::attrs(to, true)->emplace_back(keyval, out);
            k->uses++;
        }
    }
    return MPI_SUCCESS;
}

// MPI_FT: whether process fault tolerance is on in this run: 0 under
// `ftmpirun --no-ft` (the job ends at its first failure; FTMPI_FT=0).
int fault_tolerance_enabled() { return runtime::config().FT != 0 ? 1 : 0; }

}  // namespace

int copy_attributes(MPI_Comm from, MPI_Comm to) { return copy_all(from, to); }
int delete_attributes(MPI_Comm comm) { return delete_all(comm); }
int copy_attributes(MPI_Datatype from, MPI_Datatype to) { return copy_all(from, to); }
int delete_attributes(MPI_Datatype type) { return delete_all(type); }
int delete_attributes(MPI_Win win) { return delete_all(win); }
int get_user_attr(const char *call, MPI_Win win, int keyval, void *attribute_val, int *flag) {
    return get_attr(call, win, keyval, attribute_val, flag);
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

// The predefined callbacks: the same three for every kind of object.
#define FTMPI_PREDEFINED_ATTR_FNS(KIND, H)                                     \
    int MPI_##KIND##_NULL_COPY_FN(H, int, void *, void *, void *, int *flag) { \
        *flag = 0;                                                             \
        return MPI_SUCCESS;                                                    \
    }                                                                          \
    int MPI_##KIND##_DUP_FN(H, int, void *, void *in, void *out, int *flag) {  \
        *static_cast<void **>(out) = in;                                       \
        *flag = 1;                                                             \
        return MPI_SUCCESS;                                                    \
    }                                                                          \
    int MPI_##KIND##_NULL_DELETE_FN(H, int, void *, void *) { return MPI_SUCCESS; }

extern "C" {

FTMPI_PREDEFINED_ATTR_FNS(COMM, MPI_Comm)
FTMPI_PREDEFINED_ATTR_FNS(TYPE, MPI_Datatype)
FTMPI_PREDEFINED_ATTR_FNS(WIN, MPI_Win)

int MPI_DUP_FN(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
    return MPI_COMM_DUP_FN(comm, keyval, extra, in, out, flag);
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                           void *extra_state) {
    return create_keyval<MPI_Comm>("MPI_Comm_create_keyval", copy_fn, delete_fn, keyval, extra_state);
}
int MPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn, MPI_Type_delete_attr_function *delete_fn, int *keyval,
                           void *extra_state) {
    return create_keyval<MPI_Datatype>("MPI_Type_create_keyval", copy_fn, delete_fn, keyval, extra_state);
}
int MPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn, MPI_Win_delete_attr_function *delete_fn, int *keyval,
                          void *extra_state) {
    return create_keyval<MPI_Win>("MPI_Win_create_keyval", copy_fn, delete_fn, keyval, extra_state);
}

int MPI_Comm_free_keyval(int *keyval) { return free_keyval<MPI_Comm>("MPI_Comm_free_keyval", keyval); }
int MPI_Type_free_keyval(int *keyval) { return free_keyval<MPI_Datatype>("MPI_Type_free_keyval", keyval); }
int MPI_Win_free_keyval(int *keyval) { return free_keyval<MPI_Win>("MPI_Win_free_keyval", keyval); }

int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *value) {
    return set_attr("MPI_Comm_set_attr", comm, keyval, value);
}
int MPI_Type_set_attr(MPI_Datatype type, int keyval, void *value) {
    return set_attr("MPI_Type_set_attr", type, keyval, value);
}
int MPI_Win_set_attr(MPI_Win win, int keyval, void *value) { return set_attr("MPI_Win_set_attr", win, keyval, value); }

int MPI_Comm_delete_attr(MPI_Comm comm, int keyval) { return delete_attr("MPI_Comm_delete_attr", comm, keyval); }
int MPI_Type_delete_attr(MPI_Datatype type, int keyval) { return delete_attr("MPI_Type_delete_attr", type, keyval); }
int MPI_Win_delete_attr(MPI_Win win, int keyval) { return delete_attr("MPI_Win_delete_attr", win, keyval); }

int MPI_Type_get_attr(MPI_Datatype type, int keyval, void *attribute_val, int *flag) {
    const char *call = "MPI_Type_get_attr";
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_type(call, MPI_COMM_NULL, type));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, attribute_val, "attribute_val"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, flag, "flag"));
    return get_attr(call, type, keyval, attribute_val, flag);
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag) {
    static int tag_ub = ftmpi::transport::max_tag;
    static int wtime_is_global = 0;
    static int host = MPI_PROC_NULL;
    static int io = MPI_ANY_SOURCE;
    static int universe_size = 0;
    static int appnum = 0;
    static int lastusedcode = 0;
    static int ft = 0;
    FTMPI_TRY(check_init("MPI_Comm_get_attr"));
    FTMPI_CHECK(check_comm("MPI_Comm_get_attr", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_get_attr", comm, attribute_val, "attribute_val"));
    FTMPI_CHECK(check_nonnull("MPI_Comm_get_attr", comm, flag, "flag"));
    int *value = nullptr;
    switch (keyval) {
    case MPI_TAG_UB: value = &tag_ub; break;
    case MPI_WTIME_IS_GLOBAL: value = &wtime_is_global; break;
    case MPI_HOST: value = &host; break;
    case MPI_IO: value = &io; break;
    case MPI_UNIVERSE_SIZE:
        universe_size = g.pm->job().universe_size;
        value = &universe_size;
        break;
    case MPI_APPNUM:
        appnum = g.pm->job().appnum;
        value = &appnum;
        break;
    case MPI_LASTUSEDCODE:
        lastusedcode = last_used_error_code();
        value = &lastusedcode;
        break;
    case MPI_FT:  // on every communicator (Open MPI 5 sets it on MPI_COMM_WORLD only)
        ft = fault_tolerance_enabled();
        value = &ft;
        break;
    default: return get_attr("MPI_Comm_get_attr", comm, keyval, attribute_val, flag);
    }
    *static_cast<int **>(attribute_val) = value;
    *flag = 1;
    return MPI_SUCCESS;
}

}  // extern "C"
