// Shared by launcher*.cpp: the Runner that runs one job, and the helpers its parts use.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "binding.hpp"
#include "iofwd.hpp"
#include "job.hpp"
#include "job_guard.hpp"
#include "job_spec.hpp"
#include "journal.hpp"
#include "net.hpp"
#include "options.hpp"
#include "pmix_server.hpp"
#include "stopped.hpp"
#include "runtime/config.hpp"
#include "upcall_queue.hpp"

namespace ftmpi::launcher {
// What ftmpirun adds to every process's environment for the job of `o`
// (FTMPI_LAUNCHER, -x, fault tolerance, error handler, timeline); warns of
// a -x variable that is not set.
std::vector<std::string> job_env_extras(const Options &o);
// The failure detectors' timeout the ranks get (FTMPI_FT_TIMEOUT_MS in
// `env`, then `extra`, the last setting winning; else its default).
std::chrono::milliseconds ranks_ft_timeout(const std::vector<std::string> &env, const std::vector<std::string> &extra);
}  // namespace ftmpi::launcher

namespace ftmpi::launcher::detail {

using Clock = std::chrono::steady_clock;

// --timeline: a line on the launcher's track of the trace at `path` (what
// ftmpirun saw), and the trace's closing line once no process writes any
// more (the file is plain JSON then). No-ops for an empty path.
void timeline_append(const std::string &path, const std::string &what);
void timeline_finish(const std::string &path);

// SIGINT or SIGTERM to ftmpirun (the `count`th): says so, sets the exit
// status (128 + signo, unless one is set), and returns the signal to send
// the ranks: this one the first time, SIGKILL after.
int term_signal(int sig, int &count, std::optional<int> &forced_exit);

// The program MPI_Comm_spawn's `cmd` names, run in `cwd` (empty: the job's
// `job_wdir`), as an absolute path; throws UsageError when there is none.
std::string resolve_spawned(const std::string &cmd, const std::string &cwd, const std::string &job_wdir);

// SIGINT/SIGTERM to ftmpirun are followed by SIGKILL to the ranks this much later.
inline constexpr auto kEscalateAfter = std::chrono::seconds(5);

// The non-empty items of a `sep`-separated list.
std::vector<std::string> split_list(const std::string &s, char sep);

inline void say(const std::string &line) { write_all(2, "ftmpirun: " + line + "\n"); }

// "rank R" for the job's ranks, "process I (rank R of spawned job B)" for
// the ids MPI_Comm_spawn added.
inline std::string label(int id, const RankState &st) {
    if (st.base == 0) return "rank " + std::to_string(id);
    return "process " + std::to_string(id) + " (rank " + std::to_string(st.rank) + " of the job spawned from id " +
           std::to_string(st.base) + ")";
}

// An owned descriptor, closed on destruction unless released.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(Fd &&o) noexcept : fd_(o.release()) {}
    Fd &operator=(Fd &&o) noexcept {
        if (this != &o) {
            reset();
            fd_ = o.release();
        }
        return *this;
    }
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_ = -1;
};

// One job, run by run_job. Its parts: launcher.cpp (the job's lifetime),
// launcher_start.cpp (starting processes), launcher_spawn.cpp (MPI_Comm_spawn),
// launcher_loop.cpp (the event loop) and launcher_exits.cpp (what the end of
// a process means for the job, and killing ranks).
//
// A daemon of ftmpirun across nodes (daemon.hpp) is a Runner of its node's
// part of the job, given its links (net_): launcher_daemon.cpp is what it
// does differently. It reports to the head (head.hpp) what a one-node
// launcher decides itself (exits, aborts, spawns), passes on fences and
// direct-modex requests, and carries out what the head says.
class Runner {
public:
    explicit Runner(const Options &o) : o_(o) {}
    // A daemon: vertex net->self() of the tree, the job of `s`, first `ns`;
    // `head`: the head's addresses (to reattach to, when the parent is lost).
    Runner(const Options &o, std::unique_ptr<Net> net, JobSettings s, NamespaceSpec ns, std::vector<std::string> head)
        : o_(o), net_(std::move(net)), settings_(std::move(s)), first_ns_(std::move(ns)), head_(std::move(head)) {}
    ~Runner() {
        if (sigfd_ >= 0) ::close(sigfd_);
        remove_regions();  // when run() did not get to it
        close_timeline();
    }
    int run();
    // A daemon: the last of the head's numbered frames it saw before the launch.
    // The last of the head's frames the daemon took before the launch, and
    // the frames that came after it in the same read (stdin, a kill, ...).
    void seen_before(std::uint64_t seq, std::vector<Net::Delivery> after) {
        seen_ = seq;
        early_ = std::move(after);
    }

private:
    void remove_regions();
    void close_timeline();
    void timeline_note(const std::string &what);
    void end_leftovers();
    void setup_signals();
    void prepare_env();
    void start_process(int id, int base, int rank, int size, const std::string &path,
                       const std::vector<std::string> &args, const std::vector<std::string> &app_env,
                       const std::string &cwd, const RankBinding &b, int local = -1, int local_size = -1);
    void spawn_all(const BindingPlan &plan);
    void on_spawn(Upcall &u);
    void loop();
    void on_upcall(Upcall &u);
    void on_signalfd();
    void reap();
    void on_rank_exit(int r);
    void check_stopped(Clock::time_point now);
    void check_unstarted();
    void kill_rank(int r, int sig, bool teardown);
    void kill_all(int sig);
    void kill_and_reap_all_blocking();
    int timeout_ms(Clock::time_point now) const;
    bool valid_rank(int id) const { return id >= 0 && static_cast<size_t>(id) < ranks_.size(); }
    // launcher_daemon.cpp (a daemon only)
    int run_node();
    void start_namespace(const NamespaceSpec &ns);
    bool daemon_upcall(Upcall &u);
    void daemon_rank_exit(int r);
    void daemon_tick(Clock::time_point now);
    bool daemon_done(bool pipes_open);
    void on_frame(Net::Delivery &d);
    void on_frame_kill(wire::Reader &r);
    void on_frame_failed(wire::Reader &r);
    void on_frame_fence(wire::Reader &r);
    void on_frame_dmodex(wire::Reader &r, int from, bool reply);
    void on_frame_spawned(wire::Reader &r);
    void on_frame_names(wire::Reader &r);
    void on_net_lost(int vertex, const std::string &why);
    void send_head(wire::Type t, const wire::Writer &w);
    void cut_off(const std::string &why);
    bool reattach(const std::string &why);
    bool is_local(int id) const { return valid_rank(id) && vertex_of_[static_cast<size_t>(id)] == net_->self(); }

