#include "shardscaler/k8s_client/work_queue.h"

#include <utility>

namespace shardscaler::k8s {

WorkQueue::WorkQueue(const Clock& clock, std::unique_ptr<RateLimiter> limiter,
                     WorkQueueObserver* observer)
    : clock_(clock),
      limiter_(limiter ? std::move(limiter) : defaultControllerRateLimiter(clock)),
      observer_(observer) {}

void WorkQueue::add(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (shutting_down_) return;
  insertLocked(key, clock_.monotonicNow());
}

void WorkQueue::insertLocked(const std::string& key, Clock::MonotonicTime now) {
  if (!dirty_.insert(key).second) return;
  added_at_.emplace(key, now);
  if (observer_) observer_->onAdd();
  if (processing_.contains(key)) return;  // done() will queue it
  queue_.push_back(key);
  reportDepthLocked();
  cv_.notify_one();
}

void WorkQueue::addAfter(const std::string& key, std::chrono::nanoseconds delay) {
  std::lock_guard lock(mutex_);
  if (shutting_down_) return;
  auto now = clock_.monotonicNow();
  if (delay <= std::chrono::nanoseconds::zero()) {
    insertLocked(key, now);
    return;
  }
  auto ready_at = clock_.deadlineAfter(delay);
  auto [it, fresh] = waiting_.try_emplace(key, ready_at);
  if (!fresh) {
    if (it->second <= ready_at) return;  // already due sooner
    it->second = ready_at;  // the older heap entry is now stale and skipped when popped
  }
  delayed_.push(Delayed{ready_at, sequence_++, key});
  // A worker may be sleeping until a later due time.
  cv_.notify_all();
}

void WorkQueue::addRateLimited(const std::string& key) {
  auto delay = limiter_->when(key);
  {
    std::lock_guard lock(mutex_);
    if (shutting_down_) return;
    if (observer_) observer_->onRetry();
  }
  addAfter(key, delay);
}

void WorkQueue::forget(const std::string& key) { limiter_->forget(key); }

int WorkQueue::numRequeues(const std::string& key) const { return limiter_->numRequeues(key); }

std::optional<std::string> WorkQueue::get() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (shutting_down_) return std::nullopt;
    auto now = clock_.monotonicNow();
    if (promoteDueLocked(now) > 1) cv_.notify_all();
    if (!queue_.empty()) break;
    auto next_due = nextDueLocked();
    auto deadline = next_due.value_or(Clock::MonotonicTime::max());
    clock_.waitUntil(lock, cv_, deadline, [&] {
      if (shutting_down_ || !queue_.empty()) return true;
      auto due = nextDueLocked();
      return due.has_value() && *due < deadline;  // something became due sooner
    });
  }
  auto key = std::move(queue_.front());
  queue_.pop_front();
  auto now = clock_.monotonicNow();
  processing_[key] = now;
  dirty_.erase(key);
  if (auto it = added_at_.find(key); it != added_at_.end()) {
    if (observer_) observer_->onQueueLatency(now - it->second);
    added_at_.erase(it);
  }
  reportDepthLocked();
  return key;
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = processing_.find(key);
  if (it == processing_.end()) return;
  if (observer_) observer_->onWorkDuration(clock_.monotonicNow() - it->second);
  processing_.erase(it);
  if (dirty_.contains(key) && !shutting_down_) {
    queue_.push_back(key);
    reportDepthLocked();
  }
  // Wakes a worker for the re-queued key and any shutDownWithDrain() waiting for this.
  cv_.notify_all();
}

std::size_t WorkQueue::promoteDueLocked(Clock::MonotonicTime now) {
  std::size_t promoted = 0;
  while (!delayed_.empty() && delayed_.top().ready_at <= now) {
    auto entry = delayed_.top();
    delayed_.pop();
    auto it = waiting_.find(entry.key);
    if (it == waiting_.end() || it->second != entry.ready_at) continue;  // stale entry
    waiting_.erase(it);
    auto queued_before = queue_.size();
    insertLocked(entry.key, now);
    promoted += queue_.size() - queued_before;
  }
  return promoted;
}

std::optional<Clock::MonotonicTime> WorkQueue::nextDueLocked() {
  while (!delayed_.empty()) {
    const auto& top = delayed_.top();
    auto it = waiting_.find(top.key);
    if (it != waiting_.end() && it->second == top.ready_at) return top.ready_at;
    delayed_.pop();  // stale
  }
  return std::nullopt;
}

std::size_t WorkQueue::len() const {
  std::lock_guard lock(mutex_);
  // Due keys count as ready even before a get() has moved them.
  auto now = clock_.monotonicNow();
  std::size_t due = 0;
  for (const auto& [key, ready_at] : waiting_) {
    if (ready_at <= now && !dirty_.contains(key) && !processing_.contains(key)) ++due;
  }
  return queue_.size() + due;
}

std::size_t WorkQueue::waitingLen() const {
  std::lock_guard lock(mutex_);
  auto now = clock_.monotonicNow();
  std::size_t waiting = 0;
  for (const auto& [key, ready_at] : waiting_) {
    if (ready_at > now) ++waiting;
  }
  return waiting;
}

void WorkQueue::shutDown() {
  {
    std::lock_guard lock(mutex_);
    if (shutting_down_) return;
    shutting_down_ = true;
    queue_.clear();
    dirty_.clear();
    added_at_.clear();
    waiting_.clear();
    delayed_ = {};
    reportDepthLocked();
  }
  cv_.notify_all();
}

bool WorkQueue::shutDownWithDrain(std::chrono::nanoseconds timeout) {
  shutDown();
  std::unique_lock lock(mutex_);
  return clock_.waitUntil(lock, cv_, clock_.deadlineAfter(timeout),
                          [this] { return processing_.empty(); });
}

bool WorkQueue::shuttingDown() const {
  std::lock_guard lock(mutex_);
  return shutting_down_;
}

void WorkQueue::reportDepthLocked() {
  if (observer_) observer_->onDepth(queue_.size());
}

}  // namespace shardscaler::k8s
