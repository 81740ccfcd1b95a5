#include "runtime/shm_names.hpp"
#include "launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "binding.hpp"
#include "error.hpp"
#include "iofwd.hpp"
#include "job.hpp"
#include "job_guard.hpp"
#include "pmix_server.hpp"
#include "process_group.hpp"
#include "runtime/config.hpp"
#include "runtime/process_manager.hpp"
#include "upcall_queue.hpp"

extern char** environ;

namespace ftmpi::launcher {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kEscalateAfter = std::chrono::seconds(5);  // SIGINT/SIGTERM -> SIGKILL
constexpr auto kDrainGrace = std::chrono::seconds(1);     // pipes held by grandchildren
constexpr auto kStrandedPoll = std::chrono::milliseconds(100);  // check_stranded
constexpr auto kStoppedPoll = std::chrono::milliseconds(250);   // check_lone_stopped, while no one is watched
constexpr auto kLeftoverWait = std::chrono::seconds(2);   // SIGKILLed leftovers to be gone
constexpr auto kSignalGrace = std::chrono::milliseconds(500);  // signalled ones to die of it

void say(const std::string& line) { write_all(2, "ftmpirun: " + line + "\n"); }

// "rank R" for the job's ranks, "process I (rank R of spawned job B)" for
// the ids MPI_Comm_spawn added.
std::string label(int id, const RankState& st) {
  if (st.base == 0) return "rank " + std::to_string(id);
  return "process " + std::to_string(id) + " (rank " + std::to_string(st.rank) + " of the job spawned from id " +
         std::to_string(st.base) + ")";
}

// "rank R (pid P) exited with code C" or "rank R (pid P) killed by signal N (SIGX)".
std::string rank_end(int r, const RankState& st) {
  std::string who = label(r, st) + " (pid " + std::to_string(st.pid) + ") ";
  if (!WIFSIGNALED(st.wait_status)) return who + "exited with code " + std::to_string(exit_code_of(st.wait_status));
  const int sig = WTERMSIG(st.wait_status);
  return who + "killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
}

// An owned descriptor, closed on destruction unless released.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
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

// The two ends of a channel to or from one rank, both O_CLOEXEC.
struct Channel {
  Fd rd, wr;
};

Channel make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw LauncherError(std::string("pipe2: ") + std::strerror(errno));
  return {Fd(fds[0]), Fd(fds[1])};
}

// A rank's stdout: a pseudo-terminal, so that it is line-buffered and what the
// rank printed before a sudden death arrives; a pipe when the system has no
// pseudo-terminal to give (then `*warned` is set after one warning).
Channel make_stdout_channel(bool* warned) {
  int master = -1, slave = -1;
  if (open_raw_pty(master, slave)) return {Fd(master), Fd(slave)};
  if (!*warned)
    say(std::string("warning: no pseudo-terminal for the ranks' stdout (") + std::strerror(errno) +
        "); using pipes, so output a rank printed without fflush is lost if it dies");
  *warned = true;
  return make_pipe();
}

// Vector of strings exposed as a NULL-terminated char* array (for execve).
struct CStrings {
  std::vector<std::string> s;
  std::vector<char*> p;
  explicit CStrings(std::vector<std::string> v) : s(std::move(v)) {
    for (auto& x : s) p.push_back(x.data());
    p.push_back(nullptr);
  }
};

class Runner {
 public:
  explicit Runner(const Options& o) : o_(o) {}
  ~Runner() {
    if (sigfd_ >= 0) ::close(sigfd_);
    remove_regions();  // when run() did not get to it
  }
  int run();

 private:
  void remove_regions();
  void end_leftovers();
  void setup_signals();
  void prepare_env();
  void start_process(int id, int base, int rank, int size, const std::string& path,
                     const std::vector<std::string>& args, const std::vector<std::string>& app_env,
                     const std::string& cwd, const RankBinding& b);
  void spawn_all(const BindingPlan& plan);
  void on_spawn(Upcall& u);
  void loop();
  void on_upcall(Upcall& u);
  void on_signalfd();
  void reap();
  void on_rank_exit(int r);
  void check_stranded(Clock::time_point now);
  void check_lone_stopped(Clock::time_point now);
  void check_unstarted();
  void kill_rank(int r, int sig, bool teardown);
  void kill_all(int sig);
  void kill_and_reap_all_blocking();
  int timeout_ms(Clock::time_point now) const;
  bool valid_rank(int id) const { return id >= 0 && static_cast<size_t>(id) < ranks_.size(); }

