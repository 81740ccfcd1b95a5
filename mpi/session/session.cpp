// Sessions (MPI 4.0 §11.3): MPI_Session_init brings the runtime up (as
// MPI_Init does) when nothing else has; the last of the world model and the
// sessions to end takes it down (mpi/init.cpp). Process sets: mpi://WORLD
// (the job's processes as they started, failed ones included: a group, like
// MPI_COMM_WORLD's, does not shrink), mpi://SELF, and ftmpi://node (the
// job's processes on this node). Communicators come from groups with
// MPI_Comm_create_from_group, MPI_Comm_create_group's protocol over
// MPI_COMM_WORLD's collective context named by the string tag, so only the
// group's members take part and creation is uniform as ever.
#include <strings.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "mpi/checks.hpp"
#include "mpi/comm/comm_internal.hpp"
#include "mpi/comm/group.hpp"
#include "mpi/info.hpp"
#include "mpi/p2p/bsend.hpp"
#include "mpi/p2p/internal_tag.hpp"
#include "mpi/session/session.hpp"

struct ftmpi_session_s {
    ftmpi::mpi::Magic magic = ftmpi::mpi::Magic::session;
    MPI_Errhandler errhandler = nullptr;
    ftmpi::mpi::Hints info;
};

namespace ftmpi::mpi {

int session_runtime_up(const char *call, int required);  // mpi/init.cpp
void session_runtime_down();

int check_session(const char *call, MPI_Session *s) {
    if (*s != MPI_SESSION_NULL && (*s)->magic == Magic::session) return MPI_SUCCESS;
    // No session to take the error: the handler of errors on no object.
    return raise(MPI_COMM_NULL, MPI_ERR_SESSION, call, "invalid session (argument session is %s)",
                 *s == MPI_SESSION_NULL ? "MPI_SESSION_NULL" : "not a session");
}

namespace {
constexpr std::array<const char *, 3> k_psets = {"mpi://WORLD", "mpi://SELF", "ftmpi://node"};
}  // namespace

bool pset_procs(const char *name, std::vector<int> &out) {
    MPI_Comm world = MPI_COMM_WORLD;
    if (strcasecmp(name, k_psets[0]) == 0) {
        out = world->procs;
    } else if (strcasecmp(name, k_psets[1]) == 0) {
        out = {world->procs[static_cast<std::size_t>(world->rank)]};
    } else if (strcasecmp(name, k_psets[2]) == 0) {
        out.clear();
        for (int r : g.pm->job().local_peers) out.push_back(world->procs[static_cast<std::size_t>(r)]);
    } else {
        return false;
    }
    return true;
}

namespace {

MPI_Errhandler handler_of(MPI_Session s) { return s != MPI_SESSION_NULL ? s->errhandler : nullptr; }

int check_session_info(const char *call, MPI_Session *s, MPI_Info info) {
    if (info == MPI_INFO_NULL || info->magic == Magic::info) return MPI_SUCCESS;
    return raise_via(handler_of(*s), s, "a session", MPI_ERR_INFO, call, "invalid info (argument info)");
}


// The thread level a session's info asks for (MPI_THREAD_SINGLE by default).
int level_of(const Hints &info) {
    for (const auto &[k, v] : info)
        if (k == "thread_level")
            for (int l = MPI_THREAD_SINGLE; l <= MPI_THREAD_MULTIPLE; ++l)
                if (strcasecmp(v.c_str(), thread_level_name(l)) == 0) return l;
    return MPI_THREAD_SINGLE;
}

// A string tag as MPI_Comm_create_group's tag (its low 20 bits name the
// exchange: tags that agree there between concurrent creations over
// overlapping groups would share one exchange).
int tag_of(const char *stringtag) {
    std::uint32_t h = 2166136261u;  // FNV-1a
    for (const char *p = stringtag; *p != '\0'; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
    return static_cast<int>(h & 0x7fffffff);
}

int check_stringtag(const char *call, MPI_Errhandler h, const char *stringtag) {
    MPI_Comm none = MPI_COMM_NULL;
    if (stringtag == nullptr) return raise_via(h, &none, "a new communicator", MPI_ERR_ARG, call, "stringtag is NULL");
    if (std::strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return raise_via(h, &none, "a new communicator", MPI_ERR_ARG, call,
                         "stringtag is longer than MPI_MAX_STRINGTAG_LEN - 1 (%d) characters",
                         MPI_MAX_STRINGTAG_LEN - 1);
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session) {
    const char *call = "MPI_Session_init";
    MPI_Session none = MPI_SESSION_NULL;
    if (session == nullptr) return raise_via(errhandler, &none, "a session", MPI_ERR_ARG, call, "session is NULL");
    if (errhandler != MPI_ERRHANDLER_NULL && errhandler->magic != Magic::errhandler)
        return raise_via(nullptr, &none, "a session", MPI_ERR_ERRHANDLER, call, "invalid errhandler");
    if (info != MPI_INFO_NULL && info->magic != Magic::info)
        return raise_via(errhandler, &none, "a session", MPI_ERR_INFO, call, "invalid info (argument info)");
    Hints hints = info != MPI_INFO_NULL ? info->entries : Hints{};
    if (const int rc = session_runtime_up(call, level_of(hints)); rc != MPI_SUCCESS) return rc;
    auto *s = new ftmpi_session_s;
    s->errhandler = errhandler != MPI_ERRHANDLER_NULL ? errhandler : MPI_ERRORS_ARE_FATAL;
    errhandler_retain(s->errhandler);
    s->info = std::move(hints);
    s->info.erase(
        std::remove_if(s->info.begin(), s->info.end(), [](const auto &e) { return e.first == "thread_level"; }),
        s->info.end());
    s->info.emplace_back("thread_level", thread_level_name(g.thread_level));
    *session = s;
    return MPI_SUCCESS;
}

int MPI_Session_finalize(MPI_Session *session) {
    const char *call = "MPI_Session_finalize";
    MPI_Session none = MPI_SESSION_NULL;
    if (session == nullptr) return raise_via(nullptr, &none, "a session", MPI_ERR_ARG, call, "session is NULL");
    FTMPI_TRY(check_session(call, session));
    MPI_Session s = *session;
    bsend_forget(s);  // its buffer's messages go first
    s->magic = Magic::dead;
    errhandler_release(s->errhandler);
    delete s;
    *session = MPI_SESSION_NULL;
    session_runtime_down();
    return MPI_SUCCESS;
}

int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names) {
    const char *call = "MPI_Session_get_num_psets";
    FTMPI_TRY(check_session(call, &session));
    FTMPI_TRY(check_session_info(call, &session, info));
    if (npset_names == nullptr)
        return raise_via(session->errhandler, &session, "a session", MPI_ERR_ARG, call, "npset_names is NULL");
    *npset_names = static_cast<int>(k_psets.size());
    return MPI_SUCCESS;
}

// *pset_len in: room in pset_name (0: only the length is wanted); out: the
// name's length with its NUL.
int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name) {
    const char *call = "MPI_Session_get_nth_pset";
    FTMPI_TRY(check_session(call, &session));
    FTMPI_TRY(check_session_info(call, &session, info));
    if (n < 0 || n >= static_cast<int>(k_psets.size()))
        return raise_via(session->errhandler, &session, "a session", MPI_ERR_ARG, call,
                         "invalid n %d (there are %zu process sets)", n, k_psets.size());
    if (pset_len == nullptr || *pset_len < 0 || (*pset_len > 0 && pset_name == nullptr))
        return raise_via(session->errhandler, &session, "a session", MPI_ERR_ARG, call,
                         "pset_len is NULL or negative, or pset_name is NULL");
    const std::string name = k_psets[static_cast<std::size_t>(n)];
    if (*pset_len > 0) {
        const std::size_t k = std::min(name.size(), static_cast<std::size_t>(*pset_len - 1));
        std::memcpy(pset_name, name.data(), k);
        pset_name[k] = '\0';
    }
    *pset_len = static_cast<int>(name.size() + 1);
    return MPI_SUCCESS;
}

int MPI_Session_get_info(MPI_Session session, MPI_Info *info_used) {
    const char *call = "MPI_Session_get_info";
    FTMPI_TRY(check_session(call, &session));
    if (info_used == nullptr)
        return raise_via(session->errhandler, &session, "a session", MPI_ERR_ARG, call, "info_used is NULL");
    *info_used = info_of(session->info);
    return MPI_SUCCESS;
}

int MPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info) {
    const char *call = "MPI_Session_get_pset_info";
    FTMPI_TRY(check_session(call, &session));
    std::vector<int> procs;
    if (pset_name == nullptr || info == nullptr || !pset_procs(pset_name, procs))
        return raise_via(session->errhandler, &session, "a session", MPI_ERR_ARG, call,
                         "pset_name or info is NULL, or no process set is called '%s'",
                         pset_name != nullptr ? pset_name : "");
    *info = info_of(Hints{{"mpi_size", std::to_string(procs.size())}});
    return MPI_SUCCESS;
}

int MPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup) {
    const char *call = "MPI_Group_from_session_pset";
    FTMPI_TRY(check_session(call, &session));
    std::vector<int> procs;
    if (pset_name == nullptr || newgroup == nullptr || !pset_procs(pset_name, procs))
        return raise_via(session->errhandler, &session, "a session", MPI_ERR_ARG, call,
                         "pset_name or newgroup is NULL, or no process set is called '%s'",
                         pset_name != nullptr ? pset_name : "");
    *newgroup = new_group(std::move(procs));
    (*newgroup)->session = session;
    return MPI_SUCCESS;
}

