// One libfabric RDM endpoint of one provider, with its domain, AV and CQ.
//
// Owns the libfabric objects (closed in reverse order by the destructor) and
// nothing else: protocols live in OfiTransport. All calls return libfabric's
// status (0, -FI_EAGAIN, or another negative FI_E* value); none blocks.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/match_bits.hpp"

namespace ftmpi::transport::ofi {

// Largest header + payload inject_msg stages.
inline constexpr std::size_t k_inject_stage = 256;
// What precedes the payload of every untagged message: the Header, then the
// universe's data token (runtime/auth.hpp), which the receiver checks first.
inline constexpr std::size_t k_wire_header = k_untagged_header;

class Endpoint {
public:
    enum class Use {
        data,     // the MPI data path: tagged + untagged, one thread, CQ polled
        control,  // fault-tolerance control traffic: untagged only, thread-safe
                  // domain, and a waitable CQ (sread/signal)
    };
    // Opens `fi_name` (e.g. "shm", "tcp;ofi_rxm") for `av_size` peers.
    // Throws std::runtime_error naming the libfabric call that failed.
    Endpoint(const std::string &fi_name, std::size_t av_size, Use use = Use::data);
    ~Endpoint();
    Endpoint(const Endpoint &) = delete;
    Endpoint &operator=(const Endpoint &) = delete;

    std::vector<char> address() const;
    // Inserts a peer's address; returns FI_ADDR_NOTAVAIL on failure.
    fi_addr_t insert(const std::vector<char> &address);

    // Eager and control traffic: untagged messages whose first
    // k_wire_header bytes are the Header (match bits, communicator uid) and
    // the data token, received into the transport's posted buffers.
    // libfabric 1.17 shm (util_srx) loses tagged messages that arrive before a
    // matching receive is posted; its untagged unexpected queue is sound, so
    // nothing that can arrive unexpected travels tagged.
    ssize_t send_msg(const Header *header, const void *buf, std::size_t len, fi_addr_t dest, std::uint64_t data,
                     void *context) {
        iovec iov[3] = {
            {const_cast<Header *>(header), sizeof *header}, {&token_, sizeof token_}, {const_cast<void *>(buf), len}};
        fi_msg msg{};
        msg.msg_iov = iov;
        msg.iov_count = len > 0 ? 3 : 2;
        msg.addr = dest;
        msg.context = context;
        msg.data = data;
        return fi_sendmsg(ep_, &msg, FI_REMOTE_CQ_DATA | FI_COMPLETION);
    }
    // Needs k_wire_header + len <= inject_size(); no completion is generated.
    ssize_t inject_msg(const Header &header, const void *buf, std::size_t len, fi_addr_t dest, std::uint64_t data);
    ssize_t recv_msg(void *buf, std::size_t len, void *context) {
        return fi_recv(ep_, buf, len, nullptr, FI_ADDR_UNSPEC, context);
    }
    // Rendezvous payload: tagged with the receiver's transfer id, whose receive
    // is always posted before the sender may send.
    ssize_t send_bulk(const void *buf, std::size_t len, fi_addr_t dest, std::uint64_t match, std::uint64_t data,
                      void *context) {
        return fi_tsenddata(ep_, buf, len, nullptr, data, dest, match, context);
    }
    ssize_t recv_bulk(void *buf, std::size_t len, std::uint64_t match, void *context) {
        return fi_trecv(ep_, buf, len, nullptr, FI_ADDR_UNSPEC, match, 0, context);
    }
    // Control use: a small message without completion (needs len <= inject_size()).
    ssize_t inject(const void *buf, std::size_t len, fi_addr_t dest) { return fi_inject(ep_, buf, len, dest); }
    // Control use: waits up to `timeout_ms` for completions (-FI_EAGAIN on timeout or signal()).
    ssize_t sread(fi_cq_tagged_entry *entries, std::size_t count, int timeout_ms) {
        return fi_cq_sread(cq_, entries, count, nullptr, timeout_ms);
    }
    // Control use, any thread: wakes a thread blocked in sread().
    void signal() { fi_cq_signal(cq_); }
    int cancel(void *context) { return static_cast<int>(fi_cancel(&ep_->fid, context)); }
    ssize_t read(fi_cq_tagged_entry *entries, std::size_t count) { return fi_cq_read(cq_, entries, count); }
    // Reads one error entry; returns its text in `text`.
    bool read_error(fi_cq_err_entry &entry, std::string &text);

    // The data token every untagged message carries (set once, before any traffic).
    void set_token(std::uint64_t token) { token_ = token; }
    std::uint64_t token() const { return token_; }
    // The largest message the transport sends eagerly through this endpoint.
    void set_eager_limit(std::size_t n) { eager_limit_ = n; }
    std::size_t eager_limit() const { return eager_limit_; }
    const std::string &provider() const { return provider_; }
    std::size_t inject_size() const { return inject_size_; }

private:
    void close();

    std::string provider_;
    std::size_t inject_size_ = 0;
    std::size_t eager_limit_ = 0;
    std::uint64_t token_ = 0;
    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    fid_av *av_ = nullptr;
    fid_cq *cq_ = nullptr;
    fid_ep *ep_ = nullptr;
};

}  // namespace ftmpi::transport::ofi