  const Options& o_;
  UpcallQueue queue_;
  std::unique_ptr<JobGuard> guard_;
  std::unique_ptr<PmixServer> server_;
  std::vector<RankState> ranks_;  // by process id: the job's ranks, then what MPI_Comm_spawn added
  std::unordered_map<pid_t, int> pid_rank_;
  std::vector<std::string> env_base_, extra_;  // prepare_env
  Fd devnull_;
  bool warned_no_pty_ = false;
  int universe_size_ = 1;  // MPI_UNIVERSE_SIZE: the job's ranks, or the node's cores if more
  std::vector<LineForwarder> fwd_;  // 2 per rank: stdout, stderr
  std::unique_ptr<StdinForwarder> stdin_;
  int sigfd_ = -1;
  int live_ = 0;
  pid_t job_pgid_ = -1;  // the ranks' process group: the first rank's pid
  bool leftovers_ended_ = false;
  bool regions_removed_ = false;
  bool teardown_ = false;
  int term_signals_ = 0;
  // Set by the first of a timeout (124) and a SIGINT/SIGTERM (128 + signo):
  // ftmpirun's exit code then, whatever the ranks did.
  std::optional<int> forced_exit_;
  std::optional<Clock::time_point> timeout_at_, escalate_at_, drain_until_;
  // Every rank still there is stopped while another finalized and left
  // (check_stranded): since then, and when to look again.
  std::optional<Clock::time_point> stranded_since_, stranded_check_;
  // Stopped processes of a namespace whose live processes are all stopped
  // (no heartbeat ring watches them): since when each has been seen stopped,
  // and when to look again.
  std::unordered_map<int, Clock::time_point> lone_stopped_since_;
  std::optional<Clock::time_point> lone_check_;
  std::unordered_map<int, int> job_sizes_;  // spawned namespaces: first id -> size
  // The ranks' FTMPI_FT_TIMEOUT_MS (in the environment spawn_all gives them).
  std::chrono::milliseconds ft_timeout_{ftmpi::runtime::Config{}.FT_TIMEOUT_MS};
  // The CPUs this launcher was given, read before any thread of its own:
  // FTMPI_SERVICE_CPUS of the ranks it binds.
  const std::string service_cpus_ = own_cpu_list();
  std::optional<int> last_abort_, no_ft_code_;
  std::optional<int> unstarted_;  // a rank that exited without ever connecting to PMIx
  std::optional<int> start_blocker_;  // the one of those that ended the job (check_unstarted)
};

// What the ranks left in /dev/shm goes only once the job is over: while it
// runs, a survivor may still have to map a dead rank's region (libfabric
// 1.17's shm dereferences a null region, and crashes, when a message from a
// peer arrives whose region is gone).
void Runner::remove_regions() {
  if (regions_removed_) return;
  regions_removed_ = true;
  for (const auto& st : ranks_)
    if (st.pid > 0) ftmpi::runtime::remove_shm_regions_of(st.pid);
}

// Every rank is reaped: what is left of the job's process group are
// processes the ranks forked and left running. They end with the job.
void Runner::end_leftovers() {
  if (leftovers_ended_) return;
  leftovers_ended_ = true;
  // After a signal to the whole group (teardown), its members get a moment
  // to die of it: only those that outlive it are leftovers.
  const auto now = Clock::now();
  const int n = kill_group(job_pgid_, teardown_ ? now + kSignalGrace : now, now + kLeftoverWait);
  if (n > 0)
    say("killed " + std::to_string(n) + " leftover process" + (n == 1 ? "" : "es") + " of the job");
}

void Runner::setup_signals() {
  // Blocked before PMIx starts its threads, so they inherit the mask and every
  // SIGCHLD/SIGINT/SIGTERM arrives through the signalfd.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) throw LauncherError("pthread_sigmask failed");
  sigfd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd_ < 0) throw LauncherError(std::string("signalfd: ") + std::strerror(errno));
  ::signal(SIGPIPE, SIG_IGN);
}

