// What the controller needs from the ingestion monitor (docs/design/ingestion.md): which ShardSets
// to watch, and the latest per-shard sample rates. Rates are reported, never acted upon here.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/ingestion/web_tls.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::ingestion {

// One ShardSet's spec.ingestion plus what is needed to map pods to shards and to clamp the
// recommendation like the shard count the ShardSet asks for.
struct IngestionTarget {
  std::string ns;
  std::string shard_set;
  planner::TargetKind kind = planner::TargetKind::Prometheus;
  std::string target_name;
  // "" = read each shard pod's own /metrics (shard_pod_reader.h) instead of a Prometheus.
  std::string prometheus_url;
  // "" = the default query of the kind. Otherwise used as written, after replacing
  // $NAMESPACE and $POD_REGEX (see ingestion_query.h).
  std::string query;
  std::chrono::milliseconds interval{std::chrono::seconds(30)};
  std::optional<int64_t> target_samples_per_shard;  // no recommendation when unset
  std::optional<int64_t> min_shards;                // spec.minShards
  std::optional<int64_t> max_shards;                // spec.maxShards
  // Zone count when the target shards by Topology (set by the controller from the target).
  std::optional<std::size_t> zones;
  // The target's spec.shards as last observed (set by the controller). Only shards below it are
  // counted in the total and the recommendation, as the external metric counts them: a retained
  // shard (detached, scraping nothing once the modulus changed) or one still being removed keeps
  // its own rate in per_shard. Unset: every shard found counts.
  std::optional<int32_t> active_shards;
  // How the target serves its pods' web port (set by the controller from the target), for the
  // pods' own /metrics.
  WebTls web_tls;

  friend bool operator==(const IngestionTarget&, const IngestionTarget&) = default;
};

struct ShardRate {
  int32_t index = 0;
  double samples_per_second = 0;

  friend bool operator==(const ShardRate&, const ShardRate&) = default;
};

struct IngestionSnapshot {
  double total_samples_per_second = 0;
  std::vector<ShardRate> per_shard;  // by index
  std::string last_update;           // RFC3339 UTC of the last query attempt
  std::string error;                 // "" when the last query succeeded with data
  // Why the last query gave no rates, as a condition reason (QueryTimeout, EmptyResult, ...);
  // "" when it succeeded.
  std::string error_reason;
  // ceil(total / targetSamplesPerShard) clamped like the desired shard count; set only when
  // targetSamplesPerShard is set and the last query succeeded with data.
  std::optional<int32_t> recommended_shards;
};

// Thread-safety: every method may be called from any thread.
class IngestionSource {
 public:
  virtual ~IngestionSource() = default;
  // Idempotent: called on every reconcile of a ShardSet that has spec.ingestion.
  virtual void track(const std::string& key, const IngestionTarget& target) = 0;
  // The ShardSet is gone or no longer has spec.ingestion.
  virtual void untrack(const std::string& key) = 0;
  // nullopt until the first query of this ShardSet finished.
  virtual std::optional<IngestionSnapshot> snapshot(const std::string& key) const = 0;
};

}  // namespace shardscaler::ingestion
