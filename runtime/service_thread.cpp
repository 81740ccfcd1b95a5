#include "runtime/service_thread.hpp"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/tool_events.hpp"

namespace ftmpi::runtime {
namespace {

// The kernel's struct sched_attr (include/uapi/linux/sched/types.h), which
// glibc 2.36 does not declare.
struct SchedAttr {
    std::uint32_t size;
    std::uint32_t sched_policy;
    std::uint64_t sched_flags;
    std::int32_t sched_nice;
    std::uint32_t sched_priority;
    std::uint64_t sched_runtime;
    std::uint64_t sched_deadline;
    std::uint64_t sched_period;
};
static_assert(sizeof(SchedAttr) == 48);  // SCHED_ATTR_SIZE_VER0

// The shortest slice the kernel takes (100 us): the detector's work at a
// wake-up is a few tens of microseconds.
constexpr std::uint64_t k_slice_ns = 100 * 1000;

void set_short_slice() {
#ifdef SYS_sched_setattr
    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS, 0);  // this thread's (Linux: per thread)
    if (errno != 0) return;
    SchedAttr attr{};
    attr.size = sizeof attr;
    attr.sched_policy = SCHED_OTHER;
    attr.sched_nice = nice;
    attr.sched_runtime = k_slice_ns;
    if (::syscall(SYS_sched_setattr, 0, &attr, 0) != 0)
        FTMPI_DEBUG("service thread: no short slice (%s)", std::strerror(errno));
#endif
}

void widen_affinity() {
    const std::string &list = config().SERVICE_CPUS;
    if (list.empty()) return;
    const auto cpus = parse_cpu_list(list.c_str());
    if (!cpus) {
        FTMPI_WARN("FTMPI_SERVICE_CPUS=%s is not a CPU list (such as 0-3,8): ignored", list.c_str());
        return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c = 0; c < 1024 && c < CPU_SETSIZE; ++c)
        if ((cpus->bits[c / 64] >> (c % 64)) & 1) CPU_SET(c, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0)  // 0: this thread
        FTMPI_DEBUG("service thread: affinity %s refused (%s)", list.c_str(), std::strerror(errno));
}

bool read_file(const std::string &path, char *buf, std::size_t size) {
    FILE *f = std::fopen(path.c_str(), "re");
    if (f == nullptr) return false;
    const std::size_t n = std::fread(buf, 1, size - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    return n > 0;
}

}  // namespace

void become_service_thread(const char *name) {
    mark_service_thread();
    ::pthread_setname_np(::pthread_self(), name);
    widen_affinity();
    set_short_slice();
}

std::optional<CpuList> parse_cpu_list(const char *text) {
    CpuList out;
    const char *p = text;
    bool any = false;
    while (*p != '\0') {
        char *end = nullptr;
        const long first = std::strtol(p, &end, 10);
        if (end == p || first < 0 || first >= 1024) return std::nullopt;
        long last = first;
        p = end;
        if (*p == '-') {
            last = std::strtol(p + 1, &end, 10);
            if (end == p + 1 || last < first || last >= 1024) return std::nullopt;
            p = end;
        }
        for (long c = first; c <= last; ++c) out.bits[c / 64] |= std::uint64_t{1} << (c % 64);
        any = true;
        if (*p == ',') ++p;
        else if (*p != '\0') return std::nullopt;
    }
    if (!any) return std::nullopt;
    return out;
}

std::optional<ThreadActivity> thread_activity(pid_t pid, const char *name) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR *d = ::opendir(dir.c_str());
    if (d == nullptr) {
        if (errno == ENOENT) return ThreadActivity{ThreadActivity::State::gone};
        return std::nullopt;
    }
    std::string task;
    char buf[512];
    while (const dirent *e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        if (!read_file(dir + "/" + e->d_name + "/comm", buf, sizeof buf)) continue;
        buf[std::strcspn(buf, "\n")] = '\0';
        if (std::strcmp(buf, name) == 0) {
            task = dir + "/" + e->d_name;
            break;
        }
    }
    ::closedir(d);
    if (task.empty()) return std::nullopt;
    // stat: "tid (comm) S ..."; the comm may hold spaces and parentheses.
    if (!read_file(task + "/stat", buf, sizeof buf)) return ThreadActivity{ThreadActivity::State::gone};
    const char *close = std::strrchr(buf, ')');
    if (close == nullptr || close[1] != ' ') return std::nullopt;
    ThreadActivity a{ThreadActivity::State::sleeping};
    switch (close[2]) {
    case 'R': a.state = ThreadActivity::State::running; break;
    case 'T':
    case 't': a.state = ThreadActivity::State::stopped; break;
    case 'Z':
    case 'X': a.state = ThreadActivity::State::gone; break;
    default: a.state = ThreadActivity::State::sleeping; break;  // S, D (the heartbeat is overdue all the same)
    }
    // schedstat: time on a CPU, time waiting for one (ns), timeslices.
    if (read_file(task + "/schedstat", buf, sizeof buf)) {
        unsigned long long run = 0, wait = 0;
        if (std::sscanf(buf, "%llu %llu", &run, &wait) == 2) {
            a.cpu_ns = run;
            a.run_delay_ns = wait;
        }
    }
    return a;
}

}  // namespace ftmpi::runtime
