#include "shardscaler/api/shard_set_status.h"

#include "shardscaler/api/field_names.h"

namespace shardscaler::api {
namespace {

using Json = nlohmann::json;

Json toJson(const IngestionStatus& ingestion) {
  Json per_shard = Json::array();
  for (const ShardIngestionRate& r : ingestion.per_shard) {
    per_shard.push_back(
        {{field::kIndex, r.index}, {field::kSamplesPerSecond, r.samples_per_second}});
  }
  return Json{{field::kTotalSamplesPerSecond, ingestion.total_samples_per_second},
              {field::kPerShard, std::move(per_shard)},
              {field::kLastUpdate, ingestion.last_update},
              {field::kError, ingestion.error}};
}

}  // namespace

Json toJson(const ShardSetStatus& status) {
  Json retained = Json::array();
  for (const RetainedShard& r : status.retained_shards) {
    Json shard{{field::kIndex, r.index},
               {field::kStatefulSet, r.stateful_set},
               {field::kDeletionTimestamp, r.deletion_timestamp},
               {field::kPhase, r.phase}};
    if (r.lag_seconds) shard[field::kLagSeconds] = *r.lag_seconds;
    if (!r.draining_since.empty()) shard[field::kDrainingSince] = r.draining_since;
    if (!r.drained_at.empty()) shard[field::kDrainedAt] = r.drained_at;
    retained.push_back(std::move(shard));
  }
  Json conditions = Json::array();
  for (const Condition& c : status.conditions) conditions.push_back(toJson(c));
  Json j{{field::kObservedGeneration, status.observed_generation},
         {field::kShards, status.shards},
         {field::kSelector, status.selector},
         {field::kRetainedShards, std::move(retained)},
         {field::kConditions, std::move(conditions)}};
  if (status.target_shards) j[field::kTargetShards] = *status.target_shards;
  if (status.retained_count) j[field::kRetainedCount] = *status.retained_count;
  if (status.draining_count) j[field::kDrainingCount] = *status.draining_count;
  if (status.recommended_shards) j[field::kRecommendedShards] = *status.recommended_shards;
  if (status.unacknowledged_pauses > 0) {
    j[field::kUnacknowledgedPauses] = status.unacknowledged_pauses;
  }
  if (status.ingestion) j[field::kIngestion] = toJson(*status.ingestion);
  return j;
}

}  // namespace shardscaler::api
