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

#include "error.hpp"
#include "runtime/auth.hpp"
#include "runtime/sockets.hpp"

namespace ftmpi::launcher {
namespace {

UpcallQueue *g_queue = nullptr;  // set while the server is initialized
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

// All participants are local and PMIx already stored their contributions:
// hand the collected blob straight back. The copy is ours (released by
// free_blob once PMIx has consumed it), so PMIx's buffer lifetime does not matter.
pmix_status_t up_fence(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, char *data, size_t ndata,
                       pmix_modex_cbfunc_t cbfunc, void *cbdata) {
    char *copy = nullptr;
    if (data && ndata > 0) {
        copy = static_cast<char *>(std::malloc(ndata));
        if (!copy) return PMIX_ERR_NOMEM;
        std::memcpy(copy, data, ndata);
    }
    cbfunc(PMIX_SUCCESS, copy, copy ? ndata : 0, cbdata, copy ? free_blob : nullptr, copy);
    return PMIX_SUCCESS;
}

// Every proc is local, so PMIx serves its clients from its own store.
pmix_status_t up_dmodex(const pmix_proc_t *, const pmix_info_t[], size_t, pmix_modex_cbfunc_t, void *) {
    return PMIX_ERR_NOT_SUPPORTED;
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
pmix_status_t up_spawn(const pmix_proc_t *proc, const pmix_info_t[], size_t, const pmix_app_t apps[], size_t napps,
                       pmix_spawn_cbfunc_t cbfunc, void *cbdata) {
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
            a.maxprocs = apps[i].maxprocs;
            u.apps.push_back(std::move(a));
        }
    } catch (...) {
        return PMIX_ERR_NOMEM;
    }
    post(std::move(u));
    return PMIX_SUCCESS;
}

// ---- the name service (MPI_Publish_name / Lookup_name / Unpublish_name) ----
// A store of the job's published names, served on the PMIx progress thread
// (nothing here touches the job's state): each upcall answers at once.

std::mutex g_names_mu;
std::map<std::string, std::string> g_names;  // PMIx key -> the published string

// PMIx's own attributes ("pmix.*": the requester's uid and gid, range,
// persistence...) come along with the data; they are directives, not names.
bool is_directive(const pmix_info_t &i) { return std::strncmp(i.key, "pmix", 4) == 0; }

pmix_status_t up_publish(const pmix_proc_t *, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                         void *cbdata) {
    pmix_status_t st = PMIX_SUCCESS;
    {
        std::lock_guard<std::mutex> lk(g_names_mu);
        for (size_t i = 0; i < ninfo && st == PMIX_SUCCESS; ++i) {
            if (is_directive(info[i])) continue;  // one job: its names live until it ends
            if (info[i].value.type != PMIX_STRING || info[i].value.data.string == nullptr) st = PMIX_ERR_BAD_PARAM;
            else if (g_names.count(info[i].key) != 0) st = PMIX_EXISTS;
        }
        for (size_t i = 0; i < ninfo && st == PMIX_SUCCESS; ++i)
            if (!is_directive(info[i])) g_names[info[i].key] = info[i].value.data.string;
    }
    if (cbfunc) cbfunc(st, cbdata);
    return PMIX_SUCCESS;
}

pmix_status_t up_lookup(const pmix_proc_t *, char **keys, const pmix_info_t[], size_t, pmix_lookup_cbfunc_t cbfunc,
                        void *cbdata) {
    std::vector<std::pair<std::string, std::string>> found;
    pmix_status_t st = PMIX_SUCCESS;
    {
        std::lock_guard<std::mutex> lk(g_names_mu);
        for (size_t i = 0; keys != nullptr && keys[i] != nullptr; ++i) {
            auto it = g_names.find(keys[i]);
            if (it == g_names.end()) st = PMIX_ERR_NOT_FOUND;
            else found.emplace_back(it->first, it->second);
        }
    }
    pmix_pdata_t *data = nullptr;
    if (st == PMIX_SUCCESS && !found.empty()) {
        PMIX_PDATA_CREATE(data, found.size());
        for (size_t i = 0; i < found.size(); ++i) {
            PMIX_LOAD_PROCID(&data[i].proc, g_nspace.c_str(), PMIX_RANK_WILDCARD);  // the publisher is not kept
            PMIX_PDATA_LOAD(&data[i], &data[i].proc, found[i].first.c_str(), found[i].second.c_str(), PMIX_STRING);
        }
    }
    if (cbfunc) cbfunc(st, data, data != nullptr ? found.size() : 0, cbdata);  // PMIx copies the data
    if (data != nullptr) PMIX_PDATA_FREE(data, found.size());
    return PMIX_SUCCESS;
}

pmix_status_t up_unpublish(const pmix_proc_t *, char **keys, const pmix_info_t[], size_t, pmix_op_cbfunc_t cbfunc,
                           void *cbdata) {
    pmix_status_t st = PMIX_SUCCESS;
    {
        std::lock_guard<std::mutex> lk(g_names_mu);
        for (size_t i = 0; keys != nullptr && keys[i] != nullptr; ++i)
            if (g_names.erase(keys[i]) == 0) st = PMIX_ERR_NOT_FOUND;
    }
    if (cbfunc) cbfunc(st, cbdata);
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
    m.publish = up_publish;
    m.lookup = up_lookup;
    m.unpublish = up_unpublish;
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

PmixServer::PmixServer(UpcallQueue &queue) {
    sweep_stale_tmpdirs();
    std::string tmpl = "/tmp/ftmpirun." + std::to_string(::getpid()) + ".XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw LauncherError(std::string("mkdtemp: ") + std::strerror(errno));
    tmpdir_ = tmpl;
    nspace_ = "ftmpi." + std::to_string(::getpid());
    g_nspace = nspace_;
    g_queue = &queue;
    secret_.resize(ftmpi::runtime::auth::k_secret_size);
    ftmpi::runtime::auth::random_bytes(secret_.data(), secret_.size());

    InfoArray info(3);
    PMIX_INFO_LOAD(&info.p[0], PMIX_SERVER_TMPDIR, tmpdir_.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info.p[1], PMIX_SYSTEM_TMPDIR, tmpdir_.c_str(), PMIX_STRING);
    bool no = false;
    PMIX_INFO_LOAD(&info.p[2], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
    pmix_status_t rc = PMIx_server_init(&g_module, info.p, info.n);
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

void PmixServer::register_job(int base, const std::vector<int> &appnums, int universe_size) {
    const int np = static_cast<int>(appnums.size());
    const std::string ns = job_nspace(base);
    {
        std::lock_guard<std::mutex> lk(g_jobs_mu);
        g_jobs[ns] = {base, np};
    }
    const std::string host = hostname();
    std::string peers;
    for (int r = 0; r < np; ++r) peers += (r ? "," : "") + std::to_string(r);
    const uint32_t unp = static_cast<uint32_t>(np), one = 1, zero = 0;
    const uint32_t univ = static_cast<uint32_t>(std::max(universe_size, np));
    const pmix_rank_t lldr = 0;

    InfoArray info(14 + static_cast<size_t>(np));
    size_t k = 0;
    pmix_byte_object_t secret;
    secret.bytes = secret_.data();
    secret.size = secret_.size();
    PMIX_INFO_LOAD(&info.p[k++], "ftmpi.secret", &secret, PMIX_BYTE_OBJECT);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_UNIV_SIZE, &univ, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_JOB_SIZE, &unp, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_APP_SIZE, &unp, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_MAX_PROCS, &unp, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_LOCAL_SIZE, &unp, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_NODE_SIZE, &unp, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_NUM_NODES, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_NODEID, &zero, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_JOBID, ns.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_APPNUM, &zero, PMIX_UINT32);
    PMIX_INFO_LOAD(&info.p[k++], PMIX_LOCALLDR, &lldr, PMIX_PROC_RANK);
    for (int r = 0; r < np; ++r) {
        // PMIX_PROC_INFO_ARRAY is the current name of PMIX_PROC_DATA ("pmix.pdata");
        // its first element must be PMIX_RANK.
        const pmix_rank_t rank = static_cast<pmix_rank_t>(r), id = static_cast<pmix_rank_t>(base + r);
        const uint16_t lrank = static_cast<uint16_t>(r);
        const uint32_t appnum = static_cast<uint32_t>(appnums[static_cast<size_t>(r)]);
        pmix_data_array_t *darray;
        PMIX_DATA_ARRAY_CREATE(darray, 7, PMIX_INFO);
        auto *d = static_cast<pmix_info_t *>(darray->array);
        PMIX_INFO_LOAD(&d[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&d[1], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&d[2], PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&d[3], PMIX_GLOBAL_RANK, &id, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&d[4], PMIX_APPNUM, &appnum, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[5], PMIX_NODEID, &zero, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[6], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
        // Ownership of darray moves into the info (freed by PMIX_INFO_FREE).
        PMIX_LOAD_KEY(info.p[k].key, PMIX_PROC_INFO_ARRAY);
        info.p[k].value.type = PMIX_DATA_ARRAY;
        info.p[k].value.data.darray = darray;
        ++k;
    }
    run_op("PMIx_server_register_nspace",
           [&](pmix_op_cbfunc_t cb, void *w) { return PMIx_server_register_nspace(ns.c_str(), np, info.p, k, cb, w); });
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

}  // namespace ftmpi::launcher
