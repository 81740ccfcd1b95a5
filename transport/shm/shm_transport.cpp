// The shared-memory fast path: set-up, the pairs' segments, peers that come
// later (announcements), and failures (shm_transport.hpp for the design).
#include "transport/shm/shm_transport.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/process_manager.hpp"
#include "runtime/test_hooks.hpp"
#include "transport/refused.hpp"

namespace ftmpi::transport::shm {

namespace {

std::string node_key() {
    char host[64] = {};
    ::gethostname(host, sizeof host - 1);
    struct stat ns {};
    ::stat("/proc/self/ns/net", &ns);  // emulated nodes are network namespaces
    return std::string(host) + ":" + std::to_string(ns.st_ino);
}

// Ring bytes per direction for n processes on the node: 256 KiB, less when
// the pairs (n^2 / 2 segments) would take more than 256 MiB in all.
std::size_t ring_bytes_for(std::size_t n) {
    if (const std::size_t forced = runtime::config().SHM_RING; forced != 0) {
        std::size_t r = 4096;
        while (r < forced) r <<= 1;
        return r;
    }
    const std::size_t pairs = std::max<std::size_t>(n * (n - 1), 1);
    std::size_t r = 256 * 1024;
    while (r > 16 * 1024 && r * pairs > (std::size_t{256} << 20)) r >>= 1;
    return r;
}

// Bytes at the start of each ring that a process maps in at once (its own
// page tables; the first process also allocates the pages): the pages a
// ring's traffic first walks through, faulted in at init rather than one per
// 64 small messages in the first milliseconds of the job (each fault 5-20 us
// here, against a 0.2 us barrier). The whole ring while the process's pairs
// take 2 MiB or less, then a share of 2 MiB, nothing below 16 KiB a ring.
std::size_t prefault_bytes_for(std::size_t ring, std::size_t n) {
    constexpr std::size_t k_budget = std::size_t{2} << 20, k_page = 4096, k_least = 16 * 1024;
    const std::size_t rings = 2 * std::max<std::size_t>(n, 2) - 2;
    const std::size_t share = std::min(ring, k_budget / rings) / k_page * k_page;
    return share >= std::min(ring, k_least) ? share : 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it, and the pages fault in as used
#endif

// Maps in the first `bytes` of the ring at `ring` (its control line first),
// without writing to it: the peer may be using it already.
void prefault(char *ring, std::size_t bytes) {
    if (bytes == 0) return;
    const auto page = reinterpret_cast<std::uintptr_t>(ring) & ~std::uintptr_t{4095};
    ::madvise(reinterpret_cast<void *>(page),
              reinterpret_cast<std::uintptr_t>(ring) - page + sizeof(RingControl) + bytes, MADV_POPULATE_WRITE);
}

}  // namespace

ShmTransport::ShmTransport(runtime::ProcessManager &pm, Sink &sink)
    : sink_(sink), self_(static_cast<PeerId>(pm.job().id())), eager_limit_(runtime::config().EAGER_LIMIT),
      coll_eager_limit_(std::max(runtime::config().EAGER_LIMIT, runtime::config().COLL_EAGER_LIMIT)),
      ring_bytes_(ring_bytes_for(pm.job().local_peers.size())),
      prefault_bytes_(prefault_bytes_for(ring_bytes_, pm.job().local_peers.size())), node_(node_key()) {
    Published me{};
    me.pid = static_cast<std::uint64_t>(pid_);
    me.ring_bytes = ring_bytes_;
    std::snprintf(me.node, sizeof me.node, "%s", node_.c_str());
    pm.put(k_key, &me, sizeof me);
    peers_.resize(static_cast<std::size_t>(pm.job().id_base + pm.job().size));
    id_base_ = static_cast<PeerId>(pm.job().id_base);
    if (pm.why_no_spawn().empty()) {
        pm_ = &pm;
        const std::string name = announce_name(static_cast<std::uint64_t>(pid_));
        const int fd = ::shm_open(("/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0 && ::ftruncate(fd, sizeof(Announcements)) == 0) {
            void *a = ::mmap(nullptr, sizeof(Announcements), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (a != MAP_FAILED) announce_ = static_cast<Announcements *>(a);
        }
        if (fd >= 0) ::close(fd);
        if (announce_ == nullptr)
            FTMPI_WARN("no shared-memory announcements (%s): processes spawned later cannot reach this one",
                       std::strerror(errno));
    }
}

ShmTransport::~ShmTransport() {
    if (announce_ != nullptr) {
        ::munmap(announce_, sizeof(Announcements));
        ::shm_unlink(("/" + announce_name(static_cast<std::uint64_t>(pid_))).c_str());
    }
    for (auto &p : peers_) {
        if (!p || !p->mapped) continue;
        if (p->lo && !p->hello) ::shm_unlink(("/" + p->name).c_str());
        ::munmap(p->seg, p->seg_size);
    }
}

void ShmTransport::connect(runtime::ProcessManager &pm) {
    const auto &job = pm.job();
    for (int r : job.local_peers) {
        if (r == job.rank) continue;
        const auto blob = pm.get(r, k_key);
        if (blob.size() != sizeof(Published))
            throw std::runtime_error("rank " + std::to_string(r) + " published no shared-memory address");
        Published info;
        std::memcpy(&info, blob.data(), sizeof info);
        if (std::string why = map_pair(static_cast<PeerId>(job.id_base + r), info); !why.empty())
            throw std::runtime_error(why);
    }
    if (net_) net_->connect(pm);
    FTMPI_INFO("shared-memory fast path: %zu peers on this node, %zu KiB rings%s", polled_.size(), ring_bytes_ / 1024,
               net_ ? ", libfabric for the others" : "");
}

// Maps the segment of the pair (this process, id). Both ends open it with
// O_CREAT: whichever comes first creates it, zero-filled, which is an empty
// pair. Its name has the lower id's pid, so the launcher removes it with that
// process; the lower id also unlinks it once the higher one said hello.
std::string ShmTransport::map_pair(PeerId id, const Published &info) {
    Peer &p = peer_state(id);
    if (p.mapped) return "";
    p.lo = self_ < id;
    p.pid = static_cast<pid_t>(info.pid);
    const std::uint64_t pid_lo = p.lo ? static_cast<std::uint64_t>(pid_) : info.pid;
    const std::uint64_t pid_hi = p.lo ? info.pid : static_cast<std::uint64_t>(pid_);
    const std::size_t ring = p.lo ? ring_bytes_ : info.ring_bytes;
    p.name = "ftmpi-" + std::to_string(pid_lo) + "-pair" + std::to_string(std::min(self_, id)) + "-" +
             std::to_string(pid_hi);
    p.seg_size = 2 * ring_footprint(ring) + 2 * k_descs * sizeof(Desc);
    const int fd = ::shm_open(("/" + p.name).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return "cannot open shared memory " + p.name + ": " + std::strerror(errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0 ||
        (static_cast<std::size_t>(st.st_size) < p.seg_size && ::ftruncate(fd, static_cast<off_t>(p.seg_size)) != 0)) {
        const int e = errno;
        ::close(fd);
        return "cannot size shared memory " + p.name + ": " + std::strerror(e);
    }
    void *seg = ::mmap(nullptr, p.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int e = errno;
    ::close(fd);
    if (seg == MAP_FAILED) return "cannot map shared memory " + p.name + ": " + std::strerror(e);
    p.seg = seg;
    char *base = static_cast<char *>(seg);
    char *lo_to_hi = base, *hi_to_lo = base + ring_footprint(ring);
    prefault(lo_to_hi, std::min(prefault_bytes_, ring));
    prefault(hi_to_lo, std::min(prefault_bytes_, ring));
    auto *descs = reinterpret_cast<Desc *>(base + 2 * ring_footprint(ring));
    p.out = RingWriter(p.lo ? lo_to_hi : hi_to_lo, ring);
    p.in = RingReader(p.lo ? hi_to_lo : lo_to_hi, ring);
    p.out_desc = p.lo ? descs : descs + k_descs;
    p.in_desc = p.lo ? descs + k_descs : descs;
    p.gen.assign(k_descs, 0);
    p.free_desc.clear();
    for (std::uint32_t i = k_descs; i-- > 0;) p.free_desc.push_back(i);
    p.eager = std::min(eager_limit_, max_payload(ring));
    p.eager_coll = std::min(coll_eager_limit_, max_payload(ring));
    if (!runtime::single_copy(runtime::config())) p.cma = Peer::Cma::no;
    p.mapped = true;
    if (!p.failed) polled_.push_back(id);
    if (!p.lo) send_control(id, Proto::hello, nullptr, 0);
    return "";
}

// Tells the process behind `p` that this one (of the job from `id_base`)
// mapped their pair, so that it reads the ring before it hears of this
// process any other way.
void ShmTransport::announce_to(const Peer &p, PeerId id_base) {
    const int fd = ::shm_open(("/" + announce_name(static_cast<std::uint64_t>(p.pid))).c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) return;  // it takes no announcements (it will add this process itself)
    void *m = ::mmap(nullptr, sizeof(Announcements), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) return;
    auto *a = static_cast<Announcements *>(m);
    const std::uint64_t entry = (std::uint64_t{self_} + 1) | std::uint64_t{id_base} << 32;
    for (auto &slot : a->slot) {
        std::uint64_t empty = 0;
        if (slot.compare_exchange_strong(empty, entry, std::memory_order_acq_rel)) {
            a->pending.fetch_add(1, std::memory_order_release);
            break;
        }
    }
    ::munmap(m, sizeof(Announcements));
}

// Maps the pairs that processes announced (poll, when `pending` moved).
void ShmTransport::take_announcements() {
    announce_seen_ = announce_->pending.load(std::memory_order_acquire);
    for (auto &slot : announce_->slot) {
        const std::uint64_t entry = slot.load(std::memory_order_acquire);
        if (entry == 0) continue;
        slot.store(0, std::memory_order_release);
        const int id = static_cast<int>((entry & 0xffffffffu) - 1), base = static_cast<int>(entry >> 32);
        if (local(static_cast<PeerId>(id))) continue;
        const auto blob = pm_->get_remote(id, base, k_key);
        Published info{};
        if (blob.size() != sizeof info) continue;
        std::memcpy(&info, blob.data(), sizeof info);
        if (std::string why = map_pair(static_cast<PeerId>(id), info); !why.empty())
            FTMPI_WARN("process %d announced itself, but %s", id, why.c_str());
    }
}

std::string ShmTransport::add_peers(runtime::ProcessManager &pm, const std::vector<int> &ids,
                                    const std::vector<int> &bases) {
    std::vector<int> remote_ids, remote_bases;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto id = static_cast<PeerId>(ids[i]);
        if (id == self_ || local(id)) continue;
        const auto blob = pm.get_remote(ids[i], bases[i], k_key);
        Published info{};
        if (blob.size() == sizeof info) std::memcpy(&info, blob.data(), sizeof info);
        info.node[sizeof info.node - 1] = '\0';
        if (blob.size() == sizeof info && node_ == info.node) {
            if (std::string why = map_pair(id, info); !why.empty()) return why;
            announce_to(*peers_[id], id_base_);  // it may not know of this process yet
            continue;
        }
        remote_ids.push_back(ids[i]);
        remote_bases.push_back(bases[i]);
    }
    if (remote_ids.empty()) return "";
    if (!net_)
        return "process " + std::to_string(remote_ids.front()) + " is on another node, and this job has no " +
               "network endpoint";
    return net_->add_peers(pm, remote_ids, remote_bases);
}

void ShmTransport::mark_failed(PeerId peer) {
    if (net_) net_->mark_failed(peer);
    Peer &p = peer_state(peer);
    if (p.failed) return;
    // What the peer published before it died is whole (a record counts only
    // once its stamp is written): deliver it before failing anything, so
    // that its last messages (say, a collective's step it finished before
    // dying) still match, and nothing from it comes after its failure
    // fails a receive.
    if (p.mapped) drain_ring(peer);
    p.failed = true;
    polled_.erase(std::remove(polled_.begin(), polled_.end(), peer), polled_.end());
    std::vector<Op *> dead;
    auto take = [&](std::vector<Op *> &ops, bool sender) {
        for (std::size_t k = 0; k < ops.size();) {
            Op *op = ops[k];
            if (op->peer != peer) {
                ++k;
                continue;
            }
            if (op->ticket != 0) {  // nobody copies for a failed peer any more
                Desc *table = sender ? p.out_desc : p.in_desc;
                table[op->ticket - 1].abandoned.store(1, std::memory_order_release);
            }
            dead.push_back(op);
            ops[k] = ops.back();
            ops.pop_back();
        }
    };
    take(sends_, true);
    take(pulls_, false);
    for (auto it = streams_.begin(); it != streams_.end();) {
        if (it->second->peer == peer) {
            dead.push_back(it->second);
            it = streams_.erase(it);
        } else {
            ++it;
        }
    }
    // Sends still waiting for room, and streams (CTS answered) whose pieces
    // wait for it: both end with the peer.
    for (const Pending &d : p.backlog)
        if (d.op != nullptr && (d.what == Pending::What::send || d.what == Pending::What::stream)) dead.push_back(d.op);
    p.backlog.clear();
    stalled_.erase(std::remove(stalled_.begin(), stalled_.end(), peer), stalled_.end());
    for (Op *op : dead) finish(op, Err::peer_failed, 0);
}

bool ShmTransport::busy() const {
    for (PeerId peer : stalled_)
        if (!peers_[peer]->failed) return true;
    for (const Op *op : sends_)
        if (op->peer != self_ && !peers_[op->peer]->failed) return true;
    return net_ && net_->busy();
}

}  // namespace ftmpi::transport::shm
