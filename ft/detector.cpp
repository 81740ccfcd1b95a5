#include "ft/detector.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "ft/topology.hpp"
#include "runtime/log.hpp"

namespace ftmpi::ft {
namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

enum class Type : std::uint8_t { heartbeat = 1, failed, sync_request, goodbye };

// Every message: this header, then `count` job ranks (failed only).
struct Header {
    Type type;
    std::uint8_t count;
    std::uint16_t reserved;
    std::uint32_t from;
    std::uint32_t known;   // how many failures the sender knows
    std::uint32_t digest;  // order-independent digest of that set
};
static_assert(sizeof(Header) == 16);

std::uint32_t mix(std::uint32_t x) {  // a bijective integer hash
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

}  // namespace

// Everything the detector thread owns.
struct Detector::State {
    int n = 0;
    std::size_t spread = 0;  // failures of the set already sent to the neighbours
    std::uint32_t digest = 0;
    std::vector<bool> gone;  // left normally (MPI_Finalize)
    std::vector<int> neighbours;
    int pred = -1, succ = -1;
    bool pred_ended = false;  // pred's liveness link was reset or refused: waiting for its goodbye
    Clock::time_point last_heard, next_beat;
    std::vector<Clock::time_point> last_sync;
    std::deque<std::pair<int, std::vector<char>>> retry;  // messages refused for now
    Ms max_gap{0};
};

Detector::Detector(FailedSet &set, std::unique_ptr<transport::ControlChannel> channel, int rank, int size,
                   int id_base, DetectorOptions opt, std::function<bool(int)> kill)
    : set_(set), channel_(std::move(channel)), rank_(rank), size_(size), base_(id_base), opt_(opt),
      kill_(std::move(kill)) {}

Detector::~Detector() { stop(false); }

void Detector::start() { thread_ = std::thread([this] { run(); }); }

void Detector::stop(bool goodbye) {
    if (!thread_.joinable()) return;
    goodbye_.store(goodbye, std::memory_order_relaxed);
    stopping_.store(true, std::memory_order_release);
    channel_->wake();
    thread_.join();
}

void Detector::run() {
    State s;
    s.n = size_;
    const int self = base_ + rank_;
    s.gone.assign(static_cast<std::size_t>(s.n), false);
    s.last_sync.assign(static_cast<std::size_t>(s.n), Clock::time_point{});
    s.neighbours = bmg_neighbours(s.n, rank_, [](int) { return false; });  // filtered by alive() at each send
    const Ms period(std::max(opt_.period_ms, 1)), timeout(std::max(opt_.timeout_ms, 1));
    const std::size_t per_msg = (channel_->max_message() - sizeof(Header)) / sizeof(std::int32_t);

    auto out = [&](int peer, const std::vector<char> &msg) {
        if (!channel_->send(static_cast<transport::PeerId>(peer), msg.data(), msg.size()) && s.retry.size() < 4096)
            s.retry.emplace_back(peer, msg);
    };
    auto header = [&](Type t, std::size_t count) {
        std::vector<char> msg(sizeof(Header) + count * sizeof(std::int32_t));
        Header h{t, static_cast<std::uint8_t>(count), 0, static_cast<std::uint32_t>(rank_),
                 static_cast<std::uint32_t>(s.spread), s.digest};
        std::memcpy(msg.data(), &h, sizeof h);
        return msg;
    };
    // Failures [from, to) of the set, in as few messages as fit.
    auto send_failures = [&](int peer, std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; i += per_msg) {
            const std::size_t c = std::min(per_msg, to - i);
            auto msg = header(Type::failed, c);
            for (std::size_t j = 0; j < c; ++j) {
                const std::int32_t r = set_.at(i + j);  // a process id
                std::memcpy(msg.data() + sizeof(Header) + j * sizeof r, &r, sizeof r);
            }
            out(peer, msg);
        }
    };
    auto alive = [&](int r) { return r != rank_ && !set_.contains(base_ + r) && !s.gone[static_cast<std::size_t>(r)]; };
    auto update_ring = [&](Clock::time_point now) {
        const int pred = ring_pred(s.n, rank_, alive), succ = ring_succ(s.n, rank_, alive);
        if (pred != s.pred) {  // a new predecessor gets a full timeout to start beating to us
            s.pred = pred;
            s.pred_ended = false;
            s.last_heard = now;
            channel_->watch(pred);
        }
        if (succ != s.succ) {
            s.succ = succ;
            s.next_beat = now;
        }
    };
    bool excluded_ = false;
    auto excluded = [&]() {
        if (excluded_) return;
        excluded_ = true;
        if (opt_.on_excluded) {
            opt_.on_excluded();
            stopping_.store(true, std::memory_order_release);
            return;
        }
        FTMPI_ERROR("this process was declared failed by the failure detector of another process; it leaves the job");
        std::fflush(nullptr);
        ::_exit(k_excluded_exit);
    };
    // Sends what the set gained since the last call to every live neighbour.
    auto spread_news = [&](Clock::time_point now) {
        const std::size_t size = set_.size();
        if (size == s.spread) return;
        const std::size_t from = s.spread;
        for (std::size_t i = from; i < size; ++i) {
            if (set_.at(i) == self) excluded();
            s.digest ^= mix(static_cast<std::uint32_t>(set_.at(i)));
        }
        s.spread = size;
        for (int peer : s.neighbours)
            if (alive(peer)) send_failures(peer, from, size);
        update_ring(now);
    };
    auto on_message = [&](const void *data, std::size_t len) {
        if (len < sizeof(Header)) return;
        Header h;
        std::memcpy(&h, data, sizeof h);
        const int from = static_cast<int>(h.from);
        if (from < 0 || from >= s.n || from == rank_) return;
        const auto now = Clock::now();
        switch (h.type) {
        case Type::heartbeat:
            if (from == s.pred) {
                s.max_gap = std::max(s.max_gap, std::chrono::duration_cast<Ms>(now - s.last_heard));
                s.last_heard = now;
            }
            // Anti-entropy: the two ends of a ring link compare failed sets.
            if ((h.known != s.spread || h.digest != s.digest) &&
                now - s.last_sync[static_cast<std::size_t>(from)] >= period) {
                s.last_sync[static_cast<std::size_t>(from)] = now;
                send_failures(from, 0, s.spread);
                out(from, header(Type::sync_request, 0));
            }
            break;
        case Type::failed: {
            const std::size_t count = std::min<std::size_t>(h.count, (len - sizeof h) / sizeof(std::int32_t));
            for (std::size_t j = 0; j < count; ++j) {
                std::int32_t r;
                std::memcpy(&r, static_cast<const char *>(data) + sizeof h + j * sizeof r, sizeof r);
                if (r == self) excluded();
                if (set_.add(r)) FTMPI_INFO("process %d is failed (told by rank %d)", r, from);
            }
            break;
        }
        case Type::sync_request: send_failures(from, 0, s.spread); break;
        case Type::goodbye:
            s.gone[static_cast<std::size_t>(from)] = true;
            update_ring(now);
            break;
        }
    };

