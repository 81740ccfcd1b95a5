// Socket helpers shared by the runtime (PMIx client) and the launcher (PMIx server).
#pragma once

#include <netinet/in.h>

#include <string>
#include <vector>

namespace ftmpi::runtime {

// Sets TCP_NODELAY on every TCP socket this process has open. PMIx 4.2.2 talks
// over loopback TCP and never sets it, which delays each event by ~40 ms
// (Nagle + delayed ACK). Returns the number of sockets changed.
int disable_nagle_on_tcp_sockets();

// This node's IPv4 addresses on interfaces that are up, loopback excluded
// (network byte order).
std::vector<in_addr_t> node_addresses();

// The interface this node would use to reach `peer`: the kernel's route
// lookup, then the interface that holds the source address it chose. Empty
// when there is no such route, or when it goes through loopback.
std::string iface_towards(in_addr_t peer);

}  // namespace ftmpi::runtime
