// Provider quirks live here, in one table: code asks the table, never strcmp.
#pragma once

#include <string>

namespace ftmpi::transport::ofi {

struct ProviderInfo {
    std::string alias;    // name accepted in FTMPI_PROVIDER / FTMPI_NET_PROVIDER
    std::string fi_name;  // fi_info provider name
    bool network;         // reaches other nodes (false: this node only)
    bool uses_tcp_iface;  // honours FI_TCP_IFACE (tcp-based providers, libfabric 1.17)
    bool named_region;    // needs a unique endpoint name (shm: runtime/shm_names.hpp)
};

// Looks `name` up by alias or fi_info name. Unknown names are passed through
// to libfabric as they are (network = true), so new providers need no code.
ProviderInfo lookup_provider(const std::string &name);

// Points tcp-based providers at FTMPI_NET_IFACE, or at lo when the whole job
// is on one node (FI_TCP_IFACE; an explicit FI_TCP_IFACE from the user wins
// over the lo default). Call before opening a tcp-based endpoint.
void select_tcp_iface(bool one_node);

}  // namespace ftmpi::transport::ofi
