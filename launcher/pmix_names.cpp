// ftmpirun's name service (pmix_names.hpp).
#include "pmix_names.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ftmpi::launcher::name_service {
namespace {

std::string g_nspace;  // the first namespace, named as the publisher of every name

// A store of the job's published names, served on the PMIx progress thread
// (nothing here touches the job's state): each upcall answers at once.

std::mutex g_names_mu;
std::map<std::string, std::string> g_names;  // PMIx key -> the published string

// PMIx's own attributes ("pmix.*": the requester's uid and gid, range,
// persistence...) come along with the data; they are directives, not names.
bool is_directive(const pmix_info_t &i) { return std::strncmp(i.key, "pmix", 4) == 0; }

pmix_status_t up_publish(const pmix_proc_t *, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                         void *cbdata) {
    pmix_status_t st = PMIX_SUCCESS;
    {
        std::lock_guard<std::mutex> lk(g_names_mu);
        for (size_t i = 0; i < ninfo && st == PMIX_SUCCESS; ++i) {
            if (is_directive(info[i])) continue;  // one job: its names live until it ends
            if (info[i].value.type != PMIX_STRING || info[i].value.data.string == nullptr) st = PMIX_ERR_BAD_PARAM;
            else if (g_names.count(info[i].key) != 0) st = PMIX_EXISTS;
        }
        for (size_t i = 0; i < ninfo && st == PMIX_SUCCESS; ++i)
            if (!is_directive(info[i])) g_names[info[i].key] = info[i].value.data.string;
    }
    if (cbfunc) cbfunc(st, cbdata);
    return PMIX_SUCCESS;
}

pmix_status_t up_lookup(const pmix_proc_t *, char **keys, const pmix_info_t[], size_t, pmix_lookup_cbfunc_t cbfunc,
                        void *cbdata) {
    std::vector<std::pair<std::string, std::string>> found;
    pmix_status_t st = PMIX_SUCCESS;
    {
        std::lock_guard<std::mutex> lk(g_names_mu);
        for (size_t i = 0; keys != nullptr && keys[i] != nullptr; ++i) {
            auto it = g_names.find(keys[i]);
            if (it == g_names.end()) st = PMIX_ERR_NOT_FOUND;
            else found.emplace_back(it->first, it->second);
        }
    }
    pmix_pdata_t *data = nullptr;
    if (st == PMIX_SUCCESS && !found.empty()) {
        PMIX_PDATA_CREATE(data, found.size());
        for (size_t i = 0; i < found.size(); ++i) {
            PMIX_LOAD_PROCID(&data[i].proc, g_nspace.c_str(), PMIX_RANK_WILDCARD);  // the publisher is not kept
            PMIX_PDATA_LOAD(&data[i], &data[i].proc, found[i].first.c_str(), found[i].second.c_str(), PMIX_STRING);
        }
    }
    if (cbfunc) cbfunc(st, data, data != nullptr ? found.size() : 0, cbdata);  // PMIx copies the data
    if (data != nullptr) PMIX_PDATA_FREE(data, found.size());
    return PMIX_SUCCESS;
}

pmix_status_t up_unpublish(const pmix_proc_t *, char **keys, const pmix_info_t[], size_t, pmix_op_cbfunc_t cbfunc,
                           void *cbdata) {
    pmix_status_t st = PMIX_SUCCESS;
    {
        std::lock_guard<std::mutex> lk(g_names_mu);
        for (size_t i = 0; keys != nullptr && keys[i] != nullptr; ++i)
            if (g_names.erase(keys[i]) == 0) st = PMIX_ERR_NOT_FOUND;
    }
    if (cbfunc) cbfunc(st, cbdata);
    return PMIX_SUCCESS;
}

}  // namespace

void set_nspace(const std::string &ns) { g_nspace = ns; }

void install(pmix_server_module_t &m) {
    m.publish = up_publish;
    m.lookup = up_lookup;
    m.unpublish = up_unpublish;
}

}  // namespace ftmpi::launcher::name_service
