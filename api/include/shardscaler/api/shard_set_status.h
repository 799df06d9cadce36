// ShardSet.status as shardscaler writes it to the status subresource: the planner's part, the
// controller's counts and the ingestion monitor's rates, and its JSON encoding. Values only:
// writing the status is the controller's job.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/api/condition_types.h"

namespace shardscaler::api {

// status.retainedShards[].phase: kept until its deadline (Retained), due and waiting for its data
// to be shipped (Draining), or going (Deleting).
inline constexpr std::string_view kPhaseRetained = "Retained";
inline constexpr std::string_view kPhaseDraining = "Draining";
inline constexpr std::string_view kPhaseDeleting = "Deleting";
inline constexpr std::array<std::string_view, 3> kRetainedShardPhases = {
    kPhaseRetained, kPhaseDraining, kPhaseDeleting};

// status.retainedShards[]: a detached shard kept until its deadline, then until it drained.
struct RetainedShard {
  int32_t index = 0;
  std::string stateful_set;
  std::string deletion_timestamp;  // the annotation as written ("" when missing)
  std::string phase = std::string(kPhaseRetained);
  std::optional<double> lag_seconds;  // the last measured remote-write lag, while draining
  std::string draining_since;         // RFC 3339 UTC, "" when not draining
  std::string drained_at;             // RFC 3339 UTC, "" until it drained

  friend bool operator==(const RetainedShard&, const RetainedShard&) = default;
};

// status.ingestion.perShard[]
struct ShardIngestionRate {
  int32_t index = 0;
  double samples_per_second = 0;

  friend bool operator==(const ShardIngestionRate&, const ShardIngestionRate&) = default;
};

// status.ingestion: the last query's rates, as shown to people (two decimals).
struct IngestionStatus {
  double total_samples_per_second = 0;
  std::vector<ShardIngestionRate> per_shard;
  std::string last_update;  // RFC3339 UTC of the last query attempt
  std::string error;        // "" when the last query succeeded with data

  friend bool operator==(const IngestionStatus&, const IngestionStatus&) = default;
};

struct ShardSetStatus {
  int64_t observed_generation = 0;
  // ACTIVE shards observed: attached StatefulSets with index < the target's shards (scale
  // subresource statusReplicasPath).
  int32_t shards = 0;
  // One pod (replica 0) per active shard (shard 0's when none is active yet); "" when the
  // target is not found. The scale subresource's labelSelectorPath.
  std::string selector;
  std::optional<int32_t> target_shards;  // the target's spec.shards as the operator reads it
  std::vector<RetainedShard> retained_shards;
  // The size of retained_shards for `kubectl get` (a printer column cannot count a list); set by
  // the status writer.
  std::optional<int64_t> retained_count;
  // How many of retained_shards are Draining, for `kubectl get` (DRAINING).
  std::optional<int64_t> draining_count;
  // With spec.ingestion.targetSamplesPerShard and rates: the shards the rates call for.
  std::optional<int32_t> recommended_shards;
  // Pauses in a row the operator did not acknowledge in time (without the guard); each doubles
  // the hold before the next attempt. Left out at 0.
  int32_t unacknowledged_pauses = 0;
  std::optional<IngestionStatus> ingestion;  // with spec.ingestion only
  std::vector<Condition> conditions;         // Ready, Progressing, Degraded, IngestionAvailable

  friend bool operator==(const ShardSetStatus&, const ShardSetStatus&) = default;
};

// Every set field; optional ones left out when unset.
nlohmann::json toJson(const ShardSetStatus& status);

}  // namespace shardscaler::api
