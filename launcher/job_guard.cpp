#include "job_guard.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "error.hpp"
#include "iofwd.hpp"
#include "process_group.hpp"
#include "runtime/shm_names.hpp"

namespace ftmpi::launcher {
namespace {

// One record on the pipe, written in one write() (atomic: <= PIPE_BUF).
struct Record {
    enum Kind : int32_t { kJobGroup = 1, kRank = 2, kCleanEnd = 3 };
    int32_t kind;
    int32_t value;
};
static_assert(sizeof(Record) <= PIPE_BUF);

// After ftmpirun wrote its clean end and closed the pipe, the guard exits at
// once; this only bounds ftmpirun's wait if something is very wrong.
constexpr auto kCleanExitWait = std::chrono::seconds(2);

// Makes this freshly forked process the guard's bare self: its own process
// group and name, default signal dispositions except those ignored below, an
// empty mask, stdin/stdout on /dev/null, stderr kept, and `rd` the only other
// descriptor. Returns the pipe's descriptor (>= 3), or -1.
int become_guard(int rd) {
    ::setpgid(0, 0);  // ftmpirun does it too: whichever comes first
    ::prctl(PR_SET_NAME, "ftmpirun-guard");
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &sa, nullptr);
    // What a terminal (hang-up, ^C, ^\, ^Z) or a kill by name (pkill ftmpirun)
    // sends: the guard's lifetime is bounded by ftmpirun's anyway.
    sa.sa_handler = SIG_IGN;
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2})
        ::sigaction(sig, &sa, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);

    const int keep = ::fcntl(rd, F_DUPFD_CLOEXEC, 3);  // above stdio even if ftmpirun's was closed
    if (keep < 0) return -1;
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        ::dup2(null, 0);  // stdout too: a shell's $(ftmpirun ...) must not wait for the guard
        ::dup2(null, 1);
    }
    ::syscall(SYS_close_range, 3U, static_cast<unsigned>(keep) - 1U, 0U);
    ::syscall(SYS_close_range, static_cast<unsigned>(keep) + 1U, ~0U, 0U);
    [[maybe_unused]] int rc = ::chdir("/");  // hold no mount point busy
    return keep;
}

// Ends the job that ftmpirun left behind; see job_guard.hpp. `watch` holds
// the ranks that were still there when the guard learned their pids.
void clean_up(pid_t pgid, const std::vector<pid_t> &ranks, PidWatch &watch) {
    const auto now = std::chrono::steady_clock::now(), deadline = now + JobGuard::kCleanupDeadline;
    watch.signal_all(SIGKILL);
    const int killed = kill_group(pgid, now, deadline);
    const size_t running = watch.wait(deadline);
    int removed = 0;
    for (pid_t pid : ranks) removed += ftmpi::runtime::remove_shm_regions_of(pid);
    if (killed == 0 && removed == 0 && running == 0) return;
    std::string line = "ftmpirun-guard: ftmpirun ended without ending its job: killed " + std::to_string(killed) +
                       " process" + (killed == 1 ? "" : "es") + " of the job, removed " + std::to_string(removed) +
                       " shared-memory region" + (removed == 1 ? "" : "s") + " of its ranks";
    if (running > 0)
        line += " (" + std::to_string(running) + " rank" + (running == 1 ? "" : "s") + " still not gone after " +
                std::to_string(JobGuard::kCleanupDeadline.count()) + " s)";
    write_all(2, line + "\n");
}

// The guard's whole life: read records until end of file, then clean up
// unless the last one was the clean end.
[[noreturn]] void guard_main(int rd) {
    const int fd = become_guard(rd);
    if (fd < 0) ::_exit(1);
    pid_t pgid = -1;
    std::vector<pid_t> ranks;
    PidWatch watch;
    bool clean = false;
    char buf[sizeof(Record)];
    size_t have = 0;
    while (true) {
        const ssize_t n = ::read(fd, buf + have, sizeof buf - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // end of file: ftmpirun closed the pipe, or died
        have += static_cast<size_t>(n);
        if (have < sizeof buf) continue;
        have = 0;
        Record rec;
        std::memcpy(&rec, buf, sizeof rec);
        clean = rec.kind == Record::kCleanEnd;
        if (rec.kind == Record::kJobGroup) pgid = rec.value;
        if (rec.kind == Record::kRank) {
            ranks.push_back(rec.value);
            watch.add(rec.value);
        }
    }
    if (!clean) clean_up(pgid, ranks, watch);
    ::_exit(0);
}

}  // namespace

JobGuard::JobGuard() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw LauncherError(std::string("pipe2: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        ::close(fds[0]);
        ::close(fds[1]);
        throw LauncherError(std::string("fork: ") + std::strerror(e));
    }
    if (pid == 0) {
        ::close(fds[1]);
        guard_main(fds[0]);
    }
    ::close(fds[0]);
    ::setpgid(pid, pid);  // before anything can kill ftmpirun's group with it in
    pid_ = pid;
    wr_ = fds[1];
    watch_.add(pid);
    ::signal(SIGPIPE, SIG_IGN);  // a dead guard must not take ftmpirun with it
}

JobGuard::~JobGuard() { end(false); }

void JobGuard::send(int kind, int value) {
    if (wr_ < 0) return;
    const Record rec{kind, value};
    ssize_t n;
    do {
        n = ::write(wr_, &rec, sizeof rec);
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(sizeof rec) && !gone_) {
        gone_ = true;  // EPIPE: it died and is not reaped yet
        write_all(2, "ftmpirun: warning: the job guard is gone (" + std::string(std::strerror(errno)) +
                         "); if ftmpirun is killed, the job's processes and shared memory may stay\n");
    }
}

void JobGuard::job_group(pid_t pgid) { send(Record::kJobGroup, pgid); }

void JobGuard::rank(pid_t pid) { send(Record::kRank, pid); }

void JobGuard::end(bool clean) {
    if (wr_ < 0) return;
    if (clean) send(Record::kCleanEnd, 0);
    ::close(wr_);
    wr_ = -1;
    if (gone_) return;
    watch_.wait(std::chrono::steady_clock::now() + (clean ? kCleanExitWait : kCleanupDeadline + kCleanExitWait));
    int st;
    ::waitpid(pid_, &st, WNOHANG);  // left to init if it is still running
}

void JobGuard::reaped(int wait_status) {
    const bool unexpected = wr_ >= 0 && !gone_;
    gone_ = true;
    if (!unexpected) return;
    std::string how = WIFSIGNALED(wait_status) ? "was killed by signal " + std::to_string(WTERMSIG(wait_status))
                                               : "exited with code " + std::to_string(WEXITSTATUS(wait_status));
    write_all(2, "ftmpirun: warning: the job guard (pid " + std::to_string(pid_) + ") " + how +
                     "; if ftmpirun is killed, the job's processes and shared memory may stay\n");
}

}  // namespace ftmpi::launcher
