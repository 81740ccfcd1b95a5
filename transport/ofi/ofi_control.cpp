// ControlChannel over one libfabric endpoint with a waitable CQ. Messages are
// injected (no send completion to track), receives use a ring of posted buffers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runtime/auth.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "transport/control.hpp"
#include "transport/liveness.hpp"
#include "transport/ofi/endpoint.hpp"
#include "transport/ofi/providers.hpp"
#include "transport/refused.hpp"

namespace ftmpi::transport::ofi {
namespace {

constexpr std::size_t k_rx_buffers = 32;
constexpr std::size_t k_max_message = 128;
const char *const k_key = "ftmpi.ctl";
// Each process's pid, which the ranks on its node read: /proc then tells a
// peer that is merely waiting for a CPU from a silent one (ProcEvidence in
// ft/detector.cpp), on this node also when the job spans several.
const char *const k_pid_key = "ftmpi.ctl.pid";
// Every datagram ends with its proof (runtime/auth.hpp): whoever can reach
// the endpoint but lacks the universe's secret cannot make one the detector takes.
const char *const k_tag_label = "ftmpi control datagram";
constexpr std::size_t k_tag = runtime::auth::k_tag_size;

class OfiControl final : public ChannelWithLinks {
public:
    // The first provider of control_providers() that opens (FI_PROVIDER may
    // leave out the default); the error of the first one when none does.
    explicit OfiControl(runtime::ProcessManager &pm) {
        const auto &job = pm.job();
        const bool one_node = job.one_node();
        std::string first_error;
        for (const ProviderInfo &p : control_providers(one_node)) {
            try {
                if (p.uses_tcp_iface) select_tcp_iface(one_node);
                ep_ = std::make_unique<Endpoint>(p.fi_name, static_cast<std::size_t>(job.size), Endpoint::Use::control);
                break;
            } catch (const std::exception &e) {
                if (first_error.empty()) first_error = e.what();
                FTMPI_INFO("control endpoint: %s", e.what());
            }
        }
        if (!ep_)
            throw std::runtime_error(first_error.empty() ? "FI_PROVIDER allows no provider for the control endpoint"
                                                         : first_error);
        FTMPI_INFO("control endpoint open: provider %s", ep_->provider().c_str());
        naps_ = lookup_provider(ep_->provider()).sread_spins;
        const std::size_t room = std::min(k_max_message, ep_->inject_size());
        if (room < 32 + k_tag)
            throw std::runtime_error("control provider '" + ep_->provider() + "' injects too few bytes");
        max_ = room - k_tag;
        auto addr = ep_->address();
        pm.put(k_key, addr.data(), addr.size());
        const std::uint64_t pid = static_cast<std::uint64_t>(::getpid());
        pm.put(k_pid_key, &pid, sizeof pid);
        open_links(pm, ipv4_of(addr));
    }
    ~OfiControl() override { stop_links(); }

    // The IPv4 address in a provider address that is a sockaddr_in (net,
    // tcp): the interface libfabric chose; empty otherwise.
    static std::string ipv4_of(const std::vector<char> &addr) {
        sockaddr_in in{};
        if (addr.size() < sizeof in) return {};
        std::memcpy(&in, addr.data(), sizeof in);
        char text[INET_ADDRSTRLEN] = {};
        if (in.sin_family != AF_INET || in.sin_addr.s_addr == 0 ||
            ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text) == nullptr)
            return {};
        return text;
    }

    void connect(runtime::ProcessManager &pm) override {
        secret_ = pm.job().secret;
        const int n = pm.job().size;
        addrs_.assign(static_cast<std::size_t>(n), FI_ADDR_NOTAVAIL);
        for (int r = 0; r < n; ++r) {
            addrs_[static_cast<std::size_t>(r)] = ep_->insert(pm.get(r, k_key));
            if (addrs_[static_cast<std::size_t>(r)] == FI_ADDR_NOTAVAIL)
                throw std::runtime_error("cannot insert the control address of rank " + std::to_string(r));
        }
        pids_.assign(static_cast<std::size_t>(n), 0);
        for (int r : pm.job().local_peers) {
            const auto blob = pm.get(r, k_pid_key);
            std::uint64_t pid = 0;
            if (r >= 0 && r < n && blob.size() == sizeof pid) {
                std::memcpy(&pid, blob.data(), sizeof pid);
                pids_[static_cast<std::size_t>(r)] =
                    pid <= static_cast<std::uint64_t>(INT32_MAX) ? static_cast<int>(pid) : 0;
            }
        }
        for (auto &rx : rx_) post(rx);
        start_links(pm, [this] { ep_->signal(); });
    }

