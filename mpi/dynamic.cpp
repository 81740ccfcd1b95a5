// Dynamic processes (MPI 3.1 chapter 10): ports and the name service.
//
// A port name is this process's own token ("ftmpi-port:<nspace>:<rank>:<n>"),
// open until MPI_Close_port. The name service maps service names to port
// names for every process of the job: the process manager's store (under
// ftmpirun, the launcher's PMIx publish/lookup; a singleton's own). Its
// names live until the job ends; names are not scoped by `info`.
//
// Not implemented yet (issue 15), each returning MPI_ERR_UNSUPPORTED_OPERATION
// with its name: spawn, spawn_multiple, accept, connect, join and disconnect.
// Spawning under a process manager that cannot start processes (Slurm's,
// which ftmpi leaves after the wire-up; none, for a singleton) is
// MPI_ERR_SPAWN, saying why.
// No ftmpi process is ever spawned, so MPI_Comm_get_parent returns
// MPI_COMM_NULL everywhere.
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "mpi/checks.hpp"
#include "mpi/info.hpp"

namespace ftmpi::mpi {
namespace {

std::set<std::string> g_open_ports;  // this process's ports, until closed
unsigned long g_next_port = 0;

int check_info(const char *call, MPI_Info info) {
    if (info == MPI_INFO_NULL || (info != nullptr && info->magic == Magic::info)) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_INFO, call, "invalid info (argument info)");
}

int check_name(const char *call, const char *s, const char *arg) {
    if (s == nullptr) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "argument %s is NULL", arg);
    if (s[0] == '\0') return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "argument %s is empty", arg);
    if (std::strlen(s) >= MPI_MAX_PORT_NAME)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "argument %s is longer than MPI_MAX_PORT_NAME - 1", arg);
    return MPI_SUCCESS;
}

// The arguments of MPI_Publish_name and MPI_Unpublish_name.
int check_service_args(const char *call, const char *service_name, MPI_Info info, const char *port_name) {
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_name(call, service_name, "service_name"));
    FTMPI_TRY(check_info(call, info));
    return check_name(call, port_name, "port_name");
}

using Names = runtime::ProcessManager::Names;

int not_yet(const char *call, MPI_Comm comm = MPI_COMM_NULL) {
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, call,
                 "%s is not implemented by ftmpi yet (dynamic processes)", call);
}

// Spawning: MPI_ERR_SPAWN where the process manager cannot start processes,
// else not implemented yet. Every member of `comm` gets the same answer.
int spawn_error(const char *call, MPI_Comm comm, MPI_Comm *intercomm, int *errcodes, int nprocs) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    if (intercomm != nullptr) *intercomm = MPI_COMM_NULL;
    const std::string why = g.pm->why_no_spawn();
    const int code = why.empty() ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_SPAWN;
    if (errcodes != MPI_ERRCODES_IGNORE)
        for (int i = 0; i < nprocs; ++i) errcodes[i] = code;
    if (why.empty()) return not_yet(call, comm);
    return raise(comm, MPI_ERR_SPAWN, call, "cannot spawn: %s", why.c_str());
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Open_port(MPI_Info info, char *port_name) {
    const char *call = "MPI_Open_port";
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_info(call, info));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, port_name, "port_name"));
    const auto &job = g.pm->job();
    char name[MPI_MAX_PORT_NAME];
    std::snprintf(name, sizeof name, "ftmpi-port:%s:%d:%lu", job.nspace.c_str(), job.rank, g_next_port++);
    g_open_ports.insert(name);
    std::strcpy(port_name, name);
    return MPI_SUCCESS;
}

int MPI_Close_port(const char *port_name) {
    const char *call = "MPI_Close_port";
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_name(call, port_name, "port_name"));
    if (g_open_ports.erase(port_name) == 0)
        return raise(MPI_COMM_NULL, MPI_ERR_PORT, call, "\"%.64s\" is not a port this process opened and did not close",
                     port_name);
    return MPI_SUCCESS;
}

int MPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name) {
    const char *call = "MPI_Publish_name";
    FTMPI_TRY(check_service_args(call, service_name, info, port_name));
    std::string why;
    switch (g.pm->publish(service_name, port_name, why)) {
    case Names::ok:
        return MPI_SUCCESS;
    case Names::exists:
        return raise(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "service \"%.64s\" is already published", service_name);
    default:
        return raise(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "cannot publish \"%.64s\": %s", service_name, why.c_str());
    }
}

int MPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name) {
    const char *call = "MPI_Unpublish_name";
    FTMPI_TRY(check_service_args(call, service_name, info, port_name));
    std::string why, published;
    Names n = g.pm->lookup(service_name, published, why);
    if (n == Names::ok && published != port_name)
        return raise(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "service \"%.64s\" is published with another port",
                     service_name);
    if (n == Names::ok) n = g.pm->unpublish(service_name, why);
    switch (n) {
    case Names::ok:
        return MPI_SUCCESS;
    case Names::not_found:
        return raise(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "service \"%.64s\" is not published", service_name);
    default:
        return raise(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "cannot unpublish \"%.64s\": %s", service_name,
                     why.c_str());
    }
}

int MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name) {
    const char *call = "MPI_Lookup_name";
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_name(call, service_name, "service_name"));
    FTMPI_TRY(check_info(call, info));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, port_name, "port_name"));
    std::string why, port;
    switch (g.pm->lookup(service_name, port, why)) {
    case Names::ok:
        std::snprintf(port_name, MPI_MAX_PORT_NAME, "%s", port.c_str());
        return MPI_SUCCESS;
    case Names::not_found:
        return raise(MPI_COMM_NULL, MPI_ERR_NAME, call, "service \"%.64s\" is not published", service_name);
    default:
        return raise(MPI_COMM_NULL, MPI_ERR_NAME, call, "cannot look \"%.64s\" up: %s", service_name, why.c_str());
    }
}

int MPI_Comm_get_parent(MPI_Comm *parent) {
    const char *call = "MPI_Comm_get_parent";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, parent, "parent"));
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_spawn(const char *, char *[], int maxprocs, MPI_Info, int, MPI_Comm comm, MPI_Comm *intercomm,
                   int array_of_errcodes[]) {
    return spawn_error("MPI_Comm_spawn", comm, intercomm, array_of_errcodes, maxprocs);
}

int MPI_Comm_spawn_multiple(int count, char *[], char **[], const int array_of_maxprocs[], const MPI_Info[], int,
                            MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]) {
    int n = 0;
    for (int i = 0; array_of_maxprocs != nullptr && i < count; ++i)
        n += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
    return spawn_error("MPI_Comm_spawn_multiple", comm, intercomm, array_of_errcodes, n);
}

int MPI_Comm_accept(const char *, MPI_Info, int, MPI_Comm, MPI_Comm *newcomm) {
    FTMPI_TRY(check_init("MPI_Comm_accept"));
    if (newcomm != nullptr) *newcomm = MPI_COMM_NULL;
    return not_yet("MPI_Comm_accept");
}

int MPI_Comm_connect(const char *, MPI_Info, int, MPI_Comm, MPI_Comm *newcomm) {
    FTMPI_TRY(check_init("MPI_Comm_connect"));
    if (newcomm != nullptr) *newcomm = MPI_COMM_NULL;
    return not_yet("MPI_Comm_connect");
}

int MPI_Comm_join(int, MPI_Comm *intercomm) {
    FTMPI_TRY(check_init("MPI_Comm_join"));
    if (intercomm != nullptr) *intercomm = MPI_COMM_NULL;
    return not_yet("MPI_Comm_join");
}

int MPI_Comm_disconnect(MPI_Comm *) {
    FTMPI_TRY(check_init("MPI_Comm_disconnect"));
    return not_yet("MPI_Comm_disconnect");
}

}  // extern "C"
