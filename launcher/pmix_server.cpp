#include "pmix_server.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <hwloc.h>

#include "error.hpp"
#include "pmix_names.hpp"
#include "runtime/auth.hpp"
#include "runtime/sockets.hpp"

namespace ftmpi::launcher {
namespace {

UpcallQueue *g_queue = nullptr;  // set while the server is initialized
bool g_relay = false;            // a daemon of ftmpirun across nodes: fences and dmodex go to the loop
std::string g_nspace;            // the first namespace (set before any client exists)

// Every registered namespace: its first process id and size. Written on the
// main thread (register_job), read by upcalls on the PMIx thread.
std::mutex g_jobs_mu;
std::map<std::string, std::pair<int, int>> g_jobs;

// The process ids `p` names (every rank of its namespace for a wildcard);
// empty for a namespace we did not register.
std::vector<int> ids_of(const pmix_proc_t &p) {
    std::lock_guard<std::mutex> lk(g_jobs_mu);
    auto it = g_jobs.find(p.nspace);
    if (it == g_jobs.end()) return {};
    const auto [base, size] = it->second;
    if (p.rank == PMIX_RANK_WILDCARD) {
        std::vector<int> all(static_cast<size_t>(size));
        for (int r = 0; r < size; ++r) all[static_cast<size_t>(r)] = base + r;
        return all;
    }
    if (p.rank >= static_cast<pmix_rank_t>(size)) return {};
    return {base + static_cast<int>(p.rank)};
}

int id_of(const pmix_proc_t &p) {
    const auto ids = ids_of(p);
    return ids.size() == 1 && p.rank != PMIX_RANK_WILDCARD ? ids.front() : -1;
}

// Blocks the calling (main) thread until a PMIx op callback fires.
struct OpWaiter {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    pmix_status_t status = PMIX_SUCCESS;

    static void cb(pmix_status_t st, void *cbdata) {
        auto *w = static_cast<OpWaiter *>(cbdata);
        std::lock_guard<std::mutex> lk(w->mu);
        w->status = st;
        w->done = true;
        w->cv.notify_all();
    }
    pmix_status_t wait() {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [this] { return done; });
        return status;
    }
};

// Runs a non-blocking PMIx op and waits for its callback. PMIX_OPERATION_SUCCEEDED
// means PMIx completed it inline without calling back.
template <typename F>
void run_op(const char *what, F &&start) {
    OpWaiter w;
    pmix_status_t rc = start(&OpWaiter::cb, &w);
    if (rc == PMIX_OPERATION_SUCCEEDED) return;
    if (rc == PMIX_SUCCESS) rc = w.wait();
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        throw LauncherError(std::string(what) + " failed: " + PMIx_Error_string(rc));
}

// Whether `p` names every rank of our namespace.
bool is_whole_nspace(const pmix_proc_t &p) {
    return p.rank == PMIX_RANK_WILDCARD && PMIX_CHECK_NSPACE(p.nspace, g_nspace.c_str());
}

void post(Upcall u) noexcept {
    try {
        if (g_queue) {
            g_queue->post(std::move(u));
            return;
        }
    } catch (...) {}
    u.reply(PMIX_ERROR);  // out of memory or no loop: fail the request, never hang it
}

// ---- module upcalls (PMIx progress thread; copy, post, return) ----

pmix_status_t up_connected(const pmix_proc_t *proc, void *, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    Upcall u;
    u.kind = Upcall::Kind::kConnected;
    u.rank = id_of(*proc);
    u.op_cb = cbfunc;
    u.cbdata = cbdata;
    post(std::move(u));
    return PMIX_SUCCESS;
}

pmix_status_t up_finalized(const pmix_proc_t *proc, void *, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    Upcall u;
    u.kind = Upcall::Kind::kFinalized;
    u.rank = id_of(*proc);
    u.op_cb = cbfunc;
    u.cbdata = cbdata;
    post(std::move(u));
    return PMIX_SUCCESS;
}

pmix_status_t up_abort(const pmix_proc_t *proc, void *, int status, const char msg[], pmix_proc_t procs[],
                       size_t nprocs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    Upcall u;
    u.kind = Upcall::Kind::kAbort;
    u.rank = id_of(*proc);
    u.status = status;
    u.op_cb = cbfunc;
    u.cbdata = cbdata;
    try {
        if (msg) u.msg = msg;
        u.all = (procs == nullptr || nprocs == 0);
        for (size_t i = 0; i < nprocs && !u.all; ++i) {
            if (is_whole_nspace(procs[i])) u.all = true;
            else
                for (int id : ids_of(procs[i])) u.targets.push_back(id);
        }
    } catch (...) {
        u.all = true;  // could not copy the list: abort everything rather than nothing
    }
    post(std::move(u));
    return PMIX_SUCCESS;
}

void free_blob(void *p) { std::free(p); }

// One node (the launcher is the only server): all participants are local
// and PMIx already stored their contributions, so the collected blob goes
// straight back. The copy is ours (released by free_blob once PMIx has
// consumed it), so PMIx's buffer lifetime does not matter. A daemon (relay)
// posts the contribution to its loop, which combines it with the other
// nodes' and answers later (Upcall::reply_data).
pmix_status_t up_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t, char *data, size_t ndata,
                       pmix_modex_cbfunc_t cbfunc, void *cbdata) {
    if (g_relay) {
        Upcall u;
        u.kind = Upcall::Kind::kFence;
        u.modex_cb = cbfunc;
        u.cbdata = cbdata;
        try {
            if (data && ndata > 0) u.data.assign(data, data + ndata);
            for (size_t i = 0; i < nprocs; ++i)
                for (int id : ids_of(procs[i])) u.targets.push_back(id);
        } catch (...) {
            return PMIX_ERR_NOMEM;
        }
        post(std::move(u));
        return PMIX_SUCCESS;
    }
    char *copy = nullptr;
    if (data && ndata > 0) {
        copy = static_cast<char *>(std::malloc(ndata));
        if (!copy) return PMIX_ERR_NOMEM;
        std::memcpy(copy, data, ndata);
    }
    cbfunc(PMIX_SUCCESS, copy, copy ? ndata : 0, cbdata, copy ? free_blob : nullptr, copy);
    return PMIX_SUCCESS;
}

