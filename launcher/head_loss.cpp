// The head and the end of processes (ftmpirun across nodes): what a
// process's exit means for the job, a lost node, and killing processes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "error.hpp"
#include "head_internal.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::launcher::detail {
namespace {

// "rank R (pid P on N) exited with code C" or "... killed by signal N (SIGX)".
std::string ending(const std::string &who, const RankState &st) {
    if (st.lost) return who + " was lost with its node";
    if (!WIFSIGNALED(st.wait_status)) return who + " exited with code " + std::to_string(exit_code_of(st.wait_status));
    const int sig = WTERMSIG(st.wait_status);
    return who + " killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
}

}  // namespace

void Head::timeline_note(const std::string &what) { timeline_append(o_.timeline, what); }

void Head::close_timeline() { timeline_finish(o_.timeline); }

// The rules of a one-node job (Runner::on_rank_exit), over every node.
void Head::proc_ended(int id) {
    RankState &st = procs_[static_cast<size_t>(id)];
    const bool unconnected_child = !st.connected && !teardown_ && st.base != 0 && !st.lost;
    if (unconnected_child) {
        // Its namespace cannot start (its init fence would wait for it).
        std::vector<int> others;
        for (int o = 0; o < static_cast<int>(procs_.size()); ++o)
            if (procs_[static_cast<size_t>(o)].base == st.base && !procs_[static_cast<size_t>(o)].reaped)
                others.push_back(o);
        kill_procs(others, SIGKILL);
    } else if (!st.connected && !teardown_ && !st.lost &&
               (!WIFSIGNALED(st.wait_status) || is_crash_signal(WTERMSIG(st.wait_status)))) {
        unstarted_ = id;
        check_unstarted();
        if (teardown_) return;
    }
    if (!st.failed && !unconnected_child) return;
    const std::string end = ending(where(id), st);
    if (!(teardown_ && st.killed_by_us) && !st.lost)
        say(end + (unconnected_child             ? " before it connected to its parents"
                   : WIFSIGNALED(st.wait_status) ? ""
                                                 : " without calling MPI_Finalize"));
    timeline_note(end);
    if (teardown_) return;
    if (o_.ft) {
        tell_failed({id});
    } else {
        no_ft_code_ = exit_code_of(st.wait_status);
        teardown(SIGKILL);
    }
}

// A rank that ended before it ever connected, while others did: the job
// cannot start (their init fence waits for it), so it ends now.
void Head::check_unstarted() {
    if (!unstarted_ || teardown_) return;
    const std::optional<int> code = unstarted_blocks(procs_, *unstarted_);
    if (!code) return;
    say(ending(where(*unstarted_), procs_[static_cast<size_t>(*unstarted_)]) +
        " before MPI_Init; the job cannot start, killing it");
    start_blocker_ = unstarted_;
    no_ft_code_ = code;
    teardown(SIGKILL);
}

void Head::tell_failed(const std::vector<int> &ids) {
    if (ids.empty()) return;
    wire::Writer w;
    w.u32(static_cast<std::uint32_t>(ids.size()));
    for (int id : ids)
        w.u32(static_cast<std::uint32_t>(id))
            .u32(static_cast<std::uint32_t>(exit_code_of(procs_[static_cast<size_t>(id)].wait_status)));
    to_all(wire::Type::proc_failed, w);
    check_fences();
}

// Vertex v's daemon died or went silent (the head's own link to it, or
// its parent's): its processes are failed, all at once, and every other
// node is told; its children now hang on the head.
void Head::on_lost(int v, const std::string &why) {
    if (v < 1 || v > nodes() || lost_[static_cast<size_t>(v)] || exit_sent_) return;
    if (net_.tree().parent(v) != 0 && why.find("said its parent") == std::string::npos) return;  // not a tree link
    lost_[static_cast<size_t>(v)] = true;
    if (procs_.empty()) {  // before the launch: the job cannot start
        say("the daemon on node " + node_name(v) + " was lost before the launch (" + why + ")");
        forced_exit_ = kExitInternal;
        return;
    }
    std::vector<int> gone;
    for (int id = 0; id < static_cast<int>(procs_.size()); ++id) {
        RankState &st = procs_[static_cast<size_t>(id)];
        if (vertex_of_[static_cast<size_t>(id)] != v || st.reaped) continue;
        st.reaped = st.lost = st.failed = true;
        st.wait_status = SIGKILL;  // as a status: killed by SIGKILL
        gone.push_back(id);
    }
    std::string list;
    for (int id : gone) list += (list.empty() ? "" : ",") + std::to_string(id);
    say("node " + node_name(v) + " lost (" + why + ")" +
        (gone.empty() ? std::string(": it had no process left") : ": its processes " + list + " are failed"));
    timeline_note("node " + node_name(v) + " lost");
    // Its children hang on the head now: lost too unless they reattach in time.
    for (int c : net_.tree().children(v)) orphans_[c] = Clock::now() + launch_silence();
    net_.tree().lose(v);
    wire::Writer w;
    w.u32(static_cast<std::uint32_t>(v));
    to_all(wire::Type::node_lost, w);
    for (auto &[base, sp] : spawns_) sp.waiting.erase(v);
    if (!teardown_ && !gone.empty()) {
        if (o_.ft) {
            tell_failed(gone);
        } else {
            no_ft_code_ = 128 + SIGKILL;
            teardown(SIGKILL);
        }
    }
    check_fences();
    complete_spawns();  // those that waited only for the lost node
}

