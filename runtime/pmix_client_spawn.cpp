// The PMIx backend's calls for dynamic processes: MPI_Comm_spawn (PMIx_Spawn) and the name service (publish/lookup).
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/log.hpp"
#include "runtime/pmix_client_internal.hpp"

namespace ftmpi::runtime::pmix {

std::string PmixManager::why_no_spawn() const {
    if (stay_) return "";
    return "this job's PMIx server is not ftmpirun's (Slurm's srun or another launcher): ftmpi leaves it after "
           "the wire-up, and it does not start processes for a running job";
}

bool PmixManager::spawn(const std::vector<SpawnApp> &apps, SpawnedJob &out, std::string &why) {
    if (!why_no_spawn().empty()) {
        why = why_no_spawn();
        return false;
    }
    pmix_app_t *papps = nullptr;
    PMIX_APP_CREATE(papps, apps.size());
    auto strv = [](const std::vector<std::string> &v) {
        char **a = static_cast<char **>(std::calloc(v.size() + 1, sizeof(char *)));
        for (std::size_t i = 0; a != nullptr && i < v.size(); ++i) a[i] = ::strdup(v[i].c_str());
        return a;
    };
    int total = 0;
    for (std::size_t i = 0; i < apps.size(); ++i) {
        const SpawnApp &a = apps[i];
        papps[i].cmd = ::strdup(a.command.c_str());
        std::vector<std::string> argv{a.command};
        argv.insert(argv.end(), a.argv.begin(), a.argv.end());
        papps[i].argv = strv(argv);
        papps[i].env = strv(a.env);
        if (!a.wdir.empty()) papps[i].cwd = ::strdup(a.wdir.c_str());
        papps[i].maxprocs = a.maxprocs;
        if (!a.host.empty()) {
            PMIX_INFO_CREATE(papps[i].info, 1);
            papps[i].ninfo = 1;
            PMIX_INFO_LOAD(&papps[i].info[0], PMIX_HOST, a.host.c_str(), PMIX_STRING);
        }
        total += a.maxprocs;
    }
    char ns[PMIX_MAX_NSLEN + 1] = {};
    const pmix_status_t rc = PMIx_Spawn(nullptr, 0, papps, apps.size(), ns);
    PMIX_APP_FREE(papps, apps.size());
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        why = std::string("PMIx_Spawn: ") + PMIx_Error_string(rc);
        return false;
    }
    out.nspace = ns;
    out.id_base = id_base_of(ns);
    out.size = total;
    if (out.id_base < 0) {
        why = std::string("the launcher started namespace ") + ns + ", which does not name its process ids";
        kill_job(out);
        return false;
    }
    spawned_[out.id_base] = out;
    return true;
}

void PmixManager::kill_job(const SpawnedJob &job) {
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, job.nspace.c_str(), PMIX_RANK_WILDCARD);
    if (!send_kill(target, "spawned job " + job.nspace))
        FTMPI_WARN("could not kill spawned job %s", job.nspace.c_str());
}

ProcessManager::Names PmixManager::publish(const std::string &service, const std::string &port, std::string &why) {
    std::string key;
    if (const Names n = name_key(service, key, why); n != Names::ok) return n;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, key.c_str(), port.c_str(), PMIX_STRING);
    const pmix_status_t rc = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return name_status("PMIx_Publish", rc, why);
}

ProcessManager::Names PmixManager::lookup(const std::string &service, std::string &port, std::string &why) {
    std::string key;
    if (const Names n = name_key(service, key, why); n != Names::ok) return n;
    pmix_pdata_t data;
    PMIX_PDATA_CONSTRUCT(&data);
    PMIX_LOAD_KEY(data.key, key.c_str());
    const pmix_status_t rc = PMIx_Lookup(&data, 1, nullptr, 0);
    Names n = name_status("PMIx_Lookup", rc, why);
    if (n == Names::ok) {
        if (data.value.type == PMIX_STRING && data.value.data.string != nullptr) port = data.value.data.string;
        else n = Names::not_found;
    }
    PMIX_PDATA_DESTRUCT(&data);
    return n;
}

ProcessManager::Names PmixManager::unpublish(const std::string &service, std::string &why) {
    std::string key;
    if (const Names n = name_key(service, key, why); n != Names::ok) return n;
    char *keys[] = {key.data(), nullptr};
    return name_status("PMIx_Unpublish", PMIx_Unpublish(keys, nullptr, 0), why);
}

// The PMIx key of a service name (keys are short: longer names are refused).
ProcessManager::Names PmixManager::name_key(const std::string &service, std::string &key, std::string &why) const {
    if (left_) {
        why = "no name service: this job's PMIx server (not ftmpirun) was left after the wire-up";
        return Names::unavailable;
    }
    key = "ftmpi.service." + service;
    if (key.size() >= PMIX_MAX_KEYLEN) {
        why = "the service name is too long (at most " + std::to_string(PMIX_MAX_KEYLEN - 15) + " characters)";
        return Names::unavailable;
    }
    return Names::ok;
}

ProcessManager::Names PmixManager::name_status(const char *call, pmix_status_t rc, std::string &why) {
    if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) return Names::ok;
    if (rc == PMIX_ERR_NOT_FOUND) return Names::not_found;
    if (rc == PMIX_EXISTS) return Names::exists;
    why = std::string(call) + ": " + PMIx_Error_string(rc);
    return Names::unavailable;
}

}  // namespace ftmpi::runtime::pmix
