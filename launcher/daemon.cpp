// A daemon of ftmpirun across nodes: from its start to the launch (daemon.hpp).
#include "daemon.hpp"

#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"
#include "job_spec.hpp"
#include "journal.hpp"
#include "launcher_internal.hpp"
#include "runtime/auth.hpp"

extern char **environ;

namespace ftmpi::launcher {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kConnectTimeout = std::chrono::milliseconds(3000);  // per address
constexpr auto kLaunchDeadline = std::chrono::seconds(90);         // the head's own start deadline, and some

// FTMPI_DAEMON_KEY (hex), taken out of the environment: the processes must not inherit it.
std::string take_key() {
    const char *hex = std::getenv("FTMPI_DAEMON_KEY");
    std::string key;
    const auto nib = [](char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; };
    if (hex != nullptr && std::strlen(hex) == 2 * ftmpi::runtime::auth::k_secret_size)
        for (size_t i = 0; hex[i]; i += 2) key += static_cast<char>(nib(hex[i]) * 16 + nib(hex[i + 1]));
    ::unsetenv("FTMPI_DAEMON_KEY");
    if (key.size() != ftmpi::runtime::auth::k_secret_size)
        throw LauncherError("ftmpirun --ftmpi-daemon: no launch key (it is started by ftmpirun, across nodes)");
    return key;
}

// The daemons' own srun step's variables: they describe the daemon (its
// task number, the step's one task per node), not the processes it starts,
// which would read them as theirs. The allocation's (SLURM_JOB_*) stay.
void forget_daemon_step() {
    static const char *const names[] = {"SLURM_PROCID",
                                        "SLURM_LOCALID",
                                        "SLURM_NODEID",
                                        "SLURM_TASK_PID",
                                        "SLURM_GTIDS",
                                        "SLURM_STEPID",
                                        "SLURM_NTASKS",
                                        "SLURM_NPROCS",
                                        "SLURM_TASKS_PER_NODE",
                                        "SLURM_DISTRIBUTION",
                                        "SLURM_LAUNCH_NODE_IPADDR",
                                        "SLURM_OVERLAP",
                                        "SLURM_MPI_TYPE",
                                        "SLURM_UMASK",
                                        "SLURM_PRIO_PROCESS",
                                        "SLURM_CPUS_PER_TASK",
                                        "SLURM_CPU_BIND",
                                        "SLURM_CPU_BIND_LIST",
                                        "SLURM_CPU_BIND_TYPE",
                                        "SLURM_CPU_BIND_VERBOSE"};
    for (const char *n : names) ::unsetenv(n);
    std::vector<std::string> step;
    for (char **e = environ; e && *e; ++e)
        if (std::strncmp(*e, "SLURM_STEP_", 11) == 0 || std::strncmp(*e, "SLURM_SRUN_COMM_", 16) == 0)
            step.emplace_back(*e, std::strchr(*e, '=') ? std::strchr(*e, '=') - *e : std::strlen(*e));
    for (const std::string &n : step) ::unsetenv(n.c_str());
}


std::string node_name() {
    if (const char *n = std::getenv("SLURMD_NODENAME")) return n;
    char buf[HOST_NAME_MAX + 1] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
    return buf;
}

// The daemon before the launch: its place in the tree, then the job.
struct Start {
    std::unique_ptr<Net> net;
    std::vector<Net::Delivery> early_attach;  // children that attached before we knew the tree
    bool assigned = false, attached = false;
    bool launched = false, ended = false;
    std::vector<Net::Delivery> after_launch;  // what came with the launch, for the runner
    std::uint64_t seen = 0;                   // the last of the head's numbered frames
    JobSettings settings;
    NamespaceSpec ns;

    void on_tree(wire::Reader &r) {
        const int vertex = static_cast<int>(r.u32()), nodes = static_cast<int>(r.u32());
        const int fanout = static_cast<int>(r.u32());
        std::vector<std::string> parent;
        const std::uint32_t n = r.u32();
        for (std::uint32_t i = 0; i < n && i < 64 && r.ok(); ++i) parent.push_back(r.str());
        if (!r.done() || vertex < 1 || vertex > nodes || fanout < 1) throw LauncherError("a malformed tree frame");
        net->assign(vertex, Tree(nodes, fanout));
        assigned = true;
        const int p = net->tree().parent(vertex);
        if (p == 0) {
            attached = true;
            net->send(0, wire::Type::ready, Journal::unnumbered(wire::Writer{}));
        } else {
            std::string why;
            Link *l = net->connect_first(parent, p, kConnectTimeout, why);
            if (!l) throw LauncherError("cannot reach the parent daemon (" + why + ")");
            wire::Writer w;
            w.u32(static_cast<std::uint32_t>(vertex)).u64(0);
            l->send({wire::Type::attach, 0, static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(vertex)},
                    w.data());
        }
        for (auto &d : early_attach) accept_attach(*net, d);
        early_attach.clear();
    }