// The environment every process gets from ftmpirun (before its own PMIx
// and rank variables): ftmpirun's own, then `extra_` on top.
void Runner::prepare_env() {
  for (char** e = environ; e && *e; ++e) env_base_.emplace_back(*e);
  // libinfinipath (under libfabric) is asked not to install the handlers that
  // turn a rank's crash into exit(1). A second line of defence: libftmpi
  // removes them itself, under any launcher (runtime/fatal_signals.hpp). The
  // user's environment and -x take precedence.
  if (!std::getenv("IPATH_NO_BACKTRACE")) extra_.emplace_back("IPATH_NO_BACKTRACE=1");
  for (const auto& [name, value] : o_.exports) {
    if (value) {
      extra_.push_back(name + "=" + *value);
    } else if (const char* v = std::getenv(name.c_str())) {
      extra_.push_back(name + "=" + v);
    } else {
      say("warning: -x " + name + ": not set in this environment, not exported");
    }
  }
  extra_.push_back("FTMPI_LAUNCHER=ftmpirun");
  // What the ranks' detectors will use (the last setting wins), for check_stranded.
  for (const auto* list : {&env_base_, &extra_})
    for (const std::string& kv : *list)
      if (kv.rfind("FTMPI_FT_TIMEOUT_MS=", 0) == 0) {
        const long ms = std::strtol(kv.c_str() + std::strlen("FTMPI_FT_TIMEOUT_MS="), nullptr, 10);
        if (ms > 0) ft_timeout_ = std::chrono::milliseconds(ms);
      }
  if (!o_.ft) extra_.push_back("FTMPI_FT=0");  // MPIX_FT tells the ranks
  if (!o_.initial_errhandler.empty()) extra_.push_back("FTMPI_ERRHANDLER=" + o_.initial_errhandler);
}

// Forks process `id`: rank `rank` of the `size` processes of the namespace
// from `base`, running `path` with `argv`; `app_env` goes on top of
// everything (a spawner's additions), `cwd` (may be empty) is its directory.
void Runner::start_process(int id, int base, int rank, int size, const std::string& path,
                           const std::vector<std::string>& args, const std::vector<std::string>& app_env,
                           const std::string& cwd, const RankBinding& b) {
  std::vector<std::string> env = server_->setup_client(base, rank);
  // Open MPI's and MPICH's names for the rank's place, for scripts and
  // libraries that read them (one node: local rank = rank). PMI_SIZE > 1
  // next to PMIX_NAMESPACE is fine for libftmpi (runtime/launcher_env.hpp).
  const std::string rs = std::to_string(rank), ns = std::to_string(size);
  for (const char* v : {"OMPI_COMM_WORLD_RANK=", "OMPI_COMM_WORLD_LOCAL_RANK=",
                        "OMPI_COMM_WORLD_NODE_RANK=", "PMI_RANK=", "MPI_LOCALRANKID="})
    env.push_back(v + rs);
  for (const char* v : {"OMPI_COMM_WORLD_SIZE=", "OMPI_COMM_WORLD_LOCAL_SIZE=", "PMI_SIZE=", "MPI_LOCALNRANKS="})
    env.push_back(v + ns);
  // A bound rank's failure detector may run on any CPU this launcher was given.
  if (b.bound && !service_cpus_.empty()) env.push_back("FTMPI_SERVICE_CPUS=" + service_cpus_);
  env.insert(env.end(), extra_.begin(), extra_.end());  // -x may override any of them
  env.insert(env.end(), app_env.begin(), app_env.end());
  CStrings envp(merge_env(env_base_, env));
  CStrings argv(args);
  const std::string exec_err = "ftmpirun: cannot execute " + path + "\n";
  const std::string cwd_err = "ftmpirun: cannot change to directory " + cwd + "\n";
  // Stdin: the launcher's, through a pipe, for rank 0 of the job only; /dev/null otherwise.
  Channel out = make_stdout_channel(&warned_no_pty_), err = make_pipe();
  std::optional<Channel> in;
  if (id == 0 && ::fcntl(0, F_GETFD) >= 0) in = make_pipe();

  SpawnSpec spec;
  spec.path = path.c_str();
  spec.argv = argv.p.data();
  spec.envp = envp.p.data();
  spec.cpus = b.bound ? &b.cpus : nullptr;
  spec.stdin_fd = in ? in->rd.get() : devnull_.get();
  spec.stdout_fd = out.wr.get();
  spec.stderr_fd = err.wr.get();
  spec.exec_error_msg = exec_err.c_str();
  spec.cwd = cwd.empty() ? nullptr : cwd.c_str();
  spec.cwd_error_msg = cwd_err.c_str();
  spec.pgid = id == 0 ? 0 : job_pgid_;  // a live process holds the group while another is forked
  const pid_t pid = spawn_child(spec);
  if (id == 0) {
    job_pgid_ = pid;
    guard_->job_group(pid);
  }
  guard_->rank(pid);
  RankState& st = ranks_[static_cast<size_t>(id)];
  st.base = base;
  st.rank = rank;
  st.pid = pid;
  pid_rank_[pid] = id;
  ++live_;
  // The process's ends close here (at the end of this call): from now on
  // only it holds them, and its exit is the forwarders' EOF.
  std::string prefix = o_.tag_output ? "[" + std::to_string(id) + "] " : "";
  fwd_.emplace_back(out.rd.release(), 1, prefix);
  fwd_.emplace_back(err.rd.release(), 2, prefix);
  if (in) stdin_ = std::make_unique<StdinForwarder>(0, in->wr.release());
}

