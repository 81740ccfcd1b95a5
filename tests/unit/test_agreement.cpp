// ft/'s protocols on scripted event sequences: the overlays, the agreement
// state machine alone, and the agreement among simulated processes
// (ft/sim/sim.hpp) with crashes injected at chosen protocol steps.
#include <algorithm>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "ft/agreement.hpp"
#include "ft/detector_core.hpp"
#include "ft/revoke.hpp"
#include "ft/sim/sim.hpp"
#include "ft/topology.hpp"

using namespace ftmpi::ft;
using ftmpi::ft::sim::AgreeSim;
using ftmpi::ft::sim::Options;

namespace {

std::vector<std::string> all_checks(const AgreeSim &s, std::uint64_t seq) { return s.check(seq); }

const Decision &decision_of(const AgreeSim &s, int p, std::uint64_t seq) {
    const auto *inst = s.instance(p, seq);
    REQUIRE(inst != nullptr);
    REQUIRE(inst->decided);
    return inst->decision;
}

}  // namespace

TEST_CASE("k-nomial tree: every live member has one live parent that counts it as a child", "[ft][topology]") {
    std::mt19937 rng(5);
    for (int trial = 0; trial < 300; ++trial) {
        const int n = 1 + static_cast<int>(rng() % 70);
        std::vector<char> dead(static_cast<std::size_t>(n), 0);
        const int kills = static_cast<int>(rng() % static_cast<unsigned>(n));
        for (int k = 0; k < kills; ++k) dead[rng() % static_cast<unsigned>(n)] = 1;
        auto failed = [&](int r) { return dead[static_cast<std::size_t>(r)] != 0; };
        const int root = lowest_live(n, failed);
        std::vector<int> counted(static_cast<std::size_t>(n), 0);
        for (int p = 0; p < n; ++p) {
            if (failed(p)) continue;
            for (int c : live_children(n, p, failed)) {
                CHECK_FALSE(failed(c));
                CHECK(live_parent(n, c, failed) == p);
                ++counted[static_cast<std::size_t>(c)];
            }
        }
        for (int p = 0; p < n; ++p) {
            if (failed(p)) continue;
            if (p == root) {
                CHECK(live_parent(n, p, failed) == -1);
                CHECK(counted[static_cast<std::size_t>(p)] == 0);
            } else {
                CHECK(counted[static_cast<std::size_t>(p)] == 1);
            }
        }
    }
}

TEST_CASE("binomial graph and ring", "[ft][topology]") {
    auto none = [](int) { return false; };
    CHECK(bmg_neighbours(8, 0, none) == std::vector<int>{1, 2, 4, 6, 7});
    CHECK(bmg_neighbours(1, 0, none).empty());
    CHECK(bmg_neighbours(8, 0, [](int r) { return r == 4; }) == std::vector<int>{1, 2, 6, 7});
    auto alive = [](int r) { return r != 3; };
    CHECK(ring_pred(6, 4, alive) == 2);
    CHECK(ring_succ(6, 2, alive) == 4);
    CHECK(ring_succ(6, 5, alive) == 0);
}

TEST_CASE("revoke notice: once, to the live BMG neighbours", "[ft][revoke]") {
    sim::View v(8, 3);
    v.add(4);
    bool revoked = false;
    CHECK(revoke_notice(revoked, v) == std::vector<int>{1, 2, 5, 7});
    CHECK(revoked);
    CHECK(revoke_notice(revoked, v).empty());
    for (int n : {2, 10, 100, 1000}) {
        const auto r = sim::simulate_broadcast(n, n / 3, {}, false, Options{});
        CHECK(r.reached == r.live);
        CHECK(r.last <= std::ceil(std::log2(n)) + 1);
    }
    // Dead forwarders nobody knows of yet: everyone else still hears.
    const auto r = sim::simulate_broadcast(64, 0, {1, 2, 4, 8, 16, 32}, false, Options{});
    CHECK(r.reached == r.live);
}

