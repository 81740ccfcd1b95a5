#include "ft/sim/sim.hpp"

#include <algorithm>
#include <cstdio>

#include "ft/detector_core.hpp"
#include "ft/revoke.hpp"

#include <unordered_set>

namespace ftmpi::ft::sim {

bool View::add(int r) {
    if (bits_[static_cast<std::size_t>(r)]) return false;
    bits_[static_cast<std::size_t>(r)] = 1;
    list_.insert(std::lower_bound(list_.begin(), list_.end(), r), r);
    return true;
}

AgreeSim::AgreeSim(int n, Options opt)
    : n_(n), opt_(opt), rng_(opt.seed), procs_(static_cast<std::size_t>(n)), alive_(static_cast<std::size_t>(n), 1),
      sends_(static_cast<std::size_t>(n), 0), receives_(static_cast<std::size_t>(n), 0),
      crash_after_(static_cast<std::size_t>(n), -1) {
    views_.reserve(static_cast<std::size_t>(n));
    for (int p = 0; p < n; ++p) views_.emplace_back(n, p);
}

void AgreeSim::push(Event e) {
    e.order = order_++;
    q_.push(std::move(e));
}

void AgreeSim::set_words(int p, std::uint64_t seq, std::vector<std::uint64_t> words) {
    words_.push_back({p, seq, std::move(words)});
}

std::vector<std::uint64_t> AgreeSim::words_of(int p, std::uint64_t seq) const {
    for (const auto &w : words_)
        if (w.p == p && w.seq == seq) return w.words;
    return {~std::uint64_t{0}};
}

void AgreeSim::enter(int p, std::uint64_t seq, double at, bool abortable) {
    if (std::find(seqs_.begin(), seqs_.end(), seq) == seqs_.end()) seqs_.push_back(seq);
    Event e{at, 0, Event::enter, p, -1, seq, {}};
    e.msg.abortable = abortable;
    push(std::move(e));
}

void AgreeSim::enter_all(std::uint64_t seq, double at) {
    for (int p = 0; p < n_; ++p) enter(p, seq, at);
}

void AgreeSim::crash_at(int p, double t) { push({t, 0, Event::crash, p, -1, 0, {}}); }

void AgreeSim::crash_after_sends(int p, long k) { crash_after_[static_cast<std::size_t>(p)] = k; }

void AgreeSim::revoke_at(int p, double t) { push({t, 0, Event::revoke, p, -1, 0, {}}); }

void AgreeSim::prefail(int p) {
    alive_[static_cast<std::size_t>(p)] = 0;
    prefailed_.push_back(p);
    for (auto &v : views_) v.add(p);
}

void AgreeSim::do_crash(int p) {
    if (!alive(p)) return;
    alive_[static_cast<std::size_t>(p)] = 0;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int q = 0; q < n_; ++q)
        if (q != p && alive(q)) push({now_ + opt_.detect + opt_.detect_jitter * u(rng_), 0, Event::learn, q, p, 0, {}});
}

void AgreeSim::apply(int p, AgreeEffects &fx) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto &s : fx.sends) {
        long &limit = crash_after_[static_cast<std::size_t>(p)];
        if (limit >= 0 && sends_[static_cast<std::size_t>(p)] >= limit) {
            do_crash(p);  // the rest of its sends never happen
            break;
        }
        ++sends_[static_cast<std::size_t>(p)];
        push({now_ + opt_.latency + opt_.jitter * u(rng_), 0, Event::deliver, s.to, p, s.msg.seq, std::move(s.msg)});
    }
    for (std::uint64_t seq : fx.decided) decided_.push_back({p, seq, now_});
    fx.sends.clear();
    fx.decided.clear();
    fx.issued.clear();
}

void AgreeSim::run() {
    AgreeEffects fx;
    while (!q_.empty()) {
        Event e = q_.top();
        q_.pop();
        now_ = e.t;
        const int p = e.to;
        if (!alive(p)) continue;
        auto &view = views_[static_cast<std::size_t>(p)];
        auto &machine = procs_[static_cast<std::size_t>(p)];
        switch (e.kind) {
        case Event::crash: do_crash(p); continue;
        case Event::enter:
            machine.enter(view, e.seq, words_of(p, e.seq), 1000003u * static_cast<std::uint64_t>(p) + e.seq,
                          e.msg.abortable, false, fx);
            break;
        case Event::deliver:
            ++receives_[static_cast<std::size_t>(p)];
            machine.on_message(view, e.from, e.msg, fx);
            break;
        case Event::learn:
            if (!view.add(e.from)) continue;
            machine.on_failures(view, fx);
            break;
        case Event::revoke: machine.abort(view, fx); break;
        }
        apply(p, fx);
    }
}

