// A daemon of ftmpirun across nodes as the Runner of its node (daemon.hpp):
// what it does differently from a one-node launcher.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "binding.hpp"
#include "daemon.hpp"
#include "error.hpp"
#include "launcher_internal.hpp"
#include "pmix_names.hpp"
#include "pmix_server.hpp"
#include "runtime/config.hpp"
#include "runtime/shm_names.hpp"

namespace ftmpi::launcher::detail {
namespace {

constexpr auto kGiveUp = std::chrono::seconds(10);  // after the end: processes gone, output sent

// A fence's name on every node: its participants (sorted), FNV-1a.
std::uint64_t signature(std::vector<int> &ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::uint64_t h = 1469598103934665603ull;
    for (int id : ids)
        for (int b = 0; b < 4; ++b) h = (h ^ ((static_cast<std::uint32_t>(id) >> (8 * b)) & 0xFF)) * 1099511628211ull;
    return h;
}

}  // namespace

void Runner::send_head(wire::Type t, const wire::Writer &w) {
    if (!cut_off_) net_->send(0, t, journal_.stamp(0, t, w));
}

int Runner::run_node() {
    // First, while this process has one thread (PMIx starts its own).
    guard_ = std::make_unique<JobGuard>();
    setup_signals();
    const PmixServer::Given given{settings_.nspace, settings_.secret};
    server_ = std::make_unique<PmixServer>(queue_, &given);
    universe_size_ = settings_.universe_size;
    extra_ = settings_.env;
    prepare_env();
    devnull_ = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    try {
        start_namespace(first_ns_);
        for (auto &d : std::exchange(early_, {})) on_frame(d);
        loop();
    } catch (const std::exception &e) {
        say(e.what());
        kill_and_reap_all_blocking();
        net_->flush(std::chrono::seconds(1));
        return kExitInternal;
    }
    end_leftovers();
    remove_regions();
    guard_->end(true);
    net_->flush(std::chrono::seconds(2));
    return 0;
}

// The processes of namespace `ns` that run on this node: registered (the
// whole namespace, so that PMIx knows where the others are), bound after
// those started here before, and started; the head hears their pids.
void Runner::start_namespace(const NamespaceSpec &ns) {
    const int here = net_->self();
    PmixServer::Layout layout;
    for (int v : ns.node) layout.node.push_back(v - 1);
    layout.names = settings_.nodes;
    layout.here = here - 1;
    layout.iface = net_->iface_to(net_->tree().parent(here));
    server_->register_job(ns.base, ns.app, universe_size_, &layout);
    const size_t end = static_cast<size_t>(ns.base + ns.size());
    if (ranks_.size() < end) ranks_.resize(end), vertex_of_.resize(end, 0);
    std::vector<int> mine;
    for (int i = 0; i < ns.size(); ++i) {
        const size_t id = static_cast<size_t>(ns.base + i);
        vertex_of_[id] = ns.node[static_cast<size_t>(i)];
        ranks_[id].base = ns.base;
        ranks_[id].rank = i;
        if (vertex_of_[id] == here) mine.push_back(i);
    }
    if (ns.base > 0) job_sizes_[ns.base] = ns.size();
    Options sized = o_;
    sized.np = local_count_ + static_cast<int>(mine.size());
    const BindingPlan plan = plan_bindings(sized, ns.base == 0);
    if (ns.base == 0)
        for (const auto &w : plan.warnings)
            say("warning: " + settings_.nodes[static_cast<size_t>(here - 1)] + ": " + w);
    wire::Writer started;
    started.u32(static_cast<std::uint32_t>(ns.base)).u32(static_cast<std::uint32_t>(mine.size()));
    for (size_t k = 0; k < mine.size(); ++k) {
        const int i = mine[k], id = ns.base + i;
        const NamespaceSpec::App &app = ns.apps[static_cast<size_t>(ns.app[static_cast<size_t>(i)])];
        const RankBinding &b = plan.ranks[static_cast<size_t>(local_count_) + k];
        start_process(id, ns.base, i, ns.size(), app.path, app.argv, app.env, app.cwd, b, static_cast<int>(k),
                      static_cast<int>(mine.size()));
        if (o_.report_bindings)
            say(label(id, ranks_[static_cast<size_t>(id)]) + " on " + settings_.nodes[static_cast<size_t>(here - 1)] +
                (b.bound ? " bound to " + b.where + " (cpuset " + b.cpuset_text + ")" : std::string(" not bound")));
        started.u32(static_cast<std::uint32_t>(id))
            .u32(static_cast<std::uint32_t>(ranks_[static_cast<size_t>(id)].pid));
    }
    local_count_ += static_cast<int>(mine.size());
    send_head(wire::Type::started, started);
}

// What a daemon does with an upcall instead of a one-node launcher, or
// besides (false: the usual handling follows).
bool Runner::daemon_upcall(Upcall &u) {
    switch (u.kind) {
    case Upcall::Kind::kConnected:
    case Upcall::Kind::kFinalized: {
        if (!valid_rank(u.rank)) return false;
        wire::Writer w;
        w.u32(static_cast<std::uint32_t>(u.rank)).u8(u.kind == Upcall::Kind::kConnected ? 1 : 2);
        send_head(wire::Type::proc_state, w);
        return false;
    }
    case Upcall::Kind::kAbort: {
        wire::Writer w;
        w.u32(static_cast<std::uint32_t>(std::max(u.rank, 0))).u32(static_cast<std::uint32_t>(u.status)).str(u.msg);
        w.u8(u.all);
        wire::put_ids(w, u.targets);
        send_head(wire::Type::abort, w);
        u.reply(PMIX_SUCCESS);
        return true;
    }
    case Upcall::Kind::kJobControl: {
        if (hold_kills_) return false;
        std::vector<int> targets = u.targets;
        if (u.all)
            for (int id = 0; id < static_cast<int>(ranks_.size()); ++id) targets.push_back(id);
        std::map<int, std::vector<int>> remote;
        for (int t : targets) {
            if (is_local(t)) kill_rank(t, u.status, false);
            else if (valid_rank(t)) remote[vertex_of_[static_cast<size_t>(t)]].push_back(t);
        }
        for (const auto &[v, ids] : remote) {
            wire::Writer w;
            w.u32(static_cast<std::uint32_t>(u.status)).u8(0);
            wire::put_ids(w, ids);
            net_->send(static_cast<std::uint32_t>(v), wire::Type::kill, w);
        }
        u.reply(PMIX_SUCCESS);
        return true;
    }
    case Upcall::Kind::kSpawn: {
        if (teardown_ || cut_off_) {
            u.reply(PMIX_ERR_JOB_TERMINATED);
            return true;
        }
        const std::uint64_t tag = next_tag_++;
        wire::Writer w;
        w.u64(tag).u32(static_cast<std::uint32_t>(std::max(u.rank, 0))).u32(static_cast<std::uint32_t>(u.apps.size()));
        for (const Upcall::App &a : u.apps) {
            w.str(a.cmd).u32(static_cast<std::uint32_t>(a.argv.size()));
            for (const auto &s : a.argv) w.str(s);
            w.u32(static_cast<std::uint32_t>(a.env.size()));
            for (const auto &s : a.env) w.str(s);
            w.str(a.cwd).u32(static_cast<std::uint32_t>(std::max(a.maxprocs, 0))).str(a.host);
        }
        send_head(wire::Type::spawn_req, w);
        asked_.emplace(tag, std::move(u));
        return true;
    }
    case Upcall::Kind::kFence: {
        std::vector<int> ids = u.targets;
        const std::uint64_t sig = signature(ids);
        wire::Writer w;
        w.u64(sig);
        wire::put_ids(w, ids);
        w.bytes({reinterpret_cast<const std::uint8_t *>(u.data.data()), u.data.size()});
        send_head(wire::Type::fence_up, w);
        fences_[sig].push_back(std::move(u));
        return true;
    }
    case Upcall::Kind::kDmodex: {
        const int owner = valid_rank(u.rank) ? vertex_of_[static_cast<size_t>(u.rank)] : -1;
        const std::uint64_t tag = next_tag_++;
        wire::Writer w;
        w.u64(tag).u32(static_cast<std::uint32_t>(u.rank));
        if (owner <= 0 || owner == net_->self() ||
            !net_->send(static_cast<std::uint32_t>(owner), wire::Type::dmodex_req, w)) {
            u.reply(PMIX_ERR_NOT_FOUND);
            return true;
        }
        asked_.emplace(tag, std::move(u));
        return true;
    }
    case Upcall::Kind::kNames: {
        const std::uint64_t tag = next_tag_++;
        wire::Writer w;
        w.u64(tag).u8(static_cast<std::uint8_t>(u.status)).u32(static_cast<std::uint32_t>(u.names.size()));
        for (const auto &[k, v] : u.names) w.str(k).str(v);
        send_head(wire::Type::name_req, w);
        asked_.emplace(tag, std::move(u));
        return true;
    }
    case Upcall::Kind::kDmodexData: {
        auto it = serving_.find(u.tag);
        if (it == serving_.end()) return true;
        wire::Writer w;
        w.u64(it->second.second).u32(static_cast<std::uint32_t>(u.status));
        w.bytes({reinterpret_cast<const std::uint8_t *>(u.data.data()), u.data.size()});
        net_->send(static_cast<std::uint32_t>(it->second.first), wire::Type::dmodex_rep, w);
        serving_.erase(it);
        return true;
    }
    }
    return false;
}

// A process of this node ended: its local peers hear at once (the head
// tells the other nodes), and the head decides what it means for the job.
void Runner::daemon_rank_exit(int r) {
    RankState &st = ranks_[static_cast<size_t>(r)];
    if (st.failed && o_.ft && !teardown_)
        if (!server_->notify_terminated(st.base, st.rank, exit_code_of(st.wait_status)))
            say("warning: could not notify the job that " + label(r, st) + " terminated");
    wire::Writer w;
    w.u32(static_cast<std::uint32_t>(r)).u32(static_cast<std::uint32_t>(st.wait_status));
    w.u8(static_cast<std::uint8_t>((st.connected ? 1 : 0) | (st.finalized ? 2 : 0) | (st.killed_by_us ? 4 : 0)));
    send_head(wire::Type::proc_exit, w);
}

void Runner::on_frame(Net::Delivery &d) {
    wire::Reader r(d.payload);
    if (d.via->peer < 0) {  // a new link: only a child attaching (again)
        if (d.header.type == wire::Type::attach) accept_attach(*net_, d);
        else net_->drop(d.via, "not an attach");
        return;
    }
    const int from = static_cast<int>(d.header.src);
    if (from == 0 && d.header.type != wire::Type::attach && !Journal::fresh(r, seen_)) return;  // seen already
    switch (d.header.type) {
    case wire::Type::ack: {
        const std::uint64_t n = r.u64();
        if (r.done() && from == 0) journal_.acked(n);
        break;
    }
    case wire::Type::kill: on_frame_kill(r); break;
    case wire::Type::proc_failed: on_frame_failed(r); break;
    case wire::Type::fence_down: on_frame_fence(r); break;
    case wire::Type::dmodex_req: on_frame_dmodex(r, from, false); break;
    case wire::Type::dmodex_rep: on_frame_dmodex(r, from, true); break;
    case wire::Type::spawn_rep: on_frame_spawned(r); break;
    case wire::Type::name_rep: on_frame_names(r); break;
    case wire::Type::ns_add: {
        NamespaceSpec ns;
        if (decode(r, ns, static_cast<int>(settings_.nodes.size())) && r.done() &&
            ns.base == static_cast<int>(ranks_.size()))
            start_namespace(ns);
        break;
    }
    case wire::Type::stdin_data: {
        const std::vector<std::uint8_t> b = r.bytes();
        if (r.done() && stdin_) stdin_->feed(b.data(), b.size());
        break;
    }
    case wire::Type::node_lost: {
        const int v = static_cast<int>(r.u32());
        if (r.done() && d.header.dst == wire::kFlood) net_->tree().lose(v);
        break;
    }
    case wire::Type::reparent: {
        const int v = static_cast<int>(r.u32()), p = static_cast<int>(r.u32());
        if (r.done()) net_->tree().reparent(v, p);
        break;
    }
    case wire::Type::exit:
        exit_ordered_ = true;
        if (!give_up_at_) give_up_at_ = Clock::now() + kGiveUp;
        if (live_ > 0) kill_all(SIGKILL);  // none should be left: the head waited for every exit
        break;
    default: break;
    }
}

void Runner::on_frame_kill(wire::Reader &r) {
    const int sig = static_cast<int>(r.u32());
    const bool teardown = r.u8() != 0;
    const std::vector<int> ids = wire::get_ids(r);
    if (!r.done() || sig <= 0 || sig >= NSIG) return;
    if (teardown) teardown_ = true;
    if (ids.empty()) return kill_all(sig);
    for (int id : ids)
        if (is_local(id)) kill_rank(id, sig, teardown);
}

// Another node's processes failed: this node's clients hear of each.
void Runner::on_frame_failed(wire::Reader &r) {
    const std::uint32_t n = r.u32();
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        const int id = static_cast<int>(r.u32()), code = static_cast<int>(r.u32());
        if (!r.ok() || !valid_rank(id) || is_local(id) || teardown_ || !o_.ft) continue;
        const RankState &st = ranks_[static_cast<size_t>(id)];
        if (!server_->notify_terminated(st.base, st.rank, code))
            say("warning: could not notify the job that " + label(id, st) + " terminated");
    }
}

