// The name service of ftmpirun's PMIx server (MPI_Publish_name,
// MPI_Lookup_name, MPI_Unpublish_name): one store of the job's published
// names. On one node the PMIx server's upcalls serve it on the PMIx
// progress thread, each answered at once; across nodes (relay) they go to
// the daemon's loop as kNames upcalls, the daemon asks the head, which
// keeps the job's one store, and answers when the head does.
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ftmpi::launcher {
class UpcallQueue;
}

namespace ftmpi::launcher::name_service {

using Names = std::vector<std::pair<std::string, std::string>>;  // PMIx key, published string
enum Op : std::uint8_t { kPublish = 1, kLookup, kUnpublish };

// Thread-safe. publish: all or nothing (PMIX_EXISTS if a name is taken);
// lookup: every key found, else PMIX_ERR_NOT_FOUND; unpublish: every key
// there, else PMIX_ERR_NOT_FOUND (the others are removed).
class Store {
public:
    pmix_status_t publish(const Names &names);
    pmix_status_t lookup(const std::vector<std::string> &keys, Names &found) const;
    pmix_status_t unpublish(const std::vector<std::string> &keys);
    // One request of `op` (for lookup and unpublish the values are empty);
    // what lookup found goes to `found`.
    pmix_status_t serve(Op op, const Names &names, Names &found);

private:
    mutable std::mutex mu_;
    std::map<std::string, std::string> names_;
};

// Sets the module's publish, lookup and unpublish upcalls.
void install(pmix_server_module_t &m);
// Across nodes: requests go to `loop` (kNames upcalls) instead of the store here.
void relay_to(UpcallQueue *loop);
// The namespace named as every name's publisher (lookups do not keep it).
void set_nspace(const std::string &ns);
// Completes a relayed lookup (PMIx copies the data).
void answer_lookup(pmix_lookup_cbfunc_t cb, void *cbdata, pmix_status_t st, const Names &found);

}  // namespace ftmpi::launcher::name_service
