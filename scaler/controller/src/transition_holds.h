// ShardSets whose writes the API server refused for good, and until when no new transition of
// theirs starts: retrying the same write cannot help, and the target must not stay paused
// waiting for it (docs/design/lagging-operator.md, "Writes refused for good"). Never persisted: a
// restart plans again, which undoes an interrupted transition anyway.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::controller {

// Thread-safety: all methods from any thread.
class TransitionHolds {
 public:
  TransitionHolds(const k8s::Clock& clock, std::chrono::nanoseconds hold)
      : clock_(clock), hold_(hold) {}

  // Why transitions of `key` are held, while they are.
  std::optional<std::string> heldBecause(const std::string& key) const;
  // Holds transitions of `key` for the hold time from now; forgets expired holds.
  void hold(const std::string& key, std::string why);
  // While transitions of `key` are held: the API server refused the re-attach of StatefulSet
  // `name` for good, so an undo resumes the target without it.
  void refuseReattach(const std::string& key, const std::string& name);
  std::set<std::string, std::less<>> refusedReattaches(const std::string& key) const;
  std::chrono::nanoseconds holdTime() const { return hold_; }

 private:
  struct Hold {
    k8s::Clock::MonotonicTime until;
    std::string why;
    std::set<std::string, std::less<>> refused_reattaches;
  };
  const k8s::Clock& clock_;
  const std::chrono::nanoseconds hold_;
  mutable std::mutex mutex_;
  std::map<std::string, Hold> holds_;
};

}  // namespace shardscaler::controller
