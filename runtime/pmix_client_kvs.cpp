// The PMIx backend's keys: put and get, the wire-up exchange (fence), and the snapshot kept after leaving.
#include <pmix.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/auth.hpp"
#include "runtime/log.hpp"
#include "runtime/pmix_client_internal.hpp"

namespace ftmpi::runtime::pmix {

void PmixManager::put(const std::string &key, const void *data, std::size_t len) {
    if (left_) throw std::runtime_error("PMIx: put(" + key + ") after the wire-up exchange");
    put_raw(key.c_str(), data, len);
    put_keys_.insert(key);
}

void PmixManager::exchange() {
    if (left_) throw std::runtime_error("PMIx: a second wire-up exchange");
    commit_and_fence();
    if (job_.secret.empty()) {
        const auto s = fetch(0, k_share_key, false);
        if (s.size() != auth::k_secret_size) fail("PMIx_Get(rank 0's ftmpi.share)", PMIX_ERR_NOT_FOUND);
        job_.secret.assign(s.begin(), s.end());
    }
    // What get() will be asked: the keys this process put, as every rank
    // published them (all ranks put the same kinds of keys and read only
    // those). One PMIx_Get per rank takes all it published (each PMIx_Get
    // is a round trip through PMIx's thread: at 256 ranks on 2 cores, one
    // per key made MPI_Init take seconds). Staying, get() asks PMIx for
    // anything else.
    for (int r = 0; r < job_.size; ++r) snapshot_rank(r);
    if (stay_) return;
    // Leaving: a key that did not come so is asked alone, and every rank's
    // identity is kept (for request_kill).
    std::vector<std::string> keys(put_keys_.begin(), put_keys_.end());
    keys.emplace_back(k_pid_key);
    for (int r = 0; r < job_.size; ++r) {
        for (const std::string &key : keys)
            if (!snapshot_.contains({r, key}))
                if (auto v = fetch(r, key.c_str(), true); !v.empty()) snapshot_[{r, key}] = std::move(v);
        const auto it = snapshot_.find({r, k_pid_key});
        if (it != snapshot_.end() && it->second.size() == sizeof(Identity)) {
            Identity id;
            std::memcpy(&id, it->second.data(), sizeof id);
            id.node[sizeof id.node - 1] = '\0';
            ids_[r] = id;
        }
    }
    // Leave the server: get() answers from the snapshot from now on.
    if (handler_ != k_no_handler) PMIx_Deregister_event_handler(handler_, nullptr, nullptr);
    const pmix_status_t rc = PMIx_Finalize(nullptr, 0);
    if (rc != PMIX_SUCCESS) FTMPI_WARN("PMIx_Finalize after the wire-up: %s", PMIx_Error_string(rc));
    left_ = true;
    FTMPI_DEBUG("left the PMIx server after the wire-up (FTMPI_LAUNCHER is not ftmpirun)");
}

std::vector<char> PmixManager::get_remote(int id, int id_base, const std::string &key) {
    if (left_ || id < id_base) return {};
    // ftmpirun's namespaces: "ftmpi.<pid>" for ids from 0, "ftmpi.<pid>.<base>" after.
    std::string ns = job_.nspace;
    if (const auto dot = ns.find('.', 6); dot != std::string::npos) ns.resize(dot);
    if (id_base != 0) ns += "." + std::to_string(id_base);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, ns.c_str(), static_cast<pmix_rank_t>(id - id_base));
    return fetch_from(p, key.c_str(), false);
}

std::vector<char> PmixManager::get(int rank, const std::string &key) {
    auto it = snapshot_.find({rank, key});
    if (it != snapshot_.end()) return it->second;
    return left_ ? std::vector<char>{} : fetch(rank, key.c_str(), false);
}

// Everything rank `r` published, in one PMIx_Get (a NULL key), into the
// snapshot: the keys this process put too, and its identity.
void PmixManager::snapshot_rank(int r) {
    pmix_proc_t p = proc(r);
    pmix_value_t *val = nullptr;
    if (PMIx_Get(&p, nullptr, nullptr, 0, &val) != PMIX_SUCCESS || val == nullptr) return;
    const pmix_data_array_t *all = val->type == PMIX_DATA_ARRAY ? val->data.darray : nullptr;
    if (all != nullptr && all->type == PMIX_INFO && all->array != nullptr) {
        const auto *info = static_cast<const pmix_info_t *>(all->array);
        for (std::size_t i = 0; i < all->size; ++i) {
            const pmix_value_t &v = info[i].value;
            const std::string key(info[i].key, strnlen(info[i].key, sizeof info[i].key));
            if (v.type != PMIX_BYTE_OBJECT || (key != k_pid_key && !put_keys_.contains(key))) continue;
            snapshot_[{r, key}].assign(v.data.bo.bytes, v.data.bo.bytes + v.data.bo.size);
        }
    }
    PMIX_VALUE_RELEASE(val);
}

void PmixManager::put_raw(const char *key, const void *data, std::size_t len) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = static_cast<char *>(const_cast<void *>(data));
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS) fail("PMIx_Put", rc);
}

pmix_proc_t PmixManager::proc(int rank) const {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me_.nspace, static_cast<pmix_rank_t>(rank));
    return p;
}

// An info `key` = true (PMIX_BOOL); the caller destructs it.
pmix_info_t PmixManager::true_info(const char *key) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, key, &yes, PMIX_BOOL);
    return info;
}

void PmixManager::commit_and_fence() {
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) fail("PMIx_Commit", rc);
    pmix_info_t info = true_info(PMIX_COLLECT_DATA);
    rc = PMIx_Fence(nullptr, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_Fence", rc);
}

// `optional`: look only at what the fence brought here, never ask the server for more.
std::vector<char> PmixManager::fetch(int rank, const char *key, bool optional) {
    return fetch_from(proc(rank), key, optional);
}

std::vector<char> PmixManager::fetch_from(const pmix_proc_t &p, const char *key, bool optional) {
    pmix_info_t info = true_info(PMIX_OPTIONAL);
    pmix_value_t *val = nullptr;
    std::vector<char> out;
    if (PMIx_Get(&p, key, optional ? &info : nullptr, optional ? 1 : 0, &val) == PMIX_SUCCESS && val != nullptr) {
        if (val->type == PMIX_BYTE_OBJECT) out.assign(val->data.bo.bytes, val->data.bo.bytes + val->data.bo.size);
        PMIX_VALUE_RELEASE(val);
    }
    PMIX_INFO_DESTRUCT(&info);
    return out;
}

}  // namespace ftmpi::runtime::pmix
