// The process-wide set of failed processes (process ids:
// runtime/process_manager.hpp), shared by every thread.
//
// Append-only: a process never leaves it, and its order is the order in which
// this process learned of the failures (the order MPIX_Comm_get_failed
// reports). Writers take a mutex; readers never do: contains(), size() and at()
// are plain atomic loads, so the application's progress loop pays one load to
// see that nothing changed.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

namespace ftmpi::ft {

// What the detector's protocol (ft/detector_core.hpp) needs of a failure
// record: an append-only set of process ids in the order learned.
class FailureLog {
public:
    virtual ~FailureLog() = default;
    virtual bool add(int id) = 0;  // true when new
    virtual bool contains(int id) const = 0;
    virtual std::size_t size() const = 0;
    virtual int at(std::size_t i) const = 0;  // i < size()
};

class FailedSet final : public FailureLog {
public:
    // Sizes the set for process ids below `n` and empties it. Init only.
    void reset(int n) {
        n_ = n;
        bits_ = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(n));
        order_ = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(n));
        count_.store(0, std::memory_order_release);
    }
    int job_size() const { return n_; }
    // Any thread. True when `rank` was not in the set before.
    bool add(int rank) override {
        if (rank < 0 || rank >= n_) return false;
        std::lock_guard<std::mutex> hold(lock_);
        if (bits_[static_cast<std::size_t>(rank)].load(std::memory_order_relaxed)) return false;
        const std::size_t i = count_.load(std::memory_order_relaxed);
        order_[i].store(rank, std::memory_order_relaxed);
        bits_[static_cast<std::size_t>(rank)].store(true, std::memory_order_relaxed);
        count_.store(i + 1, std::memory_order_release);
        return true;
    }
    bool contains(int rank) const override {
        return rank >= 0 && rank < n_ && bits_[static_cast<std::size_t>(rank)].load(std::memory_order_acquire);
    }
    std::size_t size() const override { return count_.load(std::memory_order_acquire); }
    // The i-th failure learned here; i < size().
    int at(std::size_t i) const override { return order_[i].load(std::memory_order_relaxed); }

private:
    int n_ = 0;
    std::unique_ptr<std::atomic<bool>[]> bits_;
    std::unique_ptr<std::atomic<int>[]> order_;
    std::atomic<std::size_t> count_{0};
    std::mutex lock_;
};

}  // namespace ftmpi::ft
