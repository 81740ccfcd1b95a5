// The runtime contract with whatever started this process.
//
// Two backends: PMIx (ftmpirun, Slurm's --mpi=pmix, prterun) and singleton (a
// program started directly, with no PMIx server in its environment). The MPI
// layers above use only this interface; they never call PMIx themselves.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ftmpi::runtime {

struct JobInfo {
    int rank = 0;                  // this process's rank in the job (MPI_COMM_WORLD)
    int size = 1;                  // number of processes in the job
    int universe_size = 1;
    int appnum = 0;
    std::vector<int> local_peers;  // job ranks on this node, this process included, sorted
    std::string nspace;            // PMIx namespace ("" for a singleton)
    bool singleton = true;
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
    // Reads the blob `rank` published under `key`. Empty when absent. After
    // exchange(), only keys this process also put are guaranteed (every rank
    // publishes the same kinds of keys): without ftmpirun they come from a
    // snapshot taken at the exchange.
    virtual std::vector<char> get(int rank, const std::string &key) = 0;
    // Ends the whole job with `code`; does not return. PMIx_Abort; after
    // leaving the server, the process connects again for it (if that fails:
    // scancel of the Slurm step, not waited for). Then it exits with `code`.
    [[noreturn]] virtual void abort(int code, const std::string &message) = 0;
    // Asks for `rank` (a process the detector has excluded) to be killed.
    // Under ftmpirun: by the launcher (PMIx_Job_control). After leaving the
    // server: by pid, once its start time shows it is still that process;
    // kill(2) on this node, a one-task `srun --overlap` step on the victim's
    // node in a Slurm job (started, not waited for). Returns false when it
    // cannot be done.
    virtual bool request_kill(int rank) = 0;
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