// One node: every proc is local, so PMIx serves its clients from its own
// store. A daemon asks the daemon of the proc's node (through its loop).
pmix_status_t up_dmodex(const pmix_proc_t *proc, const pmix_info_t[], size_t, pmix_modex_cbfunc_t cbfunc,
                        void *cbdata) {
    if (!g_relay) return PMIX_ERR_NOT_SUPPORTED;
    const int id = id_of(*proc);
    if (id < 0) return PMIX_ERR_NOT_FOUND;
    Upcall u;
    u.kind = Upcall::Kind::kDmodex;
    u.rank = id;
    u.modex_cb = cbfunc;
    u.cbdata = cbdata;
    post(std::move(u));
    return PMIX_SUCCESS;
}

pmix_status_t up_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[], size_t ntargets,
                             const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata) {
    int sig = 0;
    for (size_t i = 0; i < ndirs; ++i) {
        if (PMIX_CHECK_KEY(&directives[i], PMIX_JOB_CTRL_KILL)) {
            if (PMIX_INFO_TRUE(&directives[i])) sig = SIGKILL;
        } else if (PMIX_CHECK_KEY(&directives[i], PMIX_JOB_CTRL_SIGNAL)) {
            const pmix_value_t &v = directives[i].value;
            if (v.type == PMIX_INT) sig = v.data.integer;
            else if (v.type == PMIX_INT32) sig = v.data.int32;
            else if (v.type == PMIX_UINT32) sig = static_cast<int>(v.data.uint32);
            else return PMIX_ERR_BAD_PARAM;
        }
    }
    if (sig <= 0 || sig >= NSIG) return PMIX_ERR_NOT_SUPPORTED;
    Upcall u;
    u.kind = Upcall::Kind::kJobControl;
    u.rank = id_of(*requestor);
    u.status = sig;
    u.info_cb = cbfunc;
    u.cbdata = cbdata;
    try {
        u.all = (targets == nullptr || ntargets == 0);
        for (size_t i = 0; i < ntargets && !u.all; ++i) {
            if (is_whole_nspace(targets[i])) u.all = true;
            else
                for (int id : ids_of(targets[i])) u.targets.push_back(id);
        }
    } catch (...) {
        return PMIX_ERR_NOMEM;
    }
    post(std::move(u));
    return PMIX_SUCCESS;
}

