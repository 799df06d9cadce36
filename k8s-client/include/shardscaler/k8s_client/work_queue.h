// A controller's queue of object keys (client-go workqueue semantics): deduplicated, never one
// key in two workers, delayed and rate-limited re-adds. It never runs work itself.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/rate_limiter.h"

namespace shardscaler::k8s {

// Metrics hook (no Prometheus dependency here). Called with the queue's lock held: keep each
// call short and never call back into the queue.
class WorkQueueObserver {
 public:
  virtual ~WorkQueueObserver() = default;
  virtual void onDepth(std::size_t /*depth*/) {}  // keys ready to be handed out
  virtual void onAdd() {}                         // every add() that was not a no-op
  virtual void onQueueLatency(std::chrono::nanoseconds /*waited*/) {}  // add -> get
  virtual void onWorkDuration(std::chrono::nanoseconds /*took*/) {}    // get -> done
  virtual void onRetry() {}                                            // addRateLimited()
};

// Keys live in three places, as in client-go: `dirty` (wanted, not yet handed out), the ready
// queue (dirty and not being processed, FIFO), and `processing` (handed out by get(), not yet
// done()). Adding a key that is dirty is a no-op; adding a key being processed marks it
// dirty and done() puts it back in the queue, so no key is ever held by two workers.
//
// Delayed keys (addAfter, addRateLimited) wait in a heap until due; a key waiting twice keeps
// the earlier time. They become ready when a get()/len() call sees they are due; workers
// blocked in get() wake at the earliest due time (on the Clock).
//
// After shutDown(): add*/get() do nothing (get() returns nullopt at once, queued keys are
// dropped); done() still completes in-flight work.
//
// Thread-safety: every method may be called from any thread.
class WorkQueue {
 public:
  // Without a limiter: defaultControllerRateLimiter(clock). observer may be null; it must
  // outlive the queue.
  explicit WorkQueue(const Clock& clock, std::unique_ptr<RateLimiter> limiter = nullptr,
                     WorkQueueObserver* observer = nullptr);
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void add(const std::string& key);
  void addAfter(const std::string& key, std::chrono::nanoseconds delay);
  // addAfter(key, limiter.when(key)): the retry path after a failed reconcile.
  void addRateLimited(const std::string& key);
  // The key's reconcile succeeded: reset its backoff.
  void forget(const std::string& key);
  int numRequeues(const std::string& key) const;

  // Blocks until a key is ready (returns it; the caller must call done(key)) or the queue is
  // shut down (returns nullopt).
  std::optional<std::string> get();
  void done(const std::string& key);

  std::size_t len() const;         // ready keys
  std::size_t waitingLen() const;  // delayed keys not yet due

  void shutDown();
  // shutDown(), then wait (on the Clock) until every key handed out is done(), up to timeout;
  // true when all were.
  bool shutDownWithDrain(std::chrono::nanoseconds timeout);
  bool shuttingDown() const;

 private:
  struct Delayed {
    Clock::MonotonicTime ready_at;
    std::uint64_t sequence;  // FIFO among keys due at the same time
    std::string key;
    bool operator>(const Delayed& other) const {
      return ready_at != other.ready_at ? ready_at > other.ready_at : sequence > other.sequence;
    }
  };

  void insertLocked(const std::string& key, Clock::MonotonicTime now);
  // Moves due delayed keys into the ready queue; returns how many.
  std::size_t promoteDueLocked(Clock::MonotonicTime now);
  std::optional<Clock::MonotonicTime> nextDueLocked();
  void reportDepthLocked();

  const Clock& clock_;
  std::unique_ptr<RateLimiter> limiter_;
  WorkQueueObserver* observer_;

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;
  std::unordered_map<std::string, Clock::MonotonicTime> processing_;  // key -> get() time
  std::unordered_map<std::string, Clock::MonotonicTime> added_at_;    // dirty key -> add time
  std::priority_queue<Delayed, std::vector<Delayed>, std::greater<>> delayed_;
  std::unordered_map<std::string, Clock::MonotonicTime> waiting_;  // key -> live ready_at
  std::uint64_t sequence_ = 0;
  bool shutting_down_ = false;
};

}  // namespace shardscaler::k8s
