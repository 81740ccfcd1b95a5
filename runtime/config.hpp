// ftmpi runtime configuration: the one table of FTMPI_* knobs.
//
// Every knob is read once, at MPI_Init, from the environment (MPI_T_init_thread
// before MPI_Init reads it too, so that a tool sees the values MPI_Init will
// use). The table below generates the struct, the parser, the help text
// (`ftmpi_info --knobs`, docs/running.md) and the MPI_T control variables
// (mpi/tools/mpit_cvar.cpp), so a knob exists in exactly one place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ftmpi::runtime {

// X(name, type, default, layer, help). `layer` is the part of ftmpi that reads
// the knob (KnobLayer); the tools interface (mpi/tools/mpit.cpp) files each knob's
// control variable under that layer's category.
// clang-format off
#define FTMPI_KNOBS(X)                                                                    \
    X(PROVIDER, std::string, "", transport,                                               \
      "provider: empty or shm: ftmpi's shared memory within a node (libfabric's shm "     \
      "with FTMPI_SHM_FASTPATH=0), FTMPI_NET_PROVIDER between nodes; tcp "                \
      "(tcp;ofi_rxm), net or any other fi_info name: that libfabric provider for every "  \
      "peer")                                                                             \
    X(SHM_FASTPATH, int, 1, transport,                                                    \
      "1: peers on this node talk through ftmpi's own shared-memory rings, and "          \
      "libfabric is loaded only for peers on other nodes; 0: libfabric's shm provider")   \
    X(SHM_RING, std::size_t, 0, transport,                                                \
      "bytes of each shared-memory ring (one per direction of every pair of processes "   \
      "on a node), rounded up to a power of two; 0: 256 KiB, less when many processes "   \
      "share the node")                                                                   \
    X(NET_PROVIDER, std::string, "net", transport,                                        \
      "provider used between nodes when FTMPI_PROVIDER is empty")                         \
    X(NET_IFACE, std::string, "", transport,                                              \
      "network interface for tcp/net (sets FI_TCP_IFACE and FI_NET_IFACE). Empty: lo "    \
      "when the whole job is on one node, else the interface of the route to another "    \
      "node's published address")                                                         \
    X(NET_PRECONNECT, int, 1, transport,                                                  \
      "1: every pair of processes that talks over a network provider connects once at "   \
      "MPI_Init (the higher rank to the lower), so no pair connects from both sides at "  \
      "once later (libfabric 1.17's net then fails a live peer's operations); 0: on "     \
      "first use")                                                                        \
    X(EAGER_LIMIT, std::size_t, 8192, transport,                                          \
      "largest message (bytes) sent eagerly within a node; larger ones use rendezvous. "  \
      "Unset on a node with more ranks than cores: 65536 (MPI_Init sets it), as a "       \
      "rendezvous waits for the receiver to be scheduled")                                \
    X(COLL_EAGER_LIMIT, std::size_t, 16384, transport,                                    \
      "largest message (bytes) a gather's or a reduction's step sends eagerly within a " \
      "node (at least FTMPI_EAGER_LIMIT), so its sender need not wait (bcast, scatter, " \
      "allgather and alltoall follow FTMPI_EAGER_LIMIT, a scatter's root only up to "    \
      "16 KiB). Unset on a node with more ranks than cores: 65536")                      \
    X(NET_EAGER_LIMIT, std::size_t, 65536, transport,                                     \
      "largest message (bytes) sent eagerly over libfabric (between nodes); larger ones " \
      "use rendezvous. Must be the same at every rank")                                   \
    X(SHM_CMA, int, 1, transport,                                                         \
      "1: within a node, rendezvous data moves in a single copy between the two "         \
      "processes' memories (process_vm_readv/writev), falling back to a copy through "    \
      "shared memory where the kernel refuses; 0: always through shared memory")          \
    X(RX_BUFFERS, std::size_t, 64, transport,                                             \
      "receive buffers posted per endpoint for eager and control messages")               \
    X(YIELD, int, -1, mpi,                                                                \
      "1: blocking waits call sched_yield between polls; 0: pure busy polling; -1: "      \
      "yield when more ranks than cores share this node")                                 \
    X(OP_ISA, std::string, "", mpi,                                                       \
      "vector unit of the reduction loops (MPI_Reduce, MPI_Accumulate, ...): empty: the " \
      "widest the CPU has; avx512, avx2 or base (x86-64's 16-byte vectors): at most "     \
      "that")                                                                             \
    X(DETECTOR, int, 1, ft,                                                               \
      "1: run the in-band heartbeat failure detector (a thread per process); 0: rely on " \
      "the launcher's events and transport errors only")                                  \
    X(FT_PERIOD_MS, int, 100, ft, "heartbeat period of the failure detector (ms)")        \
    X(FT_TIMEOUT_MS, int, 1000, ft,                                                       \
      "a process whose heartbeats stop for this long (ms) is declared failed and killed") \
    X(FT_LINKS, int, 1, ft,                                                               \
      "1: each process keeps a TCP link to the one it observes, which the kernel closes " \
      "when that process dies: deaths are seen in milliseconds without the launcher; "    \
      "0: the heartbeat only")                                                            \
    X(FT_PROVIDER, std::string, "net", ft,                                                \
      "channel of the failure detector: unix (a Unix datagram socket: one node only) or " \
      "a libfabric provider with a waitable CQ. Unset: unix when the whole job is on "    \
      "one node, else this default")                                                      \
    X(LAUNCHER_EVENTS, int, 1, ft,                                                        \
      "1: learn failures from the launcher's PMIx events too; 0: ignore them (the "       \
      "detector alone, as under a launcher that sends none)")                             \
    X(TEST_KILL_AT, std::string, "", testing,                                             \
      "tests only: 'site:rank[:n]' makes job rank `rank` die (SIGKILL) the n-th time "    \
      "(default 1st) it reaches protocol point `site` (see runtime/test_hooks.hpp)")      \
    X(TEST_SPLIT_ABOVE, int, 0, testing,                                                  \
      "tests only: a reduce-scatter of a vector longer than this many elements runs as "  \
      "one reduce per member, as one longer than INT_MAX does (0: INT_MAX)")              \
    X(FT, int, 1, ft,                                                                     \
      "0: the job ends at its first failure (ftmpirun --no-ft sets it): the MPIX_FT "     \
      "attribute reports 0")                                                              \
    X(ERRHANDLER, std::string, "mpi_errors_are_fatal", mpi,                               \
      "initial error handler of MPI_COMM_WORLD and MPI_COMM_SELF, also for errors "       \
      "raised before MPI_Init: mpi_errors_are_fatal, mpi_errors_return or "               \
      "mpi_errors_abort (ftmpirun -initial-errhandler sets it)")                          \
    X(RMA_SHM, int, 1, mpi,                                                               \
      "1: MPI_Win_allocate puts each window in shared memory that the members on its "    \
      "node map, so their puts and gets are plain copies, and an exclusive lock's holder " \
      "on the node reaches MPI_Win_create memory by single copy; 0: every one-sided "     \
      "operation is a message to the target")                                             \
    X(SLURM_KEEPER, int, 1, runtime,                                                      \
      "1: under srun, MPI_Init forks; the task Slurm started waits for the rank and "     \
      "exits 0 when the rank died of a signal after MPI_Init that the step did not get "  \
      "(a failure the job survives), so srun reports the survivors' status; 0: srun "     \
      "reports 128+signal after any rank's death (runtime/task_keeper.hpp)")              \
    X(SERVICE_CPUS, std::string, "", runtime,                                             \
      "CPUs (a list such as 0-3,8) that ftmpi's own threads (the failure detector's, "    \
      "the liveness links') may run on, whatever core the rank is bound to: ftmpirun "    \
      "sets it to the CPUs it was given when it binds ranks; empty: the rank's own")      \
    X(LOG, int, 1, runtime,                                                               \
      "log level: 0 errors only, 1 warnings, 2 info, 3 debug (the MPI_T control "         \
      "variable FTMPI_LOG changes it at run time)")                                       \
    X(LAUNCHER, std::string, "", runtime,                                                 \
      "set by ftmpirun in the processes it starts (ftmpirun): they stay connected to "    \
      "its PMIx server, which sends failure events, spawns and kills; under any other "   \
      "launcher they leave its PMIx server after the wire-up")                            \
    X(TIMELINE, std::string, "", runtime,                                                 \
      "file into which every process appends its fault-tolerance events (failures "      \
      "found or learned, revokes, agreements, shrinks, spawns) as a Chrome/Perfetto "    \
      "trace; ftmpirun --timeline FILE sets it; empty: none")                             \
    X(PARENT_PORT, std::string, "", runtime,                                              \
      "set by MPI_Comm_spawn in the processes it starts: the port on which their "        \
      "parents accept them")                                                              \
    X(LAUNCH_FANOUT, int, 32, runtime,                                                    \
      "ftmpirun across nodes: the most daemons under one vertex of their tree (the "     \
      "head or a daemon), so launch, wire-up and events cross log_fanout(nodes) links")   \
    X(LAUNCH_PERIOD_MS, int, 250, runtime,                                                \
      "ftmpirun across nodes: a link of the daemons' tree quiet for this long carries a " \
      "heartbeat (ms)")                                                                   \
    X(LAUNCH_TIMEOUT_MS, int, 5000, runtime,                                              \
      "ftmpirun across nodes: a daemon not heard from for this long is lost with its "    \
      "node, and its ranks are failed (ms); a daemon that does not hear from its parent " \
      "for this long ends its ranks")