    int pid_of(PeerId peer) const override { return peer < pids_.size() ? pids_[peer] : 0; }

    std::size_t max_message() const override { return max_; }

    bool send(PeerId peer, const void *msg, std::size_t len) override {
        if (peer >= addrs_.size() || len > max_) return false;
        std::array<char, k_max_message> sealed;
        std::memcpy(sealed.data(), msg, len);
        const auto t = runtime::auth::tag(secret_, k_tag_label, msg, len);
        std::memcpy(sealed.data() + len, t.data(), t.size());
        ssize_t rc = ep_->inject(sealed.data(), len + k_tag, addrs_[peer]);
        if (rc == -FI_EAGAIN) {
            drain_errors();
            rc = ep_->inject(sealed.data(), len + k_tag, addrs_[peer]);
        }
        if (rc != 0 && rc != -FI_EAGAIN)
            FTMPI_DEBUG("control send to %u: %s", peer, fi_strerror(static_cast<int>(-rc)));
        return rc == 0;
    }

    int wait(int timeout_ms, const std::function<void(const void *, std::size_t)> &on_message) override {
        std::array<fi_cq_tagged_entry, 8> entries;
        ssize_t n = naps_ ? nap_read(entries.data(), entries.size(), timeout_ms)
                          : ep_->sread(entries.data(), entries.size(), std::max(timeout_ms, 0));
        int delivered = 0;
        for (;;) {
            if (n == -FI_EAVAIL) {
                drain_errors();
            } else if (n > 0) {
                for (ssize_t i = 0; i < n; ++i) {
                    auto *rx = static_cast<Rx *>(entries[static_cast<std::size_t>(i)].op_context);
                    if (rx == nullptr || !(entries[static_cast<std::size_t>(i)].flags & FI_RECV)) continue;
                    const std::size_t len = entries[static_cast<std::size_t>(i)].len;
                    if (proven(rx->data.data(), len)) {
                        on_message(rx->data.data(), len - k_tag);
                        ++delivered;
                    } else {
                        refuse("detector", "a %zu-byte datagram without the job's proof", len);
                    }
                    post(*rx);
                }
            } else {
                break;
            }
            n = ep_->read(entries.data(), entries.size());  // take whatever else is ready
        }
        return delivered;
    }

    void wake() override {
        woken_.store(true);
        ep_->signal();
    }

private:
    // For a provider whose sread spins (shm): reads every millisecond until
    // something comes, wake() is called or timeout_ms passes. A polling
    // cadence for the detector's thread, which would otherwise keep a core
    // busy (and starve the application on a full node).
    ssize_t nap_read(fi_cq_tagged_entry *entries, std::size_t count, int timeout_ms) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
        for (;;) {
            const ssize_t n = ep_->read(entries, count);
            if (n != -FI_EAGAIN || woken_.exchange(false) || std::chrono::steady_clock::now() >= until) return n;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }

    bool proven(const char *data, std::size_t len) const {
        if (len < k_tag || len > k_max_message) return false;
        const auto t = runtime::auth::tag(secret_, k_tag_label, data, len - k_tag);
        return runtime::auth::equal(t.data(), data + len - k_tag, k_tag);
    }

    struct Rx {
        fi_context2 ctx{};  // first member: the libfabric context
        std::array<char, k_max_message> data{};
    };

    void post(Rx &rx) {
        // A receive can only be refused transiently; try again at the next wait.
        if (ep_->recv_msg(rx.data.data(), rx.data.size(), &rx) != 0) FTMPI_DEBUG("control receive not posted");
    }

    // Errors are for sends to dead peers (lost anyway) or canceled receives.
    void drain_errors() {
        fi_cq_err_entry e;
        std::string text;
        while (ep_->read_error(e, text)) {
            FTMPI_DEBUG("control completion error: %s", text.c_str());
            if ((e.flags & FI_RECV) && e.op_context != nullptr) post(*static_cast<Rx *>(e.op_context));
        }
    }

    std::unique_ptr<Endpoint> ep_;
    std::string secret_;
    std::vector<fi_addr_t> addrs_;
    std::vector<int> pids_;  // by rank: the pid of a rank on this node, else 0
    std::array<Rx, k_rx_buffers> rx_;
    std::size_t max_ = 0;
    bool naps_ = false;  // the provider's sread spins: nap_read instead
    std::atomic<bool> woken_{false};
};

}  // namespace
}  // namespace ftmpi::transport::ofi

namespace ftmpi::transport {
std::unique_ptr<ControlChannel> open_ofi_control(runtime::ProcessManager &pm) {
    return std::make_unique<ofi::OfiControl>(pm);
}
}  // namespace ftmpi::transport
