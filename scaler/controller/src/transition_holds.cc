#include "transition_holds.h"

namespace shardscaler::controller {

std::optional<std::string> TransitionHolds::heldBecause(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = holds_.find(key);
  if (it == holds_.end() || clock_.monotonicNow() >= it->second.until) return std::nullopt;
  return it->second.why;
}

void TransitionHolds::hold(const std::string& key, std::string why) {
  std::lock_guard lock(mutex_);
  std::erase_if(holds_, [&](const auto& h) { return clock_.monotonicNow() >= h.second.until; });
  holds_[key] = Hold{clock_.deadlineAfter(hold_), std::move(why), {}};
}

void TransitionHolds::refuseReattach(const std::string& key, const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = holds_.find(key);
  if (it == holds_.end() || clock_.monotonicNow() >= it->second.until) return;
  it->second.refused_reattaches.insert(name);
}

std::set<std::string, std::less<>> TransitionHolds::refusedReattaches(
    const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = holds_.find(key);
  if (it == holds_.end() || clock_.monotonicNow() >= it->second.until) return {};
  return it->second.refused_reattaches;
}

}  // namespace shardscaler::controller
