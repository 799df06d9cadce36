// Time as a dependency: production code asks a Clock, tests move a ManualClock by hand.
// Nothing in shardscaler reads the system clock or waits on real time except through this.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace shardscaler::k8s {

// Thread-safety: every method of every Clock may be called from any thread at any time.
class Clock {
 public:
  using SystemTime = std::chrono::system_clock::time_point;
  using MonotonicTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  // Wall time: deadlines written into objects, Lease renew times.
  virtual SystemTime now() const = 0;
  // Monotonic time: backoff, timeouts.
  virtual MonotonicTime monotonicNow() const = 0;

  // Blocks on `cv` (its mutex held by `lock`) until `wake()` returns true or monotonicNow()
  // reaches `deadline`; returns wake() as last evaluated with the lock held. MonotonicTime::max()
  // waits with no deadline. Waiting code calls this instead of cv.wait_until so that a
  // ManualClock can wake it when a test moves time. The default suits clocks that move at
  // real speed.
  virtual bool waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         MonotonicTime deadline, const std::function<bool()>& wake) const;

  // monotonicNow() + d, saturating at MonotonicTime::max() instead of overflowing.
  MonotonicTime deadlineAfter(std::chrono::nanoseconds d) const;
};

class RealClock final : public Clock {
 public:
  SystemTime now() const override { return std::chrono::system_clock::now(); }
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }
};

// ManualClock's two time lines, which only move when told to, together.
// Thread-safety: all methods from any thread.
class ManualTime {
 public:
  explicit ManualTime(Clock::SystemTime start) : system_(start) {}
  Clock::SystemTime now() const;
  Clock::MonotonicTime monotonicNow() const;
  void advance(std::chrono::nanoseconds d);
  void setSystemTime(Clock::SystemTime t);

 private:
  mutable std::mutex mutex_;
  Clock::SystemTime system_;
  Clock::MonotonicTime monotonic_{};
};

// A clock that only moves when told to; both time lines advance together. advance() wakes
// every thread blocked in waitUntil() so it can re-check its deadline; tests use
// awaitNextDeadline() to learn when code under test is waiting and for how long.
// advance() takes the mutex of each waiter to notify it: never call it while holding a mutex
// that some thread passes to waitUntil().
class ManualClock final : public Clock {
 public:
  explicit ManualClock(SystemTime start = SystemTime{} + std::chrono::hours(24 * 365 * 50))
      : time_(start) {}

  SystemTime now() const override;
  MonotonicTime monotonicNow() const override;
  bool waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 MonotonicTime deadline, const std::function<bool()>& wake) const override;

  void advance(std::chrono::nanoseconds d);
  // Moves time to the earliest future deadline any waiter has; returns it, or nullopt when
  // no thread waits with a deadline later than now.
  std::optional<MonotonicTime> advanceToNextDeadline();
  void setSystemTime(SystemTime t);

  // Test synchronisation, bounded by real time (the only real-time waits in a unit test):
  // the earliest deadline later than now among threads blocked in waitUntil(), once there is
  // one; nullopt if none appears within real_timeout.
  std::optional<MonotonicTime> awaitNextDeadline(std::chrono::milliseconds real_timeout) const;
  // True once at least n threads are blocked in waitUntil() whose deadline (if any) is still
  // ahead: threads that a past advance() has released do not count.
  bool awaitWaiters(std::size_t n, std::chrono::milliseconds real_timeout) const;
  // Threads inside waitUntil(), including any not yet returned from a passed deadline.
  std::size_t waiterCount() const;

 private:
  struct Waiter;
  std::optional<MonotonicTime> nextDeadlineLocked() const;
  void wakeWaiters() const;

  ManualTime time_;
  mutable std::mutex waiters_mutex_;  // guards waiters_; never held while taking a caller's lock
  mutable std::condition_variable waiters_changed_;
  mutable std::vector<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace shardscaler::k8s
