// Time as a dependency: production code asks a Clock, tests move a ManualClock by hand.
// Nothing in shardscaler reads the system clock except through this interface.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace shardscaler::k8s {

class Clock {
 public:
  using SystemTime = std::chrono::system_clock::time_point;
  using MonotonicTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  // Wall time: deadlines written into objects, Lease renew times.
  virtual SystemTime now() const = 0;
  // Monotonic time: backoff, timeouts.
  virtual MonotonicTime monotonicNow() const = 0;
};

class RealClock final : public Clock {
 public:
  SystemTime now() const override { return std::chrono::system_clock::now(); }
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }
};

// A clock that only moves when told to; both time lines advance together.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(SystemTime start = SystemTime{} + std::chrono::hours(24 * 365 * 50))
      : system_(start) {}

  SystemTime now() const override {
    std::lock_guard lock(mutex_);
    return system_;
  }
  MonotonicTime monotonicNow() const override {
    std::lock_guard lock(mutex_);
    return monotonic_;
  }
  void advance(std::chrono::nanoseconds d) {
    std::lock_guard lock(mutex_);
    system_ += std::chrono::duration_cast<SystemTime::duration>(d);
    monotonic_ += std::chrono::duration_cast<MonotonicTime::duration>(d);
  }
  void setSystemTime(SystemTime t) {
    std::lock_guard lock(mutex_);
    system_ = t;
  }

 private:
  mutable std::mutex mutex_;
  SystemTime system_;
  MonotonicTime monotonic_{};
};

}  // namespace shardscaler::k8s
