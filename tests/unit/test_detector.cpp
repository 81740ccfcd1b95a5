// The failure detector's protocols, with several detectors in one process
// talking through an in-memory control channel: a crashed process drops
// every message and runs no detector; a stopped one keeps its thread blocked
// (like SIGSTOP) until it is resumed.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "ft/detector.hpp"
#include "ft/failed_set.hpp"

using namespace ftmpi;
using Clock = std::chrono::steady_clock;

namespace {

struct Hub {
    explicit Hub(int n)
        : box(static_cast<std::size_t>(n)), woken(static_cast<std::size_t>(n), false),
          crashed(static_cast<std::size_t>(n), false), stopped(static_cast<std::size_t>(n), false) {}
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::deque<std::vector<char>>> box;
    std::vector<bool> woken, crashed, stopped;
};

class FakeChannel final : public transport::ControlChannel {
public:
    FakeChannel(Hub &hub, int me) : hub_(hub), me_(me) {}
    std::size_t max_message() const override { return 64; }
    bool send(transport::PeerId peer, const void *msg, std::size_t len) override {
        std::lock_guard<std::mutex> hold(hub_.m);
        if (hub_.crashed[peer]) return true;  // lost, as to a dead process
        auto p = static_cast<const char *>(msg);
        hub_.box[peer].emplace_back(p, p + len);
        hub_.cv.notify_all();
        return true;
    }
    int wait(int timeout_ms, const std::function<void(const void *, std::size_t)> &fn) override {
        std::unique_lock<std::mutex> lock(hub_.m);
        const auto me = static_cast<std::size_t>(me_);
        // A stopped process does not run at all until resumed (or its detector is stopped).
        hub_.cv.wait(lock, [&] { return !hub_.stopped[me] || hub_.woken[me]; });
        hub_.cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                         [&] { return !hub_.box[me].empty() || hub_.woken[me]; });
        hub_.woken[me] = false;
        auto msgs = std::move(hub_.box[me]);
        hub_.box[me].clear();
        lock.unlock();
        for (auto &m : msgs) fn(m.data(), m.size());
        return static_cast<int>(msgs.size());
    }
    void wake() override {
        std::lock_guard<std::mutex> hold(hub_.m);
        hub_.woken[static_cast<std::size_t>(me_)] = true;
        hub_.cv.notify_all();
    }
    void connect(runtime::ProcessManager &) override {}

private:
    Hub &hub_;
    int me_;
};

struct Job {
    explicit Job(int n) : hub(n), sets(static_cast<std::size_t>(n)), excluded(static_cast<std::size_t>(n)) {
        for (int r = 0; r < n; ++r) {
            sets[static_cast<std::size_t>(r)].reset(n);
            ft::DetectorOptions opt{20, 150, [this, r] { excluded[static_cast<std::size_t>(r)] = true; }};
            detectors.push_back(std::make_unique<ft::Detector>(sets[static_cast<std::size_t>(r)],
                                                               std::make_unique<FakeChannel>(hub, r), r, n, 0, opt,
                                                               [this](int victim) {
                                                                   std::lock_guard<std::mutex> hold(kill_lock);
                                                                   kills.push_back(victim);
                                                                   return true;
                                                               }));
        }
        for (auto &d : detectors) d->start();
    }
    ~Job() {
        {
            std::lock_guard<std::mutex> hold(hub.m);
            for (std::size_t r = 0; r < hub.stopped.size(); ++r) hub.stopped[r] = false;
            hub.cv.notify_all();
        }
        for (auto &d : detectors) d->stop(false);
    }
    void crash(int r) {
        {
            std::lock_guard<std::mutex> hold(hub.m);
            hub.crashed[static_cast<std::size_t>(r)] = true;
        }
        detectors[static_cast<std::size_t>(r)]->stop(false);
    }
    void set_stopped(int r, bool s) {
        std::lock_guard<std::mutex> hold(hub.m);
        hub.stopped[static_cast<std::size_t>(r)] = s;
        hub.cv.notify_all();
    }
    std::set<int> failed_at(int r) {
        std::set<int> out;
        auto &s = sets[static_cast<std::size_t>(r)];
        for (std::size_t i = 0; i < s.size(); ++i) out.insert(s.at(i));
        return out;
    }
    // Polls (deadline 5 s) until every process in `live` reports exactly `expect`.
    bool converge(const std::vector<int> &live, const std::set<int> &expect) {
        const auto until = Clock::now() + std::chrono::seconds(5);
        while (Clock::now() < until) {
            bool all = true;
            for (int r : live) all = all && failed_at(r) == expect;
            if (all) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return false;
    }

    Hub hub;
    std::vector<ft::FailedSet> sets;
    std::vector<std::atomic<bool>> excluded;
    std::vector<std::unique_ptr<ft::Detector>> detectors;
    std::mutex kill_lock;
    std::vector<int> kills;
};

}  // namespace

TEST_CASE("failed set: append-only, deduplicated, in arrival order", "[ft]") {
    ft::FailedSet s;
    s.reset(8);
    CHECK(s.add(5));
    CHECK(s.add(2));
    CHECK_FALSE(s.add(5));
    CHECK_FALSE(s.add(8));
    CHECK_FALSE(s.add(-1));
    REQUIRE(s.size() == 2);
    CHECK(s.at(0) == 5);
    CHECK(s.at(1) == 2);
    CHECK(s.contains(2));
    CHECK_FALSE(s.contains(3));
}

