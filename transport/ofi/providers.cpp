#include "transport/ofi/providers.hpp"

#include <cstdlib>

#include "runtime/config.hpp"


namespace ftmpi::transport::ofi {
namespace {
// libfabric 1.17 on Debian 12: `sockets` is broken (ms latency then EIO) and is
// deliberately absent; `net` is the native tcp RDM provider.
struct Row {
    const char *alias, *fi_name;
    bool network, uses_tcp_iface, named_region;
};
constexpr Row k_providers[] = {
    {"shm", "shm", false, false, true},
    {"tcp", "tcp;ofi_rxm", true, true, false},
    {"rxm", "tcp;ofi_rxm", true, true, false},
    {"net", "net", true, true, false},
    {"udp", "udp;ofi_rxd", true, false, false},
    {"verbs", "verbs;ofi_rxm", true, false, false},
    {"cxi", "cxi", true, false, false},
};
}  // namespace

ProviderInfo lookup_provider(const std::string &name) {
    for (const auto &p : k_providers)
        if (name == p.alias || name == p.fi_name)
            return {p.alias, p.fi_name, p.network, p.uses_tcp_iface, p.named_region};
    return {name, name, true, false, false};
}

void select_tcp_iface(bool one_node) {
    const auto &cfg = runtime::config();
    if (!cfg.NET_IFACE.empty()) ::setenv("FI_TCP_IFACE", cfg.NET_IFACE.c_str(), 1);
    else if (one_node) ::setenv("FI_TCP_IFACE", "lo", 0);
}

}  // namespace ftmpi::transport::ofi
