// Starting the job's processes: their environment, descriptors and binding (Runner::start_process).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "binding.hpp"
#include "error.hpp"
#include "iofwd.hpp"
#include "job.hpp"
#include "job_guard.hpp"
#include "launcher_internal.hpp"
#include "pmix_server.hpp"
#include "runtime/config.hpp"

extern char **environ;

namespace ftmpi::launcher::detail {
namespace {

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
Channel make_stdout_channel(bool *warned) {
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
    std::vector<char *> p;
    explicit CStrings(std::vector<std::string> v) : s(std::move(v)) {
        for (auto &x : s) p.push_back(x.data());
        p.push_back(nullptr);
    }
};

}  // namespace

// The environment every process gets from ftmpirun (before its own PMIx
// and rank variables): ftmpirun's own, then `extra_` on top.
void Runner::prepare_env() {
    for (char **e = environ; e && *e; ++e) env_base_.emplace_back(*e);
    if (extra_.empty()) extra_ = job_env_extras(o_);
    ft_timeout_ = ranks_ft_timeout(env_base_, extra_);  // for check_stopped
}

// Forks process `id`: rank `rank` of the `size` processes of the namespace
// from `base`, running `path` with `argv`; `app_env` goes on top of
// everything (a spawner's additions), `cwd` (may be empty) is its directory.
// `local` is its rank among its namespace's processes on this node, of
// `local_size` (-1: all are here).
void Runner::start_process(int id, int base, int rank, int size, const std::string &path,
                           const std::vector<std::string> &args, const std::vector<std::string> &app_env,
                           const std::string &cwd, const RankBinding &b, int local, int local_size) {
    std::vector<std::string> env = server_->setup_client(base, rank);
    // Open MPI's and MPICH's names for the rank's place, for scripts and
    // libraries that read them. PMI_SIZE > 1 next to PMIX_NAMESPACE is fine
    // for libftmpi (runtime/launcher_env.hpp).
    const std::string rs = std::to_string(rank), ns = std::to_string(size);
    const std::string ls = std::to_string(local < 0 ? rank : local),
                      lns = std::to_string(local < 0 ? size : local_size);
    for (const char *v : {"OMPI_COMM_WORLD_RANK=", "PMI_RANK="}) env.push_back(v + rs);
    for (const char *v : {"OMPI_COMM_WORLD_LOCAL_RANK=", "OMPI_COMM_WORLD_NODE_RANK=", "MPI_LOCALRANKID="})
        env.push_back(v + ls);
    for (const char *v : {"OMPI_COMM_WORLD_SIZE=", "PMI_SIZE="}) env.push_back(v + ns);
    for (const char *v : {"OMPI_COMM_WORLD_LOCAL_SIZE=", "MPI_LOCALNRANKS="}) env.push_back(v + lns);
    // A bound rank's failure detector may run on any CPU this launcher was given.
    if (b.bound && !service_cpus_.empty()) env.push_back("FTMPI_SERVICE_CPUS=" + service_cpus_);
    env.insert(env.end(), extra_.begin(), extra_.end());  // -x may override any of them
    env.insert(env.end(), app_env.begin(), app_env.end());
    CStrings envp(merge_env(env_base_, env));
    CStrings argv(args);
    const std::string exec_err = "ftmpirun: cannot execute " + path + "\n";
    const std::string cwd_err = "ftmpirun: cannot change to directory " + cwd + "\n";
    // Stdin: the launcher's (a daemon's: the head's, sent on), through a
    // pipe, for process 0 of the job only; /dev/null otherwise.
    Channel out = make_stdout_channel(&warned_no_pty_), err = make_pipe();
    std::optional<Channel> in;
    if (id == 0 && (net_ || ::fcntl(0, F_GETFD) >= 0)) in = make_pipe();

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
    // A live process holds the group while another is forked; the first
    // (or, on a daemon, the first after all had ended) starts a new one.
    const bool new_group = live_ == 0;
    spec.pgid = new_group ? 0 : job_pgid_;
    const pid_t pid = spawn_child(spec);
    if (new_group) {
        job_pgid_ = pid;
        guard_->job_group(pid);
    }
    guard_->rank(pid);
    RankState &st = ranks_[static_cast<size_t>(id)];
    st.base = base;
    st.rank = rank;
    st.pid = pid;
    pid_rank_[pid] = id;
    ++live_;
    // The process's ends close here (at the end of this call): from now on
    // only it holds them, and its exit is the forwarders' EOF.
    if (net_) {  // a daemon: whole lines go to the head
        for (int stream : {1, 2})
            fwd_.emplace_back((stream == 1 ? out : err).rd.release(), [this, id, stream](std::string_view line) {
                wire::Writer w;
                w.u32(static_cast<std::uint32_t>(id)).u8(static_cast<std::uint8_t>(stream));
                w.bytes({reinterpret_cast<const std::uint8_t *>(line.data()), line.size()});
                send_head(wire::Type::io, w);
            });
        if (in) stdin_ = std::make_unique<StdinForwarder>(in->wr.release());
        return;
    }
    std::string prefix = o_.tag_output ? "[" + std::to_string(id) + "] " : "";
    fwd_.emplace_back(out.rd.release(), 1, prefix);
    fwd_.emplace_back(err.rd.release(), 2, prefix);
    if (in) stdin_ = std::make_unique<StdinForwarder>(0, in->wr.release());
}

void Runner::spawn_all(const BindingPlan &plan) {
    prepare_env();
    devnull_ = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (devnull_.get() < 0) throw LauncherError(std::string("open /dev/null: ") + std::strerror(errno));
    for (int r = 0; r < o_.np; ++r)
        start_process(r, 0, r, o_.np, o_.program_path, o_.argv, {}, o_.wdir, plan.ranks[static_cast<size_t>(r)]);
}

}  // namespace ftmpi::launcher::detail

