// PMIx backend of the process-manager contract.
//
// Two ways to use the server (see runtime/process_manager.hpp):
// - Under ftmpirun (FTMPI_LAUNCHER=ftmpirun in the environment) the connection
//   stays for the whole job: failure events, PMIx_Job_control kills and
//   PMIx_Abort.
// - Under any other server (Slurm's --mpi=pmix, prterun) the process leaves
//   the server cleanly (PMIx_Finalize) as soon as the wire-up exchange is over,
//   keeping a snapshot of what it will still read. Slurm 22.05's pmix plugin
//   registers a default event handler that kills the whole step on any event
//   (src/plugins/mpi/pmix/pmixp_client_v2.c: _errhandler calls
//   slurm_kill_job_step(SIGKILL)), and the PMIx server library raises
//   PMIX_ERR_LOST_CONNECTION when a client that has not finalized closes its
//   socket (pmix_ptl_base_lost_connection). A rank that dies after leaving is
//   no lost connection, so the step lives on. Such servers send ftmpi no
//   failure events anyway: the heartbeat and the transport find failures.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pmix.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "runtime/config.hpp"
#include "runtime/events.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/auth.hpp"
#include "runtime/sockets.hpp"

extern "C" char **environ;

namespace ftmpi::runtime {
namespace {

[[noreturn]] void fail(const char *call, pmix_status_t rc) {
    throw std::runtime_error(std::string(call) + " failed: " + PMIx_Error_string(rc));
}

// This process's namespace (set before the handler is registered).
char g_nspace[PMIX_MAX_NSLEN + 1];

// The first process id of namespace `ns` (process_manager.hpp): ftmpirun
// names the namespace of ids from B on "ftmpi.<pid>.<B>" (its first one
// "ftmpi.<pid>", from 0). Any other namespace: 0 if it is this process's,
// -1 (unknown) otherwise.
int id_base_of(const char *ns) {
    const char *p = ns;
    if (std::strncmp(p, "ftmpi.", 6) == 0) {
        p += 6;
        while (*p >= '0' && *p <= '9') ++p;
        if (p != ns + 6 && *p == '\0') return 0;
        if (p != ns + 6 && *p == '.' && p[1] >= '0' && p[1] <= '9') {
            char *end = nullptr;
            const long b = std::strtol(p + 1, &end, 10);
            if (*end == '\0' && b >= 0 && b < INT32_MAX) return static_cast<int>(b);
        }
    }
    return PMIX_CHECK_NSPACE(ns, g_nspace) ? 0 : -1;
}

// PMIx event thread. Copies the victim's process id and returns at once.
void on_proc_event(size_t, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t *, size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
                   void *cbdata) {
    const pmix_proc_t *victim = source;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            victim = info[i].value.data.proc;
    }
    const int base = victim != nullptr ? id_base_of(victim->nspace) : -1;
    if (base >= 0 && victim->rank != PMIX_RANK_WILDCARD && victim->rank != PMIX_RANK_UNDEF) {
        if (config().LAUNCHER_EVENTS != 0) post_peer_terminated(base + static_cast<int>(victim->rank));
    } else if (status == PMIX_ERR_LOST_CONNECTION) {
        // The launcher is gone; PR_SET_PDEATHSIG normally ends us first.
        FTMPI_WARN("lost the connection to the PMIx server");
    }
    if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

// Field 22 of /proc/<pid>/stat, the start time in clock ticks since boot. With
// the pid it names one process: pids are reused, (pid, start time) pairs not.
unsigned long long start_time(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 > stat.size()) return 0;
    std::istringstream rest(stat.substr(paren + 2));  // from field 3 on
    std::string field;
    for (int i = 3; rest >> field; ++i)
        if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
    return 0;
}

// This node's IPv4 addresses on interfaces that are up, loopback excluded.
std::vector<in_addr_t> node_addresses() {
    std::vector<in_addr_t> out;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (ifaddrs *i = list; i != nullptr; i = i->ifa_next)
        if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) != 0 &&
            (i->ifa_flags & IFF_LOOPBACK) == 0)
            out.push_back(reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr.s_addr);
    ::freeifaddrs(list);
    return out;
}

