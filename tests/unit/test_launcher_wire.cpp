// The daemons' tree and the frames between them (launcher/tree.hpp,
// launcher/wire.hpp): routing reaches every vertex by tree links, a flood
// reaches each vertex once, and a frame opens only with its key and its
// sequence number, intact.
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "launcher/tree.hpp"
#include "launcher/wire.hpp"

using namespace ftmpi::launcher;

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
                std::vector<int> got(static_cast<std::size_t>(nodes + 1), 0);
                std::vector<std::pair<int, int>> todo{{origin, -1}};
                while (!todo.empty()) {
                    auto [v, from] = todo.back();
                    todo.pop_back();
                    ++got[static_cast<std::size_t>(v)];
                    for (int n : t.flood_to(v, from)) todo.push_back({n, v});
                }
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