TEST_CASE("agreement messages: encode and decode", "[ft][agreement]") {
    AgreeMsg m{AgreeMsg::Type::contribute, 42, 3, true, true, 2, Decision{{7, ~0ull}, {1, 5}, 99}};
    const auto bytes = encode(m);
    AgreeMsg back;
    REQUIRE(decode(bytes.data(), bytes.size(), back));
    CHECK(back.type == m.type);
    CHECK(back.seq == 42);
    CHECK(back.round == 3);
    CHECK(back.abortable);
    CHECK(back.reported);
    CHECK(back.report_tag == 2);
    CHECK(back.body == m.body);
    CHECK_FALSE(decode(bytes.data(), bytes.size() - 1, back));
    CHECK_FALSE(decode(bytes.data(), 10, back));
    auto bad = bytes;
    bad[0] = 9;  // no such type
    CHECK_FALSE(decode(bad.data(), bad.size(), back));
    // One form of each message only (tests/fuzz/fuzz_agreement checks that
    // whatever decodes encodes back to the same bytes).
    for (std::size_t at : {1, 2, 3, 20, 21, 22, 23}) {  // flags, reserved bytes
        bad = bytes;
        bad[at] = 2;
        CHECK_FALSE(decode(bad.data(), bad.size(), back));
    }
    // Failed members strictly ascending and not negative.
    for (const std::vector<int> &failed : {std::vector<int>{5, 5}, std::vector<int>{-1, 3}, std::vector<int>{4, 2}}) {
        AgreeMsg f = m;
        f.body.failed = failed;
        const auto fb = encode(f);
        CHECK_FALSE(decode(fb.data(), fb.size(), back));
    }
}

TEST_CASE("agreement machine: a message naming a non-member as failed is dropped", "[ft][agreement]") {
    sim::View v(3, 0);
    Agreements a;
    AgreeEffects out;
    a.enter(v, 1, {1}, 11, false, false, out);
    out = {};
    AgreeMsg d{AgreeMsg::Type::decide, 1, 0, false, false, -1, Decision{{1}, {1, 7}, 5}};
    a.on_message(v, 1, d, out);
    const auto *inst = a.find(1);
    REQUIRE(inst != nullptr);
    CHECK_FALSE(inst->decided);
}

TEST_CASE("agreement machine: a decision issued by a root known to have failed is not taken", "[ft][agreement]") {
    sim::View v(3, 2);  // member 2: parent 0, no children
    Agreements a;
    AgreeEffects fx;
    a.enter(v, 0, {1}, 0, false, false, fx);
    REQUIRE(fx.sends.size() == 1);
    CHECK(fx.sends[0].to == 0);
    // Member 3 contributes, then root 0 fails: 2 re-sends in round 1.
    fx = {};
    v.add(0);
    a.on_failures(v, fx);
    REQUIRE(fx.sends.size() == 1);
    CHECK(fx.sends[0].to == 1);
    CHECK(fx.sends[0].msg.round == 1);
    // A decision of root 0, delayed in the network, arrives now: ignored.
    fx = {};
    a.on_message(v, 0, AgreeMsg{AgreeMsg::Type::decide, 0, 0, false, false, -1, Decision{{1}, {}, 5}}, fx);
    CHECK_FALSE(a.find(0)->decided);
    // Root 1's decision is taken, and passed to those who contributed here.
    a.on_message(v, 1, AgreeMsg{AgreeMsg::Type::decide, 0, 1, false, false, -1, Decision{{1}, {0}, 6}}, fx);
    REQUIRE(a.find(0)->decided);
    CHECK(a.find(0)->decision.nonce == 6);
    CHECK(fx.decided == std::vector<std::uint64_t>{0});
}

