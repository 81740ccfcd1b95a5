// The tools' events (runtime/tool_events.hpp): an event carries the time it
// was stamped with, so that a failure stamped before it was published comes
// before what another thread did once it saw it.
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/tool_events.hpp"

namespace {
using ftmpi::runtime::EventRecord;
using ftmpi::runtime::EventType;

std::vector<EventRecord> g_seen;
void keep(const EventRecord &r, bool) { g_seen.push_back(r); }
}  // namespace

TEST_CASE("tool events: stamps, and emit_at keeps the stamp it is given", "[runtime][events]") {
    namespace rt = ftmpi::runtime;
    g_seen.clear();
    CHECK(rt::failure_stamp() == 0);  // nobody listens: no clock read
    rt::emit(EventType::failure_detected, 3, 0);
    CHECK(g_seen.empty());

    rt::set_event_sink(&keep, nullptr, 1u << static_cast<int>(EventType::failure_detected));
    const std::int64_t stamp = rt::failure_stamp();
    REQUIRE(stamp > 0);
    const std::int64_t later = rt::event_clock_ns();
    rt::emit(EventType::comm_revoked, 7, 0);  // no consumer of this type
    rt::emit_at(EventType::failure_detected, stamp, 3, 2);
    rt::emit_at(EventType::failure_detected, 0, 4, 2);  // 0: now
    rt::set_event_sink(nullptr, nullptr, 0);
    rt::emit(EventType::failure_detected, 5, 0);

    REQUIRE(g_seen.size() == 2);
    CHECK(g_seen[0].type == static_cast<int>(EventType::failure_detected));
    CHECK(g_seen[0].ts_ns == stamp);
    CHECK(g_seen[0].v[0] == 3);
    CHECK(g_seen[0].v[1] == 2);
    CHECK(g_seen[1].v[0] == 4);
    CHECK(g_seen[1].ts_ns >= later);
    CHECK(rt::failure_stamp() == 0);
}
