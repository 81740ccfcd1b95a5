#include "runtime/fatal_signals.hpp"

#include <dlfcn.h>
#include <signal.h>

#include <cstring>

namespace ftmpi::runtime {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM};

// Shared objects whose handlers turn a fatal signal into exit(1), by the
// start of their file name.
constexpr const char *kInterceptors[] = {"libinfinipath.so", "libpsm_infinipath.so", "libpsm2.so"};

// Whether `handler` is code of one of kInterceptors.
bool is_interceptor(void *handler) {
    Dl_info info;
    if (dladdr(handler, &info) == 0 || info.dli_fname == nullptr) return false;
    const char *slash = std::strrchr(info.dli_fname, '/');
    const char *base = slash ? slash + 1 : info.dli_fname;
    for (const char *name : kInterceptors)
        if (std::strncmp(base, name, std::strlen(name)) == 0) return true;
    return false;
}

// Runs when libftmpi is loaded, after the constructors of the libraries it
// depends on (those that install the interceptors), before main.
[[gnu::constructor]] void release_at_load() { release_fatal_signals(); }

}  // namespace

int release_fatal_signals() {
    int removed = 0;
    for (int sig : kSignals) {
        struct sigaction current;
        if (sigaction(sig, nullptr, &current) != 0) continue;
        // sa_handler and sa_sigaction share storage: either way, the code address.
        void *handler = reinterpret_cast<void *>(current.sa_handler);
        if (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN || !is_interceptor(handler)) continue;
        struct sigaction dfl;
        std::memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        if (sigaction(sig, &dfl, nullptr) == 0) ++removed;
    }
    return removed;
}

}  // namespace ftmpi::runtime