TEST_CASE("agreement: failure-free, every size, O(log n) messages", "[ft][agreement]") {
    for (int n : {1, 2, 3, 7, 8, 9, 33, 100}) {
        AgreeSim s(n, Options{});
        for (int p = 0; p < n; ++p) s.set_words(p, 0, {~(std::uint64_t{1} << (p % 64))});
        s.enter_all(0);
        s.run();
        CHECK(all_checks(s, 0).empty());
        std::uint64_t expect = ~std::uint64_t{0};
        for (int p = 0; p < n; ++p) expect &= ~(std::uint64_t{1} << (p % 64));
        CHECK(decision_of(s, n - 1, 0).words == std::vector<std::uint64_t>{expect});
        int depth = 0;  // base-k digits of n - 1
        for (int m = n - 1; m > 0; m /= k_tree_radix) ++depth;
        for (int p = 0; p < n; ++p) {
            CHECK(s.decided_at(p, 0) <= 2 * depth);
            CHECK(s.sends(p) <= 1 + (k_tree_radix - 1) * depth);
        }
    }
}

TEST_CASE("agreement: the root dies after deciding, before all children heard", "[ft][agreement]") {
    for (long told = 0; told < 4; ++told) {
        Options opt;
        AgreeSim s(16, opt);
        s.crash_after_sends(0, told);  // the root's sends are its decision only
        s.enter_all(0);
        s.run();
        CHECK_FALSE(s.alive(0));
        CHECK(all_checks(s, 0).empty());
        if (told > 0) {
            // Child 1 heard root 0's decision before it died: every survivor
            // decides that one, nonce included.
            const auto *one = s.instance(1, 0);
            REQUIRE(one != nullptr);
            CHECK(decision_of(s, 15, 0) == one->decision);
            CHECK(one->decision.nonce == 0u);  // root 0's nonce (AgreeSim's: 1000003 p + seq)
        }
    }
}

TEST_CASE("agreement: a subtree loses two levels at once", "[ft][agreement]") {
    // 64 and its child 72 die before contributing: 65..71 and 73..79
    // reattach to the root.
    Options opt;
    opt.detect = 3;
    AgreeSim s(80, opt);
    REQUIRE(tree_parent(72) == 64);
    REQUIRE(tree_parent(75) == 72);
    for (int p = 0; p < 80; ++p) s.set_words(p, 0, {~(std::uint64_t{1} << (p % 64))});
    s.crash_at(64, 0);
    s.crash_at(72, 0);
    s.enter_all(0, 0.5);
    s.run();
    CHECK(all_checks(s, 0).empty());
    const Decision &d = decision_of(s, 75, 0);
    CHECK(d.failed == std::vector<int>{64, 72});
    std::uint64_t expect = ~std::uint64_t{0};
    for (int p = 0; p < 80; ++p)
        if (p != 64 && p != 72) expect &= ~(std::uint64_t{1} << (p % 64));
    CHECK(d.words == std::vector<std::uint64_t>{expect});
}

TEST_CASE("agreement: late requests after the decision are answered from the kept decision", "[ft][agreement]") {
    // Member 8 forwards the decision to none of its children 9..15: it dies
    // at its second send. They ask the root, which decided long before.
    AgreeSim s(24, Options{});
    REQUIRE(tree_parent(9) == 8);
    s.crash_after_sends(8, 1);
    s.enter_all(0);
    s.run();
    CHECK(all_checks(s, 0).empty());
    CHECK(s.decided_at(0, 0) < s.decided_at(9, 0));
    CHECK(s.decided_at(15, 0) > 4);  // after the detection of 8's failure
    // The root answered the re-routed requests itself: beyond its own
    // children (1..7, 8, 16), 9..15.
    CHECK(s.sends(0) == 9 + 7);
}

TEST_CASE("agreement: two overlapping agreements on one group", "[ft][agreement]") {
    Options opt;
    opt.jitter = 3;
    opt.seed = 11;
    AgreeSim s(12, opt);
    std::mt19937 rng(3);
    for (int p = 0; p < 12; ++p) {
        s.set_words(p, 0, {p == 5 ? 0u : 1u});
        s.set_words(p, 1, {1u});
        // Some members enter the second before the first reached them.
        s.enter(p, 0, static_cast<double>(rng() % 4));
        s.enter(p, 1, static_cast<double>(rng() % 4));
    }
    s.crash_at(2, 1.5);
    s.run();
    CHECK(all_checks(s, 0).empty());
    CHECK(all_checks(s, 1).empty());
    CHECK(decision_of(s, 0, 0).words == std::vector<std::uint64_t>{0});
    CHECK(decision_of(s, 0, 1).words == std::vector<std::uint64_t>{1});
}