namespace ftmpi::launcher {

std::chrono::milliseconds ranks_ft_timeout(const std::vector<std::string> &env, const std::vector<std::string> &extra) {
    std::chrono::milliseconds t{ftmpi::runtime::Config{}.FT_TIMEOUT_MS};
    for (const auto *list : {&env, &extra})  // the last setting wins
        for (const std::string &kv : *list)
            if (kv.rfind("FTMPI_FT_TIMEOUT_MS=", 0) == 0) {
                const long ms = std::strtol(kv.c_str() + std::strlen("FTMPI_FT_TIMEOUT_MS="), nullptr, 10);
                if (ms > 0) t = std::chrono::milliseconds(ms);
            }
    return t;
}

std::vector<std::string> job_env_extras(const Options &o) {
    std::vector<std::string> extra;
    // libinfinipath (under libfabric) is asked not to install the handlers that
    // turn a rank's crash into exit(1). A second line of defence: libftmpi
    // removes them itself, under any launcher (runtime/fatal_signals.hpp). The
    // user's environment and -x take precedence.
    if (!std::getenv("IPATH_NO_BACKTRACE")) extra.emplace_back("IPATH_NO_BACKTRACE=1");
    for (const auto &[name, value] : o.exports) {
        if (value) {
            extra.push_back(name + "=" + *value);
        } else if (const char *v = std::getenv(name.c_str())) {
            extra.push_back(name + "=" + v);
        } else {
            detail::say("warning: -x " + name + ": not set in this environment, not exported");
        }
    }
    extra.push_back("FTMPI_LAUNCHER=ftmpirun");
    if (!o.ft) extra.push_back("FTMPI_FT=0");  // MPIX_FT tells the ranks
    if (!o.initial_errhandler.empty()) extra.push_back("FTMPI_ERRHANDLER=" + o.initial_errhandler);
    if (!o.timeline.empty()) extra.push_back("FTMPI_TIMELINE=" + o.timeline);
    return extra;
}

}  // namespace ftmpi::launcher
