// Socket helpers shared by the runtime (PMIx client) and the launcher (PMIx server).
#pragma once

namespace ftmpi::runtime {

// Sets TCP_NODELAY on every TCP socket this process has open. PMIx 4.2.2 talks
// over loopback TCP and never sets it, which delays each event by ~40 ms
// (Nagle + delayed ACK). Returns the number of sockets changed.
int disable_nagle_on_tcp_sockets();

}  // namespace ftmpi::runtime
