// The daemons' tree and the frames between them (launcher/tree.hpp,
// launcher/wire.hpp, launcher/link.hpp, launcher/job_spec.hpp): routing
// reaches every vertex by tree links, also after losses and reattachments,
// a flood reaches each vertex once, a frame opens only with its key and its
// sequence number, intact, a link drops what does not, and job specs
// decode only when well formed.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "launcher/job_spec.hpp"
#include "launcher/journal.hpp"
#include "launcher/link.hpp"
#include "launcher/stopped.hpp"
#include "launcher/tree.hpp"
#include "launcher/wire.hpp"

using namespace ftmpi::launcher;

// How many times a flood from `origin` reaches each vertex.
static std::vector<int> flood_counts(const Tree &t, int origin) {
    std::vector<int> got(static_cast<std::size_t>(t.vertices()), 0);
    std::vector<std::pair<int, int>> todo{{origin, -1}};
    while (!todo.empty()) {
        auto [v, from] = todo.back();
        todo.pop_back();
        ++got[static_cast<std::size_t>(v)];
        for (int n : t.flood_to(v, from)) todo.push_back({n, v});
    }
    return got;
}

TEST_CASE("the tree's shape and routing") {
    for (int fanout : {1, 2, 3, 8}) {
        for (int nodes : {1, 2, 7, 64, 200}) {
            Tree t(nodes, fanout);
            for (int v = 1; v <= nodes; ++v) {
                REQUIRE(t.parent(v) < v);
                const auto kids = t.children(t.parent(v));
                CHECK(std::find(kids.begin(), kids.end(), v) != kids.end());
            }
            // every pair: next_hop walks tree links and arrives within depth(a) + depth(b) hops
            for (int a = 0; a <= nodes; a += 1 + nodes / 17) {
                for (int b = 0; b <= nodes; b += 1 + nodes / 13) {
                    int at = a, hops = 0;
                    while (at != b && hops <= t.depth(a) + t.depth(b)) {
                        const int next = t.next_hop(at, b);
                        REQUIRE((next == t.parent(at) || t.parent(next) == at));
                        at = next;
                        ++hops;
                    }
                    CHECK(at == b);
                }
            }
            // a flood from any vertex reaches every vertex exactly once
            for (int origin : {0, nodes / 2, nodes}) {
                const std::vector<int> got = flood_counts(t, origin);
                CHECK(std::all_of(got.begin(), got.end(), [](int n) { return n == 1; }));
            }
        }
    }
    CHECK(Tree(1000, 32).depth(1000) == 2);  // O(log n) hops to the head
    CHECK(Tree(5, 1).depth(5) == 5);
}

TEST_CASE("frames: written, sealed, opened") {
    const std::string key(32, 'k');
    wire::Writer w;
    w.u8(7).u16(0xBEEF).u32(123456).u64(0x0102030405060708ull).str("ftn2").bytes({});
    const wire::Header h{wire::Type::proc_exit, 3, 5, 2};
    const auto f = wire::seal(key, 42, h, w.data());
    wire::Frame out;
    REQUIRE(wire::open(key, 42, f, out) == wire::Opened::ok);
    CHECK((out.header.type == wire::Type::proc_exit && out.header.flags == 3 && out.header.dst == 5 &&
           out.header.src == 2 && out.size == f.size()));
    wire::Reader r(out.payload);
    CHECK(r.u8() == 7);
    CHECK(r.u16() == 0xBEEF);
    CHECK(r.u32() == 123456);
    CHECK(r.u64() == 0x0102030405060708ull);
    CHECK(r.str() == "ftn2");
    CHECK(r.bytes().empty());
    CHECK(r.done());
    CHECK(r.u8() == 0);  // past the end
    CHECK_FALSE(r.ok());

    // incomplete prefixes wait; a frame followed by more opens alone
    for (std::size_t n = 0; n < f.size(); ++n)
        CHECK(wire::open(key, 42, std::span(f).first(n), out) == wire::Opened::incomplete);
    auto two = f;
    two.insert(two.end(), f.begin(), f.end());
    CHECK((wire::open(key, 42, two, out) == wire::Opened::ok && out.size == f.size()));

    // another key, another sequence number (a replay), any altered byte: refused
    CHECK(wire::open(std::string(32, 'x'), 42, f, out) == wire::Opened::bad);
    CHECK(wire::open(key, 43, f, out) == wire::Opened::bad);
    for (std::size_t i = 4; i < f.size(); ++i) {
        auto g = f;
        g[i] ^= 0x20;
        CHECK(wire::open(key, 42, g, out) == wire::Opened::bad);
    }
    // lengths out of bounds: refused before anything is read
    auto small = f;
    small[0] = 8, small[1] = small[2] = small[3] = 0;
    CHECK(wire::open(key, 42, small, out) == wire::Opened::bad);
    auto huge = f;
    huge[3] = 0x7f;
    CHECK(wire::open(key, 42, huge, out) == wire::Opened::bad);
    // a length prefix bigger than what is left fails the reader
    wire::Writer lie;
    lie.u32(1000);
    wire::Reader lr(lie.data());
    CHECK(lr.bytes().empty());
    CHECK_FALSE(lr.ok());
}

