// MPI_Init, MPI_Finalize and the other environment calls.
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "ftmpi_config.h"
#include "mpi/comm/attributes.hpp"
#include "mpi/checks.hpp"
#include "mpi/info.hpp"
#include "mpi/coll/barrier.hpp"
#include "mpi/dynamic/connect.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "runtime/clock.hpp"
#include "runtime/config.hpp"
#include "runtime/fork_guard.hpp"
#include "runtime/fatal_signals.hpp"
#include "runtime/log.hpp"
#include "runtime/test_hooks.hpp"
#include "runtime/tool_events.hpp"
#include "runtime/launcher_env.hpp"
#include "runtime/shm_names.hpp"
#include "runtime/task_keeper.hpp"
#include "runtime/topology.hpp"
#include "transport/control.hpp"
#include "transport/open.hpp"
#include "mpi/dynamic/connect.hpp"
#include "mpi/rma/window.hpp"
#include "mpi/ulfm/recovery.hpp"

namespace ftmpi::mpi {

State g;

void setup_predefined_comms(int rank, int size, int id_base);

void yield_cpu() { sched_yield(); }

void nested_wait() {
    FTMPI_ERROR("internal error: a blocking wait inside a completion callback, where nothing can progress");
    std::abort();
}

namespace {

// A process forked by this rank after MPI_Init is not an MPI process: its MPI
// calls fail (MPI_ERR_OTHER), and nothing it does reaches the rank's
// connections (the objects behind them are left alone, never destroyed).
void forked_child() {
    g.initialized = false;
    g.forked = true;
    g_api_locking = false;  // the lock may be held by a thread the child does not have
    (void)g.pm.release();
    (void)g.engine.release();
    (void)g.transport.release();
}

// A spawned job: MPI_COMM_WORLD connects to its parents' port
// (mpi/dynamic/connect.hpp). If that fails, so did the spawn (every parent got an
// error), and these processes leave.
void connect_to_parents() {
    Port port;
    std::string why;
    int err = MPI_ERR_PORT;
    if (parse_port(g.pm->job().parent_port.c_str(), port)) err = connect_to(MPI_COMM_WORLD, 0, port, &g_parent, why);
    else why = "FTMPI_PARENT_PORT is not a port name";
    if (why.empty()) why = "error class " + std::to_string(err);
    if (err == MPI_SUCCESS) return;
    FTMPI_ERROR("this process was spawned but could not connect to its parents (%s): it leaves", why.c_str());
    std::fflush(nullptr);
    ::_exit(1);
}

// What keeps the runtime up: the world model (MPI_Init to MPI_Finalize) and
// the sessions open. The last of them to end finalizes it.
bool g_world = false, g_world_called = false, g_world_ended = false;
int g_sessions = 0;

// Brings the runtime up (the world model's init, or the first session's).
// MPI_Wtime's calibration takes MPI_Init's own span when it lasts this long
// (seconds; about a part per million), so that a program's first timings
// already read the counter (runtime/clock.hpp).
constexpr double k_clock_span = 0.02;

int runtime_up(const char *call, int required, int *provided) {
    if (g.finalized)
        return raise(MPI_COMM_NULL, MPI_ERR_OTHER, call,
                     "MPI was finalized in this process (it cannot be initialized again)");
    try {
        runtime::start_clock();
        runtime::load_config();
        // What each layer does when a failure becomes known (mpi/state.hpp).
        subscribe_failures(recovery_on_failures);
        subscribe_failures(rma_on_failures);
        if (predefined_errhandler(runtime::config().ERRHANDLER.c_str()) == nullptr)
            throw std::runtime_error("invalid value '" + runtime::config().ERRHANDLER +
                                     "' for FTMPI_ERRHANDLER (expected mpi_errors_are_fatal, mpi_errors_return or "
                                     "mpi_errors_abort)");
        if (std::getenv("PMIX_NAMESPACE") == nullptr) runtime::check_no_pmix_launch();
        // Before any thread or connection exists: under srun the process
        // forks here, and the child is the rank.
        runtime::keep_slurm_task();
        g.pm = runtime::connect_process_manager();
        const auto &job = g.pm->job();
        const bool crowded = runtime::node_crowded(job.local_peers.size());
        runtime::settle_node_knobs(crowded);
        // The process id: the rank in the first job, unique in spawned ones
        // too (as ftmpirun names them: "process 8 (rank 0 of ...)").
        runtime::set_log_rank(job.id());
        runtime::timeline_open(job.id(), job.rank);  // FTMPI_TIMELINE, if set
        // One process per node removes what earlier jobs killed outright left
        // in /dev/shm (runtime/shm_names.hpp).
        if (!job.local_peers.empty() && job.local_peers.front() == job.rank)
            if (const int n = runtime::remove_stale_shm_regions(); n > 0)
                FTMPI_INFO("removed %d shared-memory regions of processes that are gone", n);
        runtime::arm_test_hooks(job.rank);
        g.engine = std::make_unique<Engine>();
        g.engine->route(k_dial_context, on_dial);  // connections between jobs (mpi/dynamic/connect.hpp)
        // The detector's control endpoint publishes its address before the
        // transport's exchange, which carries both.
        std::unique_ptr<transport::ControlChannel> control;
        if (runtime::config().DETECTOR != 0 && job.size > 1) {
            try {
                control = transport::open_control(*g.pm);
            } catch (const std::exception &e) {
                throw std::runtime_error(std::string("failure detector: ") + e.what() +
                                         " (FTMPI_FT_PROVIDER chooses another provider; FTMPI_DETECTOR=0 runs "
                                         "without the detector)");
            }
        }
        g.transport = transport::open_transport(*g.pm, *g.engine);
        // A provider may have loaded a library that turns crashes into exit(1).
        runtime::release_fatal_signals();
        if (control) control->connect(*g.pm);
        ft::failures().attach(g.transport.get(), job.id_limit());
        ft::failures().start_detector(std::move(control), *g.pm);
        // With the detector running: a process that waits here for a peer's
        // connection keeps sending its heartbeats.
        ft::failures().peers_started(g.transport->preconnect());
        // No process leaves MPI_Init before its predecessor was heard: one
        // stopped right after init is then found within one timeout, not
        // the late starter's allowance.
        ft::failures().await_predecessor();
        setup_predefined_comms(job.rank, job.size, job.id_base);
        const int yield = runtime::config().YIELD;
        g.yield = yield == 1 || (yield == -1 && crowded);
    } catch (const std::exception &e) {
        // The error goes to the initial error handler (FTMPI_ERRHANDLER,
        // MPI_ERRORS_ARE_FATAL by default). Under that default the message
        // names the cause and the job ends through the process manager (the
        // other ranks never wait for this one in the init exchange), so a
        // program never runs on past a failed init.
        g.transport.reset();
        g.engine.reset();
        return raise(MPI_COMM_NULL, MPI_ERR_OTHER, call, "%s", e.what());
    }
    // The data path is single-threaded; under MPI_THREAD_MULTIPLE every MPI
    // call holds the library lock (mpi/api/api_lock.hpp).
    g.thread_level = required;
    fill_info_env(g.pm->job().size, required);
    g_api_locking = required == MPI_THREAD_MULTIPLE;
    if (provided) *provided = g.thread_level;
    g.main_thread = pthread_self();
    g.initialized = true;
    runtime::arm_fork_guard(forked_child);
    runtime::task_keeper_joined();
    if (!g.pm->job().parent_port.empty()) connect_to_parents();
    runtime::settle_clock(k_clock_span);
    return MPI_SUCCESS;
}

int init(const char *call, int required, int *provided) {
    if (g_world_called) return raise(MPI_COMM_NULL, MPI_ERR_OTHER, call, "MPI is already initialized");
    if (!g.initialized) FTMPI_TRY(runtime_up(call, required, provided));
    else if (provided) *provided = g.thread_level;  // a session brought it up
    g_world = g_world_called = true;
    return MPI_SUCCESS;
}

// Completes at every survivor, and the launcher is told without any job-wide
// fence. The closing step is an agreement among MPI_COMM_WORLD's live
// members, not a barrier: a barrier that a failure interrupts lets a process
// leave while another still waits for a decision it coordinated (and, a
// barrier's outcome not being uniform, falling back to an agreement after
// one would strand those it let through).
void runtime_down() {
    finalize_agreement();
    finalize_connected();
    // Let this process's last messages (say, an agreement's decision sent just
    // before) complete, for a bounded time.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (g.transport->busy() && std::chrono::steady_clock::now() < until) progress_wait();
    release_lingering();
    g.finalized = true;
    g_api_locking = false;  // the call's guard still releases the lock
    ftmpi::runtime::disarm_fork_guard();
    ftmpi::ft::failures().stop_detector();
    ftmpi::runtime::timeline_close();
    g.pm->finalize();
    ftmpi::ft::failures().attach(nullptr, 0);
    g.transport.reset();
    free_request_pool();
}

}  // namespace

int session_runtime_up(const char *call, int required) {
    if (!g.initialized) FTMPI_TRY(runtime_up(call, required, nullptr));
    ++g_sessions;
    return MPI_SUCCESS;
}

void session_runtime_down() {
    if (--g_sessions == 0 && !g_world) runtime_down();
}

namespace {}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Init(int *, char ***) { return init("MPI_Init", MPI_THREAD_SINGLE, nullptr); }

int MPI_Init_thread(int *, char ***, int required, int *provided) {
    FTMPI_CHECK(check_nonnull("MPI_Init_thread", MPI_COMM_NULL, provided, "provided"));
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Init_thread", "invalid thread level %d (argument required)",
                     required);
    return init("MPI_Init_thread", required, provided);
}

