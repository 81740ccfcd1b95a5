// The control channel: small out-of-band messages between the processes of a
// job, for the fault-tolerance layer (heartbeats, failure notices).
//
// It is separate from the data transport so that one `ft` thread can block on
// it while the application's thread owns the data path: it has its own
// endpoint, and every call is thread-safe. Delivery is best effort: send()
// never blocks and may refuse (the caller retries or relies on its protocol's
// repair), and a message to a dead process is silently lost.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "transport/transport.hpp"

namespace ftmpi::runtime {
class ProcessManager;
}

namespace ftmpi::transport {

class ControlChannel {
public:
    virtual ~ControlChannel() = default;
    // Largest message send() accepts.
    virtual std::size_t max_message() const = 0;
    // Queues `len` bytes for `peer`. False: not now (resources busy) or unknown peer.
    virtual bool send(PeerId peer, const void *msg, std::size_t len) = 0;
    // Waits up to `timeout_ms` for messages and hands each to `on_message`;
    // returns early after any message or a wake(). Returns how many arrived.
    virtual int wait(int timeout_ms, const std::function<void(const void *msg, std::size_t len)> &on_message) = 0;
    // Any thread: ends a wait() in progress (or makes the next one return at once).
    virtual void wake() = 0;
    // Reads the peers' addresses, after the process manager's exchange. Init only.
    virtual void connect(runtime::ProcessManager &pm) = 0;

    // Liveness, faster than heartbeats where the channel can tell: follow
    // `peer` (-1: none); a followed peer whose process ended without leaving
    // normally comes out of take_lost() (and wakes wait()): `certain` when it
    // died for sure, otherwise it died or is about to leave normally (its
    // goodbye follows at once then). leaving(): this process leaves normally,
    // so that its end is not taken for a death. No-ops by default.
    struct Lost {
        PeerId peer;
        bool certain;
    };
    virtual void watch(int peer) { (void)peer; }
    virtual std::vector<Lost> take_lost() { return {}; }
    virtual void leaving() {}
    // The process id of `peer` when it runs on this node and the channel
    // knows it (its /proc is then this process's to read); 0 otherwise.
    virtual int pid_of(PeerId peer) const {
        (void)peer;
        return 0;
    }
};

// Opens the control endpoint (provider FTMPI_FT_PROVIDER) and publishes its
// address with pm.put; call before the job's address exchange, then connect()
// after it. Throws std::runtime_error naming the libfabric call at failure.
std::unique_ptr<ControlChannel> open_ofi_control(runtime::ProcessManager &pm);

// The detector's channel: a Unix datagram socket when the whole job is on
// this node (libfabric is not loaded for it), else open_ofi_control;
// FTMPI_FT_PROVIDER, when set, decides ("unix" or a libfabric provider).
// Same contract as open_ofi_control.
std::unique_ptr<ControlChannel> open_control(runtime::ProcessManager &pm);

}  // namespace ftmpi::transport
