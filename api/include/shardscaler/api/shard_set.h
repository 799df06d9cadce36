// The ShardSet (shardscaler.io/v1alpha1) as the controller reads it: spec types mirroring the CRD,
// the bounds and defaults the CRD states, and the decoder. Decoding never guesses: a field of the
// wrong type is reported by its path and reads as absent.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/api/condition_types.h"
#include "shardscaler/api/field_error.h"

namespace shardscaler::api {

inline constexpr std::string_view kGroup = "shardscaler.io";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "shardscaler.io/v1alpha1";
inline constexpr std::string_view kShardSetKind = "ShardSet";
inline constexpr std::string_view kShardSetPlural = "shardsets";

// Bounds and defaults of spec fields, as the CRD states them; the planner and the ingestion
// check enforce them on objects that did not pass the API server's validation.
inline constexpr int64_t kShardsMinimum = 0;
// The most shards spec.shards, minShards and maxShards may name.
inline constexpr int64_t kShardCountMaximum = 1000;
inline constexpr int64_t kMinShardsMinimum = 1;
inline constexpr int64_t kMinShardsDefault = 1;
inline constexpr int64_t kMaxShardsMinimum = 1;
inline constexpr int64_t kMaxShardsDefault = 50;
inline constexpr int64_t kTargetSamplesPerShardMinimum = 1;
inline constexpr std::string_view kWhenScaledRetain = "Retain";
inline constexpr std::string_view kWhenScaledDelete = "Delete";
inline constexpr std::array<std::string_view, 2> kWhenScaledValues = {kWhenScaledRetain,
                                                                      kWhenScaledDelete};
// spec.shardRetentionPolicy.drain: the lag the default condition accepts, and how long after a
// check first found a due shard undrained it may stay so before onTimeout applies.
inline constexpr int64_t kMaxLagSecondsMinimum = 1;
inline constexpr int64_t kMaxLagSecondsMaximum = 3600;
inline constexpr int64_t kMaxLagSecondsDefault = 30;
inline constexpr int64_t kDrainTimeoutSecondsMinimum = 10;
inline constexpr int64_t kDrainTimeoutSecondsMaximum = int64_t{30} * 24 * 3600;
inline constexpr int64_t kDrainTimeoutSecondsDefault = 3600;
inline constexpr std::string_view kOnTimeoutKeep = "Keep";
inline constexpr std::string_view kOnTimeoutDelete = "Delete";
inline constexpr std::array<std::string_view, 2> kOnTimeoutValues = {kOnTimeoutKeep,
                                                                     kOnTimeoutDelete};
// spec.resharding: who assigns targets to shards. Operator (the default) leaves it to the
// operator's hashmod of the address; LowChurn has shardscaler's scrape-class rules assign them
// through a consistent table, so that a scale step moves about 1/(N+1) of the targets.
inline constexpr std::string_view kReshardingOperator = "Operator";
inline constexpr std::string_view kReshardingLowChurn = "LowChurn";
inline constexpr std::array<std::string_view, 2> kReshardingValues = {kReshardingOperator,
                                                                      kReshardingLowChurn};

// spec.targetRef.kind: the CRD's enum (the planner refuses anything else in objects stored before
// the CRD had it).
inline constexpr std::array<std::string_view, 2> kTargetKindValues = {"Prometheus",
                                                                      "PrometheusAgent"};

// spec.targetRef: a Prometheus or PrometheusAgent in the ShardSet's namespace.
struct TargetRef {
  std::string kind;  // as written; "" when absent or of the wrong type
  std::string name;
};

// spec.shardRetentionPolicy.retain
struct RetainSettings {
  std::optional<std::string> retention_period;  // a Prometheus duration; "" reads as unset
};

// spec.shardRetentionPolicy.drain: a per-shard PromQL condition that must hold before a shard is
// deleted (docs/design/drain.md). Unset fields take the defaults.
struct DrainSpec {
  std::optional<bool> enabled;                // default: true
  std::optional<std::string> prometheus_url;  // default: spec.ingestion's, else the shards' pods
  std::optional<std::string> condition;       // default: remote write caught up
  std::optional<int64_t> max_lag_seconds;     // kMaxLagSecondsDefault
  std::optional<int64_t> timeout_seconds;     // kDrainTimeoutSecondsDefault
  std::optional<std::string> on_timeout;      // "Keep" (default) | "Delete" (kOnTimeoutValues)
};

// spec.shardRetentionPolicy: unset fields fall back to the target's, then the defaults.
struct ShardRetentionPolicy {
  std::optional<std::string> when_scaled;  // "Retain" | "Delete" (kWhenScaledValues)
  RetainSettings retain;
  std::optional<DrainSpec> drain;  // nullopt: absent (the defaults apply)
};

// spec.ingestion: where and how to measure the shards' sample-ingestion rates.
struct IngestionSpec {
  std::optional<std::string> prometheus_url;  // prometheusURL
  std::optional<std::string> query;
  std::optional<std::string> interval;  // a Prometheus duration
  std::optional<int64_t> target_samples_per_shard;
};

struct ShardSetSpec {
  TargetRef target_ref;
  std::optional<int64_t> shards;      // the scale subresource's spec path
  std::optional<int64_t> min_shards;  // kMinShardsDefault when absent
  std::optional<int64_t> max_shards;  // kMaxShardsDefault when absent
  ShardRetentionPolicy shard_retention_policy;
  std::optional<IngestionSpec> ingestion;  // nullopt: absent, or not an object
  std::optional<std::string> resharding;   // kReshardingValues; kReshardingOperator when absent
};

struct ShardSet {
  std::string ns;
  std::string name;
  // metadata.uid: retained shards name it in their controller ownerReference ("" in a ShardSet
  // not yet created, whose plans then leave ownership as it is).
  std::string uid;
  int64_t generation = 0;
  std::optional<std::chrono::system_clock::time_point> created;  // metadata.creationTimestamp
  ShardSetSpec spec;

  std::vector<Condition> conditions;  // status.conditions as last written
  int32_t unacknowledged_pauses = 0;  // status.unacknowledgedPauses as last written
  // Spec fields of the wrong JSON type outside spec.ingestion; the planner reports them as
  // InvalidSpec.
  std::vector<FieldError> spec_errors;
  // Those inside spec.ingestion (including spec.ingestion itself): they make the rates
  // unavailable, never the shard count wrong.
  std::vector<FieldError> ingestion_errors;
};

// Fails only when the object cannot be a ShardSet at all (not an object, no metadata.name);
// problems inside spec land in ShardSet::spec_errors and ShardSet::ingestion_errors. A malformed
// entry of status.conditions is dropped.
std::expected<ShardSet, FieldError> decodeShardSet(const nlohmann::json& object);

// spec as JSON, with absent optional fields left out (test objects, the CRD check).
nlohmann::json toJson(const ShardSetSpec& spec);

}  // namespace shardscaler::api
