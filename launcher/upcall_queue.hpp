// Hand-off from PMIx's progress thread to the launcher's event loop.
#pragma once

#include <pmix.h>
#include <pmix_server.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ftmpi::launcher {

// One PMIx server upcall, copied out of PMIx-owned memory. The event loop
// acts on it and then calls reply() exactly once.
struct Upcall {
    // kFence, kDmodex: a daemon's (ftmpirun across nodes) collective and data
    // request; kDmodexData: PMIx's answer to a request this daemon passed on.
    // kNames: a daemon's name-service request (status: its name_service::Op).
    enum class Kind { kConnected, kFinalized, kAbort, kJobControl, kSpawn, kFence, kDmodex, kDmodexData, kNames };
    // One program of a spawn request.
    struct App {
        std::string cmd;
        std::vector<std::string> argv, env;
        std::string cwd;
        std::string host;  // PMIX_HOST (MPI_Info "host"): where its processes go, comma separated
        int maxprocs = 0;
    };
    Kind kind = Kind::kConnected;
    // The requesting client's process id (the ids of every namespace follow
    // one another: docs/dynamic.md); -1 for a client of no known namespace.
    int rank = -1;
    int status = 0;                                          // abort: exit code; job control: signal
    std::string msg;                                         // abort message
    bool all = false;                                        // abort/job control: every process
    std::vector<int> targets;                                // abort/job control when !all, fence: process ids
    std::vector<char> data;                                  // fence: this node's contribution; dmodex data: the answer
    std::uint64_t tag = 0;                                   // dmodex data: the request it answers
    std::vector<std::pair<std::string, std::string>> names;  // names: keys and (publish) values
    std::vector<App> apps;                                   // spawn
    pmix_op_cbfunc_t op_cb = nullptr;                        // connected/finalized/abort
    pmix_info_cbfunc_t info_cb = nullptr;                    // job control
    pmix_spawn_cbfunc_t spawn_cb = nullptr;                  // spawn
    pmix_modex_cbfunc_t modex_cb = nullptr;                  // fence, dmodex
    pmix_lookup_cbfunc_t lookup_cb = nullptr;                // names: a lookup
    void *cbdata = nullptr;

    // Completes the PMIx request (PMIx thread-shifts internally, so any thread
    // may call it). Calling it twice is a no-op. `nspace`: a spawn's new namespace.
    void reply(pmix_status_t st, const std::string &nspace = "");
    // Completes a fence or dmodex request with `blob` (copied: PMIx may keep
    // it after this returns, and releases the copy itself).
    void reply_data(pmix_status_t st, const std::vector<char> &blob);
};

// Multi-producer (PMIx threads), single-consumer (event loop) queue whose
// readiness is an eventfd, so the loop can poll() it with everything else.
class UpcallQueue {
public:
    UpcallQueue();  // throws LauncherError when eventfd fails
    ~UpcallQueue();
    UpcallQueue(const UpcallQueue &) = delete;
    UpcallQueue &operator=(const UpcallQueue &) = delete;

    // Never blocks beyond the mutex; noexcept-safe for callers that catch.
    void post(Upcall u);
    // Clears the eventfd and returns everything posted so far, in order.
    std::deque<Upcall> drain();
    int fd() const { return efd_; }

private:
    int efd_ = -1;
    std::mutex mu_;
    std::deque<Upcall> items_;
};

}  // namespace ftmpi::launcher