// The interface this node would use to reach `peer`: the kernel's route lookup
// (connect() on a UDP socket, which sends nothing), then the interface that
// holds the source address it chose. Empty when there is no such route, or
// when it goes through loopback.
std::string iface_towards(in_addr_t peer) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return {};
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(9);
    to.sin_addr.s_addr = peer;
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const bool routed = ::connect(fd, reinterpret_cast<const sockaddr *>(&to), sizeof to) == 0 &&
                        ::getsockname(fd, reinterpret_cast<sockaddr *>(&from), &len) == 0;
    ::close(fd);
    if (!routed) return {};
    std::string name;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return {};
    for (ifaddrs *i = list; i != nullptr && name.empty(); i = i->ifa_next)
        if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_LOOPBACK) == 0 &&
            reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr.s_addr == from.sin_addr.s_addr)
            name = i->ifa_name;
    ::freeifaddrs(list);
    return name;
}

// Asks Slurm to end this process's step (scancel, as the user), without
// waiting for it; the caller exits with its own code at once. Nothing happens
// outside a Slurm step or without scancel.
void cancel_slurm_step() {
    const char *job = std::getenv("SLURM_JOB_ID");
    const char *step = std::getenv("SLURM_STEP_ID");
    if (job == nullptr || step == nullptr) return;
    std::string id = std::string(job) + "." + step;
    char arg0[] = "scancel", arg1[] = "--quiet";
    char *argv[] = {arg0, arg1, id.data(), nullptr};
    pid_t pid = 0;
    if (::posix_spawnp(&pid, "scancel", nullptr, nullptr, argv, environ) != 0)
        FTMPI_WARN("cannot run scancel to end step %s", id.c_str());
}

constexpr const char *k_pid_key = "ftmpi.pid";     // each rank's Identity
constexpr const char *k_iface_key = "ftmpi.ipv4";  // this node's IPv4 addresses
constexpr const char *k_secret_key = "ftmpi.secret";  // job-level: the universe's secret, from ftmpirun
constexpr const char *k_share_key = "ftmpi.share";    // each rank's candidate secret, without one

