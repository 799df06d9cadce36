// While `shardscaler run` drains on SIGTERM: whether a reconcile in flight may wait out a short
// wait of its transition (the operator's acknowledgement, a settle time) and finish it, rather
// than leave the target paused for the next instance (docs/design/service.md). Never once the Lease
// is lost: another replica may lead by then.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::controller {

// Thread-safety: all methods from any thread.
class DrainGate {
 public:
  explicit DrainGate(const k8s::Clock& clock) : clock_(clock) {}

  // The drain has begun and ends `timeout` from now.
  void beginDrain(std::chrono::nanoseconds timeout);
  // The Lease is lost: a reconcile waiting in waitOut() wakes at once.
  void leadershipLost();
  // While draining, waits `wait` and returns true when that ends well within the drain (a margin
  // is left for the reads and writes after it) and the Lease holds throughout. False, at once,
  // when not draining, when the wait would not end in time, or once the Lease is lost.
  bool waitOut(std::chrono::nanoseconds wait);

 private:
  const k8s::Clock& clock_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<k8s::Clock::MonotonicTime> deadline_;
  bool leadership_lost_ = false;
};

}  // namespace shardscaler::controller
