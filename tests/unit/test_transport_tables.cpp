#include <rdma/fi_errno.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "runtime/config.hpp"
#include "transport/ofi/errors.hpp"
#include "transport/ofi/providers.hpp"

using namespace ftmpi::transport;
using namespace ftmpi::transport::ofi;

TEST_CASE("libfabric errors map to transport errors", "[transport][errors]") {
    struct Row {
        int fi;
        Err want;
    };
    const Row rows[] = {
        {0, Err::ok},
        {FI_EIO, Err::peer_failed},
        {FI_ECONNRESET, Err::peer_failed},
        {FI_ECONNREFUSED, Err::peer_failed},
        {FI_ECONNABORTED, Err::peer_failed},
        {FI_ENOTCONN, Err::peer_failed},
        {FI_ETIMEDOUT, Err::peer_failed},
        {FI_EHOSTUNREACH, Err::peer_failed},
        {FI_ETRUNC, Err::truncated},
        {FI_ECANCELED, Err::canceled},
        {FI_ENOMEM, Err::other},
        {FI_EINVAL, Err::other},
    };
    for (const auto &r : rows) {
        INFO("fi errno " << r.fi);
        CHECK(map_fi_error(r.fi) == r.want);
    }
}

TEST_CASE("provider table resolves aliases and passes unknown names through", "[transport][providers]") {
    CHECK(lookup_provider("tcp").fi_name == "tcp;ofi_rxm");
    CHECK(lookup_provider("tcp;ofi_rxm").fi_name == "tcp;ofi_rxm");
    CHECK(lookup_provider("shm").network == false);
    CHECK(lookup_provider("net").network == true);
    CHECK(lookup_provider("net").uses_tcp_iface);
    CHECK_FALSE(lookup_provider("shm").uses_tcp_iface);
    const ProviderInfo p = lookup_provider("psm3");
    CHECK(p.fi_name == "psm3");
    CHECK(p.network);
}

// FI_OFI_RXM_MSG_RX_SIZE: 1024 where ofi_rxm over tcp may be opened (its
// shared receive context), left alone over verbs (a queue per connection),
// and never over the user's own value.
TEST_CASE("libfabric defaults follow the providers a process may open", "[transport][providers]") {
    using ftmpi::runtime::load_config;
    const char *const knob = "FI_OFI_RXM_MSG_RX_SIZE";
    auto rx_size_for = [&](const char *provider, const char *net) -> std::string {
        ::unsetenv(knob);
        if (provider != nullptr) ::setenv("FTMPI_PROVIDER", provider, 1);
        else ::unsetenv("FTMPI_PROVIDER");
        ::setenv("FTMPI_NET_PROVIDER", net, 1);
        load_config();
        set_libfabric_defaults();
        const char *v = std::getenv(knob);
        return v != nullptr ? v : "";
    };
    CHECK(rx_size_for("tcp", "net") == "1024");
    CHECK(rx_size_for(nullptr, "tcp") == "1024");
    CHECK(rx_size_for(nullptr, "verbs").empty());
    CHECK(rx_size_for(nullptr, "net").empty());
    ::setenv(knob, "256", 1);
    ::setenv("FTMPI_PROVIDER", "tcp", 1);
    load_config();
    set_libfabric_defaults();
    CHECK(std::string(std::getenv(knob)) == "256");
    ::unsetenv(knob);
    ::unsetenv("FTMPI_PROVIDER");
    ::unsetenv("FTMPI_NET_PROVIDER");
    load_config();
}