TEST_CASE("the tree after losses and reattachments") {
    Tree t(7, 2);  // 0 -> 1,2; 1 -> 3,4; 2 -> 5,6; 3 -> 7
    REQUIRE(t.parent(7) == 3);
    t.lose(3);  // 7 hangs on the head now
    CHECK_FALSE(t.alive(3));
    CHECK(t.parent(7) == 0);
    CHECK(t.next_hop(0, 7) == 7);
    CHECK(t.next_hop(4, 7) == 1);   // up, then down from the head
    CHECK(t.next_hop(0, 3) == -1);  // no way to a lost vertex
    CHECK(t.children(1) == std::vector<int>{4});
    t.reparent(6, 0);  // 6 reattached to the head itself
    CHECK(t.parent(6) == 0);
    CHECK(t.children(2) == std::vector<int>{5});
    t.reparent(1, 4);  // 4 is below 1: refused, nothing changes
    CHECK(t.parent(1) == 0);
    // every live vertex still gets a flood exactly once, and routes arrive
    for (int origin : {0, 4, 7}) {
        const std::vector<int> got = flood_counts(t, origin);
        for (int v = 0; v <= 7; ++v) CHECK(got[static_cast<std::size_t>(v)] == (v == 3 ? 0 : 1));
    }
    for (int a : {0, 1, 2, 4, 5, 6, 7})
        for (int b : {0, 1, 2, 4, 5, 6, 7}) {
            int at = a, hops = 0;
            while (at != b && at >= 0 && hops < 8) at = t.next_hop(at, b), ++hops;
            CHECK(at == b);
        }
}

TEST_CASE("job specs: encoded, decoded, and refused when malformed") {
    JobSettings s;
    s.nspace = "ftmpi.123";
    s.secret = std::string(32, 's');
    s.nodes = {"ftn1", "ftn2"};
    s.env = {"FTMPI_LAUNCHER=ftmpirun"};
    s.bind = BindPolicy::kNone;
    s.pe = 2;
    s.universe_size = 8;
    NamespaceSpec ns;
    ns.base = 4;
    ns.node = {1, 2, 2};
    ns.app = {0, 0, 1};
    ns.apps = {{"/bin/true", {"true"}, {}, "/tmp"}, {"/bin/false", {"false", "x"}, {"A=b"}, ""}};
    wire::Writer w;
    encode(w, s);
    encode(w, ns);
    wire::Reader r(w.data());
    JobSettings s2;
    NamespaceSpec ns2;
    REQUIRE(decode(r, s2));
    REQUIRE(decode(r, ns2, 2));
    CHECK(r.done());
    CHECK(s2.secret.empty());  // never sent: the daemons derive it (universe_secret)
    CHECK(universe_secret(std::string(32, 'k')) == universe_secret(std::string(32, 'k')));
    CHECK(universe_secret(std::string(32, 'k')).size() == 32);
    CHECK(universe_secret(std::string(32, 'k')) != universe_secret(std::string(32, 'q')));
    CHECK((s2.nspace == s.nspace && s2.nodes == s.nodes && s2.env == s.env && s2.bind == BindPolicy::kNone &&
           s2.pe == 2 && s2.universe_size == 8));
    CHECK((ns2.base == 4 && ns2.node == ns.node && ns2.app == ns.app && ns2.apps.size() == 2 &&
           ns2.apps[1].argv == ns.apps[1].argv && ns2.apps[1].env == ns.apps[1].env && ns2.apps[0].cwd == "/tmp"));
    // a node out of range, a program index out of range, a relative path, a truncation: refused
    for (int bad = 0; bad < 4; ++bad) {
        NamespaceSpec b = ns;
        if (bad == 0) b.node[1] = 3;
        if (bad == 1) b.app[2] = 2;
        if (bad == 2) b.apps[0].path = "true";
        wire::Writer bw;
        encode(bw, b);
        auto bytes = bw.data();
        if (bad == 3) bytes.resize(bytes.size() - 3);
        wire::Reader br(bytes);
        NamespaceSpec out;
        CHECK_FALSE(decode(br, out, 2));
    }
}