void Runner::spawn_all(const BindingPlan& plan) {
  prepare_env();
  devnull_ = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull_.get() < 0) throw LauncherError(std::string("open /dev/null: ") + std::strerror(errno));
  for (int r = 0; r < o_.np; ++r)
    start_process(r, 0, r, o_.np, o_.program_path, o_.argv, {}, o_.wdir, plan.ranks[static_cast<size_t>(r)]);
}

// MPI_Comm_spawn (PMIx_Spawn): a new namespace with the ids after every
// process so far, forked, bound and forwarded like the job's ranks. The
// reply names it; the processes connect to their parents themselves.
void Runner::on_spawn(Upcall& u) {
  if (teardown_) {
    u.reply(PMIX_ERR_JOB_TERMINATED);
    return;
  }
  const int base = static_cast<int>(ranks_.size());
  int total = 0;
  std::vector<std::string> paths;
  for (const Upcall::App& a : u.apps) {
    if (a.maxprocs <= 0 || a.cmd.empty()) {
      say("spawn by process " + std::to_string(u.rank) + ": a program without a name or processes, refused");
      u.reply(PMIX_ERR_BAD_PARAM);
      return;
    }
    total += a.maxprocs;
    // A relative path is ftmpirun's directory's (as for the job's program),
    // else the process's wdir's; a bare name is looked for as the job's
    // program is (PATH, then the wdir, else the job's). resolve_program
    // makes it absolute: the process changes to its wdir before it
    // executes it.
    std::string name = a.cmd;
    const bool relative = name.find('/') != std::string::npos && name.front() != '/';
    if (relative && !a.cwd.empty() && ::access(name.c_str(), F_OK) != 0) name = a.cwd + "/" + name;
    try {
      paths.push_back(resolve_program(name, relative ? std::string() : a.cwd.empty() ? o_.wdir : a.cwd));
    } catch (const std::exception& e) {
      say("spawn by process " + std::to_string(u.rank) + ": " + e.what());
      u.reply(PMIX_ERR_NOT_FOUND);
      return;
    }
  }
  if (u.apps.empty() || base + total > ftmpi::runtime::k_max_processes) {
    say("spawn by process " + std::to_string(u.rank) + ": " + std::to_string(total) +
        " processes refused (at most " + std::to_string(ftmpi::runtime::k_max_processes) + " in all)");
    u.reply(PMIX_ERR_OUT_OF_RESOURCE);
    return;
  }
  std::vector<int> appnums;
  for (size_t i = 0; i < u.apps.size(); ++i) appnums.insert(appnums.end(), static_cast<size_t>(u.apps[i].maxprocs), static_cast<int>(i));
  Options sized = o_;
  sized.np = base + total;
  const BindingPlan plan = plan_bindings(sized, false);
  server_->register_job(base, appnums, universe_size_);
  ranks_.resize(static_cast<size_t>(base + total));
  job_sizes_[base] = total;
  int id = base;
  for (size_t i = 0; i < u.apps.size(); ++i) {
    const Upcall::App& a = u.apps[i];
    std::vector<std::string> argv = a.argv;
    if (argv.empty()) argv.push_back(a.cmd);
    for (int k = 0; k < a.maxprocs; ++k, ++id)
      start_process(id, base, id - base, total, paths[i], argv, a.env, a.cwd.empty() ? o_.wdir : a.cwd,
                    plan.ranks[static_cast<size_t>(id)]);
  }
  if (o_.report_bindings)
    for (int p = base; p < base + total; ++p)
      say("process " + std::to_string(p) + (plan.ranks[static_cast<size_t>(p)].bound
                                                 ? " bound to " + plan.ranks[static_cast<size_t>(p)].where
                                                 : std::string(" not bound")));
  u.reply(PMIX_SUCCESS, server_->job_nspace(base));
}

