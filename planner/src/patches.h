// The JSON merge-patch bodies of the planner's writes. Private to the planner: each body carries
// its own uid (and, where the write must not act on a stale read, resourceVersion) precondition.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/stateful_set.h"
#include "shardscaler/planner/target.h"

namespace shardscaler::planner::patches {

// The claim and a pause also hold the target at shardscaler's shard retention policy when it is
// not held yet (operator_retention.h); the release of the claim gives its own back.
nlohmann::json claimTarget(const Target& target, const std::string& shard_set_name);
nlohmann::json pauseTarget(const Target& target, const std::string& shard_set_name,
                           std::chrono::system_clock::time_point now);

struct TargetUpdate {
  std::optional<int32_t> shards;
  bool unpause = false;
  bool clear_paused_by = false;
  bool release_claim = false;  // also drops the scaled-down-at annotation, ends the hold
  // Stamps api::kScaledDownAtAnnotation (with a lowering of spec.shards).
  std::optional<std::chrono::system_clock::time_point> scaled_down_at;
  // A shard-count change acts on what was just read (every detach held, every re-attach done):
  // it carries the target's resourceVersion, so a target changed since then is re-read.
  bool precondition_resource_version = false;
  // spec.scrapeClasses, whole (a merge patch replaces a list); null removes the field. Written
  // only with precondition_resource_version: the list as read is what it was made from.
  std::optional<nlohmann::json> scrape_classes;
};
// The caller only asks when something is set.
nlohmann::json updateTarget(const Target& target, const TargetUpdate& update);

// Adds the guard label (shard_set_name set) or removes it (nullopt).
nlohmann::json labelStatefulSet(const ObservedStatefulSet& sts,
                                const std::optional<std::string>& shard_set_name);
// The ShardSet a shard is detached to: its guard label names it, and its controller
// ownerReference moves from the target to it (uid "": ownership stays as it is).
struct ShardSetRef {
  std::string name;
  std::string uid;
};
nlohmann::json detach(const ObservedStatefulSet& sts, const Target& target,
                      const ShardSetRef& shard_set, const DeletionDeadline& deadline,
                      std::chrono::system_clock::time_point now);
// Moves a retained shard's controller ownerReference from the target to the ShardSet, as a detach
// does now, and copies its deadline to the annotations a detach writes now where they are
// missing; nullopt when the target holds none.
std::optional<nlohmann::json> adopt(const ObservedStatefulSet& sts, const Target& target,
                                    const ShardSetRef& shard_set);
// Drops the ShardSet's ownerReference from a retained shard it lets go of: nothing deletes it
// then but a user (garbage collection has no owner to follow).
nlohmann::json orphan(const ObservedStatefulSet& sts, const ShardSetRef& shard_set);
// Annotates a due shard's drain: `annotation` (kDrainingSinceAnnotation or kDrainedAtAnnotation)
// set to `at`.
nlohmann::json markDrain(const ObservedStatefulSet& sts, std::string_view annotation,
                         std::chrono::system_clock::time_point at);
// Also gives the controller ownerReference back to the target when the ShardSet holds it.
nlohmann::json reattach(const ObservedStatefulSet& sts, const Target& target,
                        const ShardSetRef& shard_set);

}  // namespace shardscaler::planner::patches