TEST_CASE("links: the handshake, frames in order, and a tampered stream dropped") {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    const std::string key(32, 'k');
    Link a(sv[0], key, true), b(sv[1], key, false);
    for (int i = 0; i < 3; ++i) {
        wire::Writer w;
        w.u32(static_cast<std::uint32_t>(i));
        a.send({wire::Type::io, 0, 1, 0}, w.data());  // queued until the handshake is done
    }
    std::vector<Link::Received> got;
    for (int round = 0; round < 10 && got.size() < 3; ++round) {
        REQUIRE(a.on_ready(POLLIN | POLLOUT, got));
        REQUIRE(b.on_ready(POLLIN | POLLOUT, got));
    }
    REQUIRE(got.size() == 3);
    for (std::uint32_t i = 0; i < 3; ++i) {
        wire::Reader r(got[i].payload);
        CHECK(r.u32() == i);
        CHECK(got[i].header.type == wire::Type::io);
    }
    // a frame written straight to the socket, sealed with the launch key rather than the link's: dropped
    const auto forged = wire::seal(key, 3, {wire::Type::kill, 0, 1, 0}, {});
    REQUIRE(::write(sv[0], forged.data(), forged.size()) == static_cast<ssize_t>(forged.size()));
    std::vector<Link::Received> more;
    CHECK_FALSE(b.on_ready(POLLIN, more));
    CHECK(more.empty());
    CHECK(b.broken());
}

TEST_CASE("links: another session's key never opens") {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    Link a(sv[0], std::string(32, 'a'), true), b(sv[1], std::string(32, 'b'), false);
    a.send({wire::Type::hello, 0, 0, wire::kUnassigned}, {});
    std::vector<Link::Received> got;
    bool alive = true;
    for (int round = 0; round < 10 && alive; ++round) {
        a.on_ready(POLLIN | POLLOUT, got);
        alive = b.on_ready(POLLIN | POLLOUT, got);
    }
    CHECK_FALSE(alive);
    CHECK(got.empty());
}

TEST_CASE("the journal: numbered, kept until acknowledged, and seen frames dropped") {
    Journal j;
    wire::Writer a, b;
    a.u32(7);
    b.str("x");
    const auto pa = j.stamp(wire::kFlood, wire::Type::proc_failed, a);
    const auto pb = j.stamp(3, wire::Type::kill, b);
    REQUIRE(j.entries().size() == 2);
    CHECK((j.entries()[0].seq == 1 && j.entries()[1].seq == 2 && j.entries()[1].dst == 3 && j.last() == 2));
    std::uint64_t seen = 0;
    wire::Reader ra(pa), rb(pb), again(pa);
    CHECK(Journal::fresh(ra, seen));
    CHECK(ra.u32() == 7);
    CHECK(Journal::fresh(rb, seen));
    CHECK(rb.str() == "x");
    CHECK(seen == 2);
    CHECK_FALSE(Journal::fresh(again, seen));  // sent again after a reattach: dropped
    const auto un = Journal::unnumbered(a);    // never deduplicated
    for (int i = 0; i < 2; ++i) {
        wire::Reader ru(un);
        CHECK(Journal::fresh(ru, seen));
    }
    j.acked(1);
    REQUIRE(j.entries().size() == 1);
    CHECK(j.entries()[0].seq == 2);
    j.acked(5);
    CHECK(j.entries().empty());
    CHECK(j.last() == 2);  // numbers go on
}

TEST_CASE("stopped processes no detector watches: stranded and lone") {
    using C = StopWatch::Clock;
    const auto t0 = C::now();
    const std::chrono::milliseconds timeout(300);
    std::vector<RankState> p(3);
    for (int i = 0; i < 3; ++i) p[static_cast<size_t>(i)].pid = 100 + i, p[static_cast<size_t>(i)].rank = i;
    std::vector<bool> stopped(3, false);
    const auto is_stopped = [&](int id) { return static_cast<bool>(stopped[static_cast<size_t>(id)]); };
    StopWatch w;
    // all running: nothing, and no need to look again while nobody left (no spawn)
    auto v = w.check(p, is_stopped, false, timeout, t0);
    CHECK((v.stranded.empty() && v.lone.empty() && !v.next));
    // rank 0 left, 1 and 2 stopped: stranded once the timeout has passed
    p[0].reaped = true;
    stopped[1] = stopped[2] = true;
    v = w.check(p, is_stopped, false, timeout, t0);
    CHECK((v.stranded.empty() && v.next));
    v = w.check(p, is_stopped, false, timeout, t0 + std::chrono::milliseconds(200));
    CHECK(v.stranded.empty());
    v = w.check(p, is_stopped, false, timeout, t0 + std::chrono::milliseconds(301));
    CHECK(v.stranded == std::vector<int>{1, 2});
    // one of them runs again: the clock starts over
    StopWatch w2;
    w2.check(p, is_stopped, false, timeout, t0);
    stopped[2] = false;
    v = w2.check(p, is_stopped, false, timeout, t0 + std::chrono::milliseconds(400));
    CHECK(v.stranded.empty());
    // a spawned namespace (process 3) all stopped while the job's rank 2 runs: lone after the timeout
    p[0].reaped = false;
    stopped = {false, false, false, true};
    RankState child;
    child.base = 3;
    child.pid = 200;
    p.push_back(child);
    StopWatch w3;
    v = w3.check(p, is_stopped, true, timeout, t0);
    CHECK((v.lone.empty() && v.next));
    v = w3.check(p, is_stopped, true, timeout, t0 + std::chrono::milliseconds(301));
    CHECK((v.lone == std::vector<int>{3} && v.stranded.empty()));
}