TEST_CASE("agreement: a creation on a revoked group fails without members that skipped it", "[ft][agreement]") {
    // Member 3 never enters (it skipped the creation); once the group is
    // revoked everywhere, it is asked, and enters with zeros.
    AgreeSim s(6, Options{});
    for (int p = 0; p < 6; ++p) {
        if (p != 3) s.enter(p, 7, 0, true);
        s.revoke_at(p, 10);
    }
    s.run();
    for (int p = 0; p < 6; ++p) {
        const Decision &d = decision_of(s, p, 7);
        CHECK((d.words.empty() || d.words[0] == 0));
    }
}

TEST_CASE("agreement: random crashes at random steps, reordering network", "[ft][agreement]") {
    std::mt19937_64 rng(2024);
    for (int trial = 0; trial < 400; ++trial) {
        Options opt;
        opt.seed = rng();
        opt.jitter = 2;
        opt.detect = 1 + static_cast<double>(rng() % 6);
        opt.detect_jitter = 5;
        const int n = 2 + static_cast<int>(rng() % 30);
        AgreeSim s(n, opt);
        const int f = static_cast<int>(rng() % static_cast<unsigned>(n));
        for (int i = 0; i < f; ++i) {
            const int p = static_cast<int>(rng() % static_cast<unsigned>(n));
            if (rng() % 2) s.crash_after_sends(p, static_cast<long>(rng() % 6));
            else s.crash_at(p, static_cast<double>(rng() % 20));
        }
        for (int p = 0; p < n; ++p) {
            s.set_words(p, 0, {rng() | rng()});
            s.enter(p, 0, static_cast<double>(rng() % 3));
        }
        s.run();
        const auto bad = all_checks(s, 0);
        INFO("trial " << trial << " seed " << opt.seed);
        CHECK(bad.empty());
        if (!bad.empty()) FAIL(bad.front());
    }
}

namespace {
class Log final : public FailureLog {
public:
    bool add(int id) override {
        if (contains(id)) return false;
        ids.push_back(id);
        return true;
    }
    bool contains(int id) const override { return std::find(ids.begin(), ids.end(), id) != ids.end(); }
    std::size_t size() const override { return ids.size(); }
    int at(std::size_t i) const override { return ids[i]; }
    std::vector<int> ids;
};
}  // namespace

namespace {
// A heartbeat from rank `from` of an 8-rank ring, as its detector would send it.
std::vector<char> heartbeat_from(int from, DetectorCore::Time t) {
    Log log;
    DetectorCore sender(log, from, 8, 100, DetectorCore::Ms(10), DetectorCore::Ms(50), 64);
    DetectorCore::Effects fx;
    sender.start(t, fx);
    for (auto &s : fx.sends)
        if (s.peer == (from + 1) % 8) return s.msg;
    return {};
}

// Ticks `core` every 10 ms from `from` (exclusive) until it declares its
// predecessor or `until` passes; returns when it declared (or `until` + 1).
int tick_until_declared(DetectorCore &core, DetectorCore::Time t0, int from, int until,
                        std::vector<DetectorCore::Event> *events = nullptr) {
    for (int t = from + 10; t <= until; t += 10) {
        DetectorCore::Effects fx;
        const bool declared = core.tick(t0 + DetectorCore::Ms(t), fx);
        if (events) events->insert(events->end(), fx.events.begin(), fx.events.end());
        if (declared) return t;
    }
    return until + 1;
}
}  // namespace

