// MPI_Info objects: ordered (key, value) string pairs.
#include "mpi/info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "mpi/checks.hpp"

extern "C" {
ftmpi_predefined_info_s ftmpi_info_env;
}

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

// MPI_INFO_ENV is predefined: reading it is fine, changing or freeing it is not.
int check_writable(const char *call, MPI_Info info) {
    if (info != MPI_INFO_ENV) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_INFO, call, "MPI_INFO_ENV is predefined and read-only");
}

auto find(MPI_Info info, const char *key) {
    return std::find_if(info->entries.begin(), info->entries.end(), [&](const auto &e) { return e.first == key; });
}

// The hints each kind of object takes. Communicators: MPI 4.0's assertions
// (accepted; they change nothing here). Windows: MPI-3.1 §11.2.1's keys
// (accepted; ftmpi's one-sided code serves every combination). Files: the
// keys MPI-3.1 §13.2.8 reserves, and ROMIO's two that mpi/io/aggregate.cpp
// reads with cb_nodes and cb_buffer_size.
constexpr std::array<std::string_view, 4> k_comm_hints = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
                                                          "mpi_assert_exact_length", "mpi_assert_allow_overtaking"};
constexpr std::array<std::string_view, 6> k_win_hints = {"no_locks",  "accumulate_ordering", "accumulate_ops",
                                                         "same_size", "same_disp_unit",      "alloc_shared_noncontig"};
constexpr std::array<std::string_view, 17> k_file_hints = {
    "access_style", "collective_buffering", "cb_block_size", "cb_buffer_size", "cb_nodes",      "chunked",
    "chunked_item", "chunked_size",         "filename",      "file_perm",      "io_node_list",  "nb_proc",
    "num_io_nodes", "striping_factor",      "striping_unit", "romio_cb_read",  "romio_cb_write"};

bool takes(HintKind kind, const std::string &key) {
    auto in = [&](const auto &keys) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
    switch (kind) {
    case HintKind::comm: return in(k_comm_hints);
    case HintKind::win: return in(k_win_hints);
    case HintKind::file: return in(k_file_hints);
    }
    return false;
}

}  // namespace

void merge_hints(Hints &into, MPI_Info info, HintKind kind) {
    if (info == MPI_INFO_NULL) return;
    for (const auto &e : info->entries) {
        if (!takes(kind, e.first)) continue;
        auto it = std::find_if(into.begin(), into.end(), [&](const auto &x) { return x.first == e.first; });
        if (it != into.end()) it->second = e.second;
        else into.push_back(e);
    }
}

const char *thread_level_name(int level) {
    static constexpr const char *levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                             "MPI_THREAD_MULTIPLE"};
    if (level < MPI_THREAD_SINGLE || level > MPI_THREAD_MULTIPLE) return nullptr;
    return levels[level - MPI_THREAD_SINGLE];
}

namespace {

// The command line as the kernel holds it (MPI_Init may get NULL argc/argv).
std::vector<std::string> cmdline_args() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string raw{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<std::string> args;
    for (std::size_t at = 0; at < raw.size();) {
        const std::size_t end = std::min(raw.find('\0', at), raw.size());
        args.emplace_back(raw.substr(at, end - at));
        at = end + 1;
    }
    return args;
}

// MPI_INFO_ENV's keys (MPI-3.1 §9.1.2); size and thread_level are left out
// when unknown (0 and -1: MPI_Info_create_env before MPI_Init).
Hints env_hints(const std::vector<std::string> &args, int size, int thread_level) {
    Hints env;
    if (!args.empty()) {
        env.emplace_back("command", args.front());
        std::string rest;
        for (std::size_t i = 1; i < args.size(); ++i) rest += (i > 1 ? " " : "") + args[i];
        if (!rest.empty()) env.emplace_back("argv", rest);
    }
    if (size > 0) env.emplace_back("maxprocs", std::to_string(size));
    if (char cwd[4096]; ::getcwd(cwd, sizeof cwd) != nullptr) env.emplace_back("wdir", cwd);
    if (char host[256] = {}; ::gethostname(host, sizeof host - 1) == 0) env.emplace_back("host", host);
    if (utsname u{}; ::uname(&u) == 0) env.emplace_back("arch", u.machine);
    if (const char *name = thread_level_name(thread_level)) env.emplace_back("thread_level", name);
    return env;
}

int g_env_size = 0, g_env_level = -1;  // as MPI_Init saw them

}  // namespace

