// libfabric, loaded only when a job needs it.
//
// Debian's libfabric.so.1 pulls in libpsm2 and libinfinipath, whose
// constructors pin the thread and calibrate a clock for about 0.2 s in every
// process that loads them. A job whose processes all share one node talks
// through ftmpi's own shared memory (transport/shm) and never needs
// libfabric, so libftmpi does not link it: the five functions libfabric
// exports that ftmpi calls are defined here, and the first call loads the
// library (dlopen) and forwards to the real ones. Everything else in the
// libfabric API is an inline call through the objects these return.
//
// The definitions are hidden: they serve libftmpi's own calls, and a
// program that links libfabric itself still gets libfabric's.
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <cstdio>
#include <mutex>

#include "runtime/fatal_signals.hpp"
#include "runtime/log.hpp"
#include "transport/ofi/providers.hpp"

namespace ftmpi::transport::ofi {
namespace {

struct Fabric {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    bool loaded = false;
};

// Resolves each function at the version the headers name, as the linker would.
template <typename F>
bool resolve(void *lib, F &slot, const char *name, const char *version) {
    slot = reinterpret_cast<F>(::dlvsym(lib, name, version));
    if (slot == nullptr) slot = reinterpret_cast<F>(::dlsym(lib, name));
    return slot != nullptr;
}

const Fabric &fabric() {
    static Fabric f;
    static std::once_flag once;
    std::call_once(once, [] {
        set_libfabric_defaults();
        void *lib = ::dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            FTMPI_ERROR("cannot load libfabric: %s", ::dlerror());
            return;
        }
        f.loaded = resolve(lib, f.getinfo, "fi_getinfo", "FABRIC_1.3") &&
                   resolve(lib, f.freeinfo, "fi_freeinfo", "FABRIC_1.3") &&
                   resolve(lib, f.dupinfo, "fi_dupinfo", "FABRIC_1.3") &&
                   resolve(lib, f.fabric, "fi_fabric", "FABRIC_1.1") &&
                   resolve(lib, f.strerror, "fi_strerror", "FABRIC_1.0");
        if (!f.loaded) FTMPI_ERROR("libfabric lacks a function ftmpi needs: %s", ::dlerror());
        // libinfinipath, which libfabric loads, turns crashes into exit(1).
        runtime::release_fatal_signals();
    });
    return f;
}

}  // namespace
}  // namespace ftmpi::transport::ofi

using ftmpi::transport::ofi::fabric;

#define FTMPI_HIDDEN __attribute__((visibility("hidden")))

extern "C" {

FTMPI_HIDDEN int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                            const struct fi_info *hints, struct fi_info **info) {
    if (!fabric().loaded) return -FI_ENOSYS;
    return fabric().getinfo(version, node, service, flags, hints, info);
}

FTMPI_HIDDEN void fi_freeinfo(struct fi_info *info) {
    if (fabric().loaded) fabric().freeinfo(info);
}

FTMPI_HIDDEN struct fi_info *fi_dupinfo(const struct fi_info *info) {
    return fabric().loaded ? fabric().dupinfo(info) : nullptr;
}

FTMPI_HIDDEN int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fab, void *context) {
    if (!fabric().loaded) return -FI_ENOSYS;
    return fabric().fabric(attr, fab, context);
}

FTMPI_HIDDEN const char *fi_strerror(int errnum) {
    if (!fabric().loaded) return "libfabric could not be loaded";
    return fabric().strerror(errnum);
}

}  // extern "C"