TEST_CASE("detector state machine: timeout, news spread once, exclusion", "[ft][detector]") {
    using Core = DetectorCore;
    using Ms = Core::Ms;
    Log log;
    Core core(log, 1, 8, 100, Ms(10), Ms(50), 64);  // rank 1 = process 101
    Core::Effects fx;
    const Core::Time t0{};
    core.start(t0, fx);
    CHECK(fx.watch == 0);  // its predecessor
    std::vector<int> to;
    for (const auto &s : fx.sends) to.push_back(s.peer);
    std::sort(to.begin(), to.end());
    CHECK(to == bmg_neighbours(8, 1, [](int) { return false; }));
    fx = {};
    // Rank 0's first heartbeat; then it stays silent past the timeout.
    const auto beat = heartbeat_from(0, t0);
    core.on_message(beat.data(), beat.size(), t0, fx);
    CHECK(fx.sends.empty());
    // Beats to its successor.
    CHECK_FALSE(core.tick(t0 + Ms(20), fx));
    REQUIRE(fx.sends.size() == 1);
    CHECK(fx.sends[0].peer == 2);
    CHECK(detector_msg_kind(fx.sends[0].msg.data(), fx.sends[0].msg.size()) == int(DetectorMsg::heartbeat));
    // Silence counts while this detector runs, tick by tick (every period).
    for (int t = 30; t <= 50; t += 10) {
        fx = {};
        CHECK_FALSE(core.tick(t0 + Ms(t), fx));
    }
    fx = {};
    CHECK(core.tick(t0 + Ms(51), fx));
    REQUIRE(fx.events.size() == 1);
    CHECK(fx.events[0].kind == Core::Event::timeout);
    CHECK(fx.events[0].id == 100);
    fx = {};
    // Next pass: the news goes to every live neighbour once, and rank 7 is watched.
    CHECK_FALSE(core.tick(t0 + Ms(51), fx));
    CHECK(fx.watch == 7);
    int notices = 0;
    for (const auto &s : fx.sends) {
        CHECK(s.peer != 0);
        notices += detector_msg_kind(s.msg.data(), s.msg.size()) == int(DetectorMsg::failed);
    }
    CHECK(notices == static_cast<int>(bmg_neighbours(8, 1, [](int r) { return r == 0; }).size()));
    fx = {};
    CHECK_FALSE(core.tick(t0 + Ms(52), fx));
    CHECK(fx.sends.empty());
    // A process that holds this one failed: it sends it nothing, until this
    // one's heartbeat shows their sets differ; the sync names it, and it
    // must leave.
    Log other;
    Core teller(other, 2, 8, 100, Ms(10), Ms(50), 64);
    Core::Effects tfx;
    teller.start(t0, tfx);
    tfx = {};
    other.add(101);
    teller.tick(t0 + Ms(1), tfx);
    for (const auto &s : tfx.sends) CHECK(s.peer != 1);
    tfx = {};
    fx = {};
    core.tick(t0 + Ms(70), fx);  // its next beat, to rank 2
    for (const auto &s : fx.sends)
        if (s.peer == 2) teller.on_message(s.msg.data(), s.msg.size(), t0 + Ms(71), tfx);
    fx = {};
    bool told = false;
    for (const auto &s : tfx.sends)
        if (s.peer == 1) {
            core.on_message(s.msg.data(), s.msg.size(), t0 + Ms(72), fx);
            told = true;
        }
    REQUIRE(told);
    CHECK(fx.excluded);
}


TEST_CASE("detector state machine: the observer's own absence does not count against its predecessor",
          "[ft][detector]") {
    using Core = DetectorCore;
    using Ms = Core::Ms;
    Log log;
    Core core(log, 1, 8, 100, Ms(10), Ms(50), 64);  // period 10 ms, timeout 50 ms
    Core::Effects fx;
    const Core::Time t0{};
    core.start(t0, fx);
    CHECK_FALSE(core.tick(t0 + Ms(10), fx));
    CHECK_FALSE(core.tick(t0 + Ms(20), fx));
    // This detector did not run for 500 ms (its process starved, its CPU
    // stolen): that counts as two periods, not as the predecessor's silence.
    fx = {};
    CHECK_FALSE(core.tick(t0 + Ms(520), fx));
    CHECK(fx.events.empty());
    // The heartbeat that waited meanwhile arrives; the longest gap is as it was.
    const auto beat = heartbeat_from(0, t0);
    REQUIRE_FALSE(beat.empty());
    core.on_message(beat.data(), beat.size(), t0 + Ms(521), fx);
    CHECK(core.max_gap() == Ms(521));
    // A predecessor silent from then on, with this detector running, is
    // declared one timeout later (within a tick), as before.
    const int declared = tick_until_declared(core, t0, 521, 2000);
    CHECK(declared > 521 + 50);
    CHECK(declared <= 521 + 50 + 10);
    CHECK(log.contains(100));
}