void fill_info_env(int size, int thread_level) {
    g_env_size = size;
    g_env_level = thread_level;
    ftmpi_info_env.obj.entries = env_hints(cmdline_args(), size, thread_level);
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
    FTMPI_CHECK(check_writable("MPI_Info_free", *info));
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
    FTMPI_CHECK(check_writable("MPI_Info_set", info));
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
    FTMPI_CHECK(check_writable("MPI_Info_delete", info));
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

// MPI 4.0 §11.4.4: a new info object built as MPI_INFO_ENV is, from these
// arguments (the kernel's command line when argv is NULL). Callable before
// MPI_Init; the job's size and thread level are known only after it.
int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info) {
    FTMPI_CHECK(check_nonnull("MPI_Info_create_env", MPI_COMM_NULL, info, "info"));
    if (argv != nullptr && argc < 0)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_create_env", "negative argc %d", argc);
    std::vector<std::string> args;
    if (argv == nullptr) args = cmdline_args();
    for (int i = 0; argv != nullptr && i < argc && argv[i] != nullptr; ++i) args.emplace_back(argv[i]);
    *info = info_of(env_hints(args, g_env_size, g_env_level));
    return MPI_SUCCESS;
}

// MPI 4.0: the value and, in *buflen, its length with the NUL; at most
// *buflen - 1 characters are copied (none when *buflen is 0).
int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag) {
    FTMPI_CHECK(check_info("MPI_Info_get_string", info));
    FTMPI_CHECK(check_key("MPI_Info_get_string", key));
    FTMPI_CHECK(check_nonnull("MPI_Info_get_string", MPI_COMM_NULL, buflen, "buflen"));
    FTMPI_CHECK(check_nonnull("MPI_Info_get_string", MPI_COMM_NULL, flag, "flag"));
    if (*buflen < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_string", "negative *buflen %d", *buflen);
    auto it = find(info, key);
    *flag = it != info->entries.end() ? 1 : 0;
    if (!*flag) return MPI_SUCCESS;
    const std::size_t room = static_cast<std::size_t>(*buflen);
    if (room > 0) {
        FTMPI_CHECK(check_nonnull("MPI_Info_get_string", MPI_COMM_NULL, value, "value"));
        const std::size_t n = std::min(it->second.size(), room - 1);
        std::memcpy(value, it->second.data(), n);
        value[n] = '\0';
    }
    *buflen = static_cast<int>(it->second.size() + 1);
    return MPI_SUCCESS;
}

// Communicator hints: the ones communicators take (merge_hints) are kept and
// returned by MPI_Comm_get_info; none changes how ftmpi communicates.
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
    FTMPI_TRY(check_init("MPI_Comm_set_info"));
    FTMPI_CHECK(check_comm("MPI_Comm_set_info", comm));
    if (info == MPI_INFO_NULL || info->magic != Magic::info)
        return raise(comm, MPI_ERR_INFO, "MPI_Comm_set_info", "invalid info (argument info)");
    merge_hints(comm->info, info, HintKind::comm);
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
    FTMPI_CHECK(check_info_arg("MPI_Comm_dup_with_info", comm, info));
    FTMPI_TRY(MPI_Comm_dup(comm, newcomm));
    (*newcomm)->info.clear();
    merge_hints((*newcomm)->info, info, HintKind::comm);
    return MPI_SUCCESS;
}

}  // extern "C"