// The world model's state (MPI 4.0 §11.2.1): sessions change neither.
int MPI_Initialized(int *flag) {
    FTMPI_CHECK(check_nonnull("MPI_Initialized", MPI_COMM_NULL, flag, "flag"));
    *flag = g_world_called && !g.forked ? 1 : 0;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag) {
    FTMPI_CHECK(check_nonnull("MPI_Finalized", MPI_COMM_NULL, flag, "flag"));
    *flag = g_world_ended ? 1 : 0;
    return MPI_SUCCESS;
}

// The world model ends; so does the runtime unless a session is open
// (runtime_down: an agreement among MPI_COMM_WORLD's live members).
int MPI_Finalize(void) {
    FTMPI_TRY(check_init("MPI_Finalize"));
    if (!g_world)
        return raise(MPI_COMM_NULL, MPI_ERR_OTHER, "MPI_Finalize",
                     g_world_called ? "called twice" : "MPI_Init was not called (only sessions are open)");
    ftmpi::runtime::test_kill_point("finalize");
    // MPI-3.1 §8.7.1: first the equivalent of freeing MPI_COMM_SELF (its
    // attributes' delete callbacks, the last set first, while MPI still works
    // for them), then MPI_COMM_WORLD's attributes (as MPICH and Open MPI).
    const int self_err = delete_attributes(MPI_COMM_SELF);
    const int world_err = delete_attributes(MPI_COMM_WORLD);
    g_world = false;
    g_world_ended = true;
    if (g_sessions == 0) runtime_down();
    // A delete callback's error makes this call erroneous; it finalized all the same.
    if (const int err = self_err != MPI_SUCCESS ? self_err : world_err; err != MPI_SUCCESS) {
        FTMPI_WARN("MPI_Finalize: an attribute delete callback of %s failed (code %d)",
                   self_err != MPI_SUCCESS ? "MPI_COMM_SELF" : "MPI_COMM_WORLD", err);
        return err;
    }
    return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
    FTMPI_TRY(check_init("MPI_Abort"));
    char msg[256];
    std::snprintf(msg, sizeof msg, "MPI_Abort called by rank %d on %s with error code %d", g.pm->job().rank,
                  comm_label(comm), errorcode);
    std::fprintf(stderr, "ftmpi: %s\n", msg);
    std::fflush(stderr);
    g.pm->abort(errorcode, msg);
    __builtin_unreachable();
}

