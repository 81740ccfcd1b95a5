// MPI_Comm_spawn across nodes, at the head: where the new processes go, and
// the answer once every node has started its part.
#include <pmix_common.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "head_internal.hpp"
#include "runtime/process_manager.hpp"

namespace ftmpi::launcher::detail {
void Head::refuse_spawn(int vertex, std::uint64_t tag, int status, const std::string &why) {
    say("spawn refused: " + why);
    wire::Writer w;
    w.u64(tag).u32(static_cast<std::uint32_t>(status)).u32(0);
    to(vertex, wire::Type::spawn_rep, w);
}

// Each new process's vertex: app a's on the nodes its `host` list names
// (all of the job's live nodes when empty), first where slots are free (a
// node's slots less its live processes), in node order, then on the least
// loaded. Empty, with `why`, when a host is not a live node of the job.
std::vector<int> Head::place(const std::vector<int> &counts, const std::vector<std::string> &hosts, std::string &why) {
    std::vector<int> load(static_cast<size_t>(nodes()) + 1, 0);
    for (size_t id = 0; id < procs_.size(); ++id)
        if (!procs_[id].reaped) ++load[static_cast<size_t>(vertex_of_[id])];
    std::vector<int> out;
    for (size_t a = 0; a < counts.size(); ++a) {
        std::vector<int> allowed;
        for (const std::string &h : split_list(hosts[a], ',')) {
            int v = 0;
            for (int w = 1; w <= nodes() && v == 0; ++w)
                if (node_name(w) == h || node_name(w) == h.substr(0, h.find('.'))) v = w;
            if (v == 0 || lost_[static_cast<size_t>(v)]) {
                why = "host '" + h + "' is not a node of the job" + std::string(v ? " that is still up" : "");
                return {};
            }
            allowed.push_back(v);
        }
        if (allowed.empty())
            for (int w = 1; w <= nodes(); ++w)
                if (!lost_[static_cast<size_t>(w)]) allowed.push_back(w);
        if (allowed.empty()) {
            why = "no node of the job is up";
            return {};
        }
        for (int k = 0; k < counts[a]; ++k) {
            int best = -1;
            for (int v : allowed)  // the first with a free slot
                if (best < 0 && load[static_cast<size_t>(v)] < nodes_[static_cast<size_t>(v - 1)].slots) best = v;
            if (best < 0)  // else the least loaded, relative to its slots
                for (int v : allowed)
                    if (best < 0 || load[static_cast<size_t>(v)] * nodes_[static_cast<size_t>(best - 1)].slots <
                                        load[static_cast<size_t>(best)] * nodes_[static_cast<size_t>(v - 1)].slots)
                        best = v;
            ++load[static_cast<size_t>(best)];
            out.push_back(best);
        }
    }
    return out;
}

void Head::on_spawn(wire::Reader &r, int vertex) {
    const std::uint64_t tag = r.u64();
    const int requester = static_cast<int>(r.u32());
    const std::uint32_t napps = r.u32();
    NamespaceSpec ns;
    std::vector<int> counts;
    std::vector<std::string> hosts;
    std::string why;
    for (std::uint32_t i = 0; i < napps && i < 4096 && r.ok(); ++i) {
        NamespaceSpec::App a;
        const std::string cmd = r.str();
        const std::uint32_t na = r.u32();
        for (std::uint32_t k = 0; k < na && k < (1u << 16) && r.ok(); ++k) a.argv.push_back(r.str());
        const std::uint32_t ne = r.u32();
        for (std::uint32_t k = 0; k < ne && k < (1u << 16) && r.ok(); ++k) a.env.push_back(r.str());
        a.cwd = r.str();
        const int maxprocs = static_cast<int>(r.u32());
        hosts.push_back(r.str());
        if (!r.ok()) break;
        if (maxprocs <= 0 || maxprocs > ftmpi::runtime::k_max_processes || cmd.empty()) {
            return refuse_spawn(vertex, tag, PMIX_ERR_BAD_PARAM,
                                "process " + std::to_string(requester) + ": a program without a name or processes");
        }
        try {
            a.path = resolve_spawned(cmd, a.cwd, o_.wdir);
        } catch (const std::exception &e) {
            return refuse_spawn(vertex, tag, PMIX_ERR_NOT_FOUND,
                                "process " + std::to_string(requester) + ": " + e.what());
        }
        if (a.argv.empty()) a.argv.push_back(cmd);
        if (a.cwd.empty()) a.cwd = o_.wdir;
        counts.push_back(maxprocs);
        ns.apps.push_back(std::move(a));
    }
    if (!r.done() || ns.apps.empty()) return refuse_spawn(vertex, tag, PMIX_ERR_BAD_PARAM, "a malformed request");
    if (teardown_) return refuse_spawn(vertex, tag, PMIX_ERR_JOB_TERMINATED, "the job is ending");
    long total = 0;
    for (int c : counts) total += c;
    const int base = static_cast<int>(procs_.size());
    if (base + total > ftmpi::runtime::k_max_processes)
        return refuse_spawn(vertex, tag, PMIX_ERR_OUT_OF_RESOURCE,
                            std::to_string(total) + " processes (at most " +
                                std::to_string(ftmpi::runtime::k_max_processes) + " in all)");
    const std::vector<int> where = place(counts, hosts, why);
    if (where.empty()) return refuse_spawn(vertex, tag, PMIX_ERR_NOT_FOUND, why);
    ns.base = base;
    Spawn sp{tag, vertex, {}};
    for (size_t a = 0, k = 0; a < counts.size(); ++a)
        for (int i = 0; i < counts[a]; ++i, ++k) {
            RankState st;
            st.base = base;
            st.rank = static_cast<int>(k);
            procs_.push_back(st);
            vertex_of_.push_back(where[k]);
            ns.node.push_back(where[k]);
            ns.app.push_back(static_cast<int>(a));
            sp.waiting.insert(where[k]);
        }
    spawns_[base] = std::move(sp);
    wire::Writer w;
    encode(w, ns);
    to_all(wire::Type::ns_add, w);
}

void Head::on_started(wire::Reader &r, int vertex) {
    const int base = static_cast<int>(r.u32());
    const std::uint32_t n = r.u32();
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        const int id = static_cast<int>(r.u32());
        const pid_t pid = static_cast<pid_t>(r.u32());
        if (r.ok() && valid_id(id) && vertex_of_[static_cast<size_t>(id)] == vertex)
            procs_[static_cast<size_t>(id)].pid = pid;
    }
    if (!r.done()) return;
    if (base == 0) started_[static_cast<size_t>(vertex)] = true;
    if (auto it = spawns_.find(base); it != spawns_.end()) it->second.waiting.erase(vertex);
    complete_spawns();
}

// A spawn is answered once every node of its processes started them (or was lost).
void Head::complete_spawns() {
    for (auto it = spawns_.begin(); it != spawns_.end();) {
        if (!it->second.waiting.empty()) {
            ++it;
            continue;
        }
        wire::Writer w;
        w.u64(it->second.tag).u32(0).u32(static_cast<std::uint32_t>(it->first));
        to(it->second.requester, wire::Type::spawn_rep, w);
        it = spawns_.erase(it);
    }
}

}  // namespace ftmpi::launcher::detail
