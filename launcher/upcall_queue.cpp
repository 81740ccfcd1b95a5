#include "upcall_queue.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "error.hpp"

namespace ftmpi::launcher {

void Upcall::reply(pmix_status_t st, const std::string &nspace) {
    if (op_cb) op_cb(st, cbdata);
    if (info_cb) info_cb(st, nullptr, 0, cbdata, nullptr, nullptr);
    if (spawn_cb) {
        char ns[PMIX_MAX_NSLEN + 1] = {};
        std::strncpy(ns, nspace.c_str(), PMIX_MAX_NSLEN);
        spawn_cb(st, ns, cbdata);
    }
    if (modex_cb) modex_cb(st, nullptr, 0, cbdata, nullptr, nullptr);
    if (lookup_cb) lookup_cb(st, nullptr, 0, cbdata);
    op_cb = nullptr;
    info_cb = nullptr;
    spawn_cb = nullptr;
    modex_cb = nullptr;
    lookup_cb = nullptr;
}

namespace {
void free_reply_blob(void *p) { std::free(p); }
}  // namespace

void Upcall::reply_data(pmix_status_t st, const std::vector<char> &blob) {
    if (!modex_cb) return reply(st);
    char *copy = blob.empty() ? nullptr : static_cast<char *>(std::malloc(blob.size()));
    if (!blob.empty() && copy == nullptr) st = PMIX_ERR_NOMEM;
    if (copy) std::memcpy(copy, blob.data(), blob.size());
    modex_cb(st, copy, copy ? blob.size() : 0, cbdata, copy ? free_reply_blob : nullptr, copy);
    modex_cb = nullptr;
}

UpcallQueue::UpcallQueue() {
    efd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (efd_ < 0) throw LauncherError(std::string("eventfd: ") + std::strerror(errno));
}

UpcallQueue::~UpcallQueue() {
    if (efd_ >= 0) ::close(efd_);
}

void UpcallQueue::post(Upcall u) {
    {
        std::lock_guard<std::mutex> lk(mu_);
        items_.push_back(std::move(u));
    }
    std::uint64_t one = 1;
    // EAGAIN only when the counter would overflow: the loop is awake anyway.
    [[maybe_unused]] ssize_t n = ::write(efd_, &one, sizeof one);
}

std::deque<Upcall> UpcallQueue::drain() {
    std::uint64_t v;
    [[maybe_unused]] ssize_t n = ::read(efd_, &v, sizeof v);
    std::lock_guard<std::mutex> lk(mu_);
    std::deque<Upcall> out;
    out.swap(items_);
    return out;
}

}  // namespace ftmpi::launcher