int MPI_Query_thread(int *provided) {
    FTMPI_TRY(check_init("MPI_Query_thread"));
    FTMPI_CHECK(check_nonnull("MPI_Query_thread", MPI_COMM_NULL, provided, "provided"));
    *provided = g.thread_level;
    return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag) {
    FTMPI_TRY(check_init("MPI_Is_thread_main"));
    FTMPI_CHECK(check_nonnull("MPI_Is_thread_main", MPI_COMM_NULL, flag, "flag"));
    *flag = pthread_equal(g.main_thread, pthread_self()) ? 1 : 0;
    return MPI_SUCCESS;
}

int MPI_Get_processor_name(char *name, int *resultlen) {
    FTMPI_CHECK(check_nonnull("MPI_Get_processor_name", MPI_COMM_NULL, name, "name"));
    FTMPI_CHECK(check_nonnull("MPI_Get_processor_name", MPI_COMM_NULL, resultlen, "resultlen"));
    char host[MPI_MAX_PROCESSOR_NAME] = "localhost";
    if (gethostname(host, sizeof host) != 0) std::strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    std::strcpy(name, host);
    *resultlen = static_cast<int>(std::strlen(name));
    return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion) {
    FTMPI_CHECK(check_nonnull("MPI_Get_version", MPI_COMM_NULL, version, "version"));
    FTMPI_CHECK(check_nonnull("MPI_Get_version", MPI_COMM_NULL, subversion, "subversion"));
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen) {
    FTMPI_CHECK(check_nonnull("MPI_Get_library_version", MPI_COMM_NULL, version, "version"));
    FTMPI_CHECK(check_nonnull("MPI_Get_library_version", MPI_COMM_NULL, resultlen, "resultlen"));
    int n =
        std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "ftmpi %s (fault-tolerant MPI, ULFM)", FTMPI_VERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}

double MPI_Wtime(void) { return ftmpi::runtime::wtime(); }

double MPI_Wtick(void) {
    timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // extern "C"
