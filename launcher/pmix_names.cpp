// ftmpirun's name service (pmix_names.hpp).
#include "pmix_names.hpp"

#include <cstring>
#include <exception>

#include "upcall_queue.hpp"

namespace ftmpi::launcher::name_service {

pmix_status_t Store::publish(const Names &names) {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto &[k, v] : names)
        if (names_.count(k) != 0) return PMIX_EXISTS;
    for (const auto &[k, v] : names) names_[k] = v;  // one job: its names live until it ends
    return PMIX_SUCCESS;
}

pmix_status_t Store::lookup(const std::vector<std::string> &keys, Names &found) const {
    std::lock_guard<std::mutex> lk(mu_);
    pmix_status_t st = PMIX_SUCCESS;
    for (const std::string &k : keys) {
        auto it = names_.find(k);
        if (it == names_.end()) st = PMIX_ERR_NOT_FOUND;
        else found.emplace_back(it->first, it->second);
    }
    return st;
}

pmix_status_t Store::unpublish(const std::vector<std::string> &keys) {
    std::lock_guard<std::mutex> lk(mu_);
    pmix_status_t st = PMIX_SUCCESS;
    for (const std::string &k : keys)
        if (names_.erase(k) == 0) st = PMIX_ERR_NOT_FOUND;
    return st;
}

pmix_status_t Store::serve(Op op, const Names &names, Names &found) {
    std::vector<std::string> keys;
    for (const auto &[k, v] : names) keys.push_back(k);
    if (op == kPublish) return publish(names);
    if (op == kLookup) return lookup(keys, found);
    if (op == kUnpublish) return unpublish(keys);
    return PMIX_ERR_BAD_PARAM;
}

namespace {

std::string g_nspace;           // the first namespace, named as the publisher of every name
UpcallQueue *g_loop = nullptr;  // across nodes: where requests go
Store g_store;                  // one node: the job's names

// PMIx's own attributes ("pmix.*": the requester's uid and gid, range,
// persistence...) come along with the data; they are directives, not names.
bool is_directive(const pmix_info_t &i) { return std::strncmp(i.key, "pmix", 4) == 0; }

std::vector<std::string> keys_of(char **keys) {
    std::vector<std::string> out;
    for (size_t i = 0; keys != nullptr && keys[i] != nullptr; ++i) out.emplace_back(keys[i]);
    return out;
}

// A relayed request: to the loop, answered later.
pmix_status_t relay(Op op, Names names, pmix_op_cbfunc_t op_cb, pmix_lookup_cbfunc_t lookup_cb, void *cbdata) {
    if (g_loop == nullptr) return PMIX_ERR_NOT_SUPPORTED;
    Upcall u;
    u.kind = Upcall::Kind::kNames;
    u.status = op;
    u.names = std::move(names);
    u.op_cb = op_cb;
    u.lookup_cb = lookup_cb;
    u.cbdata = cbdata;
    g_loop->post(std::move(u));
    return PMIX_SUCCESS;
}

pmix_status_t up_publish(const pmix_proc_t *, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                         void *cbdata) {
    Names names;
    try {
        for (size_t i = 0; i < ninfo; ++i) {
            if (is_directive(info[i])) continue;
            if (info[i].value.type != PMIX_STRING || info[i].value.data.string == nullptr) {
                if (cbfunc) cbfunc(PMIX_ERR_BAD_PARAM, cbdata);
                return PMIX_SUCCESS;
            }
            names.emplace_back(info[i].key, info[i].value.data.string);
        }
        if (g_loop) return relay(kPublish, std::move(names), cbfunc, nullptr, cbdata);
    } catch (const std::exception &) {
        return PMIX_ERR_NOMEM;
    }
    const pmix_status_t st = g_store.publish(names);
    if (cbfunc) cbfunc(st, cbdata);
    return PMIX_SUCCESS;
}

pmix_status_t up_lookup(const pmix_proc_t *, char **keys, const pmix_info_t[], size_t, pmix_lookup_cbfunc_t cbfunc,
                        void *cbdata) {
    Names found;
    pmix_status_t st = PMIX_SUCCESS;
    try {
        if (g_loop) {
            Names asked;
            for (const std::string &k : keys_of(keys)) asked.emplace_back(k, "");
            return relay(kLookup, std::move(asked), nullptr, cbfunc, cbdata);
        }
        st = g_store.lookup(keys_of(keys), found);
    } catch (const std::exception &) {
        return PMIX_ERR_NOMEM;
    }
    answer_lookup(cbfunc, cbdata, st, found);
    return PMIX_SUCCESS;
}

pmix_status_t up_unpublish(const pmix_proc_t *, char **keys, const pmix_info_t[], size_t, pmix_op_cbfunc_t cbfunc,
                           void *cbdata) {
    pmix_status_t st = PMIX_SUCCESS;
    try {
        if (g_loop) {
            Names asked;
            for (const std::string &k : keys_of(keys)) asked.emplace_back(k, "");
            return relay(kUnpublish, std::move(asked), cbfunc, nullptr, cbdata);
        }
        st = g_store.unpublish(keys_of(keys));
    } catch (const std::exception &) {
        return PMIX_ERR_NOMEM;
    }
    if (cbfunc) cbfunc(st, cbdata);
    return PMIX_SUCCESS;
}

}  // namespace

void answer_lookup(pmix_lookup_cbfunc_t cb, void *cbdata, pmix_status_t st, const Names &found) {
    pmix_pdata_t *data = nullptr;
    if (st == PMIX_SUCCESS && !found.empty()) {
        PMIX_PDATA_CREATE(data, found.size());
        for (size_t i = 0; i < found.size(); ++i) {
            PMIX_LOAD_PROCID(&data[i].proc, g_nspace.c_str(), PMIX_RANK_WILDCARD);  // the publisher is not kept
            PMIX_PDATA_LOAD(&data[i], &data[i].proc, found[i].first.c_str(), found[i].second.c_str(), PMIX_STRING);
        }
    }
    if (cb) cb(st, data, data != nullptr ? found.size() : 0, cbdata);  // PMIx copies the data
    if (data != nullptr) PMIX_PDATA_FREE(data, found.size());
}

void set_nspace(const std::string &ns) { g_nspace = ns; }


void install(pmix_server_module_t &m) {
    m.publish = up_publish;
    m.lookup = up_lookup;
    m.unpublish = up_unpublish;
}

void relay_to(UpcallQueue *loop) { g_loop = loop; }

}  // namespace ftmpi::launcher::name_service
