// Connections between jobs (mpi/dynamic/connect.hpp).
#include "mpi/dynamic/connect.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <vector>

#include "mpi/comm/comm_internal.hpp"
#include "mpi/errors.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/state.hpp"
#include "runtime/log.hpp"
#include "runtime/test_hooks.hpp"

namespace ftmpi::mpi {

MPI_Comm g_parent = MPI_COMM_NULL;

namespace {

// A dial (connect root -> accept root) and its answer, on k_dial_context.
struct Dial {
    std::uint64_t key;
    std::uint64_t nonce;  // the dialer's, fresh per connection: the bridge's uid
    std::int32_t id;      // the sender
    std::int32_t base;    // its job's first id
};

struct Received {
    transport::PeerId from;
    std::int32_t tag;
    Dial dial;
};
std::deque<Received> g_dials;  // arrived, not yet taken

constexpr int k_dial_tag = 1, k_answer_tag = 2;
constexpr int k_finalize_tag = 3;  // no body: the sender's MPI_Finalize began

// The first process id of the job of every process this one knows besides
// its own job's (learned at connections).
std::map<int, int> g_bases;

// MPI_Finalize is collective over connected processes (MPI 3.1 §10.5.4):
// processes of other jobs stay connected through communicators that were
// freed, and only MPI_Comm_disconnect ends that. A process still in a
// creation over a communicator that this one revoked and freed (a respawn
// given up) needs this one's part of that creation's agreement; leaving
// before it finalizes would strand it.
std::set<int> g_finalizing;    // other jobs' processes whose MPI_Finalize began here
std::set<int> g_disconnected;  // other jobs' processes this one disconnected from

// Finalize notices in flight (the transport holds their Op until done).
struct Notice : transport::Op {};
std::deque<Notice> g_notices;

bool foreign(int id) {
    const auto &job = g.pm->job();
    return id < job.id_base || id >= job.id_base + job.size;
}

int base_of(int id) {
    const auto &job = g.pm->job();
    if (id >= job.id_base && id < job.id_base + job.size) return job.id_base;
    auto it = g_bases.find(id);
    return it == g_bases.end() ? -1 : it->second;
}

// Takes the first dial with `key` and `tag` (from `from` when >= 0).
bool take_dial(std::uint64_t key, int tag, int from, Received &out) {
    for (auto it = g_dials.begin(); it != g_dials.end(); ++it)
        if (it->dial.key == key && it->tag == tag && (from < 0 || it->from == static_cast<transport::PeerId>(from))) {
            out = *it;
            g_dials.erase(it);
            return true;
        }
    return false;
}

// The roots' two-process communicator: rank 0 accepted, rank 1 dialed.
MPI_Comm open_bridge(int acceptor, int dialer, int self_rank, std::uint64_t key, std::uint64_t nonce) {
    auto c = new ftmpi_comm_s;
    c->context = k_bridge_context;
    c->uid = mix_uid(key, nonce);
    c->procs = {acceptor, dialer};
    c->size = 2;
    c->rank = self_rank;
    c->queue = g.engine->open(c->context, c->uid);
    c->coll_queue = g.engine->open(c->context + 1, c->uid);
    c->errhandler = MPI_ERRORS_RETURN;
    errhandler_retain(c->errhandler);
    std::strcpy(c->name, "the bridge between two jobs");
    return c;
}

void close_bridge(MPI_Comm c) {
    if (c == MPI_COMM_NULL) return;
    g.engine->close(c->queue);
    g.engine->close(c->coll_queue);
    c->magic = Magic::dead;
    c->freed = c->retired = true;
    if (c->refs == 0) delete_comm_object(c);
}

// One dial-context message to process `to` (its rank `peer` in the bridge).
int send_dial(MPI_Comm bridge, int peer, int tag, const Dial &d) {
    MPI_Request r = new_request(ftmpi_request_s::Kind::send, bridge, &d, static_cast<int>(sizeof d), MPI_BYTE, peer,
                                tag, k_dial_context);
    start_send(r);
    wait_complete(r);
    return retire_request(&r, MPI_STATUS_IGNORE);
}

// ---- callbacks: a dialer with the lower process id ----
// Over a network provider a pair connects from its higher id (the
// transport's add_peers): the lower id's sends to a new peer wait for that
// peer's hello. An accepting root does not know who will dial, so a dialer
// below it would wait forever. Such a dialer publishes a callback request in
// the process manager's name service, under the port's key; the accepting
// root looks for one while it waits for a dial, makes the dialer its peer
// (its hello then opens the dialer's gate) and withdraws the request.
// Over shared memory nothing waits, and the request is merely answered.

std::string callback_service(std::uint64_t key) {
    char s[48];
    std::snprintf(s, sizeof s, "ftmpi-dial:%016" PRIx64, key);
    return s;
}

// Publishes this process's callback request for `port`. Another dialer's
// request still there (not yet answered): retries. MPI_SUCCESS, or
// MPI_ERR_PROC_FAILED when the port's process failed first; without a name
// service (not under ftmpirun) nobody could answer: nothing is published.
int request_callback(const Port &port) {
    const auto &job = g.pm->job();
    const std::string me = std::to_string(job.id()) + ":" + std::to_string(job.id_base);
    std::string why;
    for (;;) {
        const auto n = g.pm->publish(callback_service(port.key), me, why);
        if (n != runtime::ProcessManager::Names::exists) return MPI_SUCCESS;
        if (ft::failures().is_failed(port.id)) return MPI_ERR_PROC_FAILED;
        progress_wait();
    }
}

// Makes process `id` of the job starting at `base` a peer of this one
// (failures known before hold for the transport too). "" or why not.
std::string add_peer(int id, int base) {
    if (base_of(id) < 0) g_bases[id] = base;
    g_disconnected.erase(id);  // connected again
    std::string e = g.transport->add_peers(*g.pm, {id}, {base});
    if (e.empty() && ft::failures().is_failed(id)) g.transport->mark_failed(static_cast<transport::PeerId>(id));
    return e;
}

// The accepting root: answers a callback request for `key`, if there is one.
void answer_callback(std::uint64_t key) {
    std::string why, value;
    const std::string service = callback_service(key);
    if (g.pm->lookup(service, value, why) != runtime::ProcessManager::Names::ok) return;
    g.pm->unpublish(service, why);  // the next dialer's turn
    int id = -1, base = -1;
    if (std::sscanf(value.c_str(), "%d:%d", &id, &base) != 2 || id < 0 || base < 0 || base > id) return;
    if (std::string e = add_peer(id, base); !e.empty()) FTMPI_WARN("callback to process %d: %s", id, e.c_str());
}

// Waits for a dial-context message; `watch` >= 0: fails when that process
// fails. `callbacks`: also answers callback requests for `key` (an accept
// from anybody), looking every millisecond (a name-service round trip).
int wait_dial(std::uint64_t key, int tag, int from, int watch, Received &out, bool callbacks = false) {
    auto next_look = std::chrono::steady_clock::now();
    while (!take_dial(key, tag, from, out)) {
        if (watch >= 0 && ft::failures().is_failed(watch)) return MPI_ERR_PROC_FAILED;
        if (callbacks && std::chrono::steady_clock::now() >= next_look) {
            answer_callback(key);
            next_look = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
        }
        progress_wait();
    }
    return MPI_SUCCESS;
}

// The group of `comm` as (id, job's first id) pairs, flattened.
std::vector<int> describe(MPI_Comm comm) {
    std::vector<int> out;
    for (int id : comm->procs) {
        out.push_back(id);
        out.push_back(base_of(id));
    }
    return out;
}

// The roots swap their groups over the bridge; each hands the other group to
// its own team, which adds it to the transport. Then the inter-communicator.
int join_groups(MPI_Comm comm, int root, MPI_Comm bridge, int err, MPI_Comm *newcomm, std::string &why) {
    const bool is_root = comm->rank == root;
    std::vector<int> remote;
    struct Head {
        int err;
        int n;
    } head{err, 0};
    if (is_root && err == MPI_SUCCESS) {
        const std::vector<int> mine = describe(comm);
        int theirs = 0, count = static_cast<int>(mine.size());
        const int peer = 1 - bridge->rank;
        const int tag = itag::cross(1);
        int e = team_swap(bridge, peer, tag, &count, sizeof count, &theirs, sizeof theirs);
        if (e == MPI_SUCCESS && (theirs <= 0 || theirs % 2 != 0)) e = MPI_ERR_INTERN;
        if (e == MPI_SUCCESS) {
            remote.resize(static_cast<std::size_t>(theirs));
            e = team_swap(bridge, peer, tag + 1, mine.data(), count * static_cast<int>(sizeof(int)), remote.data(),
                          theirs * static_cast<int>(sizeof(int)));
        }
        if (e != MPI_SUCCESS) why = "the exchange between the two roots failed";
        head = {e, static_cast<int>(remote.size())};
    }
    // The root's sends fail only at members that failed (the inter-communicator's
    // agreement deals with them); a member that did not hear from the root fails.
    if (const int e = team_bcast(comm, root, &head, sizeof head);
        e != MPI_SUCCESS && !is_root && head.err == MPI_SUCCESS) {
        head.err = e;
        why = "the root did not hand over the other group";
    }
    if (head.err != MPI_SUCCESS) return head.err;
    remote.resize(static_cast<std::size_t>(head.n));
    if (const int e = team_bcast(comm, root, remote.data(), head.n * static_cast<int>(sizeof(int)));
        e != MPI_SUCCESS && !is_root) {
        why = "the root did not hand over the other group";
        return e;
    }
    int made = MPI_SUCCESS;
    for (std::size_t i = 0; i + 1 < remote.size(); i += 2)
        if (std::string e = add_peer(remote[i], remote[i + 1]); !e.empty() && made == MPI_SUCCESS) {
            why = e;
            made = MPI_ERR_INTERN;
        }
    runtime::test_kill_point("connect.joined");
    // Uniform from here on, whatever failed at this member.
    const char *failed = nullptr;
    const int e = intercomm_from_leaders(comm, root, is_root ? bridge : comm, is_root ? 1 - bridge->rank : 0,
                                         itag::cross(2), made, newcomm, &failed);
    if (e != MPI_SUCCESS && why.empty()) why = failed;
    return e;
}

}  // namespace

Port new_port() {
    const auto &job = g.pm->job();
    return Port{job.id(), job.id_base, random_nonce()};
}

std::string port_name(const Port &p) {
    char s[96];
    std::snprintf(s, sizeof s, "ftmpi-port:%d:%d:%016" PRIx64, p.id, p.base, p.key);
    return s;
}

bool parse_port(const char *name, Port &p) {
    int id = -1, base = -1, used = 0;
    std::uint64_t key = 0;
    if (std::sscanf(name, "ftmpi-port:%d:%d:%16" SCNx64 "%n", &id, &base, &key, &used) != 3 || name[used] != '\0')
        return false;
    if (id < 0 || base < 0 || base > id || id >= g.pm->job().id_limit()) return false;
    p = Port{id, base, key};
    return true;
}

void on_dial(const transport::Arrival &a) {
    if (a.tag == k_finalize_tag) {
        if (!a.rendezvous && a.length == 0) g_finalizing.insert(static_cast<int>(a.source));
        return;
    }
    if (a.rendezvous || a.length != sizeof(Dial)) return;  // not ours
    Received r{a.source, a.tag, {}};
    std::memcpy(&r.dial, a.eager_data, sizeof r.dial);
    g_dials.push_back(r);
}

int accept_on(MPI_Comm comm, int root, const Port &port, int expected, MPI_Comm *newcomm, std::string &why) {
    MPI_Comm bridge = MPI_COMM_NULL;
    int err = MPI_SUCCESS;
    if (comm->rank == root) {
        Received d{};
        // A spawn's first child has a higher id than its parents: no callback.
        err = wait_dial(port.key, k_dial_tag, expected, expected, d, expected < 0);
        if (err != MPI_SUCCESS) why = "the process expected to connect failed first";
        if (err == MPI_SUCCESS) {
            if (std::string e = add_peer(d.dial.id, d.dial.base); !e.empty()) {
                why = e;
                err = MPI_ERR_INTERN;
            }
        }
        if (err == MPI_SUCCESS) {
            bridge = open_bridge(g.pm->job().id(), d.dial.id, 0, port.key, d.dial.nonce);
            const auto &job = g.pm->job();
            err = send_dial(bridge, 1, k_answer_tag, Dial{port.key, d.dial.nonce, job.id(), job.id_base});
            if (err != MPI_SUCCESS) why = "the connecting process failed";
        }
    }
    err = join_groups(comm, root, bridge, err, newcomm, why);
    close_bridge(bridge);
    return err;
}

int connect_to(MPI_Comm comm, int root, const Port &port, MPI_Comm *newcomm, std::string &why) {
    MPI_Comm bridge = MPI_COMM_NULL;
    int err = MPI_SUCCESS;
    if (comm->rank == root) {
        const auto &job = g.pm->job();
        if (std::string e = add_peer(port.id, port.base); !e.empty()) {
            why = e;
            err = MPI_ERR_PORT;
        }
        if (err == MPI_SUCCESS && job.id() < port.id) err = request_callback(port);
        if (err == MPI_ERR_PROC_FAILED || (err == MPI_SUCCESS && ft::failures().is_failed(port.id))) {
            why = "the process of the port has failed";
            err = MPI_ERR_PROC_FAILED;
        }
        if (err == MPI_SUCCESS) {
            const std::uint64_t nonce = random_nonce();
            bridge = open_bridge(port.id, job.id(), 1, port.key, nonce);
            err = send_dial(bridge, 0, k_dial_tag, Dial{port.key, nonce, job.id(), job.id_base});
            Received answer{};
            if (err == MPI_SUCCESS) err = wait_dial(port.key, k_answer_tag, port.id, port.id, answer);
            if (err != MPI_SUCCESS) why = "the process of the port failed";
        }
    }
    err = join_groups(comm, root, bridge, err, newcomm, why);
    close_bridge(bridge);
    return err;
}

void note_disconnect(MPI_Comm c) {
    for (const auto *group : {&c->procs, &c->local_procs})
        for (int id : *group)
            if (foreign(id)) g_disconnected.insert(id);
}

void finalize_connected() {
    std::vector<int> waited;
    for (const auto &[id, base] : g_bases) {
        if (ft::failures().is_failed(id)) continue;
        // Every process this one knows hears of it, connected or not, so that
        // no process waits for a notice that its peer thought unneeded.
        Notice &n = g_notices.emplace_back();
        n.done = [](transport::Op *, transport::Err, std::size_t) {};
        g.transport->send(static_cast<transport::PeerId>(id), k_dial_context, 0, k_finalize_tag, 0, nullptr, 0,
                          transport::SendMode::standard, &n);
        if (!g_disconnected.contains(id)) waited.push_back(id);
    }
    auto pending = [&] {
        for (int id : waited)
            if (!g_finalizing.contains(id) && !ft::failures().is_failed(id)) return true;
        return false;
    };
    while (pending()) progress_wait();
}

}  // namespace ftmpi::mpi