// What request_kill needs to find a rank's process, and to be sure it is still
// that process.
struct Identity {
    pid_t pid = 0;
    unsigned long long start = 0;  // start_time(pid)
    char node[64] = {};            // Slurm node name (SLURMD_NODENAME); empty elsewhere
};

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
        job_.id_base = std::max(id_base_of(me_.nspace), 0);
        job_.parent_port = config().PARENT_PORT;

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

        stay_ = config().LAUNCHER == "ftmpirun";
        if (!stay_) {
            // Once we have left the server, a hung rank can still be killed by pid.
            Identity me;
            me.pid = ::getpid();
            me.start = start_time(me.pid);
            if (const char *node = std::getenv("SLURMD_NODENAME"))
                std::strncpy(me.node, node, sizeof me.node - 1);
            put_raw(k_pid_key, &me, sizeof me);
        }
        if (job_.local_peers.size() < static_cast<std::size_t>(job_.size)) choose_net_iface();
        // The universe's secret: ftmpirun's, else rank 0's share (exchange()).
        if (const auto s = fetch_from(wild, k_secret_key, true); s.size() == auth::k_secret_size) {
            job_.secret.assign(s.begin(), s.end());
        } else {
            char share[auth::k_secret_size];
            auth::random_bytes(share, sizeof share);
            put_raw(k_share_key, share, sizeof share);
        }

        pmix_status_t codes[] = {PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_TERM_WO_SYNC,
                                 PMIX_ERR_PROC_ABORTED, PMIX_ERR_LOST_CONNECTION};
        rc = PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0], nullptr, 0,
                                         on_proc_event, nullptr, nullptr);
        if (rc < 0) FTMPI_WARN("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
        else handler_ = static_cast<size_t>(rc);
    }

    // No PMIx_Finalize here: a process that exits without MPI_Finalize must
    // look to the launcher like the failed process it is (DESIGN.md: "a rank
    // that ends without calling MPI_Finalize has failed").
    ~PmixManager() override = default;

    const JobInfo &job() const override { return job_; }

    void put(const std::string &key, const void *data, std::size_t len) override {
        if (left_) throw std::runtime_error("PMIx: put(" + key + ") after the wire-up exchange");
        put_raw(key.c_str(), data, len);
        put_keys_.insert(key);
    }

    void exchange() override {
        if (left_) throw std::runtime_error("PMIx: a second wire-up exchange");
        commit_and_fence();
        if (job_.secret.empty()) {
            const auto s = fetch(0, k_share_key, false);
            if (s.size() != auth::k_secret_size) fail("PMIx_Get(rank 0's ftmpi.share)", PMIX_ERR_NOT_FOUND);
            job_.secret.assign(s.begin(), s.end());
        }
        if (stay_) return;
        // Leave the server. First snapshot what get() may still be asked: the
        // keys this process put, as every rank published them (all ranks put
        // the same kinds of keys and read only those), and every rank's
        // identity (for request_kill).
        for (int r = 0; r < job_.size; ++r) {
            for (const auto &key : put_keys_)
                if (auto v = fetch(r, key.c_str(), true); !v.empty()) snapshot_[{r, key}] = std::move(v);
            if (const auto v = fetch(r, k_pid_key, true); v.size() == sizeof(Identity)) {
                Identity id;
                std::memcpy(&id, v.data(), sizeof id);
                id.node[sizeof id.node - 1] = '\0';
                ids_[r] = id;
            }
        }
        if (handler_ != k_no_handler) PMIx_Deregister_event_handler(handler_, nullptr, nullptr);
        const pmix_status_t rc = PMIx_Finalize(nullptr, 0);
        if (rc != PMIX_SUCCESS) FTMPI_WARN("PMIx_Finalize after the wire-up: %s", PMIx_Error_string(rc));
        left_ = true;
        FTMPI_DEBUG("left the PMIx server after the wire-up (FTMPI_LAUNCHER is not ftmpirun)");
    }

    std::vector<char> get_remote(int id, int id_base, const std::string &key) override {
        if (left_ || id < id_base) return {};
        // ftmpirun's namespaces: "ftmpi.<pid>" for ids from 0, "ftmpi.<pid>.<base>" after.
        std::string ns = job_.nspace;
        if (const auto dot = ns.find('.', 6); dot != std::string::npos) ns.resize(dot);
        if (id_base != 0) ns += "." + std::to_string(id_base);
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, ns.c_str(), static_cast<pmix_rank_t>(id - id_base));
        return fetch_from(p, key.c_str(), false);
    }

    std::vector<char> get(int rank, const std::string &key) override {
        if (!left_) return fetch(rank, key.c_str(), false);
        auto it = snapshot_.find({rank, key});
        return it == snapshot_.end() ? std::vector<char>{} : it->second;
    }

    // After leaving, the process connects again just to abort: Slurm's
    // server accepts it, and srun then exits with `code` (measured on the
    // rig; scancel, the fallback, leaves srun with 137 or a rank's code).
    [[noreturn]] void abort(int code, const std::string &message) override {
        pmix_proc_t again;
        if (!left_ || PMIx_Init(&again, nullptr, 0) == PMIX_SUCCESS) PMIx_Abort(code, message.c_str(), nullptr, 0);
        else cancel_slurm_step();
        ::_exit(code != 0 ? code : 1);
    }

    bool request_kill(int id) override {
        const int rank = id - job_.id_base;
        pmix_proc_t target;
        if (rank >= 0 && rank < job_.size) {
            if (left_) return kill_by_pid(rank);
            target = proc(rank);
        } else {
            auto it = spawned_.upper_bound(id);  // the spawned job that holds id
            if (left_ || it == spawned_.begin()) return false;
            --it;
            if (id >= it->first + it->second.size) return false;
            PMIX_LOAD_PROCID(&target, it->second.nspace.c_str(), static_cast<pmix_rank_t>(id - it->first));
        }
        pmix_info_t directive = true_info(PMIX_JOB_CTRL_KILL);
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
        if (!left_) PMIx_Finalize(nullptr, 0);
    }

    std::string why_no_spawn() const override {
        if (stay_) return "";
        return "this job's PMIx server is not ftmpirun's (Slurm's srun or another launcher): ftmpi leaves it after "
               "the wire-up, and it does not start processes for a running job";
    }

    bool spawn(const std::vector<SpawnApp> &apps, SpawnedJob &out, std::string &why) override {
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

    void kill_job(const SpawnedJob &job) override {
        pmix_proc_t target;
        PMIX_LOAD_PROCID(&target, job.nspace.c_str(), PMIX_RANK_WILDCARD);
        pmix_info_t directive = true_info(PMIX_JOB_CTRL_KILL);
        pmix_info_t *results = nullptr;
        size_t nresults = 0;
        const pmix_status_t rc = PMIx_Job_control(&target, 1, &directive, 1, &results, &nresults);
        PMIX_INFO_DESTRUCT(&directive);
        if (results != nullptr) PMIX_INFO_FREE(results, nresults);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            FTMPI_WARN("could not kill spawned job %s: %s", job.nspace.c_str(), PMIx_Error_string(rc));
    }

    Names publish(const std::string &service, const std::string &port, std::string &why) override {
        std::string key;
        if (const Names n = name_key(service, key, why); n != Names::ok) return n;
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, key.c_str(), port.c_str(), PMIX_STRING);
        const pmix_status_t rc = PMIx_Publish(&info, 1);
        PMIX_INFO_DESTRUCT(&info);
        return name_status("PMIx_Publish", rc, why);
    }

    Names lookup(const std::string &service, std::string &port, std::string &why) override {
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

    Names unpublish(const std::string &service, std::string &why) override {
        std::string key;
        if (const Names n = name_key(service, key, why); n != Names::ok) return n;
        char *keys[] = {key.data(), nullptr};
        return name_status("PMIx_Unpublish", PMIx_Unpublish(keys, nullptr, 0), why);
    }

private:
    // The PMIx key of a service name (keys are short: longer names are refused).
    Names name_key(const std::string &service, std::string &key, std::string &why) const {
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

    static Names name_status(const char *call, pmix_status_t rc, std::string &why) {
        if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) return Names::ok;
        if (rc == PMIX_ERR_NOT_FOUND) return Names::not_found;
        if (rc == PMIX_EXISTS) return Names::exists;
        why = std::string(call) + ": " + PMIx_Error_string(rc);
        return Names::unavailable;
    }

    static constexpr size_t k_no_handler = static_cast<size_t>(-1);

    void put_raw(const char *key, const void *data, std::size_t len) {
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = static_cast<char *>(const_cast<void *>(data));
        v.data.bo.size = len;
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        if (rc != PMIX_SUCCESS) fail("PMIx_Put", rc);
    }

    pmix_proc_t proc(int rank) const {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me_.nspace, static_cast<pmix_rank_t>(rank));
        return p;
    }

    // An info `key` = true (PMIX_BOOL); the caller destructs it.
    static pmix_info_t true_info(const char *key) {
        pmix_info_t info;
        bool yes = true;
        PMIX_INFO_LOAD(&info, key, &yes, PMIX_BOOL);
        return info;
    }

    static void commit_and_fence() {
        pmix_status_t rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) fail("PMIx_Commit", rc);
        pmix_info_t info = true_info(PMIX_COLLECT_DATA);
        rc = PMIx_Fence(nullptr, 0, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        if (rc != PMIX_SUCCESS) fail("PMIx_Fence", rc);
    }

    // `optional`: look only at what the fence brought here, never ask the server for more.
    std::vector<char> fetch(int rank, const char *key, bool optional) { return fetch_from(proc(rank), key, optional); }

    std::vector<char> fetch_from(const pmix_proc_t &p, const char *key, bool optional) {
        pmix_info_t info = true_info(PMIX_OPTIONAL);
        pmix_value_t *val = nullptr;
        std::vector<char> out;
        if (PMIx_Get(&p, key, optional ? &info : nullptr, optional ? 1 : 0, &val) == PMIX_SUCCESS && val != nullptr) {
            if (val->type == PMIX_BYTE_OBJECT)
                out.assign(val->data.bo.bytes, val->data.bo.bytes + val->data.bo.size);
            PMIX_VALUE_RELEASE(val);
        }
        PMIX_INFO_DESTRUCT(&info);
        return out;
    }

    // Kills a rank the detector excluded, by pid, if it is still the process
    // that published that pid (same start time). On this node: kill(2). On
    // another node of a Slurm job: a one-task step on that node, sharing the
    // job's resources (srun --overlap), checks and kills it; it is started,
    // not waited for. Anything else: false.
    bool kill_by_pid(int rank) {
        auto it = ids_.find(rank);
        if (it == ids_.end() || rank == job_.rank) return false;
        const Identity &id = it->second;
        if (std::binary_search(job_.local_peers.begin(), job_.local_peers.end(), rank)) {
            if (start_time(id.pid) != id.start) return true;  // already gone
            return ::kill(id.pid, SIGKILL) == 0;
        }
        const char *job = std::getenv("SLURM_JOB_ID");
        if (job == nullptr || id.node[0] == '\0') return false;
        // Field 22 of /proc/PID/stat is field 20 once "PID (comm) " is cut.
        const std::string check = "p=" + std::to_string(id.pid) + "; s=" + std::to_string(id.start) +
                                  "; [ \"$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -d' ' -f20)\" = \"$s\" ]"
                                  " && kill -9 $p";
        // sh returns at once; srun goes on in the background (its own exit
        // is reaped by whoever adopts it).
        const std::string line = std::string("srun --jobid=") + job +
                                 " --overlap --mpi=none --quiet -N1 -n1 -w " + quoted(id.node) + " sh -c " +
                                 quoted(check) + " </dev/null >/dev/null 2>&1 &";
        char arg0[] = "sh", arg1[] = "-c";
        std::string cmd = line;
        char *argv[] = {arg0, arg1, cmd.data(), nullptr};
        pid_t pid = 0;
        if (::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ) != 0) return false;
        int status = 0;
        ::waitpid(pid, &status, 0);
        FTMPI_INFO("asked Slurm to kill rank %d (pid %d on %s)", rank, static_cast<int>(id.pid), id.node);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }

    static std::string quoted(const std::string &s) {
        std::string out = "'";
        for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return out + "'";
    }

    // A job that spans nodes talks over the network provider. Unless the user
    // named an interface (FTMPI_NET_IFACE, FI_TCP_IFACE), take the one this
    // node routes to another node's addresses through: every rank publishes
    // its node's IPv4 addresses in one extra fence (multi-node jobs only).
    void choose_net_iface() {
        // The fence is collective: every rank takes part, even one whose
        // interface is already set (the environment may differ between nodes).
        const std::vector<in_addr_t> mine = node_addresses();
        put_raw(k_iface_key, mine.data(), mine.size() * sizeof(in_addr_t));
        commit_and_fence();
        if (!config().NET_IFACE.empty() || std::getenv("FI_TCP_IFACE") != nullptr) return;
        int remote = 0;
        while (remote < job_.size && std::binary_search(job_.local_peers.begin(), job_.local_peers.end(), remote))
            ++remote;
        const std::vector<char> theirs = fetch(remote, k_iface_key, false);
        std::string iface;
        for (std::size_t at = 0; iface.empty() && at + sizeof(in_addr_t) <= theirs.size(); at += sizeof(in_addr_t)) {
            in_addr_t a;
            std::memcpy(&a, theirs.data() + at, sizeof a);
            iface = iface_towards(a);
        }
        if (iface.empty()) {
            FTMPI_INFO("no interface routes to rank %d's node; the network provider chooses", remote);
            return;
        }
        ::setenv("FI_TCP_IFACE", iface.c_str(), 0);
        FTMPI_INFO("network interface %s (the route to rank %d's node)", iface.c_str(), remote);
    }

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
    bool stay_ = false;       // keep the connection for the whole job (ftmpirun)
    bool left_ = false;       // PMIx_Finalize done after the wire-up
    bool finalized_ = false;
    size_t handler_ = k_no_handler;
    std::set<std::string> put_keys_;
    std::map<std::pair<int, std::string>, std::vector<char>> snapshot_;
    std::map<int, Identity> ids_;
    std::map<int, SpawnedJob> spawned_;  // by first id
};