// clang-format on

enum class KnobLayer { runtime, transport, ft, mpi, testing };

// Which knobs the environment gave (a non-empty value), as the defaults
// cannot say it: "unset" may mean something of its own.
struct KnobsSet {
#define FTMPI_KNOB_SETFLAG(name, type, def, layer, help) bool name = false;
    FTMPI_KNOBS(FTMPI_KNOB_SETFLAG)
#undef FTMPI_KNOB_SETFLAG
};

struct Config {
#define FTMPI_KNOB_FIELD(name, type, def, layer, help) type name = def;
    FTMPI_KNOBS(FTMPI_KNOB_FIELD)
#undef FTMPI_KNOB_FIELD
    KnobsSet set;
    // Not a knob: whether this node has more of the job's processes than
    // cores (settle_node_knobs, at MPI_Init).
    bool crowded = false;
};

// Parses the environment into the process-wide configuration. Throws
// std::runtime_error naming the variable on a malformed value (the
// configuration is then unchanged). Only while no other ftmpi thread runs:
// MPI_Init, or MPI_T_init_thread before MPI_Init.
void load_config();

// The environment's configuration, parsed now and not kept (throws as
// load_config does): for what must be known before MPI_Init, such as the
// initial error handler of an error raised then. The one reader of the
// FTMPI_* environment, with load_config.
Config config_from_environment();

// The configuration in force (defaults before load_config()).
const Config &config();

// At MPI_Init, once the ranks on this node are known: whether the node is
// crowded (more ranks than cores), and the default that depends on it
// (FTMPI_EAGER_LIMIT, so that its control variable shows the value in force).
void settle_node_knobs(bool crowded);

// Whether rendezvous messages within a node move by single copy
// (FTMPI_SHM_CMA): every one unless it is 0, on a crowded node too (there a
// message that fits the rings went through them until single copy with
// traffic both ways left each receiver to copy alone; since then single
// copy is ahead at every rendezvous size: docs/performance.md).
inline bool single_copy(const Config &c) { return c.SHM_CMA != 0; }

// Every knob, two lines each: "FTMPI_NAME = value (set|unset; default D)",
// then its meaning (ftmpi_info --knobs).
std::string knob_help(const Config &now);

}  // namespace ftmpi::runtime
