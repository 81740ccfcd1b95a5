// Shared by pmix_client*.cpp: the PMIx backend's class, and what its parts all use.
#pragma once

#include <pmix.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/process_manager.hpp"

namespace ftmpi::runtime {

// The singleton backend (pmix_client_singleton.cpp): a process with no PMIx server.
std::unique_ptr<ProcessManager> make_singleton_manager();

}  // namespace ftmpi::runtime

namespace ftmpi::runtime::pmix {

// Throws std::runtime_error "<call> failed: <PMIx's name for rc>".
[[noreturn]] void fail(const char *call, pmix_status_t rc);

// The first process id of namespace `ns` (process_manager.hpp): ftmpirun
// names the namespace of ids from B on "ftmpi.<pid>.<B>" (its first one
// "ftmpi.<pid>", from 0). Any other namespace: 0 if it is this process's,
// -1 (unknown) otherwise.
int id_base_of(const char *ns);

// PMIx event thread. Copies the victim's process id and returns at once.
void on_proc_event(size_t, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                   pmix_info_t *, size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata);

// Field 22 of /proc/<pid>/stat, the start time in clock ticks since boot. With
// the pid it names one process: pids are reused, (pid, start time) pairs not.
unsigned long long start_time(pid_t pid);

inline constexpr const char *k_pid_key = "ftmpi.pid";        // each rank's Identity
inline constexpr const char *k_iface_key = "ftmpi.ipv4";     // this node's IPv4 addresses
inline constexpr const char *k_secret_key = "ftmpi.secret";  // job-level: the universe's secret, from ftmpirun
// job-level, from ftmpirun across nodes: the interface its daemon reaches the others by (may be empty)
inline constexpr const char *k_across_key = "ftmpi.across";
inline constexpr const char *k_share_key = "ftmpi.share";  // each rank's candidate secret, without one

// What request_kill needs to find a rank's process, and to be sure it is still
// that process.
struct Identity {
    pid_t pid = 0;
    unsigned long long start = 0;  // start_time(pid)
    char node[64] = {};            // Slurm node name (SLURMD_NODENAME); empty elsewhere
};

// The PMIx backend. Its parts: pmix_client.cpp (connecting, the job's
// description, the network interface), pmix_client_kvs.cpp (putting and
// getting keys, the wire-up exchange), pmix_client_kill.cpp (aborts and
// kills) and pmix_client_spawn.cpp (MPI_Comm_spawn and the name service).
class PmixManager final : public ProcessManager {
public:
    // pmix_client.cpp
    PmixManager();
    // No PMIx_Finalize here: a process that exits without MPI_Finalize must
    // look to the launcher like the failed process it is (DESIGN.md: "a rank
    // that ends without calling MPI_Finalize has failed").
    ~PmixManager() override = default;

    const JobInfo &job() const override { return job_; }
    void finalize() override;

    // pmix_client_kvs.cpp
    void put(const std::string &key, const void *data, std::size_t len) override;
    void exchange() override;
    std::vector<char> get_remote(int id, int id_base, const std::string &key) override;
    std::vector<char> get(int rank, const std::string &key) override;

    // pmix_client_kill.cpp
    [[noreturn]] void abort(int code, const std::string &message) override;
    bool request_kill(int id) override;

    // pmix_client_spawn.cpp
    std::string why_no_spawn() const override;
    bool spawn(const std::vector<SpawnApp> &apps, SpawnedJob &out, std::string &why) override;
    void kill_job(const SpawnedJob &job) override;
    Names publish(const std::string &service, const std::string &port, std::string &why) override;
    Names lookup(const std::string &service, std::string &port, std::string &why) override;
    Names unpublish(const std::string &service, std::string &why) override;

private:
    // pmix_client_spawn.cpp
    Names name_key(const std::string &service, std::string &key, std::string &why) const;
    static Names name_status(const char *call, pmix_status_t rc, std::string &why);

    static constexpr size_t k_no_handler = static_cast<size_t>(-1);

    // pmix_client_kvs.cpp
    void put_raw(const char *key, const void *data, std::size_t len);
    pmix_proc_t proc(int rank) const;
    static pmix_info_t true_info(const char *key);
    static void commit_and_fence();
    std::vector<char> fetch(int rank, const char *key, bool optional);
    std::vector<char> fetch_from(const pmix_proc_t &p, const char *key, bool optional);
    void snapshot_rank(int r);

    // pmix_client_kill.cpp
    bool kill_by_pid(int rank);
    bool send_kill(const pmix_proc_t &target, std::string what);
    static std::string quoted(const std::string &s);

    // pmix_client.cpp
    void choose_net_iface();
    static uint32_t get_u32(const pmix_proc_t *p, const char *key, uint32_t dflt);

    pmix_proc_t me_{};
    JobInfo job_;
    bool stay_ = false;         // keep the connection for the whole job (ftmpirun)
    std::string across_iface_;  // k_across_key: the interface toward the other nodes
    bool left_ = false;         // PMIx_Finalize done after the wire-up
    bool finalized_ = false;
    size_t handler_ = k_no_handler;
    std::set<std::string> put_keys_;
    std::map<std::pair<int, std::string>, std::vector<char>> snapshot_;
    std::map<int, Identity> ids_;
    std::map<int, SpawnedJob> spawned_;  // by first id
};

}  // namespace ftmpi::runtime::pmix