void Runner::on_frame_fence(wire::Reader &r) {
    const std::uint64_t sig = r.u64();
    const int status = static_cast<int>(r.u32());
    const std::vector<std::uint8_t> data = r.bytes();
    auto it = fences_.find(sig);
    if (!r.done() || it == fences_.end() || it->second.empty()) return;
    Upcall u = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) fences_.erase(it);
    u.reply_data(status, std::vector<char>(data.begin(), data.end()));
}

// A direct-modex request from another node (for a process here), or the
// answer to ours.
void Runner::on_frame_dmodex(wire::Reader &r, int from, bool reply) {
    const std::uint64_t tag = r.u64();
    if (reply) {
        const int status = static_cast<int>(r.u32());
        const std::vector<std::uint8_t> data = r.bytes();
        auto it = asked_.find(tag);
        if (!r.done() || it == asked_.end()) return;
        it->second.reply_data(status, std::vector<char>(data.begin(), data.end()));
        asked_.erase(it);
        return;
    }
    const int id = static_cast<int>(r.u32());
    if (!r.done()) return;
    const std::uint64_t mine = next_tag_++;
    if (is_local(id)) {
        serving_[mine] = {from, tag};
        const RankState &st = ranks_[static_cast<size_t>(id)];
        if (server_->dmodex_request(st.base, st.rank, mine)) return;
        serving_.erase(mine);
    }
    wire::Writer w;
    w.u64(tag).u32(static_cast<std::uint32_t>(PMIX_ERR_NOT_FOUND)).bytes({});
    net_->send(static_cast<std::uint32_t>(from), wire::Type::dmodex_rep, w);
}