// PMIx_Connect / PMIx_Disconnect among processes of any of our namespaces:
// every one is local, so PMIx has collected the participants already (as for
// fence_nb); there is nothing to wire up across nodes. ftmpi's own
// connections are made in-band (mpi/dynamic/connect.hpp); these serve other PMIx
// clients.
pmix_status_t up_connect(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, pmix_op_cbfunc_t cbfunc,
                         void *cbdata) {
    if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

// MPI_Comm_spawn: the programs are copied out and started by the event loop,
// which answers with the new namespace.
// PMIX_HOST among `info`, or "".
std::string host_of(const pmix_info_t *info, size_t n) {
    for (size_t i = 0; info && i < n; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_HOST) && info[i].value.type == PMIX_STRING && info[i].value.data.string)
            return info[i].value.data.string;
    return "";
}

pmix_status_t up_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t njob, const pmix_app_t apps[],
                       size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata) {
    Upcall u;
    u.kind = Upcall::Kind::kSpawn;
    u.rank = id_of(*proc);
    u.spawn_cb = cbfunc;
    u.cbdata = cbdata;
    try {
        for (size_t i = 0; i < napps; ++i) {
            Upcall::App a;
            if (apps[i].cmd) a.cmd = apps[i].cmd;
            for (char **v = apps[i].argv; v && *v; ++v) a.argv.emplace_back(*v);
            for (char **v = apps[i].env; v && *v; ++v) a.env.emplace_back(*v);
            if (apps[i].cwd) a.cwd = apps[i].cwd;
            a.host = host_of(apps[i].info, apps[i].ninfo);
            if (a.host.empty()) a.host = host_of(job_info, njob);
            a.maxprocs = apps[i].maxprocs;
            u.apps.push_back(std::move(a));
        }
    } catch (...) {
        return PMIX_ERR_NOMEM;
    }
    post(std::move(u));
    return PMIX_SUCCESS;
}

pmix_server_module_t make_module() {
    pmix_server_module_t m;
    std::memset(&m, 0, sizeof m);
    m.client_connected = up_connected;
    m.client_finalized = up_finalized;
    m.abort = up_abort;
    m.fence_nb = up_fence;
    m.direct_modex = up_dmodex;
    m.job_control = up_job_control;
    name_service::install(m);
    m.spawn = up_spawn;
    m.connect = up_connect;
    m.disconnect = up_connect;
    return m;
}

pmix_server_module_t g_module = make_module();

std::string hostname() {
    char buf[HOST_NAME_MAX + 1] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
    return buf;
}

// RAII array of pmix_info_t.
struct InfoArray {
    pmix_info_t *p = nullptr;
    size_t n = 0;
    explicit InfoArray(size_t count) : n(count) { PMIX_INFO_CREATE(p, n); }
    ~InfoArray() {
        if (p) PMIX_INFO_FREE(p, n);
    }
    InfoArray(const InfoArray &) = delete;
    InfoArray &operator=(const InfoArray &) = delete;
};

// This node's topology for PMIx, which otherwise discovers its own with every
// PCI device (NIC locality, never asked for here): reading their configuration
// space was 5 of ftmpirun's 20 ms of start-up. No I/O devices; it lives as long
// as the process (PMIx keeps a pointer to it). Null: PMIx finds its own.
pmix_topology_t *plain_topology() {
    static pmix_topology_t topo{};
    static bool tried = false;
    if (!tried) {
        tried = true;
        hwloc_topology_t t = nullptr;
        if (hwloc_topology_init(&t) == 0 && hwloc_topology_load(t) == 0) {
            topo.source = const_cast<char *>("hwloc:" HWLOC_VERSION);
            topo.topology = t;
        } else if (t != nullptr) {
            hwloc_topology_destroy(t);
        }
    }
    return topo.topology != nullptr ? &topo : nullptr;
}

// Removes /tmp/ftmpirun.<pid>.* directories of ours whose launcher no longer
// exists (a SIGKILLed launcher cannot clean up after itself). A reused pid only
// delays the removal.
void sweep_stale_tmpdirs() {
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator("/tmp", ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("ftmpirun.", 0) != 0) continue;
        char *end = nullptr;
        long pid = std::strtol(name.c_str() + 9, &end, 10);
        if (pid <= 0 || *end != '.') continue;
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        std::error_code rm_ec;
        std::filesystem::remove_all(e.path(), rm_ec);
    }
}

}  // namespace

