// PMIx backend of the process-manager contract.
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "runtime/config.hpp"
#include "runtime/events.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/sockets.hpp"

namespace ftmpi::runtime {
namespace {

[[noreturn]] void fail(const char *call, pmix_status_t rc) {
    throw std::runtime_error(std::string(call) + " failed: " + PMIx_Error_string(rc));
}

// The namespace whose failures we report (set before the handler is registered).
char g_nspace[PMIX_MAX_NSLEN + 1];

// PMIx event thread. Copies the victim's rank and returns at once.
void on_proc_event(size_t, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t *, size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
                   void *cbdata) {
    const pmix_proc_t *victim = source;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            victim = info[i].value.data.proc;
    }
    if (victim != nullptr && PMIX_CHECK_NSPACE(victim->nspace, g_nspace) &&
        victim->rank != PMIX_RANK_WILDCARD && victim->rank != PMIX_RANK_UNDEF) {
        if (config().LAUNCHER_EVENTS != 0) post_peer_terminated(static_cast<int>(victim->rank));
    } else if (status == PMIX_ERR_LOST_CONNECTION) {
        // The launcher is gone; PR_SET_PDEATHSIG normally ends us first.
        FTMPI_WARN("lost the connection to the PMIx server");
    }
    if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

class PmixManager final : public ProcessManager {
public:
    PmixManager() {
        pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
        if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
        disable_nagle_on_tcp_sockets();  // events would otherwise wait ~40 ms
        job_.singleton = false;
        job_.nspace = me_.nspace;
        job_.rank = static_cast<int>(me_.rank);
        std::strncpy(g_nspace, me_.nspace, PMIX_MAX_NSLEN);

        pmix_proc_t wild;
        PMIX_LOAD_PROCID(&wild, me_.nspace, PMIX_RANK_WILDCARD);
        job_.size = static_cast<int>(get_u32(&wild, PMIX_JOB_SIZE, 0));
        if (job_.size <= 0) fail("PMIx_Get(PMIX_JOB_SIZE)", PMIX_ERR_NOT_FOUND);
        job_.universe_size = static_cast<int>(get_u32(&wild, PMIX_UNIV_SIZE, job_.size));
        job_.appnum = static_cast<int>(get_u32(&me_, PMIX_APPNUM, 0));

        pmix_value_t *val = nullptr;
        if (PMIx_Get(&wild, PMIX_LOCAL_PEERS, nullptr, 0, &val) == PMIX_SUCCESS && val != nullptr) {
            if (val->type == PMIX_STRING && val->data.string != nullptr) {
                std::stringstream ss(val->data.string);
                std::string item;
                while (std::getline(ss, item, ',')) job_.local_peers.push_back(std::atoi(item.c_str()));
            }
            PMIX_VALUE_RELEASE(val);
        }
        if (job_.local_peers.empty()) job_.local_peers.push_back(job_.rank);

        pmix_status_t codes[] = {PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_TERM_WO_SYNC,
                                 PMIX_ERR_PROC_ABORTED, PMIX_ERR_LOST_CONNECTION};
        rc = PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0], nullptr, 0,
                                         on_proc_event, nullptr, nullptr);
        if (rc < 0) FTMPI_WARN("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
    }

    // No PMIx_Finalize here: a process that exits without MPI_Finalize must
    // look to the launcher like the failed process it is (DESIGN.md: "a rank
    // that ends without calling MPI_Finalize has failed").
    ~PmixManager() override = default;

    const JobInfo &job() const override { return job_; }

    void put(const std::string &key, const void *data, std::size_t len) override {
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = static_cast<char *>(const_cast<void *>(data));
        v.data.bo.size = len;
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
        if (rc != PMIX_SUCCESS) fail("PMIx_Put", rc);
    }

    void exchange() override {
        pmix_status_t rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) fail("PMIx_Commit", rc);
        pmix_info_t info;
        bool collect = true;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(nullptr, 0, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        if (rc != PMIX_SUCCESS) fail("PMIx_Fence", rc);
    }

    std::vector<char> get(int rank, const std::string &key) override {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me_.nspace, static_cast<pmix_rank_t>(rank));
        pmix_value_t *val = nullptr;
        std::vector<char> out;
        if (PMIx_Get(&p, key.c_str(), nullptr, 0, &val) == PMIX_SUCCESS && val != nullptr) {
            if (val->type == PMIX_BYTE_OBJECT)
                out.assign(val->data.bo.bytes, val->data.bo.bytes + val->data.bo.size);
            PMIX_VALUE_RELEASE(val);
        }
        return out;
    }

    [[noreturn]] void abort(int code, const std::string &message) override {
        PMIx_Abort(code, message.c_str(), nullptr, 0);
        ::_exit(code != 0 ? code : 1);
    }

    bool request_kill(int rank) override {
        pmix_proc_t target;
        PMIX_LOAD_PROCID(&target, me_.nspace, static_cast<pmix_rank_t>(rank));
        pmix_info_t directive;
        bool yes = true;
        PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
        pmix_info_t *results = nullptr;
        size_t nresults = 0;
        pmix_status_t rc = PMIx_Job_control(&target, 1, &directive, 1, &results, &nresults);
        PMIX_INFO_DESTRUCT(&directive);
        if (results != nullptr) PMIX_INFO_FREE(results, nresults);
        return rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED;
    }

    void finalize() override {
        if (finalized_) return;
        finalized_ = true;
        PMIx_Finalize(nullptr, 0);
    }

private:
    static uint32_t get_u32(const pmix_proc_t *p, const char *key, uint32_t dflt) {
        pmix_value_t *val = nullptr;
        uint32_t out = dflt;
        if (PMIx_Get(p, key, nullptr, 0, &val) == PMIX_SUCCESS && val != nullptr) {
            if (val->type == PMIX_UINT32) out = val->data.uint32;
            else if (val->type == PMIX_INT) out = static_cast<uint32_t>(val->data.integer);
            else if (val->type == PMIX_UINT16) out = val->data.uint16;
            PMIX_VALUE_RELEASE(val);
        }
        return out;
    }

    pmix_proc_t me_{};
    JobInfo job_;
    bool finalized_ = false;
};

// Singleton: a one-process job with no process manager at all.
class SingletonManager final : public ProcessManager {
public:
    SingletonManager() { job_.local_peers = {0}; }
    const JobInfo &job() const override { return job_; }
    void put(const std::string &key, const void *data, std::size_t len) override {
        auto p = static_cast<const char *>(data);
        kv_[key].assign(p, p + len);
    }
    void exchange() override {}
    std::vector<char> get(int rank, const std::string &key) override {
        if (rank != 0) return {};
        auto it = kv_.find(key);
        return it == kv_.end() ? std::vector<char>{} : it->second;
    }
    [[noreturn]] void abort(int code, const std::string &) override { ::_exit(code != 0 ? code : 1); }
    bool request_kill(int) override { return false; }
    void finalize() override {}

private:
    JobInfo job_;
    std::map<std::string, std::vector<char>> kv_;
};

}  // namespace

std::unique_ptr<ProcessManager> connect_process_manager() {
    // A PMIx launcher always names the namespace; without one this is a singleton.
    if (std::getenv("PMIX_NAMESPACE") == nullptr) return std::make_unique<SingletonManager>();
    return std::make_unique<PmixManager>();
}

}  // namespace ftmpi::runtime
