#include "drain_gate.h"

namespace shardscaler::controller {

void DrainGate::beginDrain(std::chrono::nanoseconds timeout) {
  std::lock_guard lock(mutex_);
  deadline_ = clock_.deadlineAfter(timeout);
}

void DrainGate::leadershipLost() {
  {
    std::lock_guard lock(mutex_);
    leadership_lost_ = true;
  }
  wake_.notify_all();
}

bool DrainGate::waitOut(std::chrono::nanoseconds wait) {
  // Room left in the drain after the wait, for the reads and writes that follow it.
  constexpr auto kMargin = std::chrono::seconds(2);
  std::unique_lock lock(mutex_);
  if (!deadline_ || leadership_lost_) return false;
  const auto wake = clock_.deadlineAfter(wait);
  if (wake + kMargin > *deadline_) return false;
  // Woken early only when the Lease is lost: then another replica may lead, and nothing more is
  // written from here.
  return !clock_.waitUntil(lock, wake_, wake, [this] { return leadership_lost_; });
}

}  // namespace shardscaler::controller