void Runner::kill_rank(int r, int sig, bool teardown) {
  RankState& st = ranks_[static_cast<size_t>(r)];
  if (st.reaped || st.pid <= 0) return;
  if (teardown) st.killed_by_us = true;
  ::kill(st.pid, sig);
}

// The whole job's process group while a rank is unreaped (then the group
// surely exists): what the ranks forked gets `sig` too, as it did from a
// terminal's ^C when everything was in ftmpirun's group.
void Runner::kill_all(int sig) {
  if (live_ > 0 && job_pgid_ > 0) {
    for (auto& st : ranks_)
      if (!st.reaped && st.pid > 0) st.killed_by_us = true;
    ::kill(-job_pgid_, sig);
    return;
  }
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) kill_rank(r, sig, true);
}

// Last resort when the loop itself failed: nothing may outlive the launcher.
// The guard is then told no clean end, so it checks the same once more.
void Runner::kill_and_reap_all_blocking() {
  for (auto& st : ranks_)
    if (!st.reaped && st.pid > 0) ::kill(st.pid, SIGKILL);
  for (auto& st : ranks_) {
    if (st.reaped || st.pid <= 0) continue;
    while (::waitpid(st.pid, &st.wait_status, 0) < 0 && errno == EINTR) {
    }
    st.reaped = true;
  }
  live_ = 0;
  end_leftovers();
  remove_regions();  // killed ranks leave their regions behind
  if (guard_) guard_->end(false);
}

void Runner::on_upcall(Upcall& u) {
  switch (u.kind) {
    case Upcall::Kind::kConnected:
      if (valid_rank(u.rank)) ranks_[u.rank].connected = true;
      check_unstarted();
      server_->disable_nagle();  // before the client can send or receive anything else
      u.reply(PMIX_SUCCESS);
      break;
    case Upcall::Kind::kFinalized:
      if (valid_rank(u.rank)) ranks_[u.rank].finalized = true;
      u.reply(PMIX_SUCCESS);
      break;
    case Upcall::Kind::kAbort: {
      say("MPI_Abort called by " + (valid_rank(u.rank) ? label(u.rank, ranks_[static_cast<size_t>(u.rank)]) : std::string("a process")) + " with code " +
          std::to_string(u.status) + (u.msg.empty() ? "" : ": " + u.msg));
      last_abort_ = u.status;
      if (u.all || !o_.ft) {
        if (!o_.ft && !no_ft_code_) no_ft_code_ = u.status;
        teardown_ = true;
        kill_all(SIGKILL);
      } else {
        for (int t : u.targets)
          if (valid_rank(t)) kill_rank(t, SIGKILL, false);
      }
      u.reply(PMIX_SUCCESS);
      break;
    }
    case Upcall::Kind::kJobControl:
      if (u.all) {
        for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) kill_rank(r, u.status, false);
      } else {
        for (int t : u.targets)
          if (valid_rank(t)) kill_rank(t, u.status, false);
      }
      u.reply(PMIX_SUCCESS);
      break;
    case Upcall::Kind::kSpawn:
      try {
        on_spawn(u);
      } catch (const std::exception& e) {
        say(std::string("spawn failed: ") + e.what());
        u.reply(PMIX_ERROR);  // no-op if on_spawn answered already
      }
      break;
  }
}