TEST_CASE("failed set: concurrent writers record each rank once", "[ft]") {
    ft::FailedSet s;
    s.reset(1000);
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t)
        writers.emplace_back([&s] {
            for (int r = 0; r < 1000; ++r) s.add(r);
        });
    for (auto &w : writers) w.join();
    REQUIRE(s.size() == 1000);
    std::set<int> seen;
    for (std::size_t i = 0; i < s.size(); ++i) seen.insert(s.at(i));
    CHECK(seen.size() == 1000);
}

TEST_CASE("detector: start() returns once the first heartbeats are sent", "[ft][detector]") {
    // A process goes on with MPI_Init (its hellos tell peers it is up) only
    // after its detector has beaten: every neighbour already has one.
    for (int round = 0; round < 20; ++round) {
        Hub hub(4);
        ft::FailedSet set;
        set.reset(4);
        ft::Detector d(set, std::make_unique<FakeChannel>(hub, 1), 1, 4, 0, ft::DetectorOptions{20, 150, {}},
                       [](int) { return true; });
        d.start();
        {
            std::lock_guard<std::mutex> hold(hub.m);
            for (int peer : {0, 2, 3}) CHECK_FALSE(hub.box[static_cast<std::size_t>(peer)].empty());
        }
        d.stop(false);
    }
}

namespace {
// Detectors for ranks 0..n-1 on `hub`, not started.
std::vector<std::unique_ptr<ft::Detector>> unstarted(Hub &hub, std::vector<ft::FailedSet> &sets, int n) {
    std::vector<std::unique_ptr<ft::Detector>> d;
    for (int r = 0; r < n; ++r) {
        sets[static_cast<std::size_t>(r)].reset(n);
        d.push_back(std::make_unique<ft::Detector>(sets[static_cast<std::size_t>(r)],
                                                   std::make_unique<FakeChannel>(hub, r), r, n, 0,
                                                   ft::DetectorOptions{20, 150, {}}, [](int) { return true; }));
    }
    return d;
}
}  // namespace

TEST_CASE("detector: wait_first_heard() returns once the first predecessor beats, is known started, or failed",
          "[ft][detector]") {
    Hub hub(3);
    std::vector<ft::FailedSet> sets(3);
    auto d = unstarted(hub, sets, 3);
    SECTION("its first heartbeat") {
        // Rank 2's predecessor (1) has not started: within the late-starter
        // allowance (10 timeouts) the wait goes on.
        d[2]->start();
        CHECK_FALSE(d[2]->wait_first_heard(std::chrono::milliseconds(400)));
        d[1]->start();
        CHECK(d[2]->wait_first_heard(std::chrono::seconds(5)));
        CHECK(sets[2].size() == 0);
    }
    SECTION("its hello on another channel") {
        d[0]->start();  // its predecessor, 2, never starts
        CHECK_FALSE(d[0]->wait_first_heard(std::chrono::milliseconds(100)));
        d[0]->peer_started(2);
        CHECK(d[0]->wait_first_heard(std::chrono::seconds(5)));
    }
    SECTION("its failure, after the allowance") {
        d[2]->start();  // 1 never starts: declared failed after 10 timeouts (1.5 s)
        const auto t0 = Clock::now();
        CHECK(d[2]->wait_first_heard(std::chrono::seconds(5)));
        CHECK(Clock::now() - t0 >= std::chrono::milliseconds(1400));
        CHECK(sets[2].contains(1));
    }
    for (auto &x : d) x->stop(false);
}

TEST_CASE("detector: no suspicion while everyone beats", "[ft][detector]") {
    Job job(6);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the span observed, not a synchronization
    for (int r = 0; r < 6; ++r) CHECK(job.failed_at(r).empty());
}

TEST_CASE("detector: crashed processes, one observing the other, are found by all", "[ft][detector]") {
    Job job(7);
    job.crash(2);
    job.crash(3);  // 3 observes 2: 4 must find 3, then 2
    CHECK(job.converge({0, 1, 4, 5, 6}, {2, 3}));
}

TEST_CASE("detector: a stopped process is excluded, killed, and leaves when resumed", "[ft][detector]") {
    Job job(5);
    job.set_stopped(4, true);
    CHECK(job.converge({0, 1, 2, 3}, {4}));
    {
        std::lock_guard<std::mutex> hold(job.kill_lock);
        CHECK(std::find(job.kills.begin(), job.kills.end(), 4) != job.kills.end());
    }
    job.set_stopped(4, false);  // it wakes up among processes that consider it failed
    const auto until = Clock::now() + std::chrono::seconds(5);
    while (!job.excluded[4] && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(job.excluded[4]);
    for (int r = 0; r < 4; ++r) CHECK_FALSE(job.excluded[static_cast<std::size_t>(r)]);
}

TEST_CASE("detector: news from one process reaches all; the accused leaves", "[ft][detector]") {
    Job job(9);
    job.sets[0].add(7);  // as if rank 0 alone had found it unreachable (a transport error)
    job.detectors[0]->wake();
    CHECK(job.converge({0, 1, 2, 3, 4, 5, 6, 8}, {7}));
    const auto until = Clock::now() + std::chrono::seconds(5);
    while (!job.excluded[7] && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(job.excluded[7]);
}
