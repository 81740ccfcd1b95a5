#include "ft/detector_core.hpp"

#include <algorithm>
#include <cstring>

#include "ft/topology.hpp"

namespace ftmpi::ft {
namespace {

// Every message: this header, then `count` process ids (failed only).
struct Header {
    DetectorMsg type;
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

int detector_msg_kind(const void *data, std::size_t len) {
    if (len < sizeof(Header)) return 0;
    return *static_cast<const std::uint8_t *>(data);
}

DetectorCore::DetectorCore(FailureLog &set, int rank, int size, int id_base, Ms period, Ms timeout,
                           std::size_t max_message)
    : set_(set), rank_(rank), n_(size), base_(id_base), period_(std::max(period, Ms(1))),
      timeout_(std::max(timeout, Ms(1))),
      per_msg_(std::max<std::size_t>((max_message - sizeof(Header)) / sizeof(std::int32_t), 1)) {
    per_msg_ = std::min<std::size_t>(per_msg_, 255);                     // Header::count
    neighbours_ = bmg_neighbours(n_, rank_, [](int) { return false; });  // filtered by alive() at each send
}

bool DetectorCore::alive(int r) const { return r != rank_ && !set_.contains(base_ + r) && gone_.count(r) == 0; }

std::vector<char> DetectorCore::header(DetectorMsg t, std::size_t count) const {
    std::vector<char> msg(sizeof(Header) + count * sizeof(std::int32_t));
    Header h{t,
             static_cast<std::uint8_t>(count),
             0,
             static_cast<std::uint32_t>(rank_),
             static_cast<std::uint32_t>(spread_),
             digest_};
    std::memcpy(msg.data(), &h, sizeof h);
    return msg;
}

// Failures [from, to) of the set, in as few messages as fit.
void DetectorCore::send_failures(int peer, std::size_t from, std::size_t to, Effects &out) const {
    for (std::size_t i = from; i < to; i += per_msg_) {
        const std::size_t c = std::min(per_msg_, to - i);
        auto msg = header(DetectorMsg::failed, c);
        for (std::size_t j = 0; j < c; ++j) {
            const std::int32_t r = set_.at(i + j);  // a process id
            std::memcpy(msg.data() + sizeof(Header) + j * sizeof r, &r, sizeof r);
        }
        out.sends.push_back({peer, std::move(msg)});
    }
}

void DetectorCore::advance(Time now) {
    if (now > last_tick_) silence_ += std::min<Clock::duration>(now - last_tick_, 2 * period_);
    last_tick_ = std::max(last_tick_, now);
}

// A heartbeat from the predecessor, or a new one (which gets a full timeout
// to start beating to us).
void DetectorCore::heard_pred(Time now) {
    last_heard_ = now;
    silence_ = Clock::duration::zero();
    starved_ = false;
}

void DetectorCore::update_ring(Time now, Effects &out) {
    auto live = [&](int r) { return alive(r); };
    const int pred = ring_pred(n_, rank_, live), succ = ring_succ(n_, rank_, live);
    if (pred != pred_) {
        pred_ = pred;
        pred_ended_ = false;
        first_beat_ = false;
        heard_pred(now);
        out.watch = pred;
    }
    if (succ != succ_) {
        succ_ = succ;
        next_beat_ = now;
    }
}

// Sends what the set gained since the last call to every live neighbour.
void DetectorCore::spread_news(Time now, Effects &out) {
    const std::size_t size = set_.size();
    if (size == spread_) return;
    const std::size_t from = spread_;
    for (std::size_t i = from; i < size; ++i) {
        if (set_.at(i) == base_ + rank_) out.excluded = true;
        digest_ ^= mix(static_cast<std::uint32_t>(set_.at(i)));
    }
    spread_ = size;
    for (int peer : neighbours_)
        if (alive(peer)) send_failures(peer, from, size, out);
    update_ring(now, out);
}

void DetectorCore::start(Time now, Effects &out) {
    last_tick_ = now;
    update_ring(now, out);
    first_beat_ = pred_ >= 0;
    for (int peer : neighbours_) out.sends.push_back({peer, header(DetectorMsg::heartbeat, 0)});
}

void DetectorCore::on_message(const void *data, std::size_t len, Time now, Effects &out) {
    if (len < sizeof(Header)) return;
    Header h;
    std::memcpy(&h, data, sizeof h);
    const int from = static_cast<int>(h.from);
    if (from < 0 || from >= n_ || from == rank_) return;
    switch (h.type) {
    case DetectorMsg::heartbeat:
        if (from == pred_) {
            first_beat_ = false;
            advance(now);
            max_gap_ = std::max(max_gap_, std::chrono::duration_cast<Ms>(now - last_heard_));
            heard_pred(now);
        }
        // Anti-entropy: the two ends of a ring link compare failed sets.
        if (h.known != spread_ || h.digest != digest_) {
            Time &last = last_sync_[from];
            if (now - last >= period_) {
                last = now;
                send_failures(from, 0, spread_, out);
                out.sends.push_back({from, header(DetectorMsg::sync_request, 0)});
            }
        }
        break;
    case DetectorMsg::failed: {
        const std::size_t count = std::min<std::size_t>(h.count, (len - sizeof h) / sizeof(std::int32_t));
        for (std::size_t j = 0; j < count; ++j) {
            std::int32_t r;
            std::memcpy(&r, static_cast<const char *>(data) + sizeof h + j * sizeof r, sizeof r);
            if (r == base_ + rank_) out.excluded = true;
            if (set_.add(r)) out.events.push_back({Event::told, r, from, 0});
        }
        break;
    }
    case DetectorMsg::sync_request: send_failures(from, 0, spread_, out); break;
    case DetectorMsg::goodbye:
        gone_.insert(from);
        update_ring(now, out);
        break;
    }
}

void DetectorCore::on_lost(int r, bool certain, Time now, Effects &out) {
    if (r < 0 || r >= n_ || !alive(r)) return;
    if (certain) {
        if (set_.add(base_ + r)) out.events.push_back({Event::link_closed, base_ + r, -1, 0});
    } else if (r == pred_) {
        // Died, or leaving normally: its goodbye would come at once.
        // Without one, the heartbeat timeout fires `grace` from now.
        advance(now);
        const auto grace = std::min(timeout_, 2 * period_);
        silence_ = std::max<Clock::duration>(silence_, timeout_ - grace);
        pred_ended_ = true;
    }
}

void DetectorCore::peer_started(int peer, Time now) {
    if (peer != pred_ || !first_beat_) return;
    advance(now);
    first_beat_ = false;
    silence_ = Clock::duration::zero();
    starved_ = false;
}

bool DetectorCore::tick(Time now, Effects &out) {
    advance(now);
    spread_news(now, out);
    if (succ_ >= 0 && now >= next_beat_) {
        out.sends.push_back({succ_, header(DetectorMsg::heartbeat, 0)});
        next_beat_ = now + period_;
    }
    if (pred_ < 0 || silence_ <= timeout_ || (starved_ && now < recheck_)) return false;
    const long long ms = std::chrono::duration_cast<Ms>(now - last_heard_).count();
    Evidence e;
    const bool within_limit = silence_ <= k_starved_limit * timeout_;
    if (evidence_ && within_limit) e = evidence_(pred_);
    // The first predecessor, silent since the start: its detector may start
    // later than this one (its MPI_Init still connecting), which only the
    // environment can rule out (stopped, gone).
    if (e.kind == Evidence::unknown && first_beat_ && within_limit && !pred_ended_)
        e = {Evidence::waiting, "it has not sent its first heartbeat yet"};
    if (e.kind == Evidence::waiting) {
        if (!starved_) out.events.push_back({Event::starved, base_ + pred_, -1, ms, e.what});
        starved_ = true;
        recheck_ = now + period_;
        return false;
    }
    const int suspect = pred_;
    if (set_.add(base_ + suspect))
        out.events.push_back({pred_ended_ ? Event::ended : Event::timeout, base_ + suspect, -1, ms, e.what});
    return true;
}

DetectorCore::Time DetectorCore::deadline() const {
    Time until = next_beat_;
    if (pred_ < 0) return until;
    if (starved_) return std::min(until, recheck_);
    // When the silence passes the timeout if this detector keeps running.
    return std::min(until, last_tick_ + std::chrono::duration_cast<Clock::duration>(timeout_ - silence_) + Ms(1));
}

void DetectorCore::goodbye(Effects &out) {
    if (succ_ >= 0) out.sends.push_back({succ_, header(DetectorMsg::goodbye, 0)});
}

}  // namespace ftmpi::ft
