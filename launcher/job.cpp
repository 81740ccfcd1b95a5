#include "job.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <unordered_map>

#include "error.hpp"

namespace ftmpi::launcher {

int exit_code_of(int st) {
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    return 255;
}

bool rank_failed(const RankState &r) {
    if (!r.reaped) return false;
    if (WIFSIGNALED(r.wait_status)) return true;
    return r.connected && !r.finalized;
}

int job_exit_code(const std::vector<RankState> &ranks, std::optional<int> last_abort, std::optional<int> no_ft_code) {
    if (no_ft_code) return *no_ft_code;
    if (ranks.empty()) return 0;
    bool any_failed = false;
    for (const auto &r : ranks) any_failed |= r.failed;
    if (!any_failed) return exit_code_of(ranks[0].wait_status);
    for (const auto &r : ranks)
        if (r.finalized && WIFEXITED(r.wait_status)) return WEXITSTATUS(r.wait_status);
    if (last_abort) return *last_abort;
    return exit_code_of(ranks[0].wait_status);
}

std::optional<int> unstarted_blocks(const std::vector<RankState> &ranks, int unstarted) {
    bool any_connected = false;
    for (const RankState &st : ranks) any_connected = any_connected || (st.connected && st.base == 0);
    if (!any_connected) return std::nullopt;
    const int code = exit_code_of(ranks[static_cast<size_t>(unstarted)].wait_status);
    return code != 0 ? code : 1;
}

std::string signal_name(int sig) {
    const char *abbrev = sigabbrev_np(sig);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

bool is_crash_signal(int sig) {
    for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS})
        if (sig == s) return true;
    return false;
}

namespace {

// How rank `st` ended, for the failure summary.
std::string failure_cause(const RankState &st, bool unstarted) {
    if (st.lost) return "lost with their node";
    std::string how;
    if (WIFSIGNALED(st.wait_status)) {
        const int sig = WTERMSIG(st.wait_status);
        how = "killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
        if (st.killed_by_us && !is_crash_signal(sig)) how += " sent by ftmpirun";
    } else {
        how = "exited with code " + std::to_string(exit_code_of(st.wait_status));
    }
    if (unstarted) return how + " before MPI_Init";
    return WIFSIGNALED(st.wait_status) ? how : how + " without calling MPI_Finalize";
}

// "1", "1,3", "0-5,7": runs of three or more ranks become ranges.
std::string rank_list(const std::vector<int> &ranks) {
    std::string out;
    for (size_t i = 0; i < ranks.size();) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        if (!out.empty()) out += ',';
        if (j - i >= 2) {
            out += std::to_string(ranks[i]) + '-' + std::to_string(ranks[j]);
            i = j + 1;
        } else {
            out += std::to_string(ranks[i]);
            ++i;
        }
    }
    return out;
}

}  // namespace

std::string failure_summary(const std::vector<RankState> &ranks, std::optional<int> unstarted) {
    // cause -> its ranks, kept in the order each cause first appears.
    std::vector<std::pair<std::string, std::vector<int>>> groups;
    std::map<std::string, size_t> index;
    int failed = 0;
    for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
        const RankState &st = ranks[static_cast<size_t>(r)];
        const bool not_started = unstarted && *unstarted == r;
        if (!st.reaped || !(st.failed || not_started)) continue;
        ++failed;
        std::string cause = failure_cause(st, not_started);
        auto [it, fresh] = index.emplace(cause, groups.size());
        if (fresh) groups.emplace_back(std::move(cause), std::vector<int>{});
        groups[it->second].second.push_back(r);
    }
    if (failed == 0) return "";
    // With spawned processes the list is by process id (the job's ranks first).
    bool spawned = false;
    for (const RankState &st : ranks) spawned = spawned || st.base != 0;
    const std::string one = spawned ? "process" : "rank", many = spawned ? "processes" : "ranks";
    std::string line = std::to_string(failed) + " of " + std::to_string(ranks.size()) + " " +
                       (ranks.size() == 1 ? one : many) + " failed: ";
    for (size_t g = 0; g < groups.size(); ++g) {
        const auto &[cause, members] = groups[g];
        if (g) line += "; ";
        line += (members.size() == 1 ? one : many) + " " + rank_list(members) + " " + cause;
    }
    if (spawned) line += " (process ids: the job's ranks, then the spawned processes)";
    return line;
}

pid_t spawn_child(const SpawnSpec &s) {
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) throw LauncherError(std::string("fork: ") + std::strerror(errno));
    if (pid > 0) {
        // EACCES: the child has exec'd, so its own setpgid below succeeded.
        if (s.pgid >= 0) ::setpgid(pid, s.pgid ? s.pgid : pid);
        return pid;
    }

    // Child: async-signal-safe calls only (the launcher has PMIx threads).
    if (s.death_signal != 0) {
        ::prctl(PR_SET_PDEATHSIG, s.death_signal);
        if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl took effect
    }
    if (::dup2(s.stdin_fd, 0) < 0 || ::dup2(s.stdout_fd, 1) < 0 || ::dup2(s.stderr_fd, 2) < 0) ::_exit(127);
    if (s.pgid >= 0 && ::setpgid(0, s.pgid) != 0) {
        static constexpr char msg[] = "ftmpirun: a rank could not join the job's process group\n";
        [[maybe_unused]] ssize_t n = ::write(2, msg, sizeof msg - 1);
        ::_exit(127);
    }
    // Launcher descriptors are CLOEXEC; this also covers any PMIx left open.
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (s.cpus) ::sched_setaffinity(0, sizeof(cpu_set_t), s.cpus);
    if (s.cwd && ::chdir(s.cwd) != 0) {
        if (s.cwd_error_msg) {
            [[maybe_unused]] ssize_t n = ::write(2, s.cwd_error_msg, std::strlen(s.cwd_error_msg));
        }
        ::_exit(127);
    }
    ::execve(s.path, s.argv, s.envp);
    if (s.exec_error_msg) {
        [[maybe_unused]] ssize_t n = ::write(2, s.exec_error_msg, std::strlen(s.exec_error_msg));
    }
    ::_exit(127);
}

std::vector<std::string> merge_env(const std::vector<std::string> &base, const std::vector<std::string> &overrides) {
    std::vector<std::string> out;
    std::unordered_map<std::string, size_t> index;
    auto add = [&](const std::string &kv) {
        std::string name = kv.substr(0, kv.find('='));
        auto it = index.find(name);
        if (it != index.end()) {
            out[it->second] = kv;
        } else {
            index.emplace(name, out.size());
            out.push_back(kv);
        }
    };
    for (const auto &kv : base) add(kv);
    for (const auto &kv : overrides) add(kv);
    return out;
}

}  // namespace ftmpi::launcher
