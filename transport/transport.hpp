// The transport contract: reliable, ordered, tagged messages between the
// processes of a job, with eager and rendezvous protocols, and a failure state
// for every peer.
//
// Threading: one thread at a time calls into a Transport (the MPI progress
// thread). Callbacks (Sink::on_arrival, Op::done) run inside poll() or inside
// the call that completed them, on that same thread.
//
// Failure: a Transport never aborts and never waits on one peer. An operation
// that involves a failed or unreachable peer completes with Err::peer_failed,
// and the transport reports peers it finds unreachable through
// set_unreachable_hook (the `ft` layer decides what a failure is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/match_bits.hpp"

namespace ftmpi::runtime {
class ProcessManager;
}

namespace ftmpi::transport {

using PeerId = std::uint32_t;  // the process's rank in the job

enum class Err : int {
    ok = 0,
    peer_failed,  // the peer failed or cannot be reached
    truncated,    // more data arrived than the buffer holds
    canceled,
    revoked,  // canceled because the communicator was revoked (here or at the peer)
    other,    // anything else; logged with its libfabric text
};

// One transport operation. The owner (an MPI request) embeds it and keeps it
// alive until `in_fabric` is false: libfabric may hold its address until then.
struct Op {
    // First member: libfabric's per-operation context (a struct fi_context2,
    // which transport/ofi/ checks it can hold), opaque to everything else.
    void *fabric_context[8]{};
    // Called exactly once when the operation is over from the owner's view.
    void (*done)(Op *op, Err err, std::size_t bytes) = nullptr;
    bool in_fabric = false;  // libfabric still owns this Op
    // Set by the owner of a receive whose data it reads at once (a
    // reduction combines it): a transport that may split the copy between
    // both processes then leaves it to the receiver, whose cache it lands in.
    bool read_next = false;
    // Filled by the transport.
    // none: finished (a late libfabric completion only clears in_fabric).
    enum class Kind : std::uint8_t { none, send, rndv_send, bulk_send, bulk_recv, rx_buffer } kind = Kind::none;
    PeerId peer = 0;
    const void *send_buf = nullptr;
    void *recv_buf = nullptr;
    std::size_t length = 0;
    std::uint64_t id = 0;  // rendezvous transfer id
    Header header{};       // untagged sends: what goes first on the wire; bulk: header.match is the tag
    std::uint64_t data = 0;
    // A rendezvous send over shm that receivers may read straight from
    // send_buf: its id while it stands, cleared before the send is finished
    // (a receiver that reads the data and then a cleared ticket discards it).
    std::uint64_t ticket = 0;
    Op *prev = nullptr;  // the transport's list of operations held by libfabric
    Op *next = nullptr;
};

// A rendezvous sender's data as another process on the node can read it.
struct RemoteBuffer {
    std::uint64_t address = 0;
    std::uint64_t ticket_address = 0;
    std::uint64_t pid = 0;
};

// A message that arrived and is not yet matched to a receive.
struct Arrival {
    std::uint32_t context;
    std::uint64_t uid;  // the sender's communicator uid (Header::uid)
    std::int32_t tag;
    std::int32_t source_rank;  // rank of the sender in the communicator
    PeerId source;             // the sender's process
    std::size_t length;
    const void *eager_data;   // eager payload; valid only during on_arrival
    bool rendezvous;          // true: call accept() to pull the data
    std::uint64_t sender_id;  // rendezvous: the sender's transfer id
    RemoteBuffer remote;      // rendezvous: where the data may be read from (pid 0: nowhere)
};

class Sink {
public:
    virtual ~Sink() = default;
    // A new message. Eager data must be copied out before returning if kept.
    // Returns true when a posted receive took it: a waiter may be done, so a
    // transport that has more messages at hand may return from poll() first
    // (the next message then finds its receive posted, not the unexpected
    // queue).
    virtual bool on_arrival(const Arrival &a) = 0;
};

enum class SendMode : std::uint8_t {
    standard,    // eager when small, rendezvous otherwise
    sync,        // always rendezvous: completes only once the receiver matched it
    collective,  // standard, eager up to a larger size within a node (a collective's
                 // step: its sender goes on to its next step rather than wait for this receiver)
    spread,      // standard, but within a node eager only up to k_spread_eager: one of a
                 // sender's many (a scatter's root), whose receivers then pull in parallel
                 // rather than wait for the sender to copy every block in turn
};
// On a node with more ranks than cores the point-to-point limit is 64 KiB;
// a scatter's root with eager blocks above this copied them all itself (4
// ranks on 2 cores, osu_scatter at 32/64 KiB: 6.6/12.4 us eager against
// 4.5/6.0 by single copy; Open MPI 5.3/9.0).
inline constexpr std::size_t k_spread_eager = 16384;

// What a post returns.
enum class Posted : std::uint8_t {
    pending,      // Op::done will be called later
    complete,     // finished already; Op::done will not be called
    peer_failed,  // the peer is known failed; Op::done will not be called
};

class Transport {
public:
    virtual ~Transport() = default;

