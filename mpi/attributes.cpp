// Keyvals (MPI_Comm_create_keyval ...) and communicator attributes, with the
// predefined attributes MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
// MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_LASTUSEDCODE and MPI_FT (MPIX_FT).
#include "mpi/attributes.hpp"

#include <map>

#include "mpi/checks.hpp"
#include "runtime/config.hpp"

namespace ftmpi::mpi {
namespace {

struct Keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra_state;
    bool freed = false;  // MPI_Comm_free_keyval called; lives on while attributes use it
    int uses = 0;        // attributes currently set with it
};

constexpr int k_first_user_keyval = 64;  // below: the predefined attribute keys
std::map<int, Keyval> g_keyvals;
int g_next_keyval = k_first_user_keyval;

bool predefined_key(int k) { return k >= MPI_TAG_UB && k <= MPI_FT; }
static_assert(MPI_LASTUSEDCODE < MPI_FT && MPI_FT < k_first_user_keyval, "predefined keys are MPI_TAG_UB..MPI_FT");

// MPI_FT: whether process fault tolerance is on in this run: 0 under
// `ftmpirun --no-ft` (the job ends at its first failure; FTMPI_FT=0).
int fault_tolerance_enabled() { return runtime::config().FT != 0 ? 1 : 0; }

Keyval *find(int keyval) {
    auto it = g_keyvals.find(keyval);
    return it == g_keyvals.end() ? nullptr : &it->second;
}

void drop_use(int keyval) {
    auto it = g_keyvals.find(keyval);
    if (it != g_keyvals.end() && --it->second.uses == 0 && it->second.freed) g_keyvals.erase(it);
}

int run_delete(MPI_Comm comm, int keyval, void *value) {
    Keyval *k = find(keyval);
    int rc = MPI_SUCCESS;
    if (k != nullptr && k->del != nullptr) rc = k->del(comm, keyval, value, k->extra_state);
    drop_use(keyval);
    return rc;
}

int check_keyval(const char *call, MPI_Comm comm, int keyval) {
    if (predefined_key(keyval))
        return raise(comm, MPI_ERR_KEYVAL, call, "keyval %d is a predefined attribute key and cannot be changed",
                     keyval);
    Keyval *k = find(keyval);
    if (k == nullptr || k->freed) return raise(comm, MPI_ERR_KEYVAL, call, "invalid keyval %d", keyval);
    return MPI_SUCCESS;
}

}  // namespace

int copy_attributes(MPI_Comm from, MPI_Comm to) {
    for (const auto &[keyval, value] : from->attrs) {
        Keyval *k = find(keyval);
        if (k == nullptr || k->copy == nullptr) continue;
        void *out = nullptr;
        int flag = 0;
        const int rc = k->copy(from, keyval, k->extra_state, value, &out, &flag);
        if (rc != MPI_SUCCESS) return rc;
        if (flag) {
            to->attrs[keyval] = out;
            k->uses++;
        }
    }
    return MPI_SUCCESS;
}

int delete_attributes(MPI_Comm comm) {
    int first = MPI_SUCCESS;
    auto attrs = std::move(comm->attrs);
    comm->attrs.clear();
    for (const auto &[keyval, value] : attrs) {
        const int rc = run_delete(comm, keyval, value);
        if (first == MPI_SUCCESS) first = rc;
    }
    return first;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void *, void *, void *, int *flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_COMM_DUP_FN(MPI_Comm, int, void *, void *in, void *out, int *flag) {
    *static_cast<void **>(out) = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void *, void *) { return MPI_SUCCESS; }

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn,
                           int *keyval, void *extra_state) {
    FTMPI_TRY(check_init("MPI_Comm_create_keyval"));
    FTMPI_CHECK(check_nonnull("MPI_Comm_create_keyval", MPI_COMM_NULL, keyval, "comm_keyval"));
    const int k = g_next_keyval++;
    g_keyvals[k] = Keyval{copy_fn, delete_fn, extra_state};
    *keyval = k;
    return MPI_SUCCESS;
}

int MPI_Comm_free_keyval(int *keyval) {
    FTMPI_TRY(check_init("MPI_Comm_free_keyval"));
    FTMPI_CHECK(check_nonnull("MPI_Comm_free_keyval", MPI_COMM_NULL, keyval, "comm_keyval"));
    FTMPI_TRY(check_keyval("MPI_Comm_free_keyval", MPI_COMM_NULL, *keyval));
    auto it = g_keyvals.find(*keyval);
    if (it->second.uses == 0) g_keyvals.erase(it);
    else it->second.freed = true;
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *value) {
    FTMPI_TRY(check_init("MPI_Comm_set_attr"));
    FTMPI_CHECK(check_comm("MPI_Comm_set_attr", comm));
    FTMPI_TRY(check_keyval("MPI_Comm_set_attr", comm, keyval));
    auto it = comm->attrs.find(keyval);
    if (it != comm->attrs.end()) {
        find(keyval)->uses++;  // run_delete drops one use for the old value
        const int rc = run_delete(comm, keyval, it->second);
        if (rc != MPI_SUCCESS)
            return raise(comm, rc, "MPI_Comm_set_attr", "the delete callback of keyval %d failed", keyval);
        it->second = value;
        return MPI_SUCCESS;
    }
    comm->attrs[keyval] = value;
    find(keyval)->uses++;
    return MPI_SUCCESS;
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
    default: {
        Keyval *k = find(keyval);
        if (k == nullptr || k->freed)
            return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "invalid keyval %d", keyval);
        auto it = comm->attrs.find(keyval);
        *flag = it != comm->attrs.end();
        if (*flag) *static_cast<void **>(attribute_val) = it->second;
        return MPI_SUCCESS;
    }
    }
    *static_cast<int **>(attribute_val) = value;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
    FTMPI_TRY(check_init("MPI_Comm_delete_attr"));
    FTMPI_CHECK(check_comm("MPI_Comm_delete_attr", comm));
    FTMPI_TRY(check_keyval("MPI_Comm_delete_attr", comm, keyval));
    auto it = comm->attrs.find(keyval);
    if (it == comm->attrs.end())
        return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "keyval %d has no attribute on %s", keyval,
                     comm_label(comm));
    void *value = it->second;
    comm->attrs.erase(it);
    const int rc = run_delete(comm, keyval, value);
    if (rc != MPI_SUCCESS)
        return raise(comm, rc, "MPI_Comm_delete_attr", "the delete callback of keyval %d failed", keyval);
    return MPI_SUCCESS;
}

}  // extern "C"
