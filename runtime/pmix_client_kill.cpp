// The PMIx backend and failures: the server's failure events, aborting the job, and killing a process.
#include <pmix.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "runtime/config.hpp"
#include "runtime/events.hpp"
#include "runtime/log.hpp"
#include "runtime/pmix_client_internal.hpp"

extern "C" char **environ;

namespace ftmpi::runtime::pmix {
namespace {

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

// A kill request in flight: what PMIx reads until it calls back.
struct KillRequest {
    pmix_proc_t target;
    pmix_info_t directive;
    std::string what;
};

void on_kill_done(pmix_status_t rc, pmix_info_t *, size_t, void *cbdata, pmix_release_cbfunc_t release,
                  void *release_data) {
    auto *req = static_cast<KillRequest *>(cbdata);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        FTMPI_INFO("the launcher did not kill %s: %s", req->what.c_str(), PMIx_Error_string(rc));
    if (release != nullptr) release(release_data);
    PMIX_INFO_DESTRUCT(&req->directive);
    delete req;
}

}  // namespace

// Asks the server to kill `target` without waiting for its answer: the
// caller is the failure detector, whose news must not wait for a launcher
// that is slow to answer (or never does). False if the request could not
// be sent.
bool PmixManager::send_kill(const pmix_proc_t &target, std::string what) {
    auto *req = new KillRequest{target, true_info(PMIX_JOB_CTRL_KILL), std::move(what)};
    const pmix_status_t rc = PMIx_Job_control_nb(&req->target, 1, &req->directive, 1, on_kill_done, req);
    if (rc == PMIX_SUCCESS) return true;  // on_kill_done will run
    if (rc != PMIX_OPERATION_SUCCEEDED)
        FTMPI_INFO("cannot ask the launcher to kill %s: %s", req->what.c_str(), PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&req->directive);
    delete req;
    return rc == PMIX_OPERATION_SUCCEEDED;
}

void on_proc_event(size_t, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                   pmix_info_t *, size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
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

// After leaving, the process connects again just to abort: Slurm's
// server accepts it, and srun then exits with `code` (measured on the
// rig; scancel, the fallback, leaves srun with 137 or a rank's code).
[[noreturn]] void PmixManager::abort(int code, const std::string &message) {
    pmix_proc_t again;
    if (!left_ || PMIx_Init(&again, nullptr, 0) == PMIX_SUCCESS) PMIx_Abort(code, message.c_str(), nullptr, 0);
    else cancel_slurm_step();
    ::_exit(code != 0 ? code : 1);
}

bool PmixManager::request_kill(int id) {
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
    return send_kill(target, "process " + std::to_string(id));
}

// Kills a rank the detector excluded, by pid, if it is still the process
// that published that pid (same start time). On this node: kill(2). On
// another node of a Slurm job: a one-task step on that node, sharing the
// job's resources (srun --overlap), checks and kills it; it is started,
// not waited for. Anything else: false.
bool PmixManager::kill_by_pid(int rank) {
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
    const std::string line = std::string("srun --jobid=") + job + " --overlap --mpi=none --quiet -N1 -n1 -w " +
                             quoted(id.node) + " sh -c " + quoted(check) + " </dev/null >/dev/null 2>&1 &";
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

std::string PmixManager::quoted(const std::string &s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace ftmpi::runtime::pmix