PmixServer::PmixServer(UpcallQueue &queue, const Given *given) {
    sweep_stale_tmpdirs();
    std::string tmpl = "/tmp/ftmpirun." + std::to_string(::getpid()) + ".XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw LauncherError(std::string("mkdtemp: ") + std::strerror(errno));
    tmpdir_ = tmpl;
    if (given) {
        nspace_ = given->nspace;
        secret_ = given->secret;
        g_relay = true;
        name_service::relay_to(&queue);
    } else {
        nspace_ = "ftmpi." + std::to_string(::getpid());
        secret_.resize(ftmpi::runtime::auth::k_secret_size);
        ftmpi::runtime::auth::random_bytes(secret_.data(), secret_.size());
    }
    g_nspace = nspace_;
    name_service::set_nspace(nspace_);
    g_queue = &queue;

    pmix_topology_t *topo = plain_topology();
    InfoArray info(topo != nullptr ? 4 : 3);
    PMIX_INFO_LOAD(&info.p[0], PMIX_SERVER_TMPDIR, tmpdir_.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info.p[1], PMIX_SYSTEM_TMPDIR, tmpdir_.c_str(), PMIX_STRING);
    bool no = false;
    PMIX_INFO_LOAD(&info.p[2], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
    if (topo != nullptr) {  // by reference (a load would copy it): taken back before the array is freed
        PMIX_LOAD_KEY(info.p[3].key, PMIX_TOPOLOGY2);
        info.p[3].value.type = PMIX_TOPO;
        info.p[3].value.data.topo = topo;
    }
    pmix_status_t rc = PMIx_server_init(&g_module, info.p, info.n);
    if (topo != nullptr) info.p[3].value.type = PMIX_UNDEF;
    if (rc != PMIX_SUCCESS) {
        std::error_code ec;
        std::filesystem::remove_all(tmpdir_, ec);
        g_queue = nullptr;
        throw LauncherError(std::string("PMIx_server_init failed: ") + PMIx_Error_string(rc));
    }
    initialized_ = true;
    disable_nagle();
}

int PmixServer::disable_nagle() { return ftmpi::runtime::disable_nagle_on_tcp_sockets(); }

// PMIx_server_finalize is deliberately not called. With PMIx 4.2.2 it can
// deadlock on an internal mutex (or crash) when clients were killed while they
// were connecting (measured: `ftmpirun -n 3` with a rank exiting before
// PMIx_Init, several runs in 30). The launcher exits right after this (main
// ends with _Exit), so there is nothing left for PMIx to release; only the
// rendezvous directory must go.
PmixServer::~PmixServer() {
    g_queue = nullptr;
    std::error_code ec;
    std::filesystem::remove_all(tmpdir_, ec);
}

std::string PmixServer::job_nspace(int base) const {
    return base == 0 ? nspace_ : nspace_ + "." + std::to_string(base);
}

namespace {

// PMIx's node and process maps (PMIX_NODE_MAP, PMIX_PROC_MAP) of a namespace
// spread over nodes: the names of the nodes it uses, and its ranks on each.
struct Maps {
    std::string nodes, procs;
};
Maps maps_of(const PmixServer::Layout &l, int np) {
    std::vector<std::vector<int>> on(l.names.size());
    for (int r = 0; r < np; ++r) on[static_cast<size_t>(l.node[static_cast<size_t>(r)])].push_back(r);
    Maps m;
    for (size_t n = 0; n < on.size(); ++n) {
        if (on[n].empty()) continue;
        if (!m.nodes.empty()) m.nodes += ",", m.procs += ";";
        m.nodes += l.names[n];
        for (size_t i = 0; i < on[n].size(); ++i) m.procs += (i ? "," : "") + std::to_string(on[n][i]);
    }
    return m;
}

// A regex PMIx generates (PMIx_generate_regex, PMIx_generate_ppn), into `info`.
void load_regex(pmix_info_t &info, const char *key, const std::string &input, bool ppn) {
    char *regex = nullptr;
    const pmix_status_t rc =
        ppn ? PMIx_generate_ppn(input.c_str(), &regex) : PMIx_generate_regex(input.c_str(), &regex);
    if (rc != PMIX_SUCCESS || regex == nullptr)
        throw LauncherError(std::string(ppn ? "PMIx_generate_ppn" : "PMIx_generate_regex") +
                            " failed: " + PMIx_Error_string(rc));
    PMIX_INFO_LOAD(&info, key, regex, PMIX_REGEX);
    std::free(regex);
}

}  // namespace

void PmixServer::register_job(int base, const std::vector<int> &appnums, int universe_size, const Layout *layout) {
    const int np = static_cast<int>(appnums.size());
    const std::string ns = job_nspace(base);
    {
        std::lock_guard<std::mutex> lk(g_jobs_mu);
        g_jobs[ns] = {base, np};
    }
    // Where each rank runs: this node for all, or the layout's nodes.
    const std::string here_name = layout ? layout->names[static_cast<size_t>(layout->here)] : hostname();
    const auto node_of = [&](int r) { return layout ? layout->node[static_cast<size_t>(r)] : 0; };
    const auto host_of = [&](int r) { return layout ? layout->names[static_cast<size_t>(node_of(r))] : here_name; };
    const int here = layout ? layout->here : 0;
    std::string peers;
    std::vector<uint16_t> local_rank(static_cast<size_t>(np));
    std::vector<int> count_on(layout ? layout->names.size() : 1, 0);
    int nlocal = 0, leader = -1, nnodes = 0;
    for (int r = 0; r < np; ++r) {
        local_rank[static_cast<size_t>(r)] = static_cast<uint16_t>(count_on[static_cast<size_t>(node_of(r))]++);
        if (node_of(r) != here) continue;
        peers += (nlocal++ ? "," : "") + std::to_string(r);
        if (leader < 0) leader = r;
    }
    for (int c : count_on) nnodes += c > 0;
    const uint32_t unp = static_cast<uint32_t>(np), zero = 0, unodes = static_cast<uint32_t>(nnodes);
    const uint32_t ulocal = static_cast<uint32_t>(nlocal), uhere = static_cast<uint32_t>(here);
    const uint32_t univ = static_cast<uint32_t>(std::max(universe_size, np));
    const pmix_rank_t lldr = static_cast<pmix_rank_t>(std::max(leader, 0));

    InfoArray info(17 + static_cast<size_t>(np));
    size_t k = 0;
    pmix_byte_object_t secret;
    secret.bytes = secret_.data();
    secret.size = secret_.size();
    PMIX_INFO_LOAD(&info.p[k++], "ftmpi.secret", &secret, PMIX_BYTE_OBJECT);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_UNIV_SIZE, &univ, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_JOB_SIZE, &unp, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_APP_SIZE, &unp, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_MAX_PROCS, &unp, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_LOCAL_SIZE, &ulocal, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_NODE_SIZE, &ulocal, PMIX_UINT32);
    if (nlocal > 0) PMIX_INFO_LOAD(&info.p[k++], PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_NUM_NODES, &unodes, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_NODEID, &uhere, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_HOSTNAME, here_name.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_JOBID, ns.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_APPNUM, &zero, PMIX_UINT32);
    if (nlocal > 0) PMIX_INFO_LOAD(&info.p[k++], PMIX_LOCALLDR, &lldr, PMIX_PROC_RANK);
    pmix_byte_object_t across;
    across.bytes = layout ? const_cast<char *>(layout->iface.c_str()) : nullptr;
    across.size = layout ? layout->iface.size() + 1 : 0;
    if (layout) {
        // Several nodes: even a namespace all on one of them may connect to
        // the others' processes (one node's job has no use for the network).
        if (layout->names.size() > 1) PMIX_INFO_LOAD(&info.p[k++], "ftmpi.across", &across, PMIX_BYTE_OBJECT);
        const Maps m = maps_of(*layout, np);
        load_regex(info.p[k++], PMIX_NODE_MAP, m.nodes, false);
        load_regex(info.p[k++], PMIX_PROC_MAP, m.procs, true);
    }
    for (int r = 0; r < np; ++r) {
        // PMIX_PROC_INFO_ARRAY is the current name of PMIX_PROC_DATA ("pmix.pdata");
        // its first element must be PMIX_RANK.
        const pmix_rank_t rank = static_cast<pmix_rank_t>(r), id = static_cast<pmix_rank_t>(base + r);
        const uint16_t lrank = local_rank[static_cast<size_t>(r)];
        const uint32_t appnum = static_cast<uint32_t>(appnums[static_cast<size_t>(r)]);
        const uint32_t nodeid = static_cast<uint32_t>(node_of(r));
        const std::string host = host_of(r);
        pmix_data_array_t *darray;
        PMIX_DATA_ARRAY_CREATE(darray, 7, PMIX_INFO);
        auto *d = static_cast<pmix_info_t *>(darray->array);
        PMIX_INFO_LOAD(&d[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&d[1], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&d[2], PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&d[3], PMIX_GLOBAL_RANK, &id, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&d[4], PMIX_APPNUM, &appnum, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[5], PMIX_NODEID, &nodeid, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[6], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
        // Ownership of darray moves into the info (freed by PMIX_INFO_FREE).
        PMIX_LOAD_KEY(info.p[k].key, PMIX_PROC_INFO_ARRAY);
        info.p[k].value.type = PMIX_DATA_ARRAY;
        info.p[k].value.data.darray = darray;
        ++k;
    }
    run_op("PMIx_server_register_nspace", [&](pmix_op_cbfunc_t cb, void *w) {
        return PMIx_server_register_nspace(ns.c_str(), nlocal, info.p, k, cb, w);
    });
    if (nlocal > 0 || !layout)
        run_op("PMIx_server_setup_local_support", [&](pmix_op_cbfunc_t cb, void *w) {
            return PMIx_server_setup_local_support(ns.c_str(), nullptr, 0, cb, w);
        });
}

std::vector<std::string> PmixServer::setup_client(int base, int rank) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, job_nspace(base).c_str(), static_cast<pmix_rank_t>(rank));
    run_op("PMIx_server_register_client", [&](pmix_op_cbfunc_t cb, void *w) {
        return PMIx_server_register_client(&proc, ::geteuid(), ::getegid(), nullptr, cb, w);
    });
    char **env = nullptr;
    pmix_status_t rc = PMIx_server_setup_fork(&proc, &env);
    std::vector<std::string> out;
    if (env) {
        for (char **e = env; *e; ++e) {
            out.emplace_back(*e);
            std::free(*e);
        }
        std::free(env);
    }
    if (rc != PMIX_SUCCESS) throw LauncherError(std::string("PMIx_server_setup_fork failed: ") + PMIx_Error_string(rc));
    return out;
}