const Agreements::Instance *AgreeSim::instance(int p, std::uint64_t seq) const {
    return procs_[static_cast<std::size_t>(p)].find(seq);
}

double AgreeSim::decided_at(int p, std::uint64_t seq) const {
    for (const auto &d : decided_)
        if (d.p == p && d.seq == seq) return d.t;
    return -1;
}

std::vector<std::string> AgreeSim::check(std::uint64_t seq) const {
    std::vector<std::string> bad;
    char line[200];
    const Decision *first = nullptr;
    int first_p = -1;
    std::vector<std::uint64_t> and_all, and_live;
    bool started = false;
    std::vector<char> crashed(static_cast<std::size_t>(n_), 0);
    for (int p = 0; p < n_; ++p) crashed[static_cast<std::size_t>(p)] = alive(p) ? 0 : 1;
    for (int p = 0; p < n_; ++p) {
        if (std::find(prefailed_.begin(), prefailed_.end(), p) != prefailed_.end()) continue;
        auto w = words_of(p, seq);
        if (!started) and_all = w, started = true;
        for (std::size_t i = 0; i < and_all.size(); ++i) and_all[i] &= i < w.size() ? w[i] : 0;
    }
    for (int p = 0; p < n_; ++p) {
        if (!alive(p)) continue;
        const auto *inst = instance(p, seq);
        if (inst == nullptr || !inst->decided) {
            std::snprintf(line, sizeof line, "agreement %llu: survivor %d never decided (termination)",
                          static_cast<unsigned long long>(seq), p);
            bad.emplace_back(line);
            continue;
        }
        const Decision &d = inst->decision;
        if (first == nullptr) {
            first = &d, first_p = p;
        } else if (!(d == *first)) {
            std::snprintf(line, sizeof line, "agreement %llu: survivors %d and %d decided differently (agreement)",
                          static_cast<unsigned long long>(seq), first_p, p);
            bad.emplace_back(line);
        }
        const auto w = words_of(p, seq);
        for (std::size_t i = 0; i < d.words.size(); ++i)
            if ((d.words[i] & ~(i < w.size() ? w[i] : 0)) != 0) {
                std::snprintf(line, sizeof line,
                              "agreement %llu: survivor %d's word %zu not in the decision (validity)",
                              static_cast<unsigned long long>(seq), p, i);
                bad.emplace_back(line);
            }
        for (std::size_t i = 0; i < and_all.size(); ++i)
            if ((and_all[i] & ~(i < d.words.size() ? d.words[i] : 0)) != 0) {
                std::snprintf(line, sizeof line,
                              "agreement %llu: survivor %d's decision lost bits every process set (validity)",
                              static_cast<unsigned long long>(seq), p);
                bad.emplace_back(line);
                break;
            }
        for (int f : d.failed)
            if (f < 0 || f >= n_ || !crashed[static_cast<std::size_t>(f)]) {
                std::snprintf(line, sizeof line, "agreement %llu: survivor %d agreed that live process %d failed",
                              static_cast<unsigned long long>(seq), p, f);
                bad.emplace_back(line);
            }
        for (int f : prefailed_)
            if (!std::binary_search(d.failed.begin(), d.failed.end(), f)) {
                std::snprintf(line, sizeof line, "agreement %llu: survivor %d's decision misses known failure %d",
                              static_cast<unsigned long long>(seq), p, f);
                bad.emplace_back(line);
            }
    }
    return bad;
}

namespace {
// Every process's knowledge of failures is one shared vector here.
class SharedView final : public GroupView {
public:
    SharedView(int n, int self, const std::vector<char> *known) : n_(n), self_(self), known_(known) {}
    int size() const override { return n_; }
    int self() const override { return self_; }
    bool failed(int r) const override { return (*known_)[static_cast<std::size_t>(r)] != 0; }
    std::vector<int> known_failed() const override {
        std::vector<int> out;
        for (int r = 0; r < n_; ++r)
            if (failed(r)) out.push_back(r);
        return out;
    }

private:
    int n_, self_;
    const std::vector<char> *known_;
};
}  // namespace