// The head's answer to a name-service request.
void Runner::on_frame_names(wire::Reader &r) {
    const std::uint64_t tag = r.u64();
    const int status = static_cast<int>(r.u32());
    const std::uint32_t n = r.u32();
    name_service::Names found;
    for (std::uint32_t i = 0; i < n && i < 4096 && r.ok(); ++i) {
        std::string k = r.str(), v = r.str();
        found.emplace_back(std::move(k), std::move(v));
    }
    auto it = asked_.find(tag);
    if (!r.done() || it == asked_.end() || it->second.kind != Upcall::Kind::kNames) return;
    Upcall &u = it->second;
    if (u.lookup_cb) {
        name_service::answer_lookup(u.lookup_cb, u.cbdata, status, found);
        u.lookup_cb = nullptr;
    }
    u.reply(status);
    asked_.erase(it);
}

void Runner::on_frame_spawned(wire::Reader &r) {
    const std::uint64_t tag = r.u64();
    const int status = static_cast<int>(r.u32()), base = static_cast<int>(r.u32());
    auto it = asked_.find(tag);
    if (!r.done() || it == asked_.end()) return;
    it->second.reply(status, status == PMIX_SUCCESS ? server_->job_nspace(base) : "");
    asked_.erase(it);
}

// A link of the tree broke or went silent: a child's loss the head must
// hear of; the parent's makes this node reattach to the head, or, when that
// fails (or the parent was the head), cuts it off.
void Runner::on_net_lost(int v, const std::string &why) {
    if (exit_ordered_ || cut_off_) return;
    const int self = net_->self();
    if (v == net_->tree().parent(self)) {
        if (v == 0) return cut_off("lost the link to ftmpirun (" + why + ")");
        const std::string what =
            "lost the link to the daemon of " + settings_.nodes[static_cast<size_t>(v - 1)] + " (" + why + ")";
        if (!reattach(what)) cut_off(what + ", and cannot reach ftmpirun");
        return;
    }
    if (net_->tree().parent(v) == self) {
        wire::Writer w;
        w.u32(static_cast<std::uint32_t>(v)).str(why);
        send_head(wire::Type::node_lost, w);
    }
}

