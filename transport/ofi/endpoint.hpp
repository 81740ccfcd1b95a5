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

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ftmpi::transport::ofi {

class Endpoint {
public:
    // Opens `fi_name` (e.g. "shm", "tcp;ofi_rxm") for `av_size` peers.
    // Throws std::runtime_error naming the libfabric call that failed.
    Endpoint(const std::string &fi_name, std::size_t av_size);
    ~Endpoint();
    Endpoint(const Endpoint &) = delete;
    Endpoint &operator=(const Endpoint &) = delete;

    std::vector<char> address() const;
    // Inserts a peer's address; returns FI_ADDR_NOTAVAIL on failure.
    fi_addr_t insert(const std::vector<char> &address);

    ssize_t send(const void *buf, std::size_t len, fi_addr_t dest, std::uint64_t match, std::uint64_t data,
                 void *context) {
        return fi_tsenddata(ep_, buf, len, nullptr, data, dest, match, context);
    }
    ssize_t inject(const void *buf, std::size_t len, fi_addr_t dest, std::uint64_t match, std::uint64_t data) {
        return fi_tinjectdata(ep_, buf, len, data, dest, match);
    }
    ssize_t recv(void *buf, std::size_t len, std::uint64_t match, std::uint64_t ignore, void *context) {
        return fi_trecv(ep_, buf, len, nullptr, FI_ADDR_UNSPEC, match, ignore, context);
    }
    int cancel(void *context) { return static_cast<int>(fi_cancel(&ep_->fid, context)); }
    ssize_t read(fi_cq_tagged_entry *entries, std::size_t count) { return fi_cq_read(cq_, entries, count); }
    // Reads one error entry; returns its text in `text`.
    bool read_error(fi_cq_err_entry &entry, std::string &text);

    const std::string &provider() const { return provider_; }
    std::size_t inject_size() const { return inject_size_; }

private:
    void close();

    std::string provider_;
    std::size_t inject_size_ = 0;
    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    fid_av *av_ = nullptr;
    fid_cq *cq_ = nullptr;
    fid_ep *ep_ = nullptr;
};

}  // namespace ftmpi::transport::ofi