// A daemon whose parent was lost attaches to the head directly: every
// vertex hears of its new place (reparent).
void Head::on_attach(Net::Delivery &d) {
    wire::Reader r(d.payload);
    const int v = static_cast<int>(r.u32());
    const std::uint64_t had = r.u64();
    if (!r.done() || v < 1 || v > nodes() || lost_[static_cast<size_t>(v)] || exit_sent_) {
        net_.drop(d.via, "an attach the head refuses");
        return;
    }
    net_.identify(d.via, v);
    net_.tree().reparent(v, 0);
    orphans_.erase(v);
    wire::Writer ack;
    ack.u32(0).u64(0);
    d.via->send({wire::Type::attach, 0, static_cast<std::uint32_t>(v), 0}, ack.data());
    // What it and its subtree may have missed, in order, before anything new.
    const auto below = [&](std::uint32_t w) {
        if (w == wire::kFlood) return true;
        for (int u = static_cast<int>(w); u > 0; u = net_.tree().parent(u))
            if (u == v) return true;
        return false;
    };
    for (const Journal::Entry &e : journal_.entries())
        if (e.seq > had && below(e.dst)) d.via->send({e.type, 0, e.dst, 0}, e.payload);
    wire::Writer w;
    w.u32(static_cast<std::uint32_t>(v)).u32(0);
    to_all(wire::Type::reparent, w);
}

// As a one-node launcher does (Runner::check_stopped), over every node.
void Head::check_stopped(Clock::time_point now) {
    stopped_check_.reset();
    if (!o_.ft || teardown_ || procs_.empty()) {
        stops_.reset();
        return;
    }
    const auto stopped = [this](int id) { return procs_[static_cast<size_t>(id)].stopped; };
    const bool spawned = procs_.size() > static_cast<size_t>(o_.np);
    const StopWatch::Verdict v = stops_.check(procs_, stopped, spawned, ft_timeout_, now);
    for (int id : v.stranded) say(where(id) + " is stopped and every other rank has ended: killing it");
    for (int id : v.lone)
        say(where(id) +
            " is stopped and so is every other live process of its job, so no failure detector watches it: killing it");
    kill_procs(v.stranded, SIGKILL);
    kill_procs(v.lone, SIGKILL);
    stopped_check_ = v.next;
}

void Head::check_orphans(Clock::time_point now) {
    for (auto it = orphans_.begin(); it != orphans_.end();) {
        const int c = it->first;
        if (net_.link_to(c) || lost_[static_cast<size_t>(c)]) {
            it = orphans_.erase(it);
        } else if (now >= it->second) {
            it = orphans_.erase(it);
            on_lost(c, "it did not reattach after its parent was lost");
        } else {
            ++it;
        }
    }
}

// The job ends: every daemon signals all its processes (and stops telling
// them of failures).
void Head::teardown(int sig) {
    teardown_ = true;
    for (RankState &st : procs_)
        if (!st.reaped) st.killed_by_us = true;
    wire::Writer w;
    w.u32(static_cast<std::uint32_t>(sig)).u8(1);
    wire::put_ids(w, {});
    to_all(wire::Type::kill, w);
}

void Head::kill_procs(const std::vector<int> &ids, int sig) {
    std::map<int, std::vector<int>> by_vertex;
    for (int id : ids)
        if (!procs_[static_cast<size_t>(id)].reaped) by_vertex[vertex_of_[static_cast<size_t>(id)]].push_back(id);
    for (const auto &[v, list] : by_vertex) {
        wire::Writer w;
        w.u32(static_cast<std::uint32_t>(sig)).u8(0);
        wire::put_ids(w, list);
        to(v, wire::Type::kill, w);
    }
}

}  // namespace ftmpi::launcher::detail
