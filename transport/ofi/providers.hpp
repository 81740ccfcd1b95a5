// Provider quirks live here, in one table: code asks the table, never strcmp.
#pragma once

#include <string>
#include <vector>

namespace ftmpi::transport::ofi {

struct ProviderInfo {
    std::string alias;    // name accepted in FTMPI_PROVIDER / FTMPI_NET_PROVIDER
    std::string fi_name;  // fi_info provider name
    bool network;         // reaches other nodes (false: this node only)
    bool uses_tcp_iface;  // honours FI_TCP_IFACE (tcp-based providers, libfabric 1.17)
    bool named_region;    // needs a unique endpoint name (shm: runtime/shm_names.hpp)
    bool sread_spins;     // fi_cq_sread busy-polls (shm, libfabric 1.17): a waiter must nap instead
    bool rxm_shared_rx;   // ofi_rxm over a core it gives one shared receive context (tcp)
};

// Looks `name` up by alias or fi_info name. Unknown names are passed through
// to libfabric as they are (network = true), so new providers need no code.
ProviderInfo lookup_provider(const std::string &name);

// Whether the user's FI_PROVIDER (libfabric's filter: a comma-separated list
// of core providers, or with a leading '^' the ones to leave out) lets
// `fi_name` be used. Unset: every provider may be.
bool allowed_by_user(const std::string &fi_name);

// The provider between nodes: FTMPI_NET_PROVIDER when FI_PROVIDER allows it,
// else the first network provider FI_PROVIDER names (a name the table does
// not know is used as it is), else the first of the table's it allows.
// fi_name is empty when none is allowed (FI_PROVIDER=shm).
ProviderInfo network_provider();

// Providers for the failure detector's endpoint, best first: FTMPI_FT_PROVIDER
// alone when the user set it; otherwise the default, then the data path's
// choices, all under FI_PROVIDER. `local_only`: the whole job is on this node.
std::vector<ProviderInfo> control_providers(bool local_only);

// Points tcp-based providers at FTMPI_NET_IFACE, or at lo when the whole job
// is on one node (FI_TCP_IFACE and FI_NET_IFACE; the user's own values win
// over the lo default). Call before opening a tcp-based endpoint.
void select_tcp_iface(bool one_node);

// Sets the defaults ftmpi chooses for libfabric's own environment knobs,
// where the providers this process may open need them (the user's values
// win). libfabric reads them once, when it is first used: call before.
void set_libfabric_defaults();

}  // namespace ftmpi::transport::ofi
