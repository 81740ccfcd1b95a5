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
//
// This file: connecting to the server, the job's description, the network
// interface of a job across nodes, and connect_process_manager.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pmix.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/auth.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/pmix_client_internal.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/sockets.hpp"

namespace ftmpi::runtime::pmix {
namespace {

// This process's namespace (set before the handler is registered).
char g_nspace[PMIX_MAX_NSLEN + 1];


}  // namespace

[[noreturn]] void fail(const char *call, pmix_status_t rc) {
    throw std::runtime_error(std::string(call) + " failed: " + PMIx_Error_string(rc));
}

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

PmixManager::PmixManager() {
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
    // ftmpirun across nodes: the universe spans nodes, whatever this job's
    // ranks do, and the interface toward the others (when no rank of this
    // job is on another node to route to).
    const auto across = fetch_from(wild, k_across_key, true);
    job_.spans_nodes = !across.empty();
    across_iface_.assign(across.begin(), across.end());
    if (!across_iface_.empty() && across_iface_.back() == '\0') across_iface_.pop_back();

    stay_ = config().LAUNCHER == "ftmpirun";
    if (!stay_) {
        // Once we have left the server, a hung rank can still be killed by pid.
        Identity me;
        me.pid = ::getpid();
        me.start = start_time(me.pid);
        if (const char *node = std::getenv("SLURMD_NODENAME")) std::strncpy(me.node, node, sizeof me.node - 1);
        put_raw(k_pid_key, &me, sizeof me);
    }
    if (job_.local_peers.size() < static_cast<std::size_t>(job_.size)) choose_net_iface();
    else if (job_.spans_nodes && config().NET_IFACE.empty() && std::getenv("FI_TCP_IFACE") == nullptr &&
             !across_iface_.empty())
        ::setenv("FI_TCP_IFACE", across_iface_.c_str(), 0);
    // The universe's secret: ftmpirun's, else rank 0's share (exchange()).
    if (const auto s = fetch_from(wild, k_secret_key, true); s.size() == auth::k_secret_size) {
        job_.secret.assign(s.begin(), s.end());
    } else {
        char share[auth::k_secret_size];
        auth::random_bytes(share, sizeof share);
        put_raw(k_share_key, share, sizeof share);
    }

    pmix_status_t codes[] = {PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_ERR_PROC_ABORTED,
                             PMIX_ERR_LOST_CONNECTION};
    rc =
        PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0], nullptr, 0, on_proc_event, nullptr, nullptr);
    if (rc < 0) FTMPI_WARN("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
    else handler_ = static_cast<size_t>(rc);
}

void PmixManager::finalize() {
    if (finalized_) return;
    finalized_ = true;
    if (!left_) PMIx_Finalize(nullptr, 0);
}

// A job that spans nodes talks over the network provider. Unless the user
// named an interface (FTMPI_NET_IFACE, FI_TCP_IFACE), take the one this
// node routes to another node's addresses through: every rank publishes
// its node's IPv4 addresses in one extra fence (multi-node jobs only).
void PmixManager::choose_net_iface() {
    // The fence is collective: every rank takes part, even one whose
    // interface is already set (the environment may differ between nodes).
    const std::vector<in_addr_t> mine = node_addresses();
    put_raw(k_iface_key, mine.data(), mine.size() * sizeof(in_addr_t));
    commit_and_fence();
    if (!config().NET_IFACE.empty() || std::getenv("FI_TCP_IFACE") != nullptr) return;
    int remote = 0;
    while (remote < job_.size && std::binary_search(job_.local_peers.begin(), job_.local_peers.end(), remote)) ++remote;
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

uint32_t PmixManager::get_u32(const pmix_proc_t *p, const char *key, uint32_t dflt) {
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

}  // namespace ftmpi::runtime::pmix

namespace ftmpi::runtime {

std::unique_ptr<ProcessManager> connect_process_manager() {
    // A PMIx launcher always names the namespace; without one this is a singleton.
    if (std::getenv("PMIX_NAMESPACE") == nullptr) return make_singleton_manager();
    return std::make_unique<pmix::PmixManager>();
}

}  // namespace ftmpi::runtime
