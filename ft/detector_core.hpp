// The failure detector's protocol as a pure state machine: no thread, no
// channel, no clock of its own (ft/detector.hpp runs it on its thread over a
// control channel; ft/sim/ runs it for up to 100,000 simulated processes).
//
// Ring: every process beats every `period` to its successor, the next
// process in rank order (cyclically) that it does not know to be failed or
// gone, and watches its predecessor the same way. A predecessor silent for
// `timeout` is declared failed (the caller asks the launcher to kill it).
//
// Silence is counted only while this process's own detector runs: between
// two of its ticks at most two periods count, so a detector that was not
// scheduled for a while (its process starved, its virtual CPU stolen) does
// not take its own absence for the predecessor's. A predecessor silent past
// the timeout is declared only if the environment (Evidence) does not show
// that its detector thread is merely waiting for a CPU: then it is looked at
// again every period, up to k_starved_limit timeouts of silence. So is the
// first predecessor until its first heartbeat (its detector may start later
// than this one), unless the environment shows it stopped or gone, or
// another channel showed that its detector had already started (peer_started):
// from then on its silence counts as any predecessor's.
//
// Broadcast: each failure this process learns of, from any source, is sent
// once to its live binomial-graph neighbours (ft/topology.hpp); a process
// forwards what it learns in turn, so news reaches everyone in O(log n)
// steps and around failed forwarders. Heartbeats carry a digest of the
// sender's failed set; when the two ends of a ring link disagree they
// exchange their sets, which repairs anything lost.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ft/failed_set.hpp"

namespace ftmpi::ft {

enum class DetectorMsg : std::uint8_t { heartbeat = 1, failed, sync_request, goodbye };

// The kind of a detector message (0 if malformed).
int detector_msg_kind(const void *data, std::size_t len);

class DetectorCore {
public:
    using Clock = std::chrono::steady_clock;
    using Ms = std::chrono::milliseconds;
    using Time = Clock::time_point;

    // A failure this process declared or learned, for the caller's log; a
    // `timeout` or `ended` one also asks the launcher to kill the process.
    // `starved`: no failure, the predecessor's heartbeats are overdue but its
    // detector thread waits for a CPU (logged once per silence).
    struct Event {
        enum Kind { told, link_closed, timeout, ended, starved } kind;
        int id;                        // the process id
        int by;                        // told: the rank that told
        long long ms;                  // timeout, starved: the time since its last heartbeat
        const char *detail = nullptr;  // timeout, ended, starved: what the Evidence said (may be null)
    };
    // What the environment can tell about a predecessor whose heartbeats are
    // overdue (ft/detector.cpp reads /proc for a process on this node).
    struct Evidence {
        enum Kind {
            unknown,  // nothing to tell: the silence decides
            silent,   // its detector thread cannot beat: stopped, gone, stuck
            waiting,  // its detector thread is runnable and waits for a CPU
        } kind = unknown;
        const char *what = nullptr;  // for the log
    };
    // Starved predecessors are waited for until this many timeouts of silence.
    static constexpr int k_starved_limit = 10;
    struct Effects {
        struct Send {
            int peer;  // a rank of the ring
            std::vector<char> msg;
        };
        std::vector<Send> sends;
        std::vector<Event> events;
        int watch = -2;         // a new predecessor to watch (-1: none; -2: unchanged)
        bool excluded = false;  // this process is in the failed set: it must leave
    };

    // The ring is `size` ranks; rank r is process id_base + r in `set`.
    // Messages carry at most `max_message` bytes.
    DetectorCore(FailureLog &set, int rank, int size, int id_base, Ms period, Ms timeout, std::size_t max_message);
    // Asked about rank `pred` when its silence passes the timeout (none set:
    // Evidence::unknown).
    void set_evidence(std::function<Evidence(int pred)> f) { evidence_ = std::move(f); }

    // Start-up: the ring, and a first heartbeat to every neighbour (so
    // connection-oriented providers pay their set-up now).
    void start(Time now, Effects &out);
    void on_message(const void *data, std::size_t len, Time now, Effects &out);
    // The watched predecessor's process ended (certain) or its link reset.
    void on_lost(int peer, bool certain, Time now, Effects &out);
    // Rank `peer`'s detector had sent its first heartbeats by the time it
    // told this process something on another channel (its hello at init): if
    // it is the first predecessor, still unheard, it has a timeout from `now`
    // for its heartbeat to arrive, and no more waiting for it to start.
    void peer_started(int peer, Time now);
    // Spreads news, beats, and checks the predecessor. True when it declared
    // the predecessor failed: call again at once (to spread that, and watch
    // the next one).
    bool tick(Time now, Effects &out);
    // When tick() must run next.
    Time deadline() const;
    bool idle() const { return succ_ < 0 && pred_ < 0; }
    // MPI_Finalize: tells the successor that this process leaves normally.
    void goodbye(Effects &out);

    int pred() const { return pred_; }
    // The first predecessor is still unheard and not known to have started:
    // its silence gets the late-starter allowance.
    bool awaiting_first() const { return first_beat_; }
    // The longest time between two heartbeats of the predecessor, as they arrived.
    Ms max_gap() const { return max_gap_; }

private:
    bool alive(int r) const;
    // Counts the time since the last tick or message toward the predecessor's
    // silence, at most two periods of it.
    void advance(Time now);
    void heard_pred(Time now);
    void update_ring(Time now, Effects &out);
    std::vector<char> header(DetectorMsg t, std::size_t count) const;
    void send_failures(int peer, std::size_t from, std::size_t to, Effects &out) const;
    void spread_news(Time now, Effects &out);

    FailureLog &set_;
    int rank_, n_, base_;
    Ms period_, timeout_;
    std::size_t per_msg_;
    std::size_t spread_ = 0;  // failures of the set already sent to the neighbours
    std::uint32_t digest_ = 0;
    std::unordered_set<int> gone_;  // left normally (MPI_Finalize)
    std::vector<int> neighbours_;
    int pred_ = -1, succ_ = -1;
    bool pred_ended_ = false;  // pred's liveness link was reset or refused: waiting for its goodbye
    Time last_heard_{}, next_beat_{};
    Time last_tick_{};           // the last time this detector ran (advance)
    Clock::duration silence_{};  // pred's silence, as counted by advance
    bool starved_ = false;       // pred's overdue, and its detector thread was waiting for a CPU
    bool first_beat_ = false;    // pred is the first one, and not heard from yet
    Time recheck_{};             // starved_: when to look again
    std::function<Evidence(int)> evidence_;
    std::unordered_map<int, Time> last_sync_;
    Ms max_gap_{0};
};

}  // namespace ftmpi::ft
