// The head's event loop (ftmpirun across nodes): signals, stdin, the
// daemons' frames and links, deadlines, and the end of the job.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "error.hpp"
#include "head_internal.hpp"
#include "runtime/config.hpp"

namespace ftmpi::launcher::detail {
namespace {

constexpr std::size_t kStdinWindow = 64 * 1024;         // stdin bytes on their way to process 0
constexpr auto kDrainLimit = std::chrono::seconds(10);  // daemons finishing after `exit`
constexpr auto kSrunGrace = std::chrono::seconds(2);    // srun after its daemons, before SIGTERM, then SIGKILL


}  // namespace

int Head::timeout_ms(Clock::time_point now) const {
    Clock::time_point next = next_tick_;
    for (const auto &d : {timeout_at_, escalate_at_, stopped_check_})
        if (d && *d < next) next = *d;
    for (const auto &[c, when] : orphans_) next = std::min(next, when);
    if (next <= now) return 0;
    return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
}

void Head::poll_once(int timeout) {
    std::vector<pollfd> pfds;
    pfds.push_back({sigfd_, POLLIN, 0});
    const bool want_stdin =
        stdin_open_ && stdin_unacked_ < kStdinWindow && !procs_.empty() && !procs_[0].reaped && !teardown_;
    if (want_stdin) pfds.push_back({0, POLLIN, 0});
    net_.add_fds(pfds);
    const int due = net_.ready() ? 0 : timeout_ms(Clock::now());  // frames waiting, heartbeats, deadlines
    const int n = ::poll(pfds.data(), pfds.size(), timeout < 0 ? due : std::min(timeout, due));
    if (n < 0 && errno != EINTR) throw LauncherError(std::string("poll: ") + std::strerror(errno));
    std::vector<Net::Delivery> mine;
    std::vector<std::pair<int, std::string>> lost;
    net_.on_poll(pfds, mine, lost);
    for (auto &d : mine) on_frame(d);
    if (pfds[0].revents) on_signalfd();
    if (want_stdin && pfds[1].revents) on_stdin();
    const auto now = Clock::now();
    if (now >= next_tick_) {
        next_tick_ = net_.tick(now, launch_period(), launch_silence(), lost);
        send_acks();
    }
    for (auto &[v, why] : lost) on_lost(v, why);
    check_orphans(now);
    if (!stopped_check_ || now >= *stopped_check_) check_stopped(now);
}

void Head::on_signalfd() {
    signalfd_siginfo si;
    while (::read(sigfd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        const int sig = static_cast<int>(si.ssi_signo);
        if (sig == SIGCHLD) {
            int st = 0;
            if (!srun_reaped_ && srun_ > 0 && ::waitpid(srun_, &st, WNOHANG) == srun_) {
                srun_reaped_ = true;
                srun_status_ = st;
            }
            continue;
        }
        const int send = term_signal(sig, term_signals_, forced_exit_);
        teardown(send);
        if (send == SIGKILL) escalate_at_.reset();
        else escalate_at_ = Clock::now() + kEscalateAfter;
    }
}

// Stdin to process 0's daemon, at most kStdinWindow bytes ahead of what it
// wrote into the process (stdin_credit); an empty frame is the end.
void Head::on_stdin() {
    char buf[16384];
    const std::size_t room = std::min(sizeof buf, kStdinWindow - stdin_unacked_);
    const ssize_t n = ::read(0, buf, room);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    wire::Writer w;
    w.bytes({reinterpret_cast<const std::uint8_t *>(buf), n > 0 ? static_cast<std::size_t>(n) : 0});
    to(vertex_of_[0], wire::Type::stdin_data, w);
    if (n <= 0) stdin_open_ = false;
    else stdin_unacked_ += static_cast<std::size_t>(n);
}

void Head::loop() {
    while (true) {
        bool done = spawns_.empty();
        for (const RankState &st : procs_) done = done && st.reaped;
        if (done) return;
        poll_once(-1);
        const auto now = Clock::now();
        if (timeout_at_ && now >= *timeout_at_) {
            timeout_at_.reset();
            say("job timed out after " + o_.timeout_text + " seconds, killing it");
            if (!forced_exit_) forced_exit_ = kExitTimeout;
            teardown(SIGKILL);
        }
        if (escalate_at_ && now >= *escalate_at_) {
            escalate_at_.reset();
            say("ranks still running " + std::to_string(kEscalateAfter.count()) + " s after the signal, killing them");
            teardown(SIGKILL);
        }
    }
}

// The job is over: every daemon is told, and the head takes what they
// still send (output drained after their processes ended) until their links
// close, then waits for srun.
void Head::finish() {
    if (!exit_sent_) to_all(wire::Type::exit, wire::Writer{});
    exit_sent_ = true;
    const auto drain_until = Clock::now() + kDrainLimit;
    while (Clock::now() < drain_until) {
        bool open = false;
        for (int v = 1; v <= nodes(); ++v) open = open || net_.link_to(v) != nullptr;
        if (!open && srun_reaped_) break;
        if (!open && !srun_deadline_) srun_deadline_ = Clock::now() + kSrunGrace;
        if (srun_deadline_ && Clock::now() >= *srun_deadline_) break;
        poll_once(100);
    }
    if (srun_ > 0 && !srun_reaped_) {
        ::kill(-srun_, SIGTERM);
        const auto until = Clock::now() + kSrunGrace;
        while (!srun_reaped_ && Clock::now() < until) poll_once(50);
        if (!srun_reaped_) ::kill(-srun_, SIGKILL);
        while (!srun_reaped_ && ::waitpid(srun_, &srun_status_, 0) < 0 && errno == EINTR) {}
        srun_reaped_ = true;
    }
}

}  // namespace ftmpi::launcher::detail
