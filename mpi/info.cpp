// MPI_Info objects: ordered (key, value) string pairs.
#include "mpi/info.hpp"

#include <algorithm>
#include <cstring>

#include "mpi/checks.hpp"

namespace ftmpi::mpi {
namespace {

int check_info(const char *call, MPI_Info info) {
    if (info != MPI_INFO_NULL && info->magic == Magic::info) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_INFO, call, "invalid info (argument info is %s)",
                 info == MPI_INFO_NULL ? "MPI_INFO_NULL" : "not an info object");
}

int check_key(const char *call, const char *key) {
    if (key == nullptr) return raise(MPI_COMM_NULL, MPI_ERR_INFO_KEY, call, "argument key is NULL");
    const std::size_t n = std::strlen(key);
    if (n == 0 || n > MPI_MAX_INFO_KEY)
        return raise(MPI_COMM_NULL, MPI_ERR_INFO_KEY, call, "invalid key of %zu characters (1..%d allowed)", n,
                     MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

auto find(MPI_Info info, const char *key) {
    return std::find_if(info->entries.begin(), info->entries.end(), [&](const auto &e) { return e.first == key; });
}

}  // namespace

void merge_hints(Hints &into, MPI_Info info) {
    for (const auto &e : info->entries) {
        auto it = std::find_if(into.begin(), into.end(), [&](const auto &x) { return x.first == e.first; });
        if (it != into.end()) it->second = e.second;
        else into.push_back(e);
    }
}

MPI_Info info_of(const Hints &hints) { return new ftmpi_info_s{Magic::info, hints}; }

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Info_create(MPI_Info *info) {
    FTMPI_CHECK(check_nonnull("MPI_Info_create", MPI_COMM_NULL, info, "info"));
    *info = new ftmpi_info_s;
    return MPI_SUCCESS;
}

int MPI_Info_free(MPI_Info *info) {
    FTMPI_CHECK(check_nonnull("MPI_Info_free", MPI_COMM_NULL, info, "info"));
    FTMPI_CHECK(check_info("MPI_Info_free", *info));
    (*info)->magic = Magic::dead;
    delete *info;
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo) {
    FTMPI_CHECK(check_info("MPI_Info_dup", info));
    FTMPI_CHECK(check_nonnull("MPI_Info_dup", MPI_COMM_NULL, newinfo, "newinfo"));
    *newinfo = new ftmpi_info_s{Magic::info, info->entries};
    return MPI_SUCCESS;
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value) {
    FTMPI_CHECK(check_info("MPI_Info_set", info));
    FTMPI_CHECK(check_key("MPI_Info_set", key));
    if (value == nullptr) return raise(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set", "argument value is NULL");
    if (const std::size_t n = std::strlen(value); n == 0 || n > MPI_MAX_INFO_VAL)
        return raise(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set",
                     "invalid value of %zu characters for key '%s' (1..%d allowed)", n, key, MPI_MAX_INFO_VAL);
    if (auto it = find(info, key); it != info->entries.end()) it->second = value;
    else info->entries.emplace_back(key, value);
    return MPI_SUCCESS;
}

int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag) {
    FTMPI_CHECK(check_info("MPI_Info_get", info));
    FTMPI_CHECK(check_key("MPI_Info_get", key));
    FTMPI_CHECK(check_nonnull("MPI_Info_get", MPI_COMM_NULL, flag, "flag"));
    if (valuelen < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get", "negative valuelen %d", valuelen);
    auto it = find(info, key);
    *flag = it != info->entries.end() ? 1 : 0;
    if (!*flag) return MPI_SUCCESS;
    FTMPI_CHECK(check_nonnull("MPI_Info_get", MPI_COMM_NULL, value, "value"));
    // At most valuelen characters, then the terminating NUL (value holds valuelen + 1).
    const std::size_t n = std::min<std::size_t>(it->second.size(), static_cast<std::size_t>(valuelen));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
    return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag) {
    FTMPI_CHECK(check_info("MPI_Info_get_valuelen", info));
    FTMPI_CHECK(check_key("MPI_Info_get_valuelen", key));
    FTMPI_CHECK(check_nonnull("MPI_Info_get_valuelen", MPI_COMM_NULL, valuelen, "valuelen"));
    FTMPI_CHECK(check_nonnull("MPI_Info_get_valuelen", MPI_COMM_NULL, flag, "flag"));
    auto it = find(info, key);
    *flag = it != info->entries.end() ? 1 : 0;
    if (*flag) *valuelen = static_cast<int>(it->second.size());
    return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char *key) {
    FTMPI_CHECK(check_info("MPI_Info_delete", info));
    FTMPI_CHECK(check_key("MPI_Info_delete", key));
    auto it = find(info, key);
    if (it == info->entries.end())
        return raise(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "no key '%s' in the info object", key);
    info->entries.erase(it);
    return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int *nkeys) {
    FTMPI_CHECK(check_info("MPI_Info_get_nkeys", info));
    FTMPI_CHECK(check_nonnull("MPI_Info_get_nkeys", MPI_COMM_NULL, nkeys, "nkeys"));
    *nkeys = static_cast<int>(info->entries.size());
    return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char *key) {
    FTMPI_CHECK(check_info("MPI_Info_get_nthkey", info));
    FTMPI_CHECK(check_nonnull("MPI_Info_get_nthkey", MPI_COMM_NULL, key, "key"));
    if (n < 0 || static_cast<std::size_t>(n) >= info->entries.size())
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey", "invalid n %d (the info object has %zu keys)",
                     n, info->entries.size());
    std::strcpy(key, info->entries[static_cast<std::size_t>(n)].first.c_str());
    return MPI_SUCCESS;
}

// Communicator hints: kept as given and returned by MPI_Comm_get_info; none
// changes how ftmpi communicates.
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
    FTMPI_TRY(check_init("MPI_Comm_set_info"));
    FTMPI_CHECK(check_comm("MPI_Comm_set_info", comm));
    if (info == MPI_INFO_NULL || info->magic != Magic::info)
        return raise(comm, MPI_ERR_INFO, "MPI_Comm_set_info", "invalid info (argument info)");
    merge_hints(comm->info, info);
    return MPI_SUCCESS;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used) {
    FTMPI_TRY(check_init("MPI_Comm_get_info"));
    FTMPI_CHECK(check_comm("MPI_Comm_get_info", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_get_info", comm, info_used, "info_used"));
    *info_used = info_of(comm->info);
    return MPI_SUCCESS;
}

// MPI_Comm_dup, then the new communicator's hints are `info` (not comm's).
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    FTMPI_TRY(check_init("MPI_Comm_dup_with_info"));
    if (info != MPI_INFO_NULL && info->magic != Magic::info)
        return raise(comm, MPI_ERR_INFO, "MPI_Comm_dup_with_info", "invalid info (argument info)");
    FTMPI_TRY(MPI_Comm_dup(comm, newcomm));
    (*newcomm)->info.clear();
    if (info != MPI_INFO_NULL) (*newcomm)->info = info->entries;
    return MPI_SUCCESS;
}

}  // extern "C"