// Singleton: a one-process job with no process manager at all.
class SingletonManager final : public ProcessManager {
public:
    SingletonManager() {
        job_.local_peers = {0};
        job_.secret.resize(auth::k_secret_size);
        auth::random_bytes(job_.secret.data(), job_.secret.size());
    }
    const JobInfo &job() const override { return job_; }
    void put(const std::string &key, const void *data, std::size_t len) override {
        auto p = static_cast<const char *>(data);
        kv_[key].assign(p, p + len);
    }
    void exchange() override {}
    std::vector<char> get_remote(int, int, const std::string &) override { return {}; }
    std::vector<char> get(int rank, const std::string &key) override {
        if (rank != 0) return {};
        auto it = kv_.find(key);
        return it == kv_.end() ? std::vector<char>{} : it->second;
    }
    [[noreturn]] void abort(int code, const std::string &) override { ::_exit(code != 0 ? code : 1); }
    bool request_kill(int) override { return false; }
    void finalize() override {}

    bool spawn(const std::vector<SpawnApp> &, SpawnedJob &, std::string &why) override {
        why = why_no_spawn();
        return false;
    }
    void kill_job(const SpawnedJob &) override {}

    std::string why_no_spawn() const override {
        return "a process started without a launcher (a singleton) has no process manager to start processes";
    }

    Names publish(const std::string &service, const std::string &port, std::string &) override {
        return names_.emplace(service, port).second ? Names::ok : Names::exists;
    }
    Names lookup(const std::string &service, std::string &port, std::string &) override {
        auto it = names_.find(service);
        if (it == names_.end()) return Names::not_found;
        port = it->second;
        return Names::ok;
    }
    Names unpublish(const std::string &service, std::string &) override {
        return names_.erase(service) != 0 ? Names::ok : Names::not_found;
    }

private:
    JobInfo job_;
    std::map<std::string, std::vector<char>> kv_;
    std::map<std::string, std::string> names_;  // the name service of a one-process job
};

}  // namespace

std::unique_ptr<ProcessManager> connect_process_manager() {
    // A PMIx launcher always names the namespace; without one this is a singleton.
    if (std::getenv("PMIX_NAMESPACE") == nullptr) return std::make_unique<SingletonManager>();
    return std::make_unique<PmixManager>();
}

}  // namespace ftmpi::runtime
