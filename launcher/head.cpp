// The head of ftmpirun across nodes: start-up (the daemons through srun,
// their tree, the launch) and the end (Head::run).
#include "head.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "error.hpp"
#include "head_internal.hpp"
#include "runtime/auth.hpp"
#include "runtime/config.hpp"

extern char **environ;

namespace ftmpi::launcher::detail {
namespace {

namespace auth = ftmpi::runtime::auth;

constexpr auto kStartDeadline = std::chrono::seconds(60);  // every daemon attached

std::string hex(const std::string &b) {
    static const char *d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : b) out += d[c >> 4], out += d[c & 15];
    return out;
}

std::string self_exe() {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) throw LauncherError(std::string("readlink /proc/self/exe: ") + std::strerror(errno));
    return std::string(buf, static_cast<size_t>(n));
}

int fanout() { return std::max(1, ftmpi::runtime::config_from_environment().LAUNCH_FANOUT); }

std::string fresh_key() {
    std::string k(auth::k_secret_size, '\0');
    auth::random_bytes(k.data(), k.size());
    return k;
}

}  // namespace

Head::Head(const Options &o, std::vector<AllocNode> nodes, std::vector<int> rank_node)
    : o_(o), nodes_(std::move(nodes)), rank_node_(std::move(rank_node)), key_(fresh_key()),
      net_(key_, 0, Tree(static_cast<int>(nodes_.size()), fanout())) {
    const size_t v = nodes_.size() + 1;
    addrs_.resize(v);
    hello_.assign(v, false);
    ready_.assign(v, false);
    started_.assign(v, false);
    lost_.assign(v, false);
    seen_.assign(v, 0);
    acked_.assign(v, 0);
    they_have_.assign(v, 0);
}

Head::~Head() {
    if (sigfd_ >= 0) ::close(sigfd_);
}

std::string Head::where(int id) const {
    const RankState &st = procs_[static_cast<size_t>(id)];
    return label(id, st) + " (pid " + std::to_string(st.pid) + " on " + node_name(vertex_of_[static_cast<size_t>(id)]) +
           ")";
}

// srun starts one daemon per node: `--overlap` shares the allocation's CPUs
// with the job (the daemons' step must not hold them), no PMI for the
// daemons themselves, and no binding (each daemon binds its ranks). srun is
// in its own process group, so a terminal's ^C reaches the head alone, which
// forwards it. srun does not die with the head: the daemons, whose links
// to the head break, kill their ranks, remove what they left and exit, and
// srun then ends. (Signalled, srun would have Slurm SIGKILL the daemons
// and everything of theirs at once: srun answers SIGTERM by forcing the
// step's end, and a daemon killed before it cleaned up leaves its ranks'
// shared memory behind.)
void Head::start_daemons() {
    net_.listen();
    std::string names, addrs;
    for (const AllocNode &n : nodes_) names += (names.empty() ? "" : ",") + n.name;
    for (const std::string &a : net_.addresses(nodes_.front().name)) addrs += (addrs.empty() ? "" : ",") + a;
    const std::string k = std::to_string(nodes_.size());
    std::vector<std::string> args = {"srun",
                                     "--overlap",
                                     "--mpi=none",
                                     "--cpu-bind=none",
                                     "--kill-on-bad-exit=0",
                                     "--nodes=" + k,
                                     "--ntasks=" + k,
                                     "--ntasks-per-node=1",
                                     "--nodelist=" + names,
                                     "--input=none",
                                     self_exe(),
                                     "--ftmpi-daemon",
                                     addrs};
    std::vector<std::string> env;
    for (char **e = environ; e && *e; ++e) env.emplace_back(*e);
    env = merge_env(env, {"FTMPI_DAEMON_KEY=" + hex(key_)});
    std::vector<char *> argv, envp;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto &e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string path = resolve_program("srun");
    const Fd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    const std::string err = "ftmpirun: cannot execute " + path + "\n";
    SpawnSpec spec;
    spec.path = path.c_str();
    spec.argv = argv.data();
    spec.envp = envp.data();
    spec.stdin_fd = devnull.get();
    spec.stdout_fd = 1;
    spec.stderr_fd = 2;
    spec.exec_error_msg = err.c_str();
    spec.pgid = 0;
    spec.death_signal = 0;
    srun_ = spawn_child(spec);
}

// Until every daemon said hello, got its place in the tree, attached to its
// parent and said it is ready; false (having said why) when srun ended or
// the deadline passed first.
bool Head::gather(Clock::time_point deadline) {
    const int k = nodes();
    while (std::count(ready_.begin() + 1, ready_.end(), true) < k) {
        if (srun_reaped_) {
            say("the daemons' srun ended (" + std::string(WIFSIGNALED(srun_status_) ? "signal " : "exit code ") +
                std::to_string(WIFSIGNALED(srun_status_) ? WTERMSIG(srun_status_) : WEXITSTATUS(srun_status_)) +
                ") before every node's daemon had started");
            return false;
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            std::string missing;
            for (int v = 1; v <= k; ++v)
                if (!ready_[static_cast<size_t>(v)]) missing += (missing.empty() ? "" : ",") + node_name(v);
            say("no daemon started within " + std::to_string(kStartDeadline.count()) + " s on " + missing);
            return false;
        }
        poll_once(static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count()));
        if (forced_exit_) return false;
    }
    return true;
}

