// A discrete-event simulator for the protocols of ft/: n simulated processes,
// each running the real state machine (ft/agreement.hpp, ft/revoke.hpp, the
// BMG broadcast of ft/topology.hpp) over a simulated network with a latency
// per message and optional random jitter (which reorders messages), and
// crash failures injected at a chosen time or at a chosen send of a process
// (so a process can die halfway through a broadcast of the decision).
//
// Failure detection is modelled as eventually perfect: `detect` after a
// crash (plus jitter), each live process learns of it, separately. Messages a
// process sent before it crashed are still delivered.
//
// Used by ftsim (ft/sim/ftsim.cpp: figures and random campaigns) and by the
// unit tests (tests/unit/test_agreement.cpp: scripted cases).
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "ft/agreement.hpp"
#include "ft/group_view.hpp"

namespace ftmpi::ft::sim {

// One process's knowledge of failures.
class View final : public GroupView {
public:
    View(int n, int self) : n_(n), self_(self), bits_(static_cast<std::size_t>(n), 0) {}
    int size() const override { return n_; }
    int self() const override { return self_; }
    bool failed(int r) const override { return bits_[static_cast<std::size_t>(r)] != 0; }
    std::vector<int> known_failed() const override { return list_; }
    bool any_failed() const override { return !list_.empty(); }
    bool add(int r);  // true if new

private:
    int n_, self_;
    std::vector<char> bits_;
    std::vector<int> list_;  // ascending
};

struct Options {
    double latency = 1.0;  // per message
    double jitter = 0.0;   // extra latency, uniform in [0, jitter)
    double detect = 4.0;   // crash to a live process's learning of it
    double detect_jitter = 0.0;
    std::uint64_t seed = 1;
};

// Agreements among n processes.
class AgreeSim {
public:
    AgreeSim(int n, Options opt);

    // Before run(): process p's contribution to agreement `seq` (default:
    // all ones), and when it enters (default: time 0).
    void set_words(int p, std::uint64_t seq, std::vector<std::uint64_t> words);
    void enter(int p, std::uint64_t seq, double at, bool abortable = false);
    void enter_all(std::uint64_t seq, double at = 0.0);
    void crash_at(int p, double t);
    // p crashes as it is about to make its (k+1)-th send (k = 0: at once on its first).
    void crash_after_sends(int p, long k);
    // p failed before the start, and every process knows it.
    void prefail(int p);
    void revoke_at(int p, double t);  // abort(): the group is revoked at p

    // Runs until no event is left (every message delivered, every failure known).
    void run();

    bool alive(int p) const { return alive_[static_cast<std::size_t>(p)] != 0; }
    const Agreements::Instance *instance(int p, std::uint64_t seq) const;
    double decided_at(int p, std::uint64_t seq) const;  // -1: never
    long sends(int p) const { return sends_[static_cast<std::size_t>(p)]; }
    long receives(int p) const { return receives_[static_cast<std::size_t>(p)]; }
    double now() const { return now_; }
    int size() const { return n_; }

    // Termination, agreement and validity of agreement `seq` over the
    // survivors; one line per violation.
    std::vector<std::string> check(std::uint64_t seq) const;

private:
    struct Event {
        double t;
        std::uint64_t order;
        enum Kind : std::uint8_t { deliver, learn, crash, enter, revoke } kind;
        int to, from;
        std::uint64_t seq;
        AgreeMsg msg;
        bool operator>(const Event &o) const { return t != o.t ? t > o.t : order > o.order; }
    };
    void push(Event e);
    void apply(int p, AgreeEffects &fx);
    void do_crash(int p);
    std::vector<std::uint64_t> words_of(int p, std::uint64_t seq) const;

    int n_;
    Options opt_;
    std::mt19937_64 rng_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
    std::uint64_t order_ = 0;
    double now_ = 0;
    std::vector<View> views_;
    std::vector<Agreements> procs_;
    std::vector<char> alive_;
    std::vector<long> sends_, receives_, crash_after_;
    std::vector<int> prefailed_;
    struct Words {
        int p;
        std::uint64_t seq;
        std::vector<std::uint64_t> words;
    };
    std::vector<Words> words_;
    struct Decided {
        int p;
        std::uint64_t seq;
        double t;
    };
    std::vector<Decided> decided_;
    std::vector<std::uint64_t> seqs_;
};

// A BMG broadcast (revoke's notice, the detector's failure notice): `origin`
// starts it at time 0; every live process forwards on first receipt to its
// live BMG neighbours (as far as it knows). `dead` processes crashed before
// it started; each process knows of those in `known` only.
struct BroadcastResult {
    double last = 0;  // time the last live process got it
    int reached = 0, live = 0;
    double mean_sends = 0;
    long max_sends = 0;
};
BroadcastResult simulate_broadcast(int n, int origin, const std::vector<int> &dead, bool dead_known,
                                   const Options &opt);

// The failure detector (ft/detector_core.hpp, the real state machine) among
// n processes: heartbeats every `period`, a silent predecessor declared
// after `timeout` (time unit: Options::latency is one message). The victims
// crash at `crash_at`; the run goes on until every survivor knows of every
// victim (or `horizon`). Reports when the first survivor declared a victim
// failed, when the last survivor learned the last victim, and the detector
// traffic per process from the first declaration on.
struct DetectorResult {
    double declared = -1;  // first declaration by an observer
    double last = -1;      // last survivor to learn of the last victim
    int reached = 0, live = 0;
    double mean_msgs = 0;  // failure and sync messages sent + received per survivor after `declared`
    long max_msgs = 0;
};
DetectorResult simulate_detector(int n, const std::vector<int> &victims, double crash_at, double period, double timeout,
                                 double horizon, const Options &opt);

}  // namespace ftmpi::ft::sim