void Runner::on_rank_exit(int r) {
  RankState& st = ranks_[static_cast<size_t>(r)];
  st.failed = rank_failed(st);
  --live_;
  if (r == 0 && stdin_) stdin_->stop();
  // Fences need nothing from us here (PMIx 4.2.2, measured): when a connected
  // client's socket closes PMIx drops it from pending and later wildcard fences
  // (a pending one returns PMIX_ERR_PARTIAL_SUCCESS). A rank that died before
  // connecting stays counted in wildcard fences, which then hang;
  // PMIx_server_deregister_client does not change that (and for connected
  // ranks makes later fences hang), so it is not called. Fences over an
  // explicit list of survivors, or with PMIX_TIMEOUT, complete.
  // Only a rank that ended on its own counts (it exited, or crashed): one
  // killed from outside before connecting is a failure that PMIx programs can
  // work around with fences that leave it out.
  // Spawned and ended before it connected: the spawners learn of it even
  // when it exited normally (it was no MPI process, or failed to start).
  const bool unconnected_child = !st.connected && !teardown_ && st.base != 0;
  if (unconnected_child) {
    // A spawned process that ended before connecting: its job cannot start
    // (its init fence would wait for it), so its other processes are killed;
    // the spawners hear of every death and fail the spawn.
    for (RankState& other : ranks_)
      if (other.base == st.base && !other.reaped && other.pid > 0) ::kill(other.pid, SIGKILL);
  } else if (!st.connected && !teardown_ &&
      (!WIFSIGNALED(st.wait_status) || is_crash_signal(WTERMSIG(st.wait_status)))) {
    unstarted_ = r;
    check_unstarted();
    if (teardown_) return;  // check_unstarted reported this death, in one line
  }
  if (!st.failed && !unconnected_child) return;
  const int code = exit_code_of(st.wait_status);
  if (!(teardown_ && st.killed_by_us))
    say(rank_end(r, st) + (unconnected_child         ? " before it connected to its parents"
                           : WIFSIGNALED(st.wait_status) ? ""
                                                         : " without calling MPI_Finalize"));
  if (teardown_) return;
  if (o_.ft) {
    if (!server_->notify_terminated(st.base, st.rank, code))
      say("warning: could not notify the job that " + label(r, st) + " terminated");
  } else {
    no_ft_code_ = code;
    teardown_ = true;
    kill_all(SIGKILL);
  }
}

// A rank that exits or crashes before it ever connects to PMIx, in a job whose
// other ranks are PMIx clients, never joins the MPI_Init fence, and PMIx keeps
// counting it there: the job cannot start, so it ends now instead of hanging.
// (Plain programs, where no rank connects, are not affected.)
void Runner::check_unstarted() {
  if (!unstarted_ || teardown_) return;
  bool any_connected = false;
  for (const RankState& st : ranks_) any_connected = any_connected || (st.connected && st.base == 0);
  if (!any_connected) return;
  const RankState& st = ranks_[static_cast<size_t>(*unstarted_)];
  int code = exit_code_of(st.wait_status);
  say(rank_end(*unstarted_, st) + " before MPI_Init; the job cannot start, killing it");
  start_blocker_ = unstarted_;
  no_ft_code_ = code != 0 ? code : 1;
  teardown_ = true;
  kill_all(SIGKILL);
}

void Runner::reap() {
  while (true) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;  // 0: none ready; -1/ECHILD: none left
    if (guard_ && pid == guard_->pid()) {
      guard_->reaped(status);
      continue;
    }
    auto it = pid_rank_.find(pid);
    if (it == pid_rank_.end()) continue;
    RankState& st = ranks_[static_cast<size_t>(it->second)];
    st.reaped = true;
    st.wait_status = status;
    on_rank_exit(it->second);
  }
}

void Runner::on_signalfd() {
  signalfd_siginfo si;
  bool child = false;
  while (::read(sigfd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) {
      child = true;
      continue;
    }
    ++term_signals_;
    teardown_ = true;
    if (!forced_exit_) forced_exit_ = 128 + sig;  // the shell's convention: 130, 143
    if (term_signals_ == 1) {
      say("received " + signal_name(sig) + ", forwarding it to the ranks");
      kill_all(sig);
      escalate_at_ = Clock::now() + kEscalateAfter;
    } else {
      say("received " + signal_name(sig) + " again, killing the ranks");
      kill_all(SIGKILL);
      escalate_at_.reset();
    }
  }
  if (child) reap();
}

int Runner::timeout_ms(Clock::time_point now) const {
  std::optional<Clock::time_point> next;
  for (const auto& d : {timeout_at_, escalate_at_, drain_until_, stranded_check_, lone_check_})
    if (d && (!next || *d < *next)) next = d;
  if (!next) return -1;
  if (*next <= now) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
  return static_cast<int>(ms);
}

