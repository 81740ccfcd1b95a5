// What the daemons tell the head (ftmpirun across nodes): output, the
// processes' states and exits, aborts, and the fences they complete together.
#include <sys/wait.h>

#include <algorithm>
#include <string>
#include <vector>

#include "head_internal.hpp"
#include "iofwd.hpp"

namespace ftmpi::launcher::detail {

void Head::to(int vertex, wire::Type t, const wire::Writer &w) {
    net_.send(static_cast<std::uint32_t>(vertex), t, journal_.stamp(static_cast<std::uint32_t>(vertex), t, w));
}

void Head::to_all(wire::Type t, const wire::Writer &w) { net_.flood(t, journal_.stamp(wire::kFlood, t, w)); }

// Each daemon hears which of its frames came (so that it forgets them), and
// the head forgets what every live daemon has.
void Head::send_acks() {
    std::uint64_t all_have = journal_.last();
    for (int v = 1; v <= nodes(); ++v) {
        if (lost_[static_cast<size_t>(v)]) continue;
        all_have = std::min(all_have, they_have_[static_cast<size_t>(v)]);
        if (seen_[static_cast<size_t>(v)] == acked_[static_cast<size_t>(v)]) continue;
        wire::Writer w;
        w.u64(seen_[static_cast<size_t>(v)]);
        if (net_.send(static_cast<std::uint32_t>(v), wire::Type::ack, Journal::unnumbered(w)))
            acked_[static_cast<size_t>(v)] = seen_[static_cast<size_t>(v)];
    }
    journal_.acked(all_have);
}

void Head::on_frame(Net::Delivery &d) {
    wire::Reader r(d.payload);
    const int from = d.via->peer >= 0 ? static_cast<int>(d.header.src) : -1;
    if (from < 0) {  // a link that has not said who it is
        if (d.header.type == wire::Type::hello) on_hello(d);
        else if (d.header.type == wire::Type::attach) on_attach(d);
        else net_.drop(d.via, "no hello");
        return;
    }
    if (from < 1 || from > nodes()) return;
    if (d.header.type == wire::Type::attach) return;                   // a parent's answer is not for the head
    if (!Journal::fresh(r, seen_[static_cast<size_t>(from)])) return;  // seen (sent again after a reattach)
    switch (d.header.type) {
    case wire::Type::ack: {
        const std::uint64_t n = r.u64();
        if (r.done()) they_have_[static_cast<size_t>(from)] = std::max(they_have_[static_cast<size_t>(from)], n);
        break;
    }
    case wire::Type::ready: ready_[static_cast<size_t>(from)] = true; break;
    case wire::Type::started: on_started(r, from); break;
    case wire::Type::io: on_io(r, from); break;
    case wire::Type::stdin_credit: {
        const std::uint32_t n = r.u32();
        stdin_unacked_ -= std::min<std::size_t>(stdin_unacked_, n);
        break;
    }
    case wire::Type::proc_state: on_state(r, from); break;
    case wire::Type::proc_exit: on_exit(r, from); break;
    case wire::Type::abort: on_abort(r); break;
    case wire::Type::fence_up: on_fence(r, from); break;
    case wire::Type::spawn_req: on_spawn(r, from); break;
    case wire::Type::name_req: on_names(r, from); break;
    case wire::Type::node_lost: {
        const int v = static_cast<int>(r.u32());
        const std::string why = r.str();
        if (r.done() && v >= 1 && v <= nodes() && net_.tree().parent(v) == from)
            on_lost(v, why + ", said its parent " + node_name(from));
        break;
    }
    default: break;  // nothing else is for the head
    }
}

void Head::on_io(wire::Reader &r, int vertex) {
    const int id = static_cast<int>(r.u32());
    const std::uint8_t stream = r.u8();
    const std::vector<std::uint8_t> text = r.bytes();
    if (!r.done() || !valid_id(id) || vertex_of_[static_cast<size_t>(id)] != vertex || (stream != 1 && stream != 2))
        return;
    std::string out;
    if (o_.tag_output) {
        // Each line gets the tag (a frame holds whole lines).
        const std::string tag = "[" + node_name(vertex) + ":" + std::to_string(id) + "] ";
        bool at_start = true;
        for (std::uint8_t c : text) {
            if (at_start) out += tag;
            out += static_cast<char>(c);
            at_start = c == '\n';
        }
    } else {
        out.assign(text.begin(), text.end());
    }
    write_all(stream, out);
}

void Head::on_state(wire::Reader &r, int vertex) {
    const int id = static_cast<int>(r.u32());
    const std::uint8_t what = r.u8();
    if (!r.done() || !valid_id(id) || vertex_of_[static_cast<size_t>(id)] != vertex) return;
    RankState &st = procs_[static_cast<size_t>(id)];
    if (what == 1) st.connected = true;
    if (what == 2) st.finalized = true;
    if (what == 3 || what == 4) st.stopped = what == 3;
    if (what == 1) check_unstarted();
}

void Head::on_exit(wire::Reader &r, int vertex) {
    const int id = static_cast<int>(r.u32());
    const int status = static_cast<int>(r.u32());
    const std::uint8_t flags = r.u8();
    if (!r.done() || !valid_id(id) || vertex_of_[static_cast<size_t>(id)] != vertex) return;
    RankState &st = procs_[static_cast<size_t>(id)];
    if (st.reaped) return;
    st.reaped = true;
    st.wait_status = status;
    st.connected = st.connected || (flags & 1);
    st.finalized = st.finalized || (flags & 2);
    st.killed_by_us = st.killed_by_us || (flags & 4);
    st.failed = rank_failed(st);
    proc_ended(id);
}

void Head::on_abort(wire::Reader &r) {
    const int id = static_cast<int>(r.u32());
    const int status = static_cast<int>(r.u32());
    const std::string msg = r.str();
    const bool all = r.u8() != 0;
    const std::vector<int> targets = wire::get_ids(r);
    if (!r.done()) return;
    say("MPI_Abort called by " + (valid_id(id) ? where(id) : std::string("a process")) + " with code " +
        std::to_string(status) + (msg.empty() ? "" : ": " + msg));
    last_abort_ = status;
    if (all || !o_.ft) {
        if (!o_.ft && !no_ft_code_) no_ft_code_ = status;
        teardown(SIGKILL);
        return;
    }
    std::vector<int> ids;
    for (int t : targets)
        if (valid_id(t)) ids.push_back(t);
    kill_procs(ids, SIGKILL);
}

// MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name across nodes: the
// job's one store is here.
void Head::on_names(wire::Reader &r, int vertex) {
    const std::uint64_t tag = r.u64();
    const auto op = static_cast<name_service::Op>(r.u8());
    const std::uint32_t n = r.u32();
    name_service::Names names, found;
    for (std::uint32_t i = 0; i < n && i < 4096 && r.ok(); ++i) {
        std::string k = r.str(), v = r.str();
        names.emplace_back(std::move(k), std::move(v));
    }
    if (!r.done()) return;
    const pmix_status_t st = names_.serve(op, names, found);
    wire::Writer w;
    w.u64(tag).u32(static_cast<std::uint32_t>(st)).u32(static_cast<std::uint32_t>(found.size()));
    for (const auto &[k, v] : found) w.str(k).str(v);
    to(vertex, wire::Type::name_rep, w);
}

// A node's part of a fence: done once every node that still has a live
// participant gave its part; then each of those gets every part.
void Head::on_fence(wire::Reader &r, int vertex) {
    const std::uint64_t sig = r.u64();
    std::vector<int> ids = wire::get_ids(r);
    const std::vector<std::uint8_t> data = r.bytes();
    if (!r.done()) return;
    Fence &f = fences_[sig];
    if (f.ids.empty()) f.ids = std::move(ids);
    if (!f.from.insert(vertex).second) return;
    f.data.insert(f.data.end(), data.begin(), data.end());
    check_fences();
}

void Head::check_fences() {
    for (auto it = fences_.begin(); it != fences_.end();) {
        Fence &f = it->second;
        bool complete = true;
        for (int id : f.ids) {
            if (!valid_id(id) || procs_[static_cast<size_t>(id)].reaped) continue;
            complete = complete && f.from.count(vertex_of_[static_cast<size_t>(id)]) > 0;
        }
        if (!complete) {
            ++it;
            continue;
        }
        wire::Writer w;
        w.u64(it->first).u32(0);
        w.bytes({reinterpret_cast<const std::uint8_t *>(f.data.data()), f.data.size()});
        for (int v : f.from)
            if (!lost_[static_cast<size_t>(v)]) to(v, wire::Type::fence_down, w);
        it = fences_.erase(it);
    }
}

}  // namespace ftmpi::launcher::detail
