#include "runtime/tool_events.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/config.hpp"
#include "runtime/log.hpp"

namespace ftmpi::runtime {

std::atomic<std::uint32_t> g_event_wanted{0};

namespace {

using enum FieldKind;

// One row per EventType, in its order.
const EventTypeInfo k_types[k_event_types] = {
    {"ftmpi_failure_detected",
     "this process found a process failed by itself: process is its process id (its rank in "
     "MPI_COMM_WORLD for the processes ftmpirun started), path how (enumeration "
     "ftmpi_failure_path: launcher event, liveness link, heartbeat, transport error, agreement)",
     2,
     {{"process", i32}, {"path", i32}}},
    {"ftmpi_failure_learned",
     "another process (from, its process id) told this one that process (a process id) failed",
     2,
     {{"process", i32}, {"from", i32}}},
    {"ftmpi_comm_revoked",
     "a communicator was revoked: context is its context id, by_peer 0 when this process "
     "called MPIX_Comm_revoke, 1 when a peer's revocation reached it",
     2,
     {{"context", u64}, {"by_peer", i32}}},
    {"ftmpi_agree_decided",
     "an agreement (MPIX_Comm_agree, iagree) decided value on the communicator with context "
     "id context, after duration_ns nanoseconds",
     3,
     {{"context", u64}, {"value", i32}, {"duration_ns", u64}}},
    {"ftmpi_shrink_done",
     "MPIX_Comm_shrink of the communicator with context id context built one of new_size "
     "processes in duration_ns nanoseconds",
     3,
     {{"context", u64}, {"new_size", i32}, {"duration_ns", u64}}},
    {"ftmpi_validate_done",
     "MPI_Comm_validate (2011 draft) of the communicator with context id context agreed on "
     "failed failed processes in duration_ns nanoseconds",
     3,
     {{"context", u64}, {"failed", i32}, {"duration_ns", u64}}},
    {"ftmpi_spawn_done",
     "MPI_Comm_spawn or spawn_multiple (the parents' side) connected children processes in "
     "duration_ns nanoseconds",
     2,
     {{"children", i32}, {"duration_ns", u64}}},
};

const char *const k_paths[] = {"launcher event", "liveness link", "heartbeat", "transport error", "agreement"};
static_assert(sizeof(k_paths) / sizeof(k_paths[0]) == static_cast<int>(FailurePath::count));

std::atomic<EventSink> g_sink{nullptr};
std::atomic<EventDrain> g_drain{nullptr};
std::atomic<std::uint32_t> g_sink_mask{0};
std::atomic<bool> g_timeline_on{false};
thread_local bool t_service = false;

// The launcher's track (above any process id).
constexpr int k_launcher_pid = 1000000000;
// The timeline's file (append only) and this process's id in it.
int g_timeline_fd = -1;
int g_timeline_pid = 0;

void update_wanted() {
    g_event_wanted.store(g_sink_mask.load() | (g_timeline_on.load() ? ~0u : 0u), std::memory_order_relaxed);
}

// What a track of the trace shows for `r`.
std::string timeline_label(const EventRecord &r) {
    char b[96];
    switch (static_cast<EventType>(r.type)) {
    case EventType::failure_detected:
        std::snprintf(b, sizeof b, "process %" PRId64 " failed (%s)", r.v[0],
                      failure_path_name(static_cast<int>(r.v[1])));
        break;
    case EventType::failure_learned:
        std::snprintf(b, sizeof b, "process %" PRId64 " failed (told by %" PRId64 ")", r.v[0], r.v[1]);
        break;
    case EventType::comm_revoked: std::snprintf(b, sizeof b, r.v[1] != 0 ? "revoke received" : "revoke"); break;
    case EventType::agree_decided: std::snprintf(b, sizeof b, "agree: %" PRId64, r.v[1]); break;
    case EventType::shrink_done: std::snprintf(b, sizeof b, "shrink to %" PRId64, r.v[1]); break;
    case EventType::validate_done: std::snprintf(b, sizeof b, "validate: %" PRId64 " failed", r.v[1]); break;
    case EventType::spawn_done: std::snprintf(b, sizeof b, "spawn of %" PRId64, r.v[0]); break;
    case EventType::count: b[0] = '\0'; break;
    }
    return b;
}

// One Chrome trace event: an instant, or a span ending now for a record that
// has a duration_ns field.
void timeline_write(const EventRecord &r) {
    const EventTypeInfo &ti = k_types[r.type];
    std::int64_t dur = -1;
    std::string args;
    for (int i = 0; i < ti.fields; ++i) {
        if (std::strcmp(ti.field[i].name, "duration_ns") == 0) dur = r.v[i];
        char b[64];
        std::snprintf(b, sizeof b, "%s\"%s\":%" PRId64, i > 0 ? "," : "", ti.field[i].name, r.v[i]);
        args += b;
    }
    const std::int64_t start = dur >= 0 ? r.ts_ns - dur : r.ts_ns;
    char head[256];
    if (dur >= 0)
        std::snprintf(head, sizeof head,
                      ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%" PRId64
                      ".%03d,\"dur\":%" PRId64 ".%03d,\"args\":{",
                      timeline_label(r).c_str(), ti.name, g_timeline_pid, start / 1000, static_cast<int>(start % 1000),
                      dur / 1000, static_cast<int>(dur % 1000));
    else
        std::snprintf(head, sizeof head,
                      ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"tid\":0,"
                      "\"ts\":%" PRId64 ".%03d,\"args\":{",
                      timeline_label(r).c_str(), ti.name, g_timeline_pid, start / 1000, static_cast<int>(start % 1000));
    const std::string line = head + args + "}}";
    // One write on an O_APPEND descriptor: lines of different processes never interleave.
    if (write(g_timeline_fd, line.data(), line.size()) < 0) return;
}

// Opens `path` for appending, creating it with the header if it does not
// exist: written to a file of its own and linked into place, so that a
// process that finds the file finds it with its header.
int open_timeline(const std::string &path) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd >= 0 || errno != ENOENT) return fd;
        const std::string tmp = path + "." + std::to_string(getpid()) + ".tmp";
        const int t = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (t < 0) return -1;
        const std::string head = timeline_header();
        const bool wrote = write(t, head.data(), head.size()) == static_cast<ssize_t>(head.size());
        close(t);
        if (wrote && link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST) {
            unlink(tmp.c_str());
            return -1;
        }
        unlink(tmp.c_str());
    }
    return -1;
}

}  // namespace