// The parent daemon is gone: hang on the head directly. What was on its way
// through the parent may be lost: the head sends again what this node (and
// its subtree) did not see, and this node what the head did not
// acknowledge (journal.hpp); a direct-modex request sent on fails.
bool Runner::reattach(const std::string &why) {
    std::string err;
    Link *l = net_->connect_first(head_, 0, std::chrono::seconds(3), err);
    if (!l) return false;
    say(settings_.nodes[static_cast<size_t>(net_->self() - 1)] + ": " + why + ": attached to ftmpirun directly");
    const int self = net_->self();
    wire::Writer w;
    w.u32(static_cast<std::uint32_t>(self)).u64(seen_);
    l->send({wire::Type::attach, 0, 0, static_cast<std::uint32_t>(self)}, w.data());
    net_->tree().reparent(self, 0);
    for (const Journal::Entry &e : journal_.entries())
        l->send({e.type, 0, 0, static_cast<std::uint32_t>(self)}, e.payload);
    // A direct-modex request may have died with the parent; its answer too.
    for (auto it = asked_.begin(); it != asked_.end();) {
        if (it->second.kind != Upcall::Kind::kDmodex) {
            ++it;
            continue;
        }
        it->second.reply(PMIX_ERR_UNREACH);
        it = asked_.erase(it);
    }
    return true;
}