TEST_CASE("detector state machine: a predecessor whose detector thread waits for a CPU is not suspected",
          "[ft][detector]") {
    using Core = DetectorCore;
    using Ms = Core::Ms;
    using E = Core::Evidence;
    const Core::Time t0{};
    Log log;
    Core core(log, 1, 8, 100, Ms(10), Ms(50), 64);
    E::Kind said = E::waiting;
    int asked = 0;
    core.set_evidence([&](int pred) {
        CHECK(pred == 0);
        ++asked;
        return E{said, "test"};
    });
    Core::Effects fx;
    core.start(t0, fx);
    std::vector<Core::Event> events;
    // Overdue but starved: asked once a period, one `starved` event, no failure.
    CHECK(tick_until_declared(core, t0, 0, 200, &events) == 201);
    CHECK(asked >= 10);
    REQUIRE(events.size() == 1);
    CHECK(events[0].kind == Core::Event::starved);
    CHECK_FALSE(log.contains(100));
    // Its heartbeat comes: the silence starts over.
    const auto beat = heartbeat_from(0, t0);
    core.on_message(beat.data(), beat.size(), t0 + Ms(205), fx);
    asked = 0;
    CHECK(tick_until_declared(core, t0, 200, 250) == 251);
    CHECK(asked == 0);
    // Then stopped (or gone, or stuck): declared at the next look.
    said = E::silent;
    events.clear();
    const int declared = tick_until_declared(core, t0, 250, 400, &events);
    CHECK(declared <= 205 + 50 + 10 + 10);
    REQUIRE(events.size() == 1);
    CHECK(events[0].kind == Core::Event::timeout);
    CHECK(std::string(events[0].detail) == "test");
    CHECK(log.contains(100));

    // Starved without end: declared once the silence passes the limit.
    Log log2;
    Core core2(log2, 1, 8, 100, Ms(10), Ms(50), 64);
    core2.set_evidence([](int) { return E{E::waiting, "test"}; });
    core2.start(t0, fx);
    const int limit = Core::k_starved_limit * 50;
    const int at = tick_until_declared(core2, t0, 0, 10 * limit);
    CHECK(at > limit);
    CHECK(at <= limit + 20);
}