    void on_frame(Net::Delivery &d) {
        wire::Reader r(d.payload);
        // the head's frames are numbered (the tree frame with 0)
        if (d.via->peer >= 0 && d.header.src == 0 && d.header.type != wire::Type::attach && !Journal::fresh(r, seen))
            return;
        if (d.via->peer < 0) {  // a child's new link
            if (d.header.type != wire::Type::attach) net->drop(d.via, "not an attach");
            else if (!assigned) early_attach.push_back(std::move(d));
            else accept_attach(*net, d);
            return;
        }
        switch (d.header.type) {
        case wire::Type::tree:
            if (!assigned && d.via->peer == 0) on_tree(r);
            break;
        case wire::Type::attach:  // our parent took us: the head may hear from us through it
            if (assigned && !attached && d.via->peer == net->tree().parent(net->self())) {
                attached = true;
                net->send(0, wire::Type::ready, Journal::unnumbered(wire::Writer{}));
                if (Link *head = net->link_to(0)) net->drop(head, "attached to the parent");
            }
            break;
        case wire::Type::exit:  // the head gave up before the launch
            ended = true;
            break;
        case wire::Type::launch:
            if (!decode(r, settings) || !decode(r, ns, static_cast<int>(settings.nodes.size())) || !r.done())
                throw LauncherError("a malformed launch frame");
            launched = true;
            break;
        default: break;
        }
    }
};

}  // namespace

bool accept_attach(Net &net, Net::Delivery &d) {
    wire::Reader r(d.payload);
    const int v = static_cast<int>(r.u32());
    r.u64();  // what it saw of the head's frames: for the head only
    if (!r.done() || v < 1 || net.tree().parent(v) != net.self()) {
        net.drop(d.via, "an attach from a vertex that is not our child");
        return false;
    }
    net.identify(d.via, v);
    wire::Writer w;
    w.u32(static_cast<std::uint32_t>(net.self())).u64(0);
    net.send(static_cast<std::uint32_t>(v), wire::Type::attach, w);
    return true;
}

int run_daemon(const std::string &head) {
    forget_daemon_step();
    Start s;
    const std::string key = take_key();
    s.net = std::make_unique<Net>(key, static_cast<int>(wire::kUnassigned), Tree(0, 1));
    s.net->listen();
    std::string why;
    Link *up = s.net->connect_first(detail::split_list(head, ','), 0, kConnectTimeout, why);
    if (!up) throw LauncherError("cannot reach ftmpirun's head (" + why + ")");
    wire::Writer hello;
    hello.str(node_name()).u32(static_cast<std::uint32_t>(::getpid()));
    const std::vector<std::string> mine = s.net->addresses();
    hello.u32(static_cast<std::uint32_t>(mine.size()));
    for (const auto &a : mine) hello.str(a);
    up->send({wire::Type::hello, 0, 0, wire::kUnassigned}, hello.data());

    const auto deadline = Clock::now() + kLaunchDeadline;
    auto next_tick = Clock::now();
    while (!s.launched) {
        if (s.ended) return 0;
        const auto now = Clock::now();
        if (now >= deadline) throw LauncherError("no launch from ftmpirun's head");
        std::vector<pollfd> pfds;
        s.net->add_fds(pfds);
        const auto left =
            std::min<long>(std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count(),
                           std::max<long>(1, std::chrono::ceil<std::chrono::milliseconds>(next_tick - now).count()));
        if (::poll(pfds.data(), pfds.size(), s.net->ready() ? 0 : static_cast<int>(left)) < 0 && errno != EINTR)
            throw LauncherError(std::string("poll: ") + std::strerror(errno));
        std::vector<Net::Delivery> got;
        std::vector<std::pair<int, std::string>> lost;
        s.net->on_poll(pfds, got, lost);
        for (auto &d : got) {
            if (s.launched) s.after_launch.push_back(std::move(d));
            else s.on_frame(d);
        }
        if (Clock::now() >= next_tick)  // heartbeats while the other nodes start
            next_tick = s.net->tick(Clock::now(), launch_period(), launch_silence(), lost);
        for (auto &[v, w] : lost) {
            const bool to_parent = s.assigned ? v == s.net->tree().parent(s.net->self()) : v == 0;
            if (to_parent && !(s.attached && v == 0)) throw LauncherError("lost the link to ftmpirun (" + w + ")");
        }
    }
    s.settings.secret = universe_secret(key);
    Options o;
    o.np = s.ns.size();
    o.bind = s.settings.bind;
    o.map = s.settings.map;
    o.pe = s.settings.pe;
    o.report_bindings = s.settings.report_bindings;
    o.ft = s.settings.ft;
    o.wdir = s.ns.apps[0].cwd;
    o.program_path = s.ns.apps[0].path;
    o.argv = s.ns.apps[0].argv;
    detail::Runner runner(o, std::move(s.net), std::move(s.settings), std::move(s.ns), detail::split_list(head, ','));
    runner.seen_before(s.seen, std::move(s.after_launch));
    return runner.run();
}

}  // namespace ftmpi::launcher