// A daemon's hello (on a link of its own, to the head): its node's vertex,
// then, once every node has said hello, each one's place in the tree.
void Head::on_hello(Net::Delivery &d) {
    wire::Reader r(d.payload);
    const std::string name = r.str();
    r.u32();  // the daemon's pid, for messages to come
    std::vector<std::string> addrs;
    const std::uint32_t n = r.u32();
    for (std::uint32_t i = 0; i < n && i < 64 && r.ok(); ++i) addrs.push_back(r.str());
    int v = 0;
    for (int i = 1; i <= nodes() && v == 0; ++i)
        if (node_name(i) == name && !hello_[static_cast<size_t>(i)]) v = i;
    if (!r.done() || v == 0) {
        say("warning: a daemon from node '" + name + "', which is not one of the job's (or already has one), refused");
        net_.drop(d.via, "refused");
        return;
    }
    net_.identify(d.via, v);
    hello_[static_cast<size_t>(v)] = true;
    addrs_[static_cast<size_t>(v)] = std::move(addrs);
    if (std::count(hello_.begin() + 1, hello_.end(), true) < nodes()) return;
    const Tree &t = net_.tree();
    for (int w = 1; w <= nodes(); ++w) {
        wire::Writer tw;
        tw.u32(static_cast<std::uint32_t>(w))
            .u32(static_cast<std::uint32_t>(nodes()))
            .u32(static_cast<std::uint32_t>(fanout()));
        const int p = t.parent(w);
        const auto &pa = p > 0 ? addrs_[static_cast<size_t>(p)] : std::vector<std::string>{};
        tw.u32(static_cast<std::uint32_t>(pa.size()));
        for (const auto &a : pa) tw.str(a);
        // On the daemon's own link to the head: it is not in the tree yet.
        if (Link *l = net_.link_to(w)) l->send({wire::Type::tree, 0, wire::kUnassigned, 0}, Journal::unnumbered(tw));
    }
}

void Head::launch() {
    settings_.nspace = "ftmpi." + std::to_string(::getpid());
    for (const AllocNode &n : nodes_) settings_.nodes.push_back(n.name);
    settings_.env = job_env_extras(o_);
    std::vector<std::string> env;
    for (char **e = environ; e && *e; ++e) env.emplace_back(*e);
    ft_timeout_ = ranks_ft_timeout(env, settings_.env);
    settings_.bind = o_.bind;
    settings_.map = o_.map;
    settings_.pe = o_.pe;
    settings_.report_bindings = o_.report_bindings;
    settings_.ft = o_.ft;
    int slots = 0;
    for (const AllocNode &n : nodes_) slots += n.slots;
    settings_.universe_size = std::max(o_.np, slots);
    NamespaceSpec ns;
    ns.apps.push_back({o_.program_path, o_.argv, {}, o_.wdir});
    procs_.resize(static_cast<size_t>(o_.np));
    for (int r = 0; r < o_.np; ++r) {
        const int v = rank_node_[static_cast<size_t>(r)] + 1;
        ns.node.push_back(v);
        ns.app.push_back(0);
        procs_[static_cast<size_t>(r)].rank = r;
        vertex_of_.push_back(v);
    }
    wire::Writer w;
    encode(w, settings_);
    encode(w, ns);
    to_all(wire::Type::launch, w);
    stdin_open_ = ::fcntl(0, F_GETFD) >= 0;
    if (!stdin_open_) {  // process 0 reads the end of input at once
        wire::Writer eof;
        eof.bytes({});
        to(vertex_of_[0], wire::Type::stdin_data, eof);
    }
}

int Head::run() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGCHLD, SIGINT, SIGTERM}) sigaddset(&set, s);
    if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) throw LauncherError("pthread_sigmask failed");
    sigfd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sigfd_ < 0) throw LauncherError(std::string("signalfd: ") + std::strerror(errno));
    ::signal(SIGPIPE, SIG_IGN);
    start_daemons();
    if (!gather(Clock::now() + kStartDeadline)) {
        finish();
        return forced_exit_ ? *forced_exit_ : kExitInternal;
    }
    launch();
    if (o_.timeout_s)
        timeout_at_ =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*o_.timeout_s));
    loop();
    finish();
    close_timeline();
    if (const std::string summary = failure_summary(procs_, start_blocker_); !summary.empty()) say(summary);
    if (forced_exit_) return *forced_exit_;
    return job_exit_code(procs_, last_abort_, no_ft_code_);
}

}  // namespace ftmpi::launcher::detail

namespace ftmpi::launcher {

int run_head(const Options &o, const std::vector<AllocNode> &nodes, const std::vector<int> &rank_node) {
    detail::Head head(o, nodes, rank_node);
    return head.run();
}

}  // namespace ftmpi::launcher