    update_ring(Clock::now());
    // Connect to every neighbour now: connection-oriented providers then pay
    // their set-up at start-up, not when news of a failure must travel fast.
    for (int peer : s.neighbours) out(peer, header(Type::heartbeat, 0));
    while (!stopping_.load(std::memory_order_acquire)) {
        auto now = Clock::now();
        for (const auto &lost : channel_->take_lost()) {  // the watched predecessor's process ended
            const int r = static_cast<int>(lost.peer);
            if (r < 0 || r >= s.n || !alive(r)) continue;
            if (lost.certain) {
                if (set_.add(base_ + r)) FTMPI_INFO("rank %d is failed: its liveness link closed", r);
            } else if (r == s.pred) {
                // Died, or leaving normally: its goodbye would come at once.
                // Without one, the heartbeat timeout fires `grace` from now.
                const auto grace = std::min(timeout, 2 * period);
                s.last_heard = std::min(s.last_heard, now - timeout + grace);
                s.pred_ended = true;
            }
        }
        spread_news(now);
        if (s.succ >= 0 && now >= s.next_beat) {
            out(s.succ, header(Type::heartbeat, 0));
            s.next_beat = now + period;
        }
        if (s.pred >= 0 && now - s.last_heard > timeout) {
            const int suspect = s.pred;
            if (set_.add(base_ + suspect)) {
                if (s.pred_ended)
                    FTMPI_INFO("rank %d is failed: its process ended (liveness link reset) and no goodbye came", suspect);
                else
                    FTMPI_WARN("rank %d is failed: no heartbeat for %lld ms", suspect,
                               static_cast<long long>(std::chrono::duration_cast<Ms>(now - s.last_heard).count()));
                if (!kill_(base_ + suspect)) FTMPI_INFO("the launcher cannot kill rank %d; it will exclude itself", suspect);
            }
            continue;  // spread it and move to the next predecessor
        }
        for (std::size_t i = s.retry.size(); i > 0; --i) {  // one pass over what was refused
            auto item = std::move(s.retry.front());
            s.retry.pop_front();
            if (set_.contains(base_ + item.first)) continue;
            if (!channel_->send(static_cast<transport::PeerId>(item.first), item.second.data(), item.second.size()))
                s.retry.push_back(std::move(item));
        }
        auto until = s.next_beat;
        if (s.pred >= 0) until = std::min(until, s.last_heard + timeout + Ms(1));
        int wait_ms = static_cast<int>(std::chrono::duration_cast<Ms>(until - now).count());
        if (!s.retry.empty()) wait_ms = std::min(wait_ms, 5);
        if (s.succ < 0 && s.pred < 0) wait_ms = static_cast<int>(period.count());
        channel_->wait(std::max(wait_ms, 0), on_message);
    }
    if (goodbye_.load(std::memory_order_relaxed)) {
        channel_->leaving();
        if (s.succ >= 0) out(s.succ, header(Type::goodbye, 0));
    }
    FTMPI_DEBUG("detector stops; longest heartbeat gap from rank %d: %lld ms", s.pred,
                static_cast<long long>(s.max_gap.count()));
}

}  // namespace ftmpi::ft