void Runner::loop() {
  std::vector<pollfd> pfds;
  std::vector<int> owner;  // index into fwd_, or -1 sigfd, -2 queue, -3 stdin src, -4 stdin dst
  while (true) {
    // Leftovers die first: they may hold the ranks' output pipes open.
    if (live_ == 0) end_leftovers();
    bool pipes_open = false;
    for (const auto& f : fwd_) pipes_open |= f.open();
    if (live_ == 0 && !pipes_open) return;
    if (live_ == 0 && !drain_until_) drain_until_ = Clock::now() + kDrainGrace;

    pfds.clear();
    owner.clear();
    pfds.push_back({sigfd_, POLLIN, 0});
    owner.push_back(-1);
    pfds.push_back({queue_.fd(), POLLIN, 0});
    owner.push_back(-2);
    if (stdin_ && stdin_->src_fd() >= 0) {
      pfds.push_back({stdin_->src_fd(), POLLIN, 0});
      owner.push_back(-3);
    }
    if (stdin_ && stdin_->dst_fd() >= 0) {
      pfds.push_back({stdin_->dst_fd(), POLLOUT, 0});
      owner.push_back(-4);
    }
    for (size_t i = 0; i < fwd_.size(); ++i) {
      if (!fwd_[i].open()) continue;
      pfds.push_back({fwd_[i].fd(), POLLIN, 0});
      owner.push_back(static_cast<int>(i));
    }

    int n = ::poll(pfds.data(), pfds.size(), timeout_ms(Clock::now()));
    if (n < 0 && errno != EINTR) throw LauncherError(std::string("poll: ") + std::strerror(errno));

    // Upcalls first: a finalize must be recorded before that rank's exit is
    // examined (the client cannot exit before we reply, so order holds).
    for (Upcall& u : queue_.drain()) on_upcall(u);
    bool sig_ready = false;
    for (size_t i = 0; n > 0 && i < pfds.size(); ++i) {
      if (!pfds[i].revents) continue;
      int who = owner[i];
      if (who >= 0) fwd_[static_cast<size_t>(who)].on_readable();
      else if (who == -1) sig_ready = true;
      else if (who == -3) stdin_->on_src_readable();
      else if (who == -4) stdin_->on_dst_writable();
    }
    if (sig_ready) on_signalfd();

    const auto now = Clock::now();
    if (timeout_at_ && now >= *timeout_at_) {
      timeout_at_.reset();
      say("job timed out after " + o_.timeout_text + " seconds, killing it");
      if (!forced_exit_) forced_exit_ = kExitTimeout;
      teardown_ = true;
      kill_all(SIGKILL);
    }
    if (escalate_at_ && now >= *escalate_at_) {
      escalate_at_.reset();
      say("ranks still running " + std::to_string(kEscalateAfter.count()) +
          " s after the signal, killing them");
      kill_all(SIGKILL);
    }
    if (drain_until_ && now >= *drain_until_) {
      for (auto& f : fwd_) f.drain_and_close();  // grandchildren keep the pipes open
    }
    check_stranded(now);
    check_lone_stopped(now);
  }
}

// A fault-tolerant job whose other ranks have ended (finalized, or failed)
// while the ranks still there are stopped (SIGSTOP, not a debugger's trace stop) can never
// end: the failure detectors that would have found them left with the
// others. After the detector's timeout (FTMPI_FT_TIMEOUT_MS as the ranks
// got it, -x included) they are killed as failed processes.
void Runner::check_stranded(Clock::time_point now) {
  stranded_check_.reset();
  if (!o_.ft || teardown_ || live_ == 0) {
    stranded_since_.reset();
    return;
  }
  bool someone_left = false, all_stopped = true;
  for (const RankState& st : ranks_) {
    if (st.reaped) someone_left = true;
    else all_stopped = all_stopped && st.pid > 0 && ftmpi::runtime::process_state(st.pid) == 'T';
  }
  if (!someone_left || !all_stopped) {
    stranded_since_.reset();
    if (someone_left) stranded_check_ = now + kStrandedPoll;  // look again while others are finished
    return;
  }
  if (!stranded_since_) stranded_since_ = now;
  if (now - *stranded_since_ < ft_timeout_) {
    stranded_check_ = now + kStrandedPoll;
    return;
  }
  stranded_since_.reset();
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
    if (ranks_[static_cast<size_t>(r)].reaped) continue;
    say(label(r, ranks_[static_cast<size_t>(r)]) + " is stopped and every other rank has ended: killing it");
    kill_rank(r, SIGKILL, false);
  }
}