    const Options &o_;
    UpcallQueue queue_;
    std::unique_ptr<JobGuard> guard_;
    std::unique_ptr<PmixServer> server_;
    std::vector<RankState> ranks_;  // by process id: the job's ranks, then what MPI_Comm_spawn added
    std::unordered_map<pid_t, int> pid_rank_;
    std::vector<std::string> env_base_, extra_;  // prepare_env
    Fd devnull_;
    bool warned_no_pty_ = false;
    int universe_size_ = 1;           // MPI_UNIVERSE_SIZE: the job's ranks, or the node's cores if more
    std::vector<LineForwarder> fwd_;  // 2 per rank: stdout, stderr
    std::unique_ptr<StdinForwarder> stdin_;
    int sigfd_ = -1;
    int live_ = 0;
    pid_t job_pgid_ = -1;  // the ranks' process group: the first rank's pid
    bool leftovers_ended_ = false;
    bool regions_removed_ = false;
    bool timeline_closed_ = false;
    bool teardown_ = false;
    int term_signals_ = 0;
    // Set by the first of a timeout (124) and a SIGINT/SIGTERM (128 + signo):
    // ftmpirun's exit code then, whatever the ranks did.
    std::optional<int> forced_exit_;
    std::optional<Clock::time_point> timeout_at_, escalate_at_, drain_until_;
    // Stopped ranks that no detector watches (stopped.hpp), and when to look again.
    StopWatch stops_;
    std::optional<Clock::time_point> stopped_check_;
    std::unordered_map<int, int> job_sizes_;  // spawned namespaces: first id -> size
    // Tests (FTMPI_TEST_UNANSWERED_KILLS set): kill requests are held, never
    // carried out and answered only when the job is over, as by a launcher
    // that does not answer; the ranks must not wait for it.
    bool hold_kills_ = std::getenv("FTMPI_TEST_UNANSWERED_KILLS") != nullptr;
    std::vector<Upcall> held_kills_;
    // The ranks' FTMPI_FT_TIMEOUT_MS (in the environment spawn_all gives them).
    std::chrono::milliseconds ft_timeout_{ftmpi::runtime::Config{}.FT_TIMEOUT_MS};
    // The CPUs this launcher was given, read before any thread of its own:
    // FTMPI_SERVICE_CPUS of the ranks it binds.
    const std::string service_cpus_ = own_cpu_list();
    std::optional<int> last_abort_, no_ft_code_;
    std::optional<int> unstarted_;      // a rank that exited without ever connecting to PMIx
    std::optional<int> start_blocker_;  // the one of those that ended the job (check_unstarted)

    // A daemon of ftmpirun across nodes (launcher_daemon.cpp); net_ is null otherwise.
    std::unique_ptr<Net> net_;
    JobSettings settings_;
    NamespaceSpec first_ns_;
    std::vector<std::string> head_;
    std::vector<int> vertex_of_;                                      // by process id: its node's vertex
    int local_count_ = 0;                                             // processes started here so far
    std::map<std::uint64_t, Upcall> asked_;                           // spawn and dmodex requests sent on, by tag
    std::map<std::uint64_t, std::deque<Upcall>> fences_;              // this node's fences, by signature
    std::map<std::uint64_t, std::pair<int, std::uint64_t>> serving_;  // dmodex for others: tag -> (vertex, theirs)
    std::uint64_t next_tag_ = 1;
    Journal journal_;                              // what this daemon sent the head, until it acknowledges it
    std::vector<Net::Delivery> early_;             // frames that came with the launch, taken after it
    std::uint64_t seen_ = 0;                       // the last of the head's numbered frames that came
    std::uint64_t acked_ = 0;                      // the last of those acknowledged to the head
    bool exit_ordered_ = false;                    // the head said the job is over
    bool cut_off_ = false;                         // the link to the head is gone
    std::optional<Clock::time_point> give_up_at_;  // end by then, whatever is left
    Clock::time_point next_tick_ = Clock::now();
};

}  // namespace ftmpi::launcher::detail