// Collective over the group's members; errors go to errhandler (null:
// MPI_ERRORS_ARE_FATAL), which the new communicator then has.
int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                               MPI_Comm *newcomm) {
    const char *call = "MPI_Comm_create_from_group";
    MPI_Comm none = MPI_COMM_NULL;
    const char *label = "a new communicator";
    FTMPI_TRY(check_init(call));
    if (errhandler != MPI_ERRHANDLER_NULL && errhandler->magic != Magic::errhandler)
        return raise_via(nullptr, &none, label, MPI_ERR_ERRHANDLER, call, "invalid errhandler");
    MPI_Errhandler h = errhandler != MPI_ERRHANDLER_NULL ? errhandler : MPI_ERRORS_ARE_FATAL;
    FTMPI_TRY(check_stringtag(call, h, stringtag));
    if (group == MPI_GROUP_NULL || group->magic != Magic::group || newcomm == nullptr)
        return raise_via(h, &none, label,
                         group == MPI_GROUP_NULL || group->magic != Magic::group ? MPI_ERR_GROUP : MPI_ERR_ARG, call,
                         "invalid group, or newcomm is NULL");
    if (info != MPI_INFO_NULL && info->magic != Magic::info)
        return raise_via(h, &none, label, MPI_ERR_INFO, call, "invalid info (argument info)");
    MPI_Comm world = MPI_COMM_WORLD;
    for (int p : group->procs)
        if (std::find(world->procs.begin(), world->procs.end(), p) == world->procs.end())
            return raise_via(h, &none, label, MPI_ERR_GROUP, call,
                             "the group holds a process outside this job's process sets");
    if (std::find(group->procs.begin(), group->procs.end(), g.pm->job().id()) == group->procs.end())
        return raise_via(h, &none, label, MPI_ERR_GROUP, call, "the calling process is not in group");
    MPI_Comm made = MPI_COMM_NULL;
    if (const int err = create_over_group(world, group, tag_of(stringtag), &made); err != MPI_SUCCESS)
        return raise_via(h, &none, label, err, call, "creating the communicator over the group with tag '%s' failed",
                         stringtag);
    errhandler_retain(h);
    errhandler_release(made->errhandler);
    made->errhandler = h;
    merge_hints(made->info, info, HintKind::comm);
    made->session = group->session;
    *newcomm = made;
    return MPI_SUCCESS;
}

