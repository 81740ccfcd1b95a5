// What the end of a process means for the job, stopped ranks that nothing else would end, and killing ranks.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "job.hpp"
#include "launcher_internal.hpp"
#include "pmix_server.hpp"
#include "runtime/shm_names.hpp"

namespace ftmpi::launcher::detail {
namespace {


// "rank R (pid P) exited with code C" or "rank R (pid P) killed by signal N (SIGX)".
std::string rank_end(int r, const RankState &st) {
    std::string who = label(r, st) + " (pid " + std::to_string(st.pid) + ") ";
    if (!WIFSIGNALED(st.wait_status)) return who + "exited with code " + std::to_string(exit_code_of(st.wait_status));
    const int sig = WTERMSIG(st.wait_status);
    return who + "killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
}

}  // namespace

void Runner::on_rank_exit(int r) {
    RankState &st = ranks_[static_cast<size_t>(r)];
    st.failed = rank_failed(st);
    --live_;
    if (r == 0 && stdin_) stdin_->stop();
    if (net_) return daemon_rank_exit(r);
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
        for (RankState &other : ranks_)
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
        say(rank_end(r, st) + (unconnected_child             ? " before it connected to its parents"
                               : WIFSIGNALED(st.wait_status) ? ""
                                                             : " without calling MPI_Finalize"));
    timeline_note(rank_end(r, st));
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
    const std::optional<int> code = unstarted_blocks(ranks_, *unstarted_);
    if (!code) return;
    say(rank_end(*unstarted_, ranks_[static_cast<size_t>(*unstarted_)]) +
        " before MPI_Init; the job cannot start, killing it");
    start_blocker_ = unstarted_;
    no_ft_code_ = code;
    teardown_ = true;
    kill_all(SIGKILL);
}

// Stopped ranks that no failure detector watches (stopped.hpp): killed as
// failed processes after the ranks' detector timeout (FTMPI_FT_TIMEOUT_MS as
// they got it, -x included). Across nodes the head does it.
void Runner::check_stopped(Clock::time_point now) {
    stopped_check_.reset();
    if (!o_.ft || teardown_ || live_ == 0 || net_) {
        stops_.reset();
        return;
    }
    const auto stopped = [this](int id) {
        return ftmpi::runtime::process_state(ranks_[static_cast<size_t>(id)].pid) == 'T';
    };
    const StopWatch::Verdict v = stops_.check(ranks_, stopped, !job_sizes_.empty(), ft_timeout_, now);
    for (int r : v.stranded) {
        say(label(r, ranks_[static_cast<size_t>(r)]) + " is stopped and every other rank has ended: killing it");
        kill_rank(r, SIGKILL, false);
    }
    for (int id : v.lone) {
        say(label(id, ranks_[static_cast<size_t>(id)]) +
            " is stopped and so is every other live process of its job, so no failure detector watches it: killing it");
        kill_rank(id, SIGKILL, false);
    }
    stopped_check_ = v.next;
}

void Runner::kill_rank(int r, int sig, bool teardown) {
    RankState &st = ranks_[static_cast<size_t>(r)];
    if (st.reaped || st.pid <= 0) return;
    if (teardown) st.killed_by_us = true;
    ::kill(st.pid, sig);
}

// The whole job's process group while a rank is unreaped (then the group
// surely exists): what the ranks forked gets `sig` too, as it did from a
// terminal's ^C when everything was in ftmpirun's group.
void Runner::kill_all(int sig) {
    if (live_ > 0 && job_pgid_ > 0) {
        for (auto &st : ranks_)
            if (!st.reaped && st.pid > 0) st.killed_by_us = true;
        ::kill(-job_pgid_, sig);
        return;
    }
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) kill_rank(r, sig, true);
}

}  // namespace ftmpi::launcher::detail