namespace {
void free_notify_info(pmix_status_t, void *cbdata) {
    auto *arr = static_cast<InfoArray *>(cbdata);
    delete arr;
}
}  // namespace

bool PmixServer::notify_terminated(int base, int rank, int exit_code) {
    pmix_proc_t victim;
    PMIX_LOAD_PROCID(&victim, job_nspace(base).c_str(), static_cast<pmix_rank_t>(rank));
    auto *info = new (std::nothrow) InfoArray(2);
    if (!info) return false;
    PMIX_INFO_LOAD(&info->p[0], PMIX_EVENT_AFFECTED_PROC, &victim, PMIX_PROC);
    PMIX_INFO_LOAD(&info->p[1], PMIX_EXIT_CODE, &exit_code, PMIX_INT);
    // Every namespace hears it: a spawned job and its parents are peers.
    pmix_status_t rc = PMIx_Notify_event(PMIX_EVENT_PROC_TERMINATED, &victim, PMIX_RANGE_GLOBAL, info->p, info->n,
                                         free_notify_info, info);
    if (rc == PMIX_SUCCESS) return true;  // free_notify_info owns `info` now
    delete info;
    return rc == PMIX_OPERATION_SUCCEEDED;
}

namespace {
// PMIx's answer to a request passed on from another node: posted to the
// loop with the request's tag (cbdata carries it, no allocation).
void dmodex_answered(pmix_status_t st, char *data, size_t ndata, void *cbdata) {
    Upcall u;
    u.kind = Upcall::Kind::kDmodexData;
    u.status = st;
    u.tag = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(cbdata));
    try {
        if (data && ndata > 0) u.data.assign(data, data + ndata);
    } catch (...) {
        u.status = PMIX_ERR_NOMEM;
    }
    if (g_queue) g_queue->post(std::move(u));
}
}  // namespace

bool PmixServer::dmodex_request(int base, int rank, std::uint64_t tag) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, job_nspace(base).c_str(), static_cast<pmix_rank_t>(rank));
    const pmix_status_t rc =
        PMIx_server_dmodex_request(&proc, dmodex_answered, reinterpret_cast<void *>(static_cast<std::uintptr_t>(tag)));
    return rc == PMIX_SUCCESS;
}

}  // namespace ftmpi::launcher
