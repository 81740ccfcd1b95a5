// ftmpirun's job from start to end: Runner::run, the signals it takes, and the clean-up once the ranks are gone.
#include "launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "binding.hpp"
#include "error.hpp"
#include "job.hpp"
#include "job_guard.hpp"
#include "launcher_internal.hpp"
#include "pmix_server.hpp"
#include "process_group.hpp"
#include "runtime/shm_names.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::launcher::detail {
namespace {

constexpr auto kLeftoverWait = std::chrono::seconds(2);        // SIGKILLed leftovers to be gone
constexpr auto kSignalGrace = std::chrono::milliseconds(500);  // signalled ones to die of it

}  // namespace

// What the ranks left in /dev/shm goes only once the job is over: while it
// runs, a survivor may still have to map a dead rank's region (libfabric
// 1.17's shm dereferences a null region, and crashes, when a message from a
// peer arrives whose region is gone).
void Runner::remove_regions() {
    if (regions_removed_) return;
    regions_removed_ = true;
    for (const auto &st : ranks_)
        if (st.pid > 0) ftmpi::runtime::remove_shm_regions_of(st.pid);
}

void Runner::timeline_note(const std::string &what) {
    if (!timeline_closed_) timeline_append(o_.timeline, what);
}

void Runner::close_timeline() {
    if (timeline_closed_) return;
    timeline_closed_ = true;
    timeline_finish(o_.timeline);
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
    if (n > 0) say("killed " + std::to_string(n) + " leftover process" + (n == 1 ? "" : "es") + " of the job");
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

// Last resort when the loop itself failed: nothing may outlive the launcher.
// The guard is then told no clean end, so it checks the same once more.
void Runner::kill_and_reap_all_blocking() {
    for (auto &st : ranks_)
        if (!st.reaped && st.pid > 0) ::kill(st.pid, SIGKILL);
    for (auto &st : ranks_) {
        if (st.reaped || st.pid <= 0) continue;
        while (::waitpid(st.pid, &st.wait_status, 0) < 0 && errno == EINTR) {}
        st.reaped = true;
    }
    live_ = 0;
    end_leftovers();
    remove_regions();  // killed ranks leave their regions behind
    if (guard_) guard_->end(false);
}

int Runner::run() {
    if (net_) return run_node();
    // Everything that can fail on bad input happens before the first fork.
    BindingPlan plan = plan_bindings(o_);
    for (const auto &w : plan.warnings) say("warning: " + w);
    if (o_.report_bindings) {
        for (int r = 0; r < o_.np; ++r) {
            const RankBinding &b = plan.ranks[static_cast<size_t>(r)];
            if (b.bound) say("rank " + std::to_string(r) + " bound to " + b.where + " (cpuset " + b.cpuset_text + ")");
            else say("rank " + std::to_string(r) + " not bound");
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
        timeout_at_ =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*o_.timeout_s));
    try {
        spawn_all(plan);
        loop();
    } catch (const std::exception &e) {
        say(e.what());
        kill_and_reap_all_blocking();
        return kExitInternal;
    }
    // Every rank is reaped and the leftovers are gone (loop() ended them).
    for (Upcall &u : held_kills_) u.reply(PMIX_ERR_TIMEOUT);
    remove_regions();
    guard_->end(true);
    if (const std::string summary = failure_summary(ranks_, start_blocker_); !summary.empty()) say(summary);
    if (forced_exit_) return *forced_exit_;
    return job_exit_code(ranks_, last_abort_, no_ft_code_);
}

}  // namespace ftmpi::launcher::detail

namespace ftmpi::launcher {

int run_job(const Options &opts) {
    detail::Runner runner(opts);
    return runner.run();
}

}  // namespace ftmpi::launcher

namespace ftmpi::launcher::detail {

void timeline_append(const std::string &path, const std::string &what) {
    if (path.empty()) return;
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return;
    const std::string line = ftmpi::runtime::timeline_launcher_line(what);
    if (::write(fd, line.data(), line.size()) < 0) say("warning: --timeline: cannot write " + path);
    ::close(fd);
}

void timeline_finish(const std::string &path) {
    if (path.empty()) return;
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    const std::string tail = ftmpi::runtime::timeline_footer();
    if (fd < 0 || ::write(fd, tail.data(), tail.size()) != static_cast<ssize_t>(tail.size()))
        say("warning: --timeline: cannot finish " + path + ": " + std::strerror(errno));
    if (fd >= 0) ::close(fd);
}

std::vector<std::string> split_list(const std::string &s, char sep) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= s.size()) {
        const std::size_t next = s.find(sep, at);
        std::string item = s.substr(at, next == std::string::npos ? std::string::npos : next - at);
        if (!item.empty()) out.push_back(std::move(item));
        if (next == std::string::npos) break;
        at = next + 1;
    }
    return out;
}

int term_signal(int sig, int &count, std::optional<int> &forced_exit) {
    ++count;
    if (!forced_exit) forced_exit = 128 + sig;  // the shell's convention: 130, 143
    if (count == 1) {
        say("received " + signal_name(sig) + ", forwarding it to the ranks");
        return sig;
    }
    say("received " + signal_name(sig) + " again, killing the ranks");
    return SIGKILL;
}

}  // namespace ftmpi::launcher::detail