TEST_CASE("detector state machine: the first predecessor is waited for until its first heartbeat", "[ft][detector]") {
    using Core = DetectorCore;
    using Ms = Core::Ms;
    using E = Core::Evidence;
    const Core::Time t0{};
    const int limit = Core::k_starved_limit * 50;
    // Nothing from rank 0 since the start, and nothing known of its process
    // (another node): its detector may not run yet. One `starved` event,
    // then declared once the silence passes the limit.
    Log log;
    Core core(log, 1, 8, 100, Ms(10), Ms(50), 64);
    Core::Effects fx;
    core.start(t0, fx);
    std::vector<Core::Event> events;
    const int at = tick_until_declared(core, t0, 0, 10 * limit, &events);
    CHECK(at > limit);
    CHECK(at <= limit + 20);
    REQUIRE(events.size() == 2);
    CHECK(events[0].kind == Core::Event::starved);
    CHECK(events[1].kind == Core::Event::timeout);
    CHECK(log.contains(100));
    // Its first heartbeat late (a slow start): from then on, one timeout.
    Log log2;
    Core core2(log2, 1, 8, 100, Ms(10), Ms(50), 64);
    core2.start(t0, fx);
    CHECK(tick_until_declared(core2, t0, 0, 300) == 301);
    const auto beat = heartbeat_from(0, t0);
    core2.on_message(beat.data(), beat.size(), t0 + Ms(305), fx);
    const int declared = tick_until_declared(core2, t0, 300, 2000);
    CHECK(declared > 305 + 50);
    CHECK(declared <= 305 + 50 + 10);
    // Stopped or gone, as the environment shows on its node: one timeout.
    Log log3;
    Core core3(log3, 1, 8, 100, Ms(10), Ms(50), 64);
    core3.set_evidence([](int) { return E{E::silent, "test"}; });
    core3.start(t0, fx);
    CHECK(tick_until_declared(core3, t0, 0, 2000) <= 50 + 10);
    CHECK(log3.contains(100));
    // Its detector shown started on another channel (its hello at init),
    // its heartbeat still unheard: one timeout from then, no more waiting.
    Log log4;
    Core core4(log4, 1, 8, 100, Ms(10), Ms(50), 64);
    core4.start(t0, fx);
    CHECK(tick_until_declared(core4, t0, 0, 200) == 201);  // waited for past the timeout
    core4.peer_started(3, t0 + Ms(205));                   // not the predecessor: nothing changes
    core4.peer_started(0, t0 + Ms(205));
    const int declared4 = tick_until_declared(core4, t0, 200, 2000);
    CHECK(declared4 > 205 + 50);
    CHECK(declared4 <= 205 + 50 + 10);
    CHECK(log4.contains(100));
    // Told before the timeout: its silence counts from then, as a heartbeat's would.
    Log log5;
    Core core5(log5, 1, 8, 100, Ms(10), Ms(50), 64);
    core5.start(t0, fx);
    core5.peer_started(0, t0 + Ms(20));
    CHECK(tick_until_declared(core5, t0, 0, 2000) == 80);
    // Once its heartbeat came, the hint is not a heartbeat: silence is not reset.
    Log log6;
    Core core6(log6, 1, 8, 100, Ms(10), Ms(50), 64);
    core6.start(t0, fx);
    core6.on_message(beat.data(), beat.size(), t0 + Ms(10), fx);
    CHECK(tick_until_declared(core6, t0, 0, 30) == 31);
    core6.peer_started(0, t0 + Ms(40));
    CHECK(tick_until_declared(core6, t0, 30, 2000) == 70);
}

TEST_CASE("detector state machine at scale: every survivor learns of every crash", "[ft][detector]") {
    for (int n : {8, 64, 300}) {
        const auto d = sim::simulate_detector(n, {n / 2, n / 2 + 1, 0}, 250, 100, 500, 20000, Options{});
        CHECK(d.reached == d.live);
        CHECK(d.declared > 250);  // the last beat heard, plus the timeout
        CHECK(d.declared <= 250 + 500 + 2);
        CHECK(d.last >= d.declared);
    }
}

TEST_CASE("agreement: many agreements in flight at once are all kept until decided", "[ft][agreement]") {
    // A program may start 20 iagree before waiting for any: none is dropped.
    Options opt;
    opt.jitter = 2;
    AgreeSim s(6, opt);
    for (int p = 0; p < 6; ++p)
        for (std::uint64_t seq = 0; seq < 20; ++seq) {
            s.set_words(p, seq, {seq});
            s.enter(p, seq, static_cast<double>(p == 5 ? 30 : 0));  // one member enters all of them late
        }
    s.run();
    for (std::uint64_t seq = 0; seq < 20; ++seq) {
        CHECK(all_checks(s, seq).empty());
    }
    // The next agreement brings the kept ones back to the newest decided.
    AgreeSim t(2, Options{});
    for (std::uint64_t seq = 0; seq < 20; ++seq) t.enter_all(seq, 0);
    t.enter_all(20, 100);
    t.run();
    CHECK(all_checks(t, 20).empty());
    CHECK(t.instance(0, 20) != nullptr);
    CHECK(t.instance(0, 13) != nullptr);
    CHECK(t.instance(0, 12) == nullptr);
}
