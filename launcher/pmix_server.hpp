// The embedded PMIx server: the job's namespace and those MPI_Comm_spawn
// adds, every process local to this node. Processes have ids across all
// namespaces (docs/dynamic.md): the namespace of ids [B, B + n) is
// "ftmpi.<pid>.<B>" (the first, from 0, "ftmpi.<pid>"); upcalls carry ids.
#pragma once

#include <pmix.h>
#include <pmix_server.h>

#include <cstdint>
#include <string>
#include <vector>

#include "upcall_queue.hpp"

namespace ftmpi::launcher {

// Owns the PMIx server library for the launcher's lifetime. Constructed and
// destroyed on the main thread; only one instance may exist.
//
// Upcalls (client_connected, client_finalized, abort, job_control) are copied
// into `queue` and answered later by the event loop through Upcall::reply().
// fence_nb is answered at once (all participants are local, PMIx already
// holds their data); direct_modex returns PMIX_ERR_NOT_SUPPORTED.
class PmixServer {
public:
    // Creates a private tmpdir (/tmp/ftmpirun.<pid>.XXXXXX; stale ones of dead
    // launchers are removed first) and initializes the server in it with
    // PMIX_SERVER_SYSTEM_SUPPORT=false. Throws LauncherError.
    //
    // A daemon of ftmpirun across nodes is `given` the namespace and the
    // secret (the head's); its fences and direct-modex requests go to its
    // loop as upcalls (kFence, kDmodex) instead of being answered here.
    struct Given {
        std::string nspace, secret;
    };
    explicit PmixServer(UpcallQueue &queue, const Given *given = nullptr);
    // Finalizes the server and removes the tmpdir.
    ~PmixServer();
    PmixServer(const PmixServer &) = delete;
    PmixServer &operator=(const PmixServer &) = delete;

    // Where a namespace's ranks run when they span nodes: node[r] indexes
    // names, and `here` is this node's index.
    // Registered with it, every process learns that the universe spans
    // nodes, and the interface toward them (`iface`, may be empty).
    struct Layout {
        std::vector<int> node;
        std::vector<std::string> names;
        int here = 0;
        std::string iface;
    };
    // Registers the namespace of ids from `base`, one rank per entry of
    // `appnums` (each rank's MPI_APPNUM) (job-level and per-rank info), all
    // on this node or as `layout` says, then sets up local support. Blocks
    // until PMIx is done. Throws LauncherError.
    void register_job(int base, const std::vector<int> &appnums, int universe_size, const Layout *layout = nullptr);
    // Asks PMIx for a local process's data on behalf of another node; the
    // answer comes as a kDmodexData upcall carrying `tag`. False when PMIx
    // refused the request at once.
    bool dmodex_request(int base, int rank, std::uint64_t tag);
    // The namespace of the ids from `base`.
    std::string job_nspace(int base) const;

    // Registers client `rank` of the namespace from `base` and returns the
    // "NAME=value" strings PMIx wants in its environment. Call before forking it.
    std::vector<std::string> setup_client(int base, int rank);

    // Tells every client that `rank` of the namespace from `base` terminated:
    // PMIX_EVENT_PROC_TERMINATED, source = the victim's proc,
    // PMIX_RANGE_GLOBAL, info {PMIX_EVENT_AFFECTED_PROC, PMIX_EXIT_CODE}.
    // Non-blocking; returns false when PMIx refused the event.
    bool notify_terminated(int base, int rank, int exit_code);

    // Sets TCP_NODELAY on every TCP socket of this process (the PMIx listener
    // and the accepted client connections). Workaround: PMIx 4.2.2's ptl/tcp
    // never sets it, so an event sent while an earlier message is unacked waits
    // for the peer's delayed ACK (~40 ms). Call after init and on each
    // client_connected. Returns how many sockets were changed.
    int disable_nagle();

    const std::string &nspace() const { return nspace_; }
    const std::string &tmpdir() const { return tmpdir_; }

private:
    std::string tmpdir_;
    std::string nspace_;
    std::string secret_;  // the universe's (runtime/auth.hpp): every namespace gets it
    bool initialized_ = false;
};

}  // namespace ftmpi::launcher
