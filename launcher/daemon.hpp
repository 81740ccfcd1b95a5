// ftmpirun across nodes: a daemon, the launcher of one node's part of the
// job. The head starts one per node through srun (`ftmpirun --ftmpi-daemon
// ADDRESSES`, the launch key in FTMPI_DAEMON_KEY); it connects to the head
// (hello: its node), learns its vertex and parent in the tree, attaches to
// that parent, and waits for the launch. Then it is a Runner of its node's
// processes (launcher_internal.hpp, launcher_daemon.cpp): their PMIx
// server, forwarding their output to the head, and reporting their ends.
//
// A daemon that loses its link to its parent (broken, or silent for
// FTMPI_LAUNCH_TIMEOUT_MS) is cut off from the job: it kills its processes,
// removes what they left, and exits.
#pragma once

#include <string>

#include "net.hpp"

namespace ftmpi::launcher {

// Runs the daemon; `head` is the head's addresses, comma separated.
// Returns the daemon's exit status (0 when the head ended the job).
int run_daemon(const std::string &head);

// On a link not identified yet: an `attach` from vertex v, a child of this
// vertex in `net`'s tree, names the link and is answered. False (the link
// dropped) when v is no child of ours.
bool accept_attach(Net &net, Net::Delivery &d);

}  // namespace ftmpi::launcher
