#include "shardscaler/k8s_client/clock.h"

#include <algorithm>

namespace shardscaler::k8s {

bool Clock::waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                      MonotonicTime deadline, const std::function<bool()>& wake) const {
  if (deadline == MonotonicTime::max()) {
    cv.wait(lock, wake);
    return true;
  }
  // This clock may not be steady_clock itself; what is left of the wait is what it measures.
  auto remaining = deadline - monotonicNow();
  if (remaining > std::chrono::hours(24 * 365 * 100)) {  // would overflow steady_clock
    cv.wait(lock, wake);
    return true;
  }
  return cv.wait_until(lock, std::chrono::steady_clock::now() + remaining, wake);
}

Clock::MonotonicTime Clock::deadlineAfter(std::chrono::nanoseconds d) const {
  auto now = monotonicNow();
  if (d <= std::chrono::nanoseconds::zero()) return now;
  if (MonotonicTime::max() - now <= d) return MonotonicTime::max();
  return now + std::chrono::duration_cast<MonotonicTime::duration>(d);
}

// One thread blocked in ManualClock::waitUntil. advance() notifies it through `cv` while
// holding `notify_mutex`; the waiter clears `active` under the same mutex before it returns,
// so the caller's mutex and condition variable are never touched after they may be gone.
struct ManualClock::Waiter {
  std::mutex* caller_mutex;
  std::condition_variable* cv;
  MonotonicTime deadline;
  std::mutex notify_mutex;
  bool active = true;
};

Clock::SystemTime ManualTime::now() const {
  std::lock_guard guard(mutex_);
  return system_;
}

Clock::MonotonicTime ManualTime::monotonicNow() const {
  std::lock_guard guard(mutex_);
  return monotonic_;
}

void ManualTime::advance(std::chrono::nanoseconds d) {
  std::lock_guard guard(mutex_);
  system_ += std::chrono::duration_cast<Clock::SystemTime::duration>(d);
  monotonic_ += std::chrono::duration_cast<Clock::MonotonicTime::duration>(d);
}

void ManualTime::setSystemTime(Clock::SystemTime t) {
  std::lock_guard guard(mutex_);
  system_ = t;
}

Clock::SystemTime ManualClock::now() const { return time_.now(); }

Clock::MonotonicTime ManualClock::monotonicNow() const { return time_.monotonicNow(); }

bool ManualClock::waitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                            MonotonicTime deadline, const std::function<bool()>& wake) const {
  auto waiter = std::make_shared<Waiter>();
  waiter->caller_mutex = lock.mutex();
  waiter->cv = &cv;
  waiter->deadline = deadline;
  {
    // Registered before the first time check: an advance() after this point either is seen
    // by that check or notifies us once we block (it takes the caller's mutex to notify).
    std::lock_guard guard(waiters_mutex_);
    waiters_.push_back(waiter);
  }
  waiters_changed_.notify_all();

  while (!wake() && monotonicNow() < deadline) cv.wait(lock);

  // Deregister without the caller's lock: advance() takes notify_mutex, then the caller's
  // mutex, so holding the caller's mutex here could deadlock.
  lock.unlock();
  {
    std::lock_guard guard(waiters_mutex_);
    std::erase(waiters_, waiter);
  }
  {
    std::lock_guard guard(waiter->notify_mutex);
    waiter->active = false;
  }
  waiters_changed_.notify_all();
  lock.lock();
  return wake();
}

void ManualClock::advance(std::chrono::nanoseconds d) {
  time_.advance(d);
  wakeWaiters();
}

std::optional<Clock::MonotonicTime> ManualClock::advanceToNextDeadline() {
  std::optional<MonotonicTime> next;
  {
    std::lock_guard guard(waiters_mutex_);
    next = nextDeadlineLocked();
  }
  if (!next) return std::nullopt;
  auto now = monotonicNow();
  if (*next > now) advance(*next - now);
  return next;
}

void ManualClock::setSystemTime(SystemTime t) { time_.setSystemTime(t); }

void ManualClock::wakeWaiters() const {
  std::vector<std::shared_ptr<Waiter>> snapshot;
  {
    std::lock_guard guard(waiters_mutex_);
    snapshot = waiters_;
  }
  for (const auto& waiter : snapshot) {
    std::lock_guard notify_guard(waiter->notify_mutex);
    if (!waiter->active) continue;
    // Taking the caller's mutex orders this notify after the waiter's time check.
    std::lock_guard caller_guard(*waiter->caller_mutex);
    waiter->cv->notify_all();
  }
}

std::optional<Clock::MonotonicTime> ManualClock::nextDeadlineLocked() const {
  // A waiter whose deadline has passed is already on its way out; it is not waiting.
  auto now = monotonicNow();
  std::optional<MonotonicTime> next;
  for (const auto& waiter : waiters_) {
    if (waiter->deadline == MonotonicTime::max() || waiter->deadline <= now) continue;
    if (!next || waiter->deadline < *next) next = waiter->deadline;
  }
  return next;
}

std::optional<Clock::MonotonicTime> ManualClock::awaitNextDeadline(
    std::chrono::milliseconds real_timeout) const {
  std::unique_lock lock(waiters_mutex_);
  std::optional<MonotonicTime> next;
  waiters_changed_.wait_for(lock, real_timeout, [&] {
    next = nextDeadlineLocked();
    return next.has_value();
  });
  return next;
}

bool ManualClock::awaitWaiters(std::size_t n, std::chrono::milliseconds real_timeout) const {
  std::unique_lock lock(waiters_mutex_);
  return waiters_changed_.wait_for(lock, real_timeout, [&] {
    auto now = monotonicNow();
    return std::count_if(waiters_.begin(), waiters_.end(), [&](const auto& waiter) {
             return waiter->deadline > now;
           }) >= static_cast<std::ptrdiff_t>(n);
  });
}

std::size_t ManualClock::waiterCount() const {
  std::lock_guard guard(waiters_mutex_);
  return waiters_.size();
}

}  // namespace shardscaler::k8s
