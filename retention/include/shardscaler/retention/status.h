// The retention part of ShardSet.status (docs/design.md §1) as the planner computes it from
// observed state. Values and JSON only; writing the status subresource is the controller's job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/retention/condition.h"

namespace shardscaler::retention {

struct RetainedShard {
  int32_t index = 0;
  std::string stateful_set;
  std::string deletion_timestamp;  // the annotation as written ("" when missing)

  friend bool operator==(const RetainedShard&, const RetainedShard&) = default;
};

struct ShardSetStatus {
  int64_t observed_generation = 0;
  // ACTIVE shards observed: attached StatefulSets with index < the target's shards (scale
  // subresource statusReplicasPath).
  int32_t shards = 0;
  // One pod (replica 0) per active shard (shard 0's when none is active yet); "" when the
  // target is not found.
  std::string selector;
  std::optional<int32_t> target_shards;  // the target's spec.shards as the operator reads it
  std::vector<RetainedShard> retained_shards;
  std::vector<Condition> conditions;  // Ready, Progressing, Degraded

  friend bool operator==(const ShardSetStatus&, const ShardSetStatus&) = default;
};

// {"observedGeneration":..,"shards":..,"selector":..,"targetShards":..,"retainedShards":[..],
//  "conditions":[..]}; targetShards omitted when unknown. The controller adds the ingestion
// fields it owns and writes the result to the status subresource.
nlohmann::json toJson(const ShardSetStatus& status);

}  // namespace shardscaler::retention