// The ranks' detector watches the processes of one namespace. When every
// live process of a namespace is stopped (SIGSTOP) while a process of another
// namespace still runs (a spawned process alone in its job, or the last
// child left after its siblings gave up the connection to their parents, or
// parents stopped while their children run), nothing would ever find them,
// and every process that waits for them would wait for ever. ftmpirun does
// the detector's job: stopped for the ranks' detector timeout, they are
// killed as failed processes (spec 000 §17.3: a stopped process is
// excluded), which every process then hears of.
void Runner::check_lone_stopped(Clock::time_point now) {
  lone_check_.reset();
  if (!o_.ft || teardown_ || job_sizes_.empty()) return;
  std::unordered_map<int, bool> all_stopped;  // namespace (first id) -> every live process is stopped
  std::vector<std::pair<int, bool>> live;     // id, stopped
  bool someone_runs = false;
  for (int id = 0; id < static_cast<int>(ranks_.size()); ++id) {
    const RankState& st = ranks_[static_cast<size_t>(id)];
    if (st.reaped || st.pid <= 0) continue;
    const bool is_stopped = ftmpi::runtime::process_state(st.pid) == 'T';
    someone_runs = someone_runs || !is_stopped;
    live.emplace_back(id, is_stopped);
    all_stopped.try_emplace(st.base, true).first->second &= is_stopped;
  }
  bool watching = false;
  for (const auto& [id, is_stopped] : live) {
    if (!is_stopped || !all_stopped[ranks_[static_cast<size_t>(id)].base]) {
      lone_stopped_since_.erase(id);
      continue;
    }
    watching = true;  // a namespace all stopped cannot run anyone: someone_runs is another namespace's
    auto [it, fresh] = lone_stopped_since_.emplace(id, now);
    if (fresh || now - it->second < ft_timeout_ || !someone_runs) continue;
    lone_stopped_since_.erase(it);
    say(label(id, ranks_[static_cast<size_t>(id)]) +
        " is stopped and so is every other live process of its job, so no failure detector watches it: killing it");
    kill_rank(id, SIGKILL, false);
  }
  // A process may stop at any time: look again soon while one is watched, less often otherwise.
  if (!live.empty()) lone_check_ = now + (watching ? kStrandedPoll : kStoppedPoll);
}

int Runner::run() {
  // Everything that can fail on bad input happens before the first fork.
  BindingPlan plan = plan_bindings(o_);
  for (const auto& w : plan.warnings) say("warning: " + w);
  if (o_.report_bindings) {
    for (int r = 0; r < o_.np; ++r) {
      const RankBinding& b = plan.ranks[static_cast<size_t>(r)];
      if (b.bound)
        say("rank " + std::to_string(r) + " bound to " + b.where + " (cpuset " + b.cpuset_text + ")");
      else
        say("rank " + std::to_string(r) + " not bound");
    }
  }
  // First, while this process has one thread (PMIx starts its own).
  guard_ = std::make_unique<JobGuard>();
  setup_signals();
  server_ = std::make_unique<PmixServer>(queue_);
  universe_size_ = std::max(o_.np, plan.ncores);
  server_->register_job(0, std::vector<int>(static_cast<size_t>(o_.np), 0), universe_size_);
  ranks_.resize(static_cast<size_t>(o_.np));
  if (o_.timeout_s)
    timeout_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(*o_.timeout_s));
  try {
    spawn_all(plan);
    loop();
  } catch (const std::exception& e) {
    say(e.what());
    kill_and_reap_all_blocking();
    return kExitInternal;
  }
  // Every rank is reaped and the leftovers are gone (loop() ended them).
  remove_regions();
  guard_->end(true);
  if (const std::string summary = failure_summary(ranks_, start_blocker_); !summary.empty()) say(summary);
  if (forced_exit_) return *forced_exit_;
  return job_exit_code(ranks_, last_abort_, no_ft_code_);
}

}  // namespace

int run_job(const Options& opts) {
  Runner runner(opts);
  return runner.run();
}

}  // namespace ftmpi::launcher
