// libFuzzer target: the payloads a daemon of ftmpirun across nodes decodes
// (launcher/job_spec.hpp, launcher/journal.hpp, wire::get_ids), as they
// would be if a frame's tag proved the job's key but its sender were faulty:
// the launch (JobSettings, then the job's NamespaceSpec), a spawned
// namespace, a numbered payload with a list of ids. Nothing may crash, read
// out of bounds or allocate without bound; what decodes must be in range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "launcher/job_spec.hpp"
#include "launcher/journal.hpp"
#include "launcher/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    namespace l = ftmpi::launcher;
    if (size == 0) return 0;
    const std::span<const std::uint8_t> payload(data + 1, size - 1);
    l::wire::Reader r(payload);
    switch (data[0] % 3) {
    case 0: {
        l::JobSettings s;
        l::NamespaceSpec ns;
        if (l::decode(r, s) && l::decode(r, ns, static_cast<int>(s.nodes.size()))) {
            for (std::size_t i = 0; i < ns.node.size(); ++i)
                if (ns.node[i] < 1 || ns.node[i] > static_cast<int>(s.nodes.size()) || ns.app[i] < 0 ||
                    ns.app[i] >= static_cast<int>(ns.apps.size()))
                    std::abort();
        }
        break;
    }
    case 1: {
        l::NamespaceSpec ns;
        if (l::decode(r, ns, 64) && (ns.size() < 1 || ns.apps.empty())) std::abort();
        break;
    }
    default: {
        std::uint64_t seen = 5;
        if (l::Journal::fresh(r, seen)) {
            for (int id : l::wire::get_ids(r))
                if (id < 0) std::abort();
        }
        break;
    }
    }
    return 0;
}
