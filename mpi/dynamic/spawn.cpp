// Dynamic processes (MPI 3.1 chapter 10): spawn, ports, accept/connect,
// join, disconnect and the name service. The connections themselves are
// mpi/dynamic/connect.hpp's; docs/dynamic.md has the design.
//
// A port name names this process and a random key ("ftmpi-port:<id>:<job's
// first id>:<key>"), open until MPI_Close_port. The name service maps
// service names to port names for every process of the job: the process
// manager's store (under ftmpirun, the launcher's PMIx publish/lookup; a
// singleton's own). Its names live until the job ends; names are not scoped
// by `info`.
//
// Spawning under a process manager that cannot start processes (Slurm's,
// which ftmpi leaves after the wire-up; none, for a singleton) is
// MPI_ERR_SPAWN, saying why.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/dynamic/connect.hpp"
#include "mpi/info.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/state.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::mpi {
namespace {

std::set<std::string> g_open_ports;  // this process's ports, until closed

int check_info_or_null(const char *call, MPI_Info info) {
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
    FTMPI_TRY(check_info_or_null(call, info));
    return check_name(call, port_name, "port_name");
}

using Names = runtime::ProcessManager::Names;

// The reserved info keys of one program (MPI 3.1 §10.3.4): wdir, path
// (directories searched for the command), env (NAME=value lines, Open MPI's
// key), host (the node, or comma-separated nodes, to start on: any of the
// job's when ftmpirun runs it across nodes, which places the processes;
// this node on one node). Returns why the info is refused, or "".
std::string apply_spawn_info(MPI_Info info, runtime::SpawnApp &app) {
    if (info == MPI_INFO_NULL) return "";
    for (const auto &[key, value] : info->entries) {
        if (key == "wdir") {
            app.wdir = value;
        } else if (key == "path") {
            if (app.command.find('/') != std::string::npos) continue;
            std::size_t at = 0;
            while (at <= value.size()) {
                const std::size_t colon = std::min(value.find(':', at), value.size());
                const std::string cand = value.substr(at, colon - at) + "/" + app.command;
                if (colon > at && ::access(cand.c_str(), X_OK) == 0) {
                    app.command = cand;
                    break;
                }
                at = colon + 1;
            }
        } else if (key == "env") {
            std::size_t at = 0;
            while (at < value.size()) {
                const std::size_t nl = std::min(value.find('\n', at), value.size());
                const std::string line = value.substr(at, nl - at);
                if (line.find('=') != std::string::npos && line.front() != '=') app.env.push_back(line);
                else if (!line.empty()) return "info env: \"" + line + "\" is not NAME=value";
                at = nl + 1;
            }
        } else if (key == "host") {
            if (g.pm->job().spans_nodes) {
                app.host = value;
                continue;
            }
            char host[256] = {};
            ::gethostname(host, sizeof host - 1);
            if (value != "localhost" && value != host)
                return "info host \"" + value + "\": this job runs on one node (" + host + ")";
        }
    }
    return "";
}

// MPI_Comm_spawn and MPI_Comm_spawn_multiple. The root asks the process
// manager for the processes, with its port in their environment, and tells
// the group; then the group accepts the first child's connection. Uniform:
// the inter-communicator exists at every parent and child, or every parent
// gets an error (and the root has the children killed).
int spawn(const char *call, int count, const char *commands[], char **argvs[], const int maxprocs[],
          const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[]) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, intercomm, "intercomm"));
    *intercomm = MPI_COMM_NULL;
    if (comm->inter) return raise(comm, MPI_ERR_COMM, call, "comm must be an intra-communicator");
    const std::int64_t t0 = runtime::event_start(runtime::EventType::spawn_done);
    // Before anything starts (a member that has not seen the revoke yet
    // fails when the root's word does not come).
    FTMPI_TRY(check_not_revoked(call, comm));
    if (root < 0 || root >= comm->size)
        return raise(comm, MPI_ERR_ROOT, call, "invalid root %d (comm has %d ranks)", root, comm->size);
    if (ft::failures().is_failed(comm->procs[static_cast<std::size_t>(root)]))
        return raise(comm, MPI_ERR_PROC_FAILED, call, "root %d is a failed process", root);
    const bool is_root = comm->rank == root;
    // What the root found: its error class and the spawned job, for everyone.
    struct Outcome {
        int err;
        int total;
        int base;
    } out{MPI_SUCCESS, 0, 0};
    std::string why;
    runtime::SpawnedJob job;
    Port port;
    if (is_root) {
        std::vector<runtime::SpawnApp> apps;
        if (count <= 0) {
            out.err = MPI_ERR_ARG;
            why = "count " + std::to_string(count) + " is not positive";
        }
        for (int i = 0; out.err == MPI_SUCCESS && i < count; ++i) {
            if (commands == nullptr || commands[i] == nullptr || commands[i][0] == '\0') {
                out.err = MPI_ERR_ARG;
                why = "command " + std::to_string(i) + " is NULL or empty";
                break;
            }
            if (maxprocs == nullptr || maxprocs[i] <= 0) {
                out.err = MPI_ERR_ARG;
                why = "maxprocs of command " + std::to_string(i) + " is not positive";
                break;
            }
            const MPI_Info info = infos != nullptr ? infos[i] : MPI_INFO_NULL;
            if (info != MPI_INFO_NULL && (info == nullptr || info->magic != Magic::info)) {
                out.err = MPI_ERR_INFO;
                why = "info of command " + std::to_string(i) + " is invalid";
                break;
            }
            runtime::SpawnApp app;
            app.command = commands[i];
            app.maxprocs = maxprocs[i];
            if (argvs != MPI_ARGVS_NULL && argvs[i] != MPI_ARGV_NULL)
                for (char **a = argvs[i]; *a != nullptr; ++a) app.argv.emplace_back(*a);
            if (std::string e = apply_spawn_info(info, app); !e.empty()) {
                out.err = MPI_ERR_SPAWN;
                why = e;
                break;
            }
            out.total += app.maxprocs;
            apps.push_back(std::move(app));
        }
        if (out.err == MPI_SUCCESS) {
            port = new_port();
            for (auto &app : apps) app.env.push_back("FTMPI_PARENT_PORT=" + port_name(port));
            if (!g.pm->spawn(apps, job, why)) out.err = MPI_ERR_SPAWN;
            out.base = job.id_base;
        }
    }
    // The root's sends fail only at members that failed: what it found holds
    // for the others (it decides); a member that did not hear from it fails.
    if (const int e = team_bcast(comm, root, &out, sizeof out);
        e != MPI_SUCCESS && !is_root && out.err == MPI_SUCCESS) {
        out.err = e;
        why = "the root failed during the spawn";
    }
    if (out.err == MPI_SUCCESS) {
        out.err = accept_on(comm, root, port, out.base, intercomm, why);
        if (out.err != MPI_SUCCESS && is_root) g.pm->kill_job(job);
        if (out.err == MPI_ERR_PROC_FAILED) out.err = MPI_ERR_SPAWN;  // the children are gone (killed)
    } else if (!is_root && why.empty()) {
        why = "the root could not start the processes";
    }
    if (errcodes != MPI_ERRCODES_IGNORE)
        for (int i = 0; i < out.total; ++i) errcodes[i] = out.err;
    if (out.err != MPI_SUCCESS) return raise(comm, out.err, call, "%s", why.c_str());
    if (t0 != 0) runtime::emit(runtime::EventType::spawn_done, out.total, runtime::event_since(t0));
    return MPI_SUCCESS;
}