    // Sends `length` bytes to `peer` for (context, tag) of the communicator
    // `uid`, from `source_rank`.
    virtual Posted send(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag,
                        std::int32_t source_rank, const void *buf, std::size_t length, SendMode mode, Op *op) = 0;
    // A standard-mode send that needs nothing more from the caller: true when
    // the message went out at once (a small one with room for it), as send()
    // returning Posted::complete would have sent it; false when nothing was
    // done and the caller must use send(), which handles every other case
    // (a failed peer included). Lets a blocking send skip its request.
    virtual bool inject(PeerId peer, std::uint32_t context, std::uint64_t uid, std::int32_t tag,
                        std::int32_t source_rank, const void *buf, std::size_t length) {
        (void)peer, (void)context, (void)uid, (void)tag, (void)source_rank, (void)buf, (void)length;
        return false;
    }
    // Pulls the data of a rendezvous Arrival into `buf` (at most `capacity` bytes).
    // Op::done reports Err::truncated when the message was longer than capacity,
    // and the sender's reason (cancel_sends) when it gave the send up before
    // sending the data: the receive never waits for data that will not come.
    virtual Posted accept(const Arrival &a, void *buf, std::size_t capacity, Op *op) = 0;
    // Drives every endpoint. Returns the number of events handled.
    virtual int poll() = 0;

    // Marks `peer` failed: every pending operation with it completes with
    // Err::peer_failed, and every later one fails at once.
    virtual void mark_failed(PeerId peer) = 0;
    virtual bool is_failed(PeerId peer) const = 0;
    // Finishes with `why` (Err::revoked or Err::canceled) every rendezvous
    // send of communicator `uid` on contexts [first, last] still waiting for
    // its receiver. A receiver that answers later is told the data will not
    // come, and why: its receive finishes with the same Err. Sends already
    // moving their data finish normally.
    virtual void cancel_sends(std::uint64_t uid, std::uint32_t first, std::uint32_t last, Err why) = 0;
    // Whether operations toward live peers are still unfinished (MPI_Finalize
    // drains them: a process's last messages, such as an agreement's
    // decision, complete only as it drives progress).
    virtual bool busy() const = 0;
    // Called (inside poll) with a peer that a completion error showed unreachable.
    virtual void set_unreachable_hook(std::function<void(PeerId)> hook) = 0;
    // Makes processes of other jobs peers (MPI_Comm_spawn, connect): ids[i],
    // whose job starts at id bases[i]; addresses come from the process
    // manager (pm.get_remote). Known peers are skipped. Over a network
    // provider a pair connects from its higher id, as at init: sends to a
    // new higher peer wait (queued, never blocking) for its hello. Returns ""
    // or why a peer could not be added.
    virtual std::string add_peers(runtime::ProcessManager &pm, const std::vector<int> &ids,
                                  const std::vector<int> &bases) = 0;
    // Provider in use for `peer`, for diagnostics.
    virtual std::string provider_of(PeerId peer) const = 0;
    // Reads the peers' addresses after the process manager's exchange (the
    // transport put its own before it). Init only.
    virtual void connect(runtime::ProcessManager &pm) = 0;
    // Connects, after connect(), the pairs that must be connected before
    // their first message (network providers), waiting a bounded time.
    // MPI_Init calls it with the failure detector already running, so a
    // process kept waiting here still sends its heartbeats. Returns the
    // peers whose hello has arrived: each sent it from its own preconnect(),
    // so it had got that far in its MPI_Init. Init only.
    virtual std::vector<PeerId> preconnect() { return {}; }
};

// The libfabric transport: opens the endpoints this job needs and publishes
// their addresses (pm.put); call connect() after the process manager's
// exchange. remote_only: only for peers on other nodes (and no endpoint for
// spawned processes), next to the shared-memory fast path
// (transport/open.hpp), which also decides when libfabric is
// loaded at all. Throws std::runtime_error naming the libfabric call at
// failure. Init only.
std::unique_ptr<Transport> open_ofi_transport(runtime::ProcessManager &pm, Sink &sink, bool remote_only);

}  // namespace ftmpi::transport