BroadcastResult simulate_broadcast(int n, int origin, const std::vector<int> &dead, bool dead_known,
                                   const Options &opt) {
    struct Msg {
        double t;
        std::uint64_t order;
        int to;
        bool operator>(const Msg &o) const { return t != o.t ? t > o.t : order > o.order; }
    };
    std::vector<char> is_dead(static_cast<std::size_t>(n), 0), got(static_cast<std::size_t>(n), 0),
        none(static_cast<std::size_t>(n), 0);
    for (int d : dead) is_dead[static_cast<std::size_t>(d)] = 1;
    std::vector<long> sends(static_cast<std::size_t>(n), 0);
    std::priority_queue<Msg, std::vector<Msg>, std::greater<Msg>> q;
    std::uint64_t order = 0;
    std::mt19937_64 rng(opt.seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    BroadcastResult res;
    q.push({0.0, order++, origin});
    while (!q.empty()) {
        const Msg m = q.top();
        q.pop();
        const std::size_t p = static_cast<std::size_t>(m.to);
        if (is_dead[p]) continue;
        // Each process's knowledge: the dead it was told of (dead_known), and
        // the origin always knows what it broadcasts about.
        const SharedView v(n, m.to, dead_known ? &is_dead : &none);
        bool flag = got[p] != 0;
        const auto targets = revoke_notice(flag, v);
        if (got[p]) continue;
        got[p] = 1;
        res.last = m.t;
        for (int t : targets) {
            ++sends[p];
            q.push({m.t + opt.latency + opt.jitter * u(rng), order++, t});
        }
    }
    long total = 0;
    for (int p = 0; p < n; ++p) {
        if (is_dead[static_cast<std::size_t>(p)]) continue;
        ++res.live;
        res.reached += got[static_cast<std::size_t>(p)];
        total += sends[static_cast<std::size_t>(p)];
        res.max_sends = std::max(res.max_sends, sends[static_cast<std::size_t>(p)]);
    }
    res.mean_sends = res.live ? static_cast<double>(total) / res.live : 0;
    return res;
}

namespace {
// A process's failure record, sparse (the real one is sized by the job).
class SparseLog final : public FailureLog {
public:
    bool add(int id) override {
        if (!set_.insert(id).second) return false;
        order_.push_back(id);
        return true;
    }
    bool contains(int id) const override { return set_.count(id) != 0; }
    std::size_t size() const override { return order_.size(); }
    int at(std::size_t i) const override { return order_[i]; }

private:
    std::unordered_set<int> set_;
    std::vector<int> order_;
};
}  // namespace

namespace {

// One run of the detector simulation: every process's DetectorCore, the
// event queue in simulated time (units of one message latency), and what is
// measured.
class DetectorRun {
public:
    using Core = DetectorCore;

    DetectorRun(int n, const std::vector<int> &victims, double period, double timeout, const Options &opt)
        : n_(n), victims_(victims), opt_(opt), rng_(opt.seed), logs_(idx(n)), dead_(idx(n), 0), gen_(idx(n), 0),
          next_tick_(idx(n), -1), msgs_(idx(n), 0), counted_(idx(n), 0) {
        cores_.reserve(idx(n));
        const auto ms = [](double t) { return Core::Ms(static_cast<long long>(t)); };
        for (int p = 0; p < n; ++p)
            cores_.emplace_back(logs_[idx(p)], p, n, 0, ms(period * opt.latency), ms(timeout * opt.latency), 1024);
        for (int p = 0; p < n; ++p) live_ += std::find(victims.begin(), victims.end(), p) == victims.end();
    }

    DetectorResult run(double crash_at, double horizon) {
        for (int p = 0; p < n_; ++p) {
            cores_[idx(p)].start(at(0), fx_);
            flush(p, 0);
        }
        for (int v : victims_) q_.push({crash_at, order_++, v, Ev::crash, false, 0, {}});
        while (!q_.empty()) {
            Ev e = q_.top();
            q_.pop();
            if (e.t > horizon) break;
            if (step(e) && static_cast<int>(known_all_) == live_ && res_.declared >= 0) break;
        }
        return result();
    }

private:
    struct Ev {
        double t;
        std::uint64_t order;
        int to;
        enum Kind : std::uint8_t { message, tick, crash } kind;
        bool notice;        // a message carrying failures (failed, sync_request)
        std::uint32_t gen;  // tick: stale unless the process's latest
        std::vector<char> msg;
        bool operator>(const Ev &o) const { return t != o.t ? t > o.t : order > o.order; }
    };
    static std::size_t idx(int p) { return static_cast<std::size_t>(p); }
    // Simulated time as microseconds of the core's clock, and back.
    static Core::Time at(double t) {
        return Core::Time{} + std::chrono::microseconds(static_cast<long long>(t * 1000.0));
    }
    static double back(Core::Time t) { return std::chrono::duration<double, std::milli>(t - Core::Time{}).count(); }

    void schedule_tick(int p, double t) {
        auto &nt = next_tick_[idx(p)];
        if (nt >= 0 && nt <= t) return;
        nt = t;
        q_.push({t, order_++, p, Ev::tick, false, ++gen_[idx(p)], {}});
    }

    // Delivers what process p's core just did (sends, events) at time `now`.
    void flush(int p, double now) {
        for (auto &snd : fx_.sends) {
            const int kind = detector_msg_kind(snd.msg.data(), snd.msg.size());
            const bool notice =
                kind == static_cast<int>(DetectorMsg::failed) || kind == static_cast<int>(DetectorMsg::sync_request);
            if (notice && res_.declared >= 0) ++msgs_[idx(p)];
            q_.push({now + opt_.latency + opt_.jitter * u_(rng_), order_++, snd.peer, Ev::message, notice, 0,
                     std::move(snd.msg)});
        }
        fx_.sends.clear();
        for (const auto &e : fx_.events)
            if ((e.kind == Core::Event::timeout || e.kind == Core::Event::ended) && res_.declared < 0)
                res_.declared = now;
        fx_.events.clear();
        fx_.watch = -2;
        if (!counted_[idx(p)] && !dead_[idx(p)]) {
            bool all = true;
            for (int v : victims_) all = all && logs_[idx(p)].contains(v);
            if (all) {
                counted_[idx(p)] = 1;
                ++known_all_;
                res_.last = now;
            }
        }
        schedule_tick(p, back(cores_[idx(p)].deadline()));
    }

    // Handles one event; true when it was a message (the run may be over).
    bool step(const Ev &e) {
        const int p = e.to;
        const auto i = idx(p);
        if (dead_[i]) return false;
        if (e.kind == Ev::crash) {
            dead_[i] = 1;
            return false;
        }
        if (e.kind == Ev::tick) {
            if (e.gen != gen_[i]) return false;
            next_tick_[i] = -1;
            while (cores_[i].tick(at(e.t), fx_)) flush(p, e.t);
            flush(p, e.t);
            return false;
        }
        // A message; the adapter ticks right after a batch of messages.
        if (e.notice && res_.declared >= 0) ++msgs_[i];
        cores_[i].on_message(e.msg.data(), e.msg.size(), at(e.t), fx_);
        while (cores_[i].tick(at(e.t), fx_)) flush(p, e.t);
        flush(p, e.t);
        return true;
    }

    DetectorResult result() {
        res_.live = live_;
        res_.reached = static_cast<int>(known_all_);
        long total = 0;
        for (int p = 0; p < n_; ++p) {
            if (dead_[idx(p)]) continue;
            total += msgs_[idx(p)];
            res_.max_msgs = std::max(res_.max_msgs, msgs_[idx(p)]);
        }
        res_.mean_msgs = live_ ? static_cast<double>(total) / live_ : 0;
        return res_;
    }

    int n_;
    const std::vector<int> &victims_;
    const Options &opt_;
    std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q_;
    std::uint64_t order_ = 0;
    std::mt19937_64 rng_;
    std::uniform_real_distribution<double> u_{0.0, 1.0};
    std::vector<SparseLog> logs_;
    std::vector<Core> cores_;
    std::vector<char> dead_;
    std::vector<std::uint32_t> gen_;
    std::vector<double> next_tick_;
    std::vector<long> msgs_;
    std::vector<char> counted_;
    std::size_t known_all_ = 0;  // survivors that know every victim
    int live_ = 0;
    Core::Effects fx_;
    DetectorResult res_;
};

}  // namespace

DetectorResult simulate_detector(int n, const std::vector<int> &victims, double crash_at, double period, double timeout,
                                 double horizon, const Options &opt) {
    return DetectorRun(n, victims, period, timeout, opt).run(crash_at, horizon);
}

}  // namespace ftmpi::ft::sim