int accept_or_connect(const char *call, bool accept, const char *name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm) {
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_comm(call, comm));
    FTMPI_CHECK(check_nonnull(call, comm, newcomm, "newcomm"));
    *newcomm = MPI_COMM_NULL;
    if (comm->inter) return raise(comm, MPI_ERR_COMM, call, "comm must be an intra-communicator");
    FTMPI_TRY(check_not_revoked(call, comm));
    if (root < 0 || root >= comm->size)
        return raise(comm, MPI_ERR_ROOT, call, "invalid root %d (comm has %d ranks)", root, comm->size);
    Port port;
    int err = MPI_SUCCESS;
    std::string why;
    if (comm->rank == root) {  // only the root's port_name and info count
        if (check_info_or_null(call, info) != MPI_SUCCESS) return MPI_ERR_INFO;
        if (name == nullptr || !parse_port(name, port)) {
            err = MPI_ERR_PORT;
            why = std::string("\"") + (name ? name : "(null)") + "\" is not a port name (argument port_name)";
        } else if (accept && (port.id != g.pm->job().id() || g_open_ports.count(name) == 0)) {
            err = MPI_ERR_PORT;
            why = std::string("\"") + name + "\" is not a port this process opened";
        }
    }
    // A bad port at the root is every member's error: the root says so first.
    int bad = err;
    if (const int e = team_bcast(comm, root, &bad, sizeof bad); e != MPI_SUCCESS && comm->rank != root) bad = e;
    if (bad != MPI_SUCCESS)
        return raise(comm, bad, call, "%s",
                     why.empty() ? "the root's port is invalid or the root failed" : why.c_str());
    err = accept ? accept_on(comm, root, port, -1, newcomm, why) : connect_to(comm, root, port, newcomm, why);
    if (err != MPI_SUCCESS) return raise(comm, err, call, "%s", why.c_str());
    return MPI_SUCCESS;
}

// Moves all `n` bytes through `io` (read or write), resuming after EINTR
// and short transfers; false at EOF or error.
template <typename Buf, typename Io>
bool all_of_fd(int fd, Buf *p, std::size_t n, Io io) {
    while (n > 0) {
        const ssize_t k = io(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool write_fully(int fd, const char *p, std::size_t n) { return all_of_fd(fd, p, n, ::write); }
bool read_fully(int fd, char *p, std::size_t n) { return all_of_fd(fd, p, n, ::read); }

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Open_port(MPI_Info info, char *port_name) {
    const char *call = "MPI_Open_port";
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_info_or_null(call, info));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, port_name, "port_name"));
    const std::string name = ftmpi::mpi::port_name(new_port());
    g_open_ports.insert(name);
    std::strcpy(port_name, name.c_str());
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
    case Names::ok: return MPI_SUCCESS;
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
    case Names::ok: return MPI_SUCCESS;
    case Names::not_found:
        return raise(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "service \"%.64s\" is not published", service_name);
    default:
        return raise(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "cannot unpublish \"%.64s\": %s", service_name, why.c_str());
    }
}

int MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name) {
    const char *call = "MPI_Lookup_name";
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_name(call, service_name, "service_name"));
    FTMPI_TRY(check_info_or_null(call, info));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, port_name, "port_name"));
    std::string why, port;
    switch (g.pm->lookup(service_name, port, why)) {
    case Names::ok: std::snprintf(port_name, MPI_MAX_PORT_NAME, "%s", port.c_str()); return MPI_SUCCESS;
    case Names::not_found:
        return raise(MPI_COMM_NULL, MPI_ERR_NAME, call, "service \"%.64s\" is not published", service_name);
    default: return raise(MPI_COMM_NULL, MPI_ERR_NAME, call, "cannot look \"%.64s\" up: %s", service_name, why.c_str());
    }
}

int MPI_Comm_get_parent(MPI_Comm *parent) {
    const char *call = "MPI_Comm_get_parent";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, parent, "parent"));
    *parent = g_parent;
    return MPI_SUCCESS;
}

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                   MPI_Comm *intercomm, int array_of_errcodes[]) {
    const char *cmds[] = {command};
    char **argvs[] = {argv};
    const int counts[] = {maxprocs};
    const MPI_Info infos[] = {info};
    return spawn("MPI_Comm_spawn", 1, cmds, argv == MPI_ARGV_NULL ? MPI_ARGVS_NULL : argvs, counts, infos, root, comm,
                 intercomm, array_of_errcodes);
}

int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[],
                            const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm,
                            int array_of_errcodes[]) {
    return spawn("MPI_Comm_spawn_multiple", count, const_cast<const char **>(array_of_commands), array_of_argv,
                 array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes);
}

int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm) {
    return accept_or_connect("MPI_Comm_accept", true, port_name, info, root, comm, newcomm);
}

int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm) {
    return accept_or_connect("MPI_Comm_connect", false, port_name, info, root, comm, newcomm);
}

// The two processes swap a port over the socket; the one with the lower
// process id accepts on its own, the other connects to it.
int MPI_Comm_join(int fd, MPI_Comm *intercomm) {
    const char *call = "MPI_Comm_join";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_SELF, intercomm, "intercomm"));
    *intercomm = MPI_COMM_NULL;
    const Port mine = new_port();
    char out[MPI_MAX_PORT_NAME] = {}, in[MPI_MAX_PORT_NAME] = {};
    std::snprintf(out, sizeof out, "%s", port_name(mine).c_str());
    if (!write_fully(fd, out, sizeof out) || !read_fully(fd, in, sizeof in))
        return raise(MPI_COMM_SELF, MPI_ERR_ARG, call, "cannot exchange ports over descriptor %d (argument fd): %s", fd,
                     std::strerror(errno));
    Port theirs;
    in[sizeof in - 1] = '\0';
    if (!parse_port(in, theirs))
        return raise(MPI_COMM_SELF, MPI_ERR_ARG, call,
                     "the process at the other end of descriptor %d (argument fd) is not an ftmpi process of this job",
                     fd);
    if (theirs.id == mine.id)
        return raise(MPI_COMM_SELF, MPI_ERR_ARG, call, "descriptor %d (argument fd) leads back to this process", fd);
    std::string why;
    const int err = mine.id < theirs.id ? accept_on(MPI_COMM_SELF, 0, mine, theirs.id, intercomm, why)
                                        : connect_to(MPI_COMM_SELF, 0, theirs, intercomm, why);
    if (err != MPI_SUCCESS) return raise(MPI_COMM_SELF, err, call, "%s", why.c_str());
    return MPI_SUCCESS;
}

// Collective; completes once every member got here or failed (an agreement
// over both groups for an inter-communicator), whatever failed before.
int MPI_Comm_disconnect(MPI_Comm *comm) {
    const char *call = "MPI_Comm_disconnect";
    FTMPI_TRY(check_init(call));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, comm, "comm"));
    FTMPI_CHECK(check_comm(call, *comm));
    MPI_Comm c = *comm;
    if (c->predefined)
        return raise(c, MPI_ERR_COMM, call, "%s is predefined and cannot be disconnected", comm_label(c));
    // Pending operations first (MPI 3.1 §10.5.4): they complete or fail.
    // Not every request that refers to c: a completed one not yet waited for,
    // or an inactive persistent one, would hold this call forever.
    while (c->pending > 0) progress_wait();
    int flag = 1;
    agree_internal(c->inter ? c->ft : c, &flag, nullptr, true);
    note_disconnect(c);
    return MPI_Comm_free(comm);
}

}  // extern "C"