int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader,
                                     const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                     MPI_Comm *newintercomm) {
    const char *call = "MPI_Intercomm_create_from_groups";
    MPI_Comm none = MPI_COMM_NULL;
    MPI_Errhandler h = errhandler != MPI_ERRHANDLER_NULL ? errhandler : MPI_ERRORS_ARE_FATAL;
    FTMPI_TRY(check_init(call));
    FTMPI_TRY(check_stringtag(call, h, stringtag));
    if (remote_group == MPI_GROUP_NULL || remote_group->magic != Magic::group || newintercomm == nullptr ||
        remote_leader < 0 || remote_leader >= static_cast<int>(remote_group->procs.size()))
        return raise_via(h, &none, "a new communicator", MPI_ERR_ARG, call,
                         "invalid remote_group or remote_leader %d, or newintercomm is NULL", remote_leader);
    MPI_Comm local = MPI_COMM_NULL;
    FTMPI_TRY(MPI_Comm_create_from_group(local_group, stringtag, info, errhandler, &local));
    MPI_Comm world = MPI_COMM_WORLD;
    const int leader_id = remote_group->procs[static_cast<std::size_t>(remote_leader)];
    const int peer =
        static_cast<int>(std::find(world->procs.begin(), world->procs.end(), leader_id) - world->procs.begin());
    const char *why = nullptr;
    int err = MPI_ERR_RANK;
    if (local_leader >= 0 && local_leader < local->size && peer < world->size)
        err = intercomm_from_leaders(local, local_leader, world, peer, itag::leader(tag_of(stringtag)), MPI_SUCCESS,
                                     newintercomm, &why);
    discard_comm(local);
    if (err != MPI_SUCCESS)
        return raise_via(h, &none, "a new communicator", err, call, "%s",
                         why != nullptr ? why : "invalid local_leader, or remote leader outside the job");
    return MPI_SUCCESS;
}

int MPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn, MPI_Errhandler *errhandler) {
    return MPI_Comm_create_errhandler(reinterpret_cast<MPI_Comm_errhandler_function *>(session_errhandler_fn),
                                      errhandler);
}

int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
    const char *call = "MPI_Session_set_errhandler";
    FTMPI_TRY(check_session(call, &session));
    if (errhandler == MPI_ERRHANDLER_NULL || errhandler->magic != Magic::errhandler)
        return raise_via(session->errhandler, &session, "a session", MPI_ERR_ARG, call, "invalid errhandler");
    errhandler_retain(errhandler);
    errhandler_release(session->errhandler);
    session->errhandler = errhandler;
    return MPI_SUCCESS;
}

int MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler) {
    const char *call = "MPI_Session_get_errhandler";
    FTMPI_TRY(check_session(call, &session));
    if (errhandler == nullptr)
        return raise_via(session->errhandler, &session, "a session", MPI_ERR_ARG, call, "errhandler is NULL");
    errhandler_retain(session->errhandler);
    *errhandler = session->errhandler;
    return MPI_SUCCESS;
}

int MPI_Session_call_errhandler(MPI_Session session, int errorcode) {
    const char *call = "MPI_Session_call_errhandler";
    FTMPI_TRY(check_session(call, &session));
    raise_via(session->errhandler, &session, "a session", errorcode, call, "error code %d raised by the application",
              errorcode);
    return MPI_SUCCESS;
}

}  // extern "C"
