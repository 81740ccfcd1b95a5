#include "transport/ofi/endpoint.hpp"

#include "runtime/shm_names.hpp"
#include "transport/ofi/providers.hpp"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include <cstring>
#include <stdexcept>

namespace ftmpi::transport::ofi {
namespace {

void check(int rc, const char *call, const std::string &provider) {
    if (rc != 0)
        throw std::runtime_error(std::string(call) + " failed for provider '" + provider + "': " + fi_strerror(-rc));
}

void close_fid(fid_t f) {
    if (f != nullptr) fi_close(f);
}

}  // namespace

Endpoint::Endpoint(const std::string &fi_name, std::size_t av_size, Use use) {
    const bool control = use == Use::control;
    fi_info *hints = fi_allocinfo();
    if (hints == nullptr) throw std::runtime_error("fi_allocinfo failed");
    hints->caps = control ? FI_MSG : FI_TAGGED | FI_MSG;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->threading = control ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
    hints->domain_attr->av_type = FI_AV_TABLE;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    if (!control) hints->domain_attr->cq_data_size = 8;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->fabric_attr->prov_name = strdup(fi_name.c_str());
    if (lookup_provider(fi_name).named_region) {
        const std::string region = runtime::new_shm_region_name();
        hints->addr_format = FI_ADDR_STR;
        hints->src_addr = strdup(region.c_str());
        hints->src_addrlen = region.size() + 1;
    }
    int rc = fi_getinfo(FI_VERSION(1, 14), nullptr, nullptr, 0, hints, &info_);
    fi_freeinfo(hints);
    if (rc != 0 || info_ == nullptr)
        throw std::runtime_error(std::string("fi_getinfo found no RDM ") + (control ? "control" : "tagged") +
                                 " endpoint for provider '" + fi_name + "': " + fi_strerror(-rc));
    provider_ = fi_name;
    inject_size_ = info_->tx_attr->inject_size;
    if (!control && info_->tx_attr->iov_limit < 3) {
        const std::size_t limit = info_->tx_attr->iov_limit;
        fi_freeinfo(info_);
        info_ = nullptr;
        throw std::runtime_error("provider '" + fi_name + "' sends from " + std::to_string(limit) +
                                 " pieces of memory at most; ftmpi needs 3");
    }
    try {
        check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric", provider_);
        check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain", provider_);
        fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        av_attr.count = av_size;
        check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open", provider_);
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        cq_attr.wait_obj = control ? FI_WAIT_UNSPEC : FI_WAIT_NONE;
        cq_attr.size = 0;
        check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open", provider_);
        check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint", provider_);
        check(fi_ep_bind(ep_, &av_->fid, 0), "fi_ep_bind(av)", provider_);
        check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)", provider_);
        check(fi_enable(ep_), "fi_enable", provider_);
    } catch (...) {
        close();
        throw;
    }
}

Endpoint::~Endpoint() { close(); }

void Endpoint::close() {
    close_fid(ep_ ? &ep_->fid : nullptr);
    close_fid(cq_ ? &cq_->fid : nullptr);
    close_fid(av_ ? &av_->fid : nullptr);
    close_fid(domain_ ? &domain_->fid : nullptr);
    close_fid(fabric_ ? &fabric_->fid : nullptr);
    ep_ = nullptr;
    cq_ = nullptr;
    av_ = nullptr;
    domain_ = nullptr;
    fabric_ = nullptr;
    if (info_ != nullptr) fi_freeinfo(info_);
    info_ = nullptr;
}

std::vector<char> Endpoint::address() const {
    std::vector<char> name(256);
    size_t len = name.size();
    int rc = fi_getname(&ep_->fid, name.data(), &len);
    if (rc == -FI_ETOOSMALL) {
        name.resize(len);
        rc = fi_getname(&ep_->fid, name.data(), &len);
    }
    check(rc, "fi_getname", provider_);
    name.resize(len);
    return name;
}

fi_addr_t Endpoint::insert(const std::vector<char> &address) {
    fi_addr_t addr = FI_ADDR_NOTAVAIL;
    if (address.empty()) return addr;
    int n = fi_av_insert(av_, address.data(), 1, &addr, 0, nullptr);
    return n == 1 ? addr : FI_ADDR_NOTAVAIL;
}

ssize_t Endpoint::inject_msg(const Header &header, const void *buf, std::size_t len, fi_addr_t dest,
                             std::uint64_t data) {
    alignas(8) char staged[k_inject_stage];
    if (k_wire_header + len > sizeof staged || k_wire_header + len > inject_size_) return -FI_EMSGSIZE;
    std::memcpy(staged, &header, sizeof header);
    std::memcpy(staged + sizeof header, &token_, sizeof token_);
    if (len > 0) std::memcpy(staged + k_wire_header, buf, len);
    return fi_injectdata(ep_, staged, k_wire_header + len, data, dest);
}

bool Endpoint::read_error(fi_cq_err_entry &entry, std::string &text) {
    entry = fi_cq_err_entry{};
    ssize_t rc = fi_cq_readerr(cq_, &entry, 0);
    if (rc != 1) return false;
    const char *s = fi_cq_strerror(cq_, entry.prov_errno, entry.err_data, nullptr, 0);
    text = fi_strerror(entry.err);
    if (s != nullptr && *s != '\0') text += std::string(" (") + s + ")";
    return true;
}

}  // namespace ftmpi::transport::ofi
