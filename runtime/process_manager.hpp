// The runtime contract with whatever started this process.
//
// Two backends: PMIx (ftmpirun, Slurm's --mpi=pmix, prterun) and singleton (a
// program started directly, with no PMIx server in its environment). The MPI
// layers above use only this interface; they never call PMIx themselves.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace ftmpi::runtime {

// Process ids: every process of a job's universe (the job and what it
// spawned) has one id, the same at every process: PeerId in the transport,
// the entries of communicators' groups and of the failed set. A job's ranks
// are ids [id_base, id_base + size). ftmpirun names the namespace of the
// processes from id B on "<its first namespace>.<B>" (docs/dynamic.md);
// under any other launcher the job's ids are its ranks.
inline constexpr int k_max_processes = 1 << 16;  // ids are below this (or the job's size)

struct JobInfo {
    int rank = 0;     // this process's rank in the job (MPI_COMM_WORLD)
    int id_base = 0;  // the process id of rank 0
    int id() const { return id_base + rank; }
    int id_limit() const { return std::max(k_max_processes, id_base + size); }  // ids are below this
    int size = 1;                                                               // number of processes in the job
    int universe_size = 1;
    int appnum = 0;
    std::vector<int> local_peers;  // job ranks on this node, this process included, sorted
    // The universe may span nodes (ftmpirun across nodes says so even of a
    // namespace all on one node: its parents or children may be elsewhere).
    bool spans_nodes = false;
    // The whole job and whatever it connects to are on this node: no
    // network provider, a loopback-only failure detector.
    bool one_node() const { return !spans_nodes && local_peers.size() == static_cast<std::size_t>(size); }
    std::string nspace;  // PMIx namespace ("" for a singleton)
    bool singleton = true;
    // A spawned job (MPI_Comm_spawn): the port its parents wait on
    // (FTMPI_PARENT_PORT, set by the spawning root); empty otherwise.
    std::string parent_port;
    // The secret every process of the job's universe holds (runtime/auth.hpp),
    // k_secret_size bytes. From ftmpirun: known at once; from another PMIx
    // server: after exchange() (rank 0's); a singleton draws its own.
    std::string secret;
};

// One program of MPI_Comm_spawn(_multiple).
struct SpawnApp {
    std::string command;
    std::vector<std::string> argv;  // arguments after the command
    int maxprocs = 1;
    std::vector<std::string> env;  // NAME=value, on top of the spawner's environment
    std::string wdir;              // "" : the launcher's
    std::string host;              // "" : where the launcher places them; else its nodes, comma separated
};

// Where spawned processes are: their namespace and first process id.
struct SpawnedJob {
    std::string nspace;
    int id_base = 0;
    int size = 0;
};

// Under ftmpirun the PMIx connection lasts the whole job. Under any other PMIx
// server (Slurm's --mpi=pmix, prterun) the backend leaves the server at the
// end of exchange(), so that a later death of this process is no "lost
// connection" (Slurm kills the whole step on that); see pmix_client.cpp. The
// calls below say what each one does in both cases.
class ProcessManager {
public:
    virtual ~ProcessManager() = default;
    virtual const JobInfo &job() const = 0;
    // Publishes a blob under `key` for every process of the job. Before
    // exchange() only.
    virtual void put(const std::string &key, const void *data, std::size_t len) = 0;
    // Commits what was put and waits until every process has done so (the
    // modex). Once, at init: it must never be used once a process may have
    // failed.
    virtual void exchange() = 0;
    // Reads the blob that process `id` of another job (MPI_Comm_spawn,
    // connect) published under `key`; `id_base` is the first id of its job.
    // Empty when absent or unreachable (only ftmpirun's server holds them).
    virtual std::vector<char> get_remote(int id, int id_base, const std::string &key) = 0;
    // Reads the blob `rank` published under `key`. Empty when absent. After
    // exchange(), only keys this process also put are guaranteed (every rank
    // publishes the same kinds of keys): without ftmpirun they come from a
    // snapshot taken at the exchange.
    virtual std::vector<char> get(int rank, const std::string &key) = 0;
    // Ends the whole job with `code`; does not return. PMIx_Abort; after
    // leaving the server, the process connects again for it (if that fails:
    // scancel of the Slurm step, not waited for). Then it exits with `code`.
    [[noreturn]] virtual void abort(int code, const std::string &message) = 0;
    // Asks for process `id` (a process the detector has excluded; a rank of
    // this job, or a spawned one) to be killed.
    // Under ftmpirun: by the launcher (PMIx_Job_control). After leaving the
    // server: by pid, once its start time shows it is still that process;
    // kill(2) on this node, a one-task `srun --overlap` step on the victim's
    // node in a Slurm job (started, not waited for). Returns false when it
    // cannot be done.
    virtual bool request_kill(int id) = 0;
    // Tells the launcher this process finalized (if still connected). Never
    // waits for other processes.
    virtual void finalize() = 0;

    // The name service (MPI_Publish_name, MPI_Lookup_name,
    // MPI_Unpublish_name): service names mapped to port names, seen by every
    // process of the job (a singleton's, by itself). Under ftmpirun it is
    // the launcher's store (PMIx_Publish/Lookup/Unpublish); after leaving
    // another server there is none (`unavailable`). `why` gets the reason of
    // a failure.
    // Why this process manager cannot start processes for the job
    // (MPI_Comm_spawn), or "" when it can be asked to.
    virtual std::string why_no_spawn() const = 0;

    // Starts `apps` as one new job (ids after every existing one); `why` gets
    // the reason of a failure. Only where why_no_spawn() is "".
    virtual bool spawn(const std::vector<SpawnApp> &apps, SpawnedJob &out, std::string &why) = 0;
    // Kills every process of a spawned job (a spawn that failed).
    virtual void kill_job(const SpawnedJob &job) = 0;

    enum class Names { ok, not_found, exists, unavailable };
    virtual Names publish(const std::string &service, const std::string &port, std::string &why) = 0;
    virtual Names lookup(const std::string &service, std::string &port, std::string &why) = 0;
    virtual Names unpublish(const std::string &service, std::string &why) = 0;
};

// Connects to the PMIx server named in the environment, or returns a singleton
// backend when there is none. Throws std::runtime_error (with the failing PMIx
// call and status) when a server is named but cannot be reached.
std::unique_ptr<ProcessManager> connect_process_manager();

}  // namespace ftmpi::runtime
