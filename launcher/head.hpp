// ftmpirun across nodes: the head. It runs no rank itself. It starts one
// daemon per node of the job (ftmpirun --ftmpi-daemon, through Slurm's srun,
// daemon.hpp), which are the PMIx servers of their nodes' ranks, and joins
// them into a tree (tree.hpp, net.hpp): launch, wire-up and events cross
// O(log n) links. From then on it is what ftmpirun is for a one-node job,
// for the whole job: it prints every rank's output, forwards its stdin to
// rank 0 and its signals to every rank, completes the ranks' fences across
// nodes, places MPI_Comm_spawn's processes, tells every node of each
// failure (a process's death, seen by its daemon, or a node lost: its
// daemon died or went silent), and ends with the exit status of
// spec 000 §17.5.2 over every node's processes.
//
// Frames and their payloads: wire.hpp. The head is vertex 0; node i of the
// job (nodes[i]) is vertex i + 1.
#pragma once

#include <string>
#include <vector>

#include "allocation.hpp"
#include "options.hpp"

namespace ftmpi::launcher {

// Runs the job of `o` on `nodes` (rank r on nodes[rank_node[r]]) and returns
// ftmpirun's exit status. Throws LauncherError before any daemon started.
int run_head(const Options &o, const std::vector<AllocNode> &nodes, const std::vector<int> &rank_node);

}  // namespace ftmpi::launcher
