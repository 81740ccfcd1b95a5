// The events ftmpi raises for tools (MPI_T events, MPI 4.0 section 15.3.8)
// and for the job timeline (FTMPI_TIMELINE, ftmpirun --timeline): one table
// of event types, one clock, one emit() that every layer calls.
//
// The failure-free path pays one relaxed load per emit() site: records are
// built only while a consumer exists (an MPI_T registration or the timeline).
// The MPI layer installs its sink (mpi/tools/mpit_events.cpp); the timeline
// writer lives here too (runtime/tool_events.cpp), so a trace needs no MPI_T code.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ftmpi::runtime {

enum class EventType : int {
    failure_detected,  // this process found a process failed by itself
    failure_learned,   // another process told this one of a failure
    comm_revoked,      // a communicator was revoked (here or by a peer)
    agree_decided,     // an agreement decided
    shrink_done,       // a shrink built its communicator
    validate_done,     // a validate (2011 draft) completed
    spawn_done,        // a spawn (parents' side) connected its children
    count
};
constexpr int k_event_types = static_cast<int>(EventType::count);
constexpr int k_event_fields = 4;  // at most

// How a failure was found (the `path` field of failure_detected).
enum class FailurePath : int { launcher = 0, liveness_link, heartbeat, transport, agreement, count };
const char *failure_path_name(int path);

enum class FieldKind { i32, u64 };
struct EventField {
    const char *name;
    FieldKind kind;
};
struct EventTypeInfo {
    const char *name;
    const char *desc;
    int fields;
    EventField field[k_event_fields];
};
const EventTypeInfo &event_type_info(int type);  // type < k_event_types

struct EventRecord {
    int type;
    std::int64_t ts_ns;  // event_clock_ns()
    std::int64_t v[k_event_fields];
};

// The events' clock: CLOCK_REALTIME in ns, so that ranks on different nodes
// share one time line (to the accuracy of the nodes' clock synchronization).
std::int64_t event_clock_ns();

// Receives every record while active; called on the thread that raised it.
// `service`: raised on one of ftmpi's own threads (not the application's).
using EventSink = void (*)(const EventRecord &r, bool service);
// Delivers what a sink kept for the application's threads; called on one
// (the progress engine, when it takes in new failures).
using EventDrain = void (*)();
// Installs `sink` (nullptr: none) for the types whose bit is in `mask`.
void set_event_sink(EventSink sink, EventDrain drain, std::uint32_t mask);
void deliver_deferred_events();

// Which event types have a consumer (bit i: type i).
extern std::atomic<std::uint32_t> g_event_wanted;
// `ts_ns`: the event's time, 0 for now.
void emit_slow(EventType t, std::int64_t ts_ns, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d);
inline bool event_wanted(EventType t) {
    return (g_event_wanted.load(std::memory_order_relaxed) & (1u << static_cast<int>(t))) != 0;
}
// An event stamped with `ts_ns` (event_start's or failure_stamp's reading,
// 0 for now): a failure is stamped before it is published, since another
// thread that sees it may act on it (revoke, say) and raise its own event
// before this one's emit() runs.
inline void emit_at(EventType t, std::int64_t ts_ns, std::int64_t a = 0, std::int64_t b = 0, std::int64_t c = 0,
                    std::int64_t d = 0) {
    if (event_wanted(t)) emit_slow(t, ts_ns, a, b, c, d);
}
inline void emit(EventType t, std::int64_t a = 0, std::int64_t b = 0, std::int64_t c = 0, std::int64_t d = 0) {
    emit_at(t, 0, a, b, c, d);
}

// For events with a duration: the clock at the start (0 when nobody listens,
// so the failure-free path reads no clock), and the time since.
inline std::int64_t event_start(EventType t) { return event_wanted(t) ? event_clock_ns() : 0; }
inline std::int64_t event_since(std::int64_t start) { return event_clock_ns() - start; }
// The clock for a failure event about to be published (0 when nobody listens).
inline std::int64_t failure_stamp() {
    return event_wanted(EventType::failure_detected) || event_wanted(EventType::failure_learned) ? event_clock_ns() : 0;
}

// Marks the calling thread as one of ftmpi's own (runtime/service_thread.hpp).
void mark_service_thread();

// ---- the timeline -------------------------------------------------------------

// Opens FTMPI_TIMELINE's file for this process (`process` its process id,
// `rank` its rank in its job) and records every event into it from now on.
// Nothing when the knob is empty; a warning when the file cannot be opened.
void timeline_open(int process, int rank);
void timeline_close();

// The file's first line (a JSON array opening, and the trace's metadata):
// what ftmpirun writes when it creates it, and what the first process
// writes when it creates it under another launcher.
const char *timeline_header();
// A line for the launcher's own track: an instant named `what` (no quotes
// or backslashes in it), now.
std::string timeline_launcher_line(const std::string &what);
// The closing line ftmpirun adds at the end of the job (the file is valid
// JSON then; without it, it is Chrome's "JSON array" trace, which Perfetto
// and chrome://tracing read as it is).
const char *timeline_footer();

}  // namespace ftmpi::runtime
