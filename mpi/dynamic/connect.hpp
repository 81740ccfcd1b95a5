// Connections between jobs: the inter-communicator that MPI_Comm_spawn,
// MPI_Comm_accept/connect and MPI_Comm_join make between two groups of
// processes that were strangers (docs/dynamic.md).
//
// A port names one process (its id and its job's first id) and a random key.
// The connecting root dials it: a small message on the dial context, which
// no communicator uses. The accepting root answers, and the two roots then
// talk over a bridge, a two-process communicator on a reserved context
// slot. Over it they swap their groups (process ids with their jobs' first
// ids, so that every member can add the other group's processes to its
// transport), each root hands the other group to its own, and
// MPI_Intercomm_create's uniform construction runs with the bridge as its
// peer communicator. A process is the root of one connection at a time.
#pragma once

#include <cstdint>
#include <string>

#include "mpi/objects.hpp"
#include "transport/transport.hpp"

namespace ftmpi::mpi {

inline constexpr std::uint32_t k_bridge_context = 4;  // slot 2: the roots' bridge (4, 5)
inline constexpr std::uint32_t k_dial_context = 6;    // slot 3: dials

struct Port {
    int id = -1;   // the accepting process
    int base = 0;  // its job's first process id
    std::uint64_t key = 0;
};

// A fresh port of this process.
Port new_port();
std::string port_name(const Port &p);
// False when `name` is not a port name of ftmpi's.
bool parse_port(const char *name, Port &p);

// Engine (on_other): a message on the dial context.
void on_dial(const transport::Arrival &a);

// Collective over the intra-communicator `comm`; `port` matters at `root`
// only. accept_on waits for a dial on the port: `expected` >= 0 is the one
// process that may dial (MPI_Comm_spawn's first child), whose failure ends
// the wait. The inter-communicator is uniform (both groups have it, or
// neither); errors are returned as classes, with `why` saying what failed.
int accept_on(MPI_Comm comm, int root, const Port &port, int expected, MPI_Comm *newcomm, std::string &why);
int connect_to(MPI_Comm comm, int root, const Port &port, MPI_Comm *newcomm, std::string &why);

// MPI_Comm_disconnect of c: its members of other jobs are no longer connected.
void note_disconnect(MPI_Comm c);
// MPI_Finalize, after the agreement of MPI_COMM_WORLD: tells every process of
// another job this one knows that it is finalizing, and waits until each one
// it is still connected to said the same or failed (MPI_Finalize is
// collective over connected processes). Meanwhile this process answers for
// the agreements of communicators it freed (mpi/ulfm/ft_channel.cpp).
void finalize_connected();

// The inter-communicator to this job's parents (MPI_Comm_get_parent), made
// in MPI_Init of a spawned job; MPI_COMM_NULL otherwise, and once freed.
extern MPI_Comm g_parent;

}  // namespace ftmpi::mpi
