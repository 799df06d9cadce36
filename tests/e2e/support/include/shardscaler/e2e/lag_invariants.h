// The "nothing is lost" invariants of docs/design.md and docs/design/lagging-operator.md, judged
// over a ShardHistory: no StatefulSet's deletion starts before its time, and the target is never
// paused for long. Pure functions of the recorded events; they read nothing and never decide what a
// test does next.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/e2e/shard_history.h"

namespace shardscaler::e2e {

struct Violation {
  std::string rule;  // DeletedBeforeDeadline | ActiveShardDeleted | PausedTooLong | NotConverged
  std::string message;
};

// The moment a shard StatefulSet's deletion started: the first event with a deletionTimestamp,
// or its DELETED event when none came first; the object is the state it was in then.
struct DeletionStart {
  std::string name;
  std::string uid;
  int index = -1;
  std::uint64_t revision = 0;
  std::chrono::system_clock::time_point at;  // metadata.deletionTimestamp, else when seen
  std::chrono::steady_clock::time_point seen;
  int target_shards = 0;  // the target's spec.shards (absent or below 1: 1) at that revision
  bool attached = false;  // carried operator.prometheus.io/name
  bool retained = false;  // carried shardscaler.io/retained=true
  std::string deadline;   // operator.prometheus.io/deletion-timestamp, "" when absent
  bool from_relist = false;
  std::string describe() const;
};

// The shard index of one of target `target_name`'s StatefulSets (prometheus-<name>[-shard-<i>]):
// its operator.prometheus.io/shard label, else its name; nullopt for any other object.
std::optional<int> shardIndexOf(const Json& object, const std::string& target_name = "main");

// Shard StatefulSets of target `target_name` (prometheus-<name>[-shard-<i>]); others are ignored.
std::vector<DeletionStart> deletionStarts(const std::vector<HistoryEvent>& history,
                                          const std::string& target_name = "main");

// Under Retain every deletion must be of a retained (detached) shard whose deadline has passed.
// Under Delete an attached shard may go only from index target_shards up, and a retained one only
// after its deadline.
std::vector<Violation> checkDeletions(const std::vector<DeletionStart>& starts, bool retain);

// Something that legitimately (re)starts the clock of a pause: a scale write that changed the
// wanted count, or shardscaler starting again after a kill.
struct PauseCause {
  std::chrono::steady_clock::time_point at;
  std::string what;
};

// One stretch in which the target's spec.paused was true.
struct PauseWindow {
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point end;  // `until` when still paused
  bool open = false;
  std::chrono::steady_clock::time_point anchor;  // the later of start and the last cause in it
  std::string anchor_what;
  std::chrono::milliseconds pastAnchor() const;
};

// The pause windows of the history, each anchored at its last cause before it ended.
std::vector<PauseWindow> pauseWindows(const std::vector<HistoryEvent>& history,
                                      const std::vector<PauseCause>& causes,
                                      std::chrono::steady_clock::time_point until);

// A window that lasted longer than `bound` past its anchor.
std::vector<Violation> checkPauses(const std::vector<PauseWindow>& windows,
                                   std::chrono::milliseconds bound);

}  // namespace shardscaler::e2e
