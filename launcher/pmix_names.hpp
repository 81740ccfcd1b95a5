// The name service of ftmpirun's PMIx server (MPI_Publish_name,
// MPI_Lookup_name, MPI_Unpublish_name): a store of the job's published
// names, served on the PMIx progress thread, each upcall answered at once.
// Across nodes each daemon keeps its own: names are seen by the processes
// of the node that published them.
#pragma once

#include <pmix_server.h>

#include <string>

namespace ftmpi::launcher::name_service {

// Sets the module's publish, lookup and unpublish upcalls.
void install(pmix_server_module_t &m);
// The namespace named as every name's publisher (lookups do not keep it).
void set_nspace(const std::string &ns);

}  // namespace ftmpi::launcher::name_service
