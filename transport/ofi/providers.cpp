#include "transport/ofi/providers.hpp"

#include <algorithm>
#include <cstdlib>

#include "runtime/config.hpp"


namespace ftmpi::transport::ofi {
namespace {
// libfabric 1.17 on Debian 12: `sockets` is broken (ms latency then EIO) and is
// deliberately absent; `net` is the native tcp RDM provider.
struct Row {
    const char *alias, *fi_name;
    bool network, uses_tcp_iface, named_region, sread_spins, rxm_shared_rx;
};
ProviderInfo info_of(const Row &p) {
    return {p.alias, p.fi_name, p.network, p.uses_tcp_iface, p.named_region, p.sread_spins, p.rxm_shared_rx};
}
constexpr Row k_providers[] = {
    {"shm", "shm", false, false, true, true, false},
    {"tcp", "tcp;ofi_rxm", true, true, false, false, true},
    {"rxm", "tcp;ofi_rxm", true, true, false, false, true},
    {"net", "net", true, true, false, false, false},
    {"udp", "udp;ofi_rxd", true, false, false, false, false},
    {"verbs", "verbs;ofi_rxm", true, false, false, false, false},
    {"cxi", "cxi", true, false, false, false, false},
};
}  // namespace

ProviderInfo lookup_provider(const std::string &name) {
    for (const auto &p : k_providers)
        if (name == p.alias || name == p.fi_name) return info_of(p);
    return {name, name, true, false, false, false, false};
}

namespace {
// FI_PROVIDER's names, and whether they are left out ('^') or the only ones.
struct UserFilter {
    std::vector<std::string> names;
    bool exclude = false;
};

UserFilter user_filter() {
    UserFilter f;
    const char *env = std::getenv("FI_PROVIDER");
    if (env == nullptr || *env == '\0') return f;
    std::string spec = env;
    if (spec[0] == '^') {
        f.exclude = true;
        spec.erase(0, 1);
    }
    for (std::size_t at = 0; at <= spec.size();) {
        const std::size_t comma = std::min(spec.find(',', at), spec.size());
        if (comma > at) f.names.push_back(spec.substr(at, comma - at));
        at = comma + 1;
    }
    return f;
}

// libfabric filters core providers: "tcp;ofi_rxm" is allowed when "tcp" is.
std::string core_of(const std::string &fi_name) { return fi_name.substr(0, fi_name.find(';')); }
}  // namespace

bool allowed_by_user(const std::string &fi_name) {
    const UserFilter f = user_filter();
    if (f.names.empty()) return true;
    const std::string core = core_of(fi_name);
    const bool listed =
        std::any_of(f.names.begin(), f.names.end(), [&](const std::string &n) { return n == core || n == fi_name; });
    return f.exclude ? !listed : listed;
}

ProviderInfo network_provider() {
    const ProviderInfo configured = lookup_provider(runtime::config().NET_PROVIDER);
    if (allowed_by_user(configured.fi_name)) return configured;
    const UserFilter f = user_filter();
    if (!f.exclude)
        for (const std::string &n : f.names)
            if (const ProviderInfo p = lookup_provider(n); p.network) return p;
    for (const auto &p : k_providers)
        if (p.network && allowed_by_user(p.fi_name)) return info_of(p);
    return {};
}

std::vector<ProviderInfo> control_providers(bool local_only) {
    const auto &cfg = runtime::config();
    if (cfg.set.FT_PROVIDER) return {lookup_provider(cfg.FT_PROVIDER)};
    std::vector<ProviderInfo> out;
    auto add = [&](const ProviderInfo &p) {
        if (p.fi_name.empty() || !allowed_by_user(p.fi_name)) return;
        for (const auto &q : out)
            if (q.fi_name == p.fi_name) return;
        out.push_back(p);
    };
    add(lookup_provider(cfg.FT_PROVIDER));
    add(network_provider());
    if (local_only) add(lookup_provider("shm"));  // reaches this node only; its CQ wait polls
    return out;
}

void set_libfabric_defaults() {
    // ofi_rxm over tcp gives all of an endpoint's connections one shared
    // receive context and, when the endpoint is enabled, fills it with
    // FI_OFI_RXM_MSG_RX_SIZE bounce buffers of 16 KiB. Its default there,
    // 4096, writes 64 MiB per endpoint: 0.2 s of page faults here. 1024
    // costs 0.05 s and the same ping-pong figures (docs/performance.md, "Side by side").
    // Over verbs the same knob sizes each connection's queue (default 128),
    // so it is left alone unless a provider this process may open shares
    // one. The user's value wins.
    const auto &cfg = runtime::config();
    std::vector<ProviderInfo> candidates = control_providers(false);
    candidates.push_back(network_provider());
    if (!cfg.PROVIDER.empty()) candidates.push_back(lookup_provider(cfg.PROVIDER));
    if (std::any_of(candidates.begin(), candidates.end(), [](const ProviderInfo &p) { return p.rxm_shared_rx; }))
        ::setenv("FI_OFI_RXM_MSG_RX_SIZE", "1024", 0);
}

void select_tcp_iface(bool one_node) {
    const auto &cfg = runtime::config();
    // libfabric 1.17: tcp reads FI_TCP_IFACE, net reads FI_NET_IFACE (and
    // ignores FI_TCP_IFACE: it then takes the first interface it lists, which
    // may be a tentative IPv6 link-local address that cannot be bound).
    for (const char *var : {"FI_TCP_IFACE", "FI_NET_IFACE"}) {
        if (!cfg.NET_IFACE.empty()) ::setenv(var, cfg.NET_IFACE.c_str(), 1);
        else if (one_node) ::setenv(var, "lo", 0);
    }
}

}  // namespace ftmpi::transport::ofi