// Cut off from the job: this node's processes are failed for everyone else
// already (or will be, when the head's heartbeat times out), so they end.
void Runner::cut_off(const std::string &why) {
    if (cut_off_) return;
    say(settings_.nodes[static_cast<size_t>(net_->self() - 1)] + ": " + why + ": ending this node's processes");
    cut_off_ = true;
    teardown_ = true;
    kill_all(SIGKILL);
    give_up_at_ = Clock::now() + kGiveUp;
    for (auto &[tag, u] : asked_) u.reply(PMIX_ERR_UNREACH);
    asked_.clear();
    for (auto &[sig, q] : fences_)
        for (Upcall &u : q) u.reply(PMIX_ERR_UNREACH);
    fences_.clear();
}

void Runner::daemon_tick(Clock::time_point now) {
    if (now < next_tick_) return;
    // Which processes here are stopped: the head watches those no detector does (stopped.hpp).
    for (int id = 0; id < static_cast<int>(ranks_.size()) && !cut_off_; ++id) {
        RankState &st = ranks_[static_cast<size_t>(id)];
        if (!is_local(id) || st.reaped || st.pid <= 0) continue;
        const bool s = ftmpi::runtime::process_state(st.pid) == 'T';
        if (s == st.stopped) continue;
        st.stopped = s;
        wire::Writer w;
        w.u32(static_cast<std::uint32_t>(id)).u8(s ? 3 : 4);
        send_head(wire::Type::proc_state, w);
    }
    if (seen_ > acked_ && !cut_off_) {  // the head may forget what came
        wire::Writer w;
        w.u64(seen_);
        if (net_->send(0, wire::Type::ack, Journal::unnumbered(w))) acked_ = seen_;
    }
    std::vector<std::pair<int, std::string>> lost;
    next_tick_ = net_->tick(now, launch_period(), launch_silence(), lost);
    for (auto &[v, why] : lost) on_net_lost(v, why);
}

// The end of a daemon: told so by the head (or cut off), its processes
// gone, their output sent, and its children (whose frames pass here) gone
// first; or the give-up deadline passed.
bool Runner::daemon_done(bool pipes_open) {
    if (!exit_ordered_ && !cut_off_) return false;
    if (give_up_at_ && Clock::now() >= *give_up_at_) return true;
    if (live_ > 0 || pipes_open) return false;
    if (cut_off_) return true;
    for (int c : net_->tree().children(net_->self()))
        if (net_->link_to(c)) return false;
    return true;
}

}  // namespace ftmpi::launcher::detail
