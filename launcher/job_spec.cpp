// The job as the head describes it to its daemons (job_spec.hpp).
#include "job_spec.hpp"

#include "runtime/auth.hpp"
#include "runtime/process_manager.hpp"

namespace ftmpi::launcher {
namespace {

constexpr std::uint32_t kMaxList = 1u << 20;  // strings in one list, processes in one namespace

void put_list(wire::Writer &w, const std::vector<std::string> &v) {
    w.u32(static_cast<std::uint32_t>(v.size()));
    for (const auto &s : v) w.str(s);
}

bool get_list(wire::Reader &r, std::vector<std::string> &v) {
    const std::uint32_t n = r.u32();
    if (!r.ok() || n > kMaxList) return false;
    v.clear();
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) v.push_back(r.str());
    return r.ok();
}

}  // namespace

std::string universe_secret(const std::string &launch_key) {
    const auto d = ftmpi::runtime::auth::hmac(ftmpi::runtime::auth::bytes(launch_key),
                                              {ftmpi::runtime::auth::bytes("ftmpi universe secret", 21)});
    return std::string(d.begin(), d.end());
}

void encode(wire::Writer &w, const JobSettings &s) {
    w.str(s.nspace);
    put_list(w, s.nodes);
    put_list(w, s.env);
    w.u8(static_cast<std::uint8_t>(s.bind)).u8(static_cast<std::uint8_t>(s.map)).u32(static_cast<std::uint32_t>(s.pe));
    w.u8(s.report_bindings).u8(s.ft).u32(static_cast<std::uint32_t>(s.universe_size));
}

bool decode(wire::Reader &r, JobSettings &s) {
    s.nspace = r.str();
    if (!get_list(r, s.nodes) || !get_list(r, s.env)) return false;
    const std::uint8_t bind = r.u8(), map = r.u8();
    const std::uint32_t pe = r.u32();
    s.report_bindings = r.u8() != 0;
    s.ft = r.u8() != 0;
    const std::uint32_t univ = r.u32();
    if (!r.ok() || bind > static_cast<std::uint8_t>(BindPolicy::kNone) ||
        map > static_cast<std::uint8_t>(MapPolicy::kNuma) || pe < 1 || pe > 65536 || univ < 1 ||
        univ > static_cast<std::uint32_t>(ftmpi::runtime::k_max_processes) || s.nodes.empty() || s.nspace.empty() ||
        s.nspace.size() > 200)
        return false;
    s.bind = static_cast<BindPolicy>(bind);
    s.map = static_cast<MapPolicy>(map);
    s.pe = static_cast<int>(pe);
    s.universe_size = static_cast<int>(univ);
    return true;
}

void encode(wire::Writer &w, const NamespaceSpec &ns) {
    w.u32(static_cast<std::uint32_t>(ns.base)).u32(static_cast<std::uint32_t>(ns.node.size()));
    for (std::size_t i = 0; i < ns.node.size(); ++i)
        w.u32(static_cast<std::uint32_t>(ns.node[i])).u32(static_cast<std::uint32_t>(ns.app[i]));
    w.u32(static_cast<std::uint32_t>(ns.apps.size()));
    for (const auto &a : ns.apps) {
        w.str(a.path);
        put_list(w, a.argv);
        put_list(w, a.env);
        w.str(a.cwd);
    }
}

bool decode(wire::Reader &r, NamespaceSpec &ns, int nodes) {
    const std::uint32_t base = r.u32(), n = r.u32();
    const auto max = static_cast<std::uint32_t>(ftmpi::runtime::k_max_processes);
    if (!r.ok() || n == 0 || n > max || base > max - n) return false;
    ns.base = static_cast<int>(base);
    ns.node.resize(n);
    ns.app.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        ns.node[i] = static_cast<int>(r.u32());
        ns.app[i] = static_cast<int>(r.u32());
    }
    const std::uint32_t napps = r.u32();
    if (!r.ok() || napps == 0 || napps > n) return false;
    ns.apps.resize(napps);
    for (auto &a : ns.apps) {
        a.path = r.str();
        if (!get_list(r, a.argv) || !get_list(r, a.env)) return false;
        a.cwd = r.str();
        if (a.path.empty() || a.path.front() != '/') return false;
    }
    for (std::uint32_t i = 0; i < n; ++i)
        if (ns.node[i] < 1 || ns.node[i] > nodes || ns.app[i] < 0 || ns.app[i] >= static_cast<int>(napps)) return false;
    return r.ok();
}

}  // namespace ftmpi::launcher