const char *timeline_header() {
    static_assert(k_launcher_pid == 1000000000);
    return "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1000000000,\"args\":{\"name\":\"launcher\"}}";
}
std::string timeline_launcher_line(const std::string &what) {
    const std::int64_t ts = event_clock_ns();
    char b[160];
    std::snprintf(b, sizeof b,
                  ",\n{\"name\":\"%s\",\"cat\":\"launcher\",\"ph\":\"i\",\"s\":\"g\",\"pid\":%d,\"tid\":0,"
                  "\"ts\":%" PRId64 ".%03d}",
                  what.c_str(), k_launcher_pid, ts / 1000, static_cast<int>(ts % 1000));
    return b;
}

const char *timeline_footer() { return "\n]\n"; }

void timeline_open(int process, int rank) {
    const std::string &path = config().TIMELINE;
    if (path.empty()) return;
    if (g_timeline_fd >= 0) {  // a later initialization (sessions): the same file
        g_timeline_on.store(true, std::memory_order_release);
        update_wanted();
        return;
    }
    g_timeline_fd = open_timeline(path);
    if (g_timeline_fd < 0) {
        FTMPI_WARN("FTMPI_TIMELINE: cannot open %s (%s); no timeline", path.c_str(), std::strerror(errno));
        return;
    }
    g_timeline_pid = process;
    char meta[192];
    const int n = std::snprintf(meta, sizeof meta,
                                ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank "
                                "%d (process %d)\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,"
                                "\"args\":{\"sort_index\":%d}}",
                                process, rank, process, process, process);
    if (write(g_timeline_fd, meta, static_cast<std::size_t>(n)) < 0) FTMPI_DEBUG("FTMPI_TIMELINE: write failed");
    g_timeline_on.store(true, std::memory_order_release);
    update_wanted();
}

// The descriptor stays open (close-on-exec) until the process ends: a thread
// that read the flag just before it went off may still write.
void timeline_close() {
    g_timeline_on.store(false, std::memory_order_release);
    update_wanted();
}

const char *failure_path_name(int path) {
    return path >= 0 && path < static_cast<int>(FailurePath::count) ? k_paths[path] : "unknown";
}

const EventTypeInfo &event_type_info(int type) { return k_types[type]; }

std::int64_t event_clock_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void set_event_sink(EventSink sink, EventDrain drain, std::uint32_t mask) {
    g_drain.store(sink != nullptr ? drain : nullptr);
    g_sink.store(sink);
    g_sink_mask.store(sink != nullptr ? mask : 0u);
    update_wanted();
}

void mark_service_thread() { t_service = true; }

void deliver_deferred_events() {
    if (EventDrain d = g_drain.load(std::memory_order_acquire)) d();
}

void emit_slow(EventType t, std::int64_t ts_ns, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    const EventRecord r{static_cast<int>(t), ts_ns != 0 ? ts_ns : event_clock_ns(), {a, b, c, d}};
    if (g_timeline_on.load(std::memory_order_acquire)) timeline_write(r);
    if ((g_sink_mask.load(std::memory_order_relaxed) & (1u << r.type)) != 0)
        if (EventSink s = g_sink.load(std::memory_order_acquire)) s(r, t_service);
}

}  // namespace ftmpi::runtime
