// The launcher's event loop: poll, PMIx upcalls, signals, reaping, and the deadlines it keeps.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "iofwd.hpp"
#include "job_guard.hpp"
#include "launcher_internal.hpp"
#include "pmix_server.hpp"
#include "upcall_queue.hpp"

namespace ftmpi::launcher::detail {
namespace {

constexpr auto kDrainGrace = std::chrono::seconds(1);  // pipes held by grandchildren

}  // namespace

void Runner::on_upcall(Upcall &u) {
    if (net_ && daemon_upcall(u)) return;
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
        say("MPI_Abort called by " +
            (valid_rank(u.rank) ? label(u.rank, ranks_[static_cast<size_t>(u.rank)]) : std::string("a process")) +
            " with code " + std::to_string(u.status) + (u.msg.empty() ? "" : ": " + u.msg));
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
        if (hold_kills_) {
            held_kills_.push_back(std::move(u));
            break;
        }
        if (u.all) {
            for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) kill_rank(r, u.status, false);
        } else {
            for (int t : u.targets)
                if (valid_rank(t)) kill_rank(t, u.status, false);
        }
        u.reply(PMIX_SUCCESS);
        break;
    case Upcall::Kind::kSpawn: try { on_spawn(u);
        } catch (const std::exception &e) {
            say(std::string("spawn failed: ") + e.what());
            u.reply(PMIX_ERROR);  // no-op if on_spawn answered already
        }
        break;
    case Upcall::Kind::kFence:  // a daemon's only (daemon_upcall)
    case Upcall::Kind::kDmodex:
    case Upcall::Kind::kDmodexData:
    case Upcall::Kind::kNames: u.reply(PMIX_ERR_NOT_SUPPORTED); break;
    }
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
        RankState &st = ranks_[static_cast<size_t>(it->second)];
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
        if (net_) {  // a daemon: Slurm ends the step (scancel, srun gone), and kills what is left soon
            cut_off("received " + signal_name(sig));
            continue;
        }
        teardown_ = true;
        const int send = term_signal(sig, term_signals_, forced_exit_);
        kill_all(send);
        if (send == SIGKILL) escalate_at_.reset();
        else escalate_at_ = Clock::now() + kEscalateAfter;
    }
    if (child) reap();
}

int Runner::timeout_ms(Clock::time_point now) const {
    std::optional<Clock::time_point> next;
    for (const auto &d : {timeout_at_, escalate_at_, drain_until_, stopped_check_, give_up_at_})
        if (d && (!next || *d < *next)) next = d;
    if (net_ && (!next || next_tick_ < *next)) next = next_tick_;
    if (!next) return -1;
    if (*next <= now) return 0;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
    return static_cast<int>(ms);
}

void Runner::loop() {
    std::vector<pollfd> pfds;
    std::vector<int> owner;  // index into fwd_, or -1 sigfd, -2 queue, -3 stdin src, -4 stdin dst
    while (true) {
        // Leftovers die first: they may hold the ranks' output pipes open. (A
        // daemon's job may start processes here again until the head ends it.)
        const bool over = !net_ || exit_ordered_ || cut_off_;
        if (live_ == 0 && over) {
            // A daemon's regions go first: Slurm may kill it soon after the
            // job ends (its step's KillWait), and leftovers take a while.
            if (net_) remove_regions();
            end_leftovers();
        }
        bool pipes_open = false;
        for (const auto &f : fwd_) pipes_open |= f.open();
        if (net_ ? daemon_done(pipes_open) : live_ == 0 && !pipes_open) return;
        if (live_ > 0 || !pipes_open) drain_until_.reset();
        else if (!drain_until_) drain_until_ = Clock::now() + kDrainGrace;

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
        if (net_) {
            net_->add_fds(pfds);
            owner.resize(pfds.size(), -5);  // the daemon's links (Net::on_poll)
        }

        int n = ::poll(pfds.data(), pfds.size(), net_ && net_->ready() ? 0 : timeout_ms(Clock::now()));
        if (n < 0 && errno != EINTR) throw LauncherError(std::string("poll: ") + std::strerror(errno));

        // Upcalls first: a finalize must be recorded before that rank's exit is
        // examined (the client cannot exit before we reply, so order holds).
        for (Upcall &u : queue_.drain()) on_upcall(u);
        bool sig_ready = false;
        for (size_t i = 0; n > 0 && i < pfds.size(); ++i) {
            if (!pfds[i].revents) continue;
            int who = owner[i];
            if (who >= 0) fwd_[static_cast<size_t>(who)].on_readable();
            else if (who == -1) sig_ready = true;
            else if (who == -3) stdin_->on_src_readable();
            else if (who == -4) stdin_->on_dst_writable();
        }
        if (net_) {
            std::vector<Net::Delivery> mine;
            std::vector<std::pair<int, std::string>> lost;
            net_->on_poll(pfds, mine, lost);
            for (auto &d : mine) on_frame(d);
            for (auto &[v, why] : lost) on_net_lost(v, why);
            daemon_tick(Clock::now());
            if (stdin_)
                if (const size_t n = stdin_->take_written()) {
                    wire::Writer w;
                    w.u32(static_cast<std::uint32_t>(n));
                    send_head(wire::Type::stdin_credit, w);
                }
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
            say("ranks still running " + std::to_string(kEscalateAfter.count()) + " s after the signal, killing them");
            kill_all(SIGKILL);
        }
        if (drain_until_ && now >= *drain_until_) {
            for (auto &f : fwd_) f.drain_and_close();  // grandchildren keep the pipes open
        }
        check_stopped(now);
    }
}

}  // namespace ftmpi::launcher::detail
