// Which transports a job uses: the shared-memory fast path within a node and
// libfabric between nodes, or libfabric for every peer.
#include "transport/open.hpp"

#include "runtime/config.hpp"
#include "runtime/process_manager.hpp"
#include "transport/shm/shm_transport.hpp"

namespace ftmpi::transport {

bool shm_fast_path() {
    const auto &cfg = runtime::config();
    return cfg.SHM_FASTPATH != 0 && (cfg.PROVIDER.empty() || cfg.PROVIDER == "shm");
}

std::unique_ptr<Transport> open_transport(runtime::ProcessManager &pm, Sink &sink) {
    const auto &job = pm.job();
    if (!shm_fast_path()) {
        auto t = open_ofi_transport(pm, sink, false);
        pm.exchange();
        t->connect(pm);
        return t;
    }
    auto t = std::make_unique<shm::ShmTransport>(pm, sink);
    if (!job.one_node()) t->set_net(open_ofi_transport(pm, sink, true));
    pm.exchange();
    t->connect(pm);
    return t;
}

}  // namespace ftmpi::transport
