#include "runtime/task_keeper.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/shm_names.hpp"

namespace ftmpi::runtime {
namespace {

// One shared page between the keeper and the rank: set by the rank once
// MPI_Init succeeded.
volatile int *g_joined = nullptr;

// Number of threads of this process (/proc/self/task entries), or -1.
int thread_count() {
    DIR *d = opendir("/proc/self/task");
    if (d == nullptr) return -1;
    int n = 0;
    while (const dirent *e = readdir(d))
        if (e->d_name[0] != '.') ++n;
    closedir(d);
    return n;
}

// Whether process `pid` runs the program named `comm` (/proc/PID/comm).
bool process_is(pid_t pid, const char *comm) {
    char path[64], name[64] = {};
    std::snprintf(path, sizeof path, "/proc/%d/comm", static_cast<int>(pid));
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const ssize_t n = read(fd, name, sizeof name - 1);
    close(fd);
    if (n <= 0) return false;
    name[n] = '\0';
    if (name[n - 1] == '\n') name[n - 1] = '\0';
    return std::strcmp(name, comm) == 0;
}

// Ends the keeper by `sig`, as the rank ended: with the default action, and
// without a core file of its own (the rank wrote one if there is one).
[[noreturn]] void die_by(int sig) {
    const rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    raise(sig);
    _exit(128 + sig);  // a signal whose default action is not to terminate
}

// Whether `sig` reaches the keeper within a short grace: slurmstepd signals
// the processes of the step one after another, and the rank may die of its
// copy before the keeper's arrives. Other signals meanwhile are dropped: the
// rank they were for is gone.
bool step_sends(int sig, const sigset_t &all) {
    const auto grace_ns = 100'000'000L;
    timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        const long left = grace_ns - ((now.tv_sec - start.tv_sec) * 1'000'000'000L + (now.tv_nsec - start.tv_nsec));
        if (left <= 0) return false;
        const timespec wait = {0, left};
        siginfo_t si;
        const int got = sigtimedwait(&all, &si, &wait);
        if (got == sig) return true;
        if (got < 0 && errno == EAGAIN) return false;
    }
}

// The keeper's whole life, with every signal blocked: wait for the rank,
// forward what others send, then end as the header says.
[[noreturn]] void run_keeper(pid_t rank, pid_t launcher) {
    prctl(PR_SET_NAME, "ftmpi-keeper", 0, 0, 0);
    // Holds none of the program's files: a socket or pipe end the rank
    // closes must close. Stderr stays, for the one line the keeper prints.
    close(STDIN_FILENO);
    close(STDOUT_FILENO);
    close_range(STDERR_FILENO + 1, ~0U, 0);
    bool received[NSIG] = {};
    sigset_t all;
    sigfillset(&all);
    for (;;) {
        siginfo_t si;
        const int sig = sigwaitinfo(&all, &si);
        if (sig < 0) continue;
        if (sig == SIGCHLD) {
            int status = 0;
            const pid_t r = waitpid(rank, &status, WNOHANG);
            if (r != rank) continue;  // stopped or continued, not ended
            // A rank that did not finalize (killed, or exited early) left
            // its shm regions: nothing else removes them under srun.
            remove_shm_regions_of(rank);
            if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
            const int how = WTERMSIG(status);
            if (received[how] || g_joined == nullptr || *g_joined == 0 || step_sends(how, all)) die_by(how);
            const char *r_env = std::getenv("PMIX_RANK");
            set_log_rank(r_env ? std::atoi(r_env) : -1);
            FTMPI_WARN(
                "this rank (pid %d) died of signal %d (%s%s) and the job went on without it: its task exits "
                "0, so that srun reports the survivors' status (FTMPI_SLURM_KEEPER=0: the signal instead)",
                static_cast<int>(rank), how, strsignal(how), WCOREDUMP(status) ? ", core dumped" : "");
            _exit(0);
        }
        received[sig] = true;
        // slurmstepd signals every process of the step (each proctrack
        // plugin does): the rank has it already.
        if (si.si_pid != launcher || si.si_code != SI_USER) kill(rank, sig);
    }
}

}  // namespace

pid_t start_task_keeper(pid_t launcher) {
    void *page = mmap(nullptr, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return -1;
    // Every signal blocked across the fork, so none is lost between the two;
    // SIGCHLD at its default, so the rank is not reaped behind the keeper's
    // back by a program that ignores it.
    sigset_t all, before;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &before);
    struct sigaction dfl = {}, chld_before;
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &dfl, &chld_before);
    const pid_t keeper = getpid();
    const pid_t rank = fork();
    if (rank < 0) {
        const int e = errno;
        sigaction(SIGCHLD, &chld_before, nullptr);
        sigprocmask(SIG_SETMASK, &before, nullptr);
        munmap(page, sizeof(int));
        errno = e;
        return -1;
    }
    if (rank > 0) {
        g_joined = static_cast<volatile int *>(page);
        run_keeper(rank, launcher);
    }
    g_joined = static_cast<volatile int *>(page);
    sigaction(SIGCHLD, &chld_before, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != keeper) raise(SIGKILL);  // the keeper died before the line above
    sigprocmask(SIG_SETMASK, &before, nullptr);
    return keeper;
}

void keep_slurm_task() {
    if (config().SLURM_KEEPER != 1 || config().FT == 0) return;
    const char *tasks = std::getenv("SLURM_STEP_NUM_TASKS");
    if (tasks == nullptr || std::atoi(tasks) < 2 || std::getenv("PMIX_NAMESPACE") == nullptr ||
        config().LAUNCHER == "ftmpirun")
        return;
    const pid_t parent = getppid();
    if (!process_is(parent, "slurmstepd")) return;
    if (const int n = thread_count(); n != 1) {
        FTMPI_INFO(
            "no task keeper: the process has %d threads at MPI_Init; srun will report a rank's death by "
            "signal as the step's status",
            n);
        return;
    }
    if (start_task_keeper(parent) < 0)
        FTMPI_WARN("no task keeper: fork failed (%s); srun will report a rank's death by signal as the step's status",
                   std::strerror(errno));
}

void task_keeper_joined() {
    if (g_joined != nullptr) *g_joined = 1;
}

}  // namespace ftmpi::runtime
