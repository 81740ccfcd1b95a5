// The head of ftmpirun across nodes (head.hpp): its state, shared by head*.cpp.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "allocation.hpp"
#include "job.hpp"
#include "job_spec.hpp"
#include "journal.hpp"
#include "launcher_internal.hpp"
#include "net.hpp"
#include "options.hpp"
#include "pmix_names.hpp"
#include "stopped.hpp"

namespace ftmpi::launcher::detail {

// The parts: head.cpp (start-up: daemons, tree, launch), head_loop.cpp (the
// event loop: signals, stdin, deadlines, the end), head_frames.cpp (what the
// daemons report: output, exits, aborts, fences), head_spawn.cpp
// (MPI_Comm_spawn across nodes) and head_loss.cpp (failures and lost nodes).
class Head {
public:
    Head(const Options &o, std::vector<AllocNode> nodes, std::vector<int> rank_node);
    ~Head();
    int run();

private:
    struct Fence {
        std::vector<int> ids;  // participants
        std::set<int> from;    // vertices that contributed
        std::vector<char> data;
    };
    struct Spawn {
        std::uint64_t tag;
        int requester;          // its daemon's vertex
        std::set<int> waiting;  // vertices that have not started their part yet
    };

    // head.cpp
    void start_daemons();
    bool gather(Clock::time_point deadline);
    void on_hello(Net::Delivery &d);
    void launch();
    // head_loop.cpp
    void loop();
    void poll_once(int timeout);
    void on_signalfd();
    void on_stdin();
    int timeout_ms(Clock::time_point now) const;
    void finish();
    // head_frames.cpp
    // What the head sends: numbered and kept until acknowledged (journal.hpp).
    void to(int vertex, wire::Type t, const wire::Writer &w);
    void to_all(wire::Type t, const wire::Writer &w);
    void send_acks();
    void on_frame(Net::Delivery &d);
    void on_io(wire::Reader &r, int vertex);
    void on_state(wire::Reader &r, int vertex);
    void on_exit(wire::Reader &r, int vertex);
    void on_abort(wire::Reader &r);
    void on_fence(wire::Reader &r, int vertex);
    void check_fences();
    void on_names(wire::Reader &r, int vertex);
    // head_spawn.cpp
    void on_spawn(wire::Reader &r, int vertex);
    void on_started(wire::Reader &r, int vertex);
    void complete_spawns();
    void refuse_spawn(int vertex, std::uint64_t tag, int status, const std::string &why);
    std::vector<int> place(const std::vector<int> &counts, const std::vector<std::string> &hosts, std::string &why);
    // head_loss.cpp
    void proc_ended(int id);
    void tell_failed(const std::vector<int> &ids);
    void on_lost(int vertex, const std::string &why);
    void on_attach(Net::Delivery &d);
    void check_orphans(Clock::time_point now);
    void check_stopped(Clock::time_point now);
    void teardown(int sig);
    void kill_procs(const std::vector<int> &ids, int sig);
    void check_unstarted();
    void timeline_note(const std::string &what);
    void close_timeline();

    std::string node_name(int vertex) const { return nodes_[static_cast<size_t>(vertex - 1)].name; }
    std::string where(int id) const;  // "rank 3 (pid 123) on ftn2"
    bool valid_id(int id) const { return id >= 0 && static_cast<size_t>(id) < procs_.size(); }
    int nodes() const { return static_cast<int>(nodes_.size()); }

    const Options &o_;
    std::vector<AllocNode> nodes_;  // vertex v runs on nodes_[v - 1]
    std::vector<int> rank_node_;    // the job's ranks: index into nodes_
    std::string key_;               // the launch key: every link proves it
    Net net_;
    int sigfd_ = -1;
    pid_t srun_ = -1;
    bool srun_reaped_ = false;
    int srun_status_ = 0;
    std::vector<std::vector<std::string>> addrs_;  // by vertex: its daemon's addresses (for its children)
    std::vector<bool> hello_, ready_, started_;
    std::vector<RankState> procs_;  // by process id: the job's ranks, then what MPI_Comm_spawn added
    std::vector<int> vertex_of_;    // by process id: its node's vertex
    std::vector<bool> lost_;        // by vertex
    std::map<std::uint64_t, Fence> fences_;
    std::map<int, Spawn> spawns_;  // by the spawned namespace's first id
    JobSettings settings_;
    // stdin -> process 0: bytes sent and not yet written there (credit)
    std::size_t stdin_unacked_ = 0;
    bool stdin_open_ = false;
    bool teardown_ = false;
    bool exit_sent_ = false;
    int term_signals_ = 0;
    std::optional<int> forced_exit_, last_abort_, no_ft_code_, unstarted_, start_blocker_;
    std::optional<Clock::time_point> timeout_at_, escalate_at_, srun_deadline_;
    // Children of a lost daemon, and when they are lost too unless they
    // reattached to the head by then.
    std::map<int, Clock::time_point> orphans_;
    // Stopped processes that no detector watches (stopped.hpp), as the
    // daemons report them, and the ranks' detector timeout.
    name_service::Store names_;  // the job's published names
    StopWatch stops_;
    std::optional<Clock::time_point> stopped_check_;
    std::chrono::milliseconds ft_timeout_{1000};
    Journal journal_;                       // what the head sent, until every live daemon has it
    std::vector<std::uint64_t> seen_;       // by vertex: the last of its numbered frames that came
    std::vector<std::uint64_t> acked_;      // by vertex: the last of those acknowledged to it
    std::vector<std::uint64_t> they_have_;  // by vertex: the last of the head's it acknowledged
    Clock::time_point next_tick_ = Clock::now();
};

}  // namespace ftmpi::launcher::detail
