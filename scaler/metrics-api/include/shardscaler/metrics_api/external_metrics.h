// The metrics shardscaler serves through external.metrics.k8s.io, computed from a ShardSet's
// status alone. Pure. Must never turn a missing, failed or stale rate into a value: a zero would
// make an HPA scale down, an error makes it keep the shard count.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscaler::metrics_api {

using Json = nlohmann::json;

inline constexpr std::string_view kGroup = "external.metrics.k8s.io";
inline constexpr std::string_view kVersion = "v1beta1";
inline constexpr std::string_view kGroupVersion = "external.metrics.k8s.io/v1beta1";
// The one label of every series: the ShardSet's name (an HPA selects with matchLabels).
inline constexpr std::string_view kShardSetLabel = "shardset";

enum class MetricKind {
  // Samples/s of the active shards together. With `target: {type: AverageValue, averageValue: T}`
  // an HPA wants ceil(total / T) shards: status.recommendedShards before its clamps.
  SamplesPerSecond,
  // Samples/s of the busiest active shard. With `target: {type: Value, value: V}` an HPA wants
  // ceil(shards * busiest / V): for skewed targets that one shard cannot keep up with.
  MaxShardSamplesPerSecond,
  // status.recommendedShards itself (clamped and rounded to topology zones like spec.shards).
  // With `target: {type: AverageValue, averageValue: "1"}` an HPA wants exactly that many.
  RecommendedShards,
};

struct MetricInfo {
  MetricKind kind;
  std::string_view name;
  std::string_view description;
};
// Every metric, in the order discovery lists them.
std::span<const MetricInfo> metricInfos();
std::optional<MetricKind> metricKindOf(std::string_view name);
std::string_view metricName(MetricKind kind);
// "a, b and c": for messages naming what is served.
std::string metricNameList();

// When a ShardSet's rates count as too old: `intervals` times its spec.ingestion.interval, and
// never less than `floor` (status.ingestion.lastUpdate has whole seconds and is written by the
// reconcile after each query, so a tight bound would flap on a healthy ShardSet).
struct StalenessPolicy {
  double intervals = 3;
  std::chrono::nanoseconds floor = std::chrono::seconds(10);
};
// The bound for one ShardSet's interval.
std::chrono::nanoseconds maxRateAge(std::chrono::nanoseconds interval,
                                    const StalenessPolicy& policy);

// Why no value can be given. `reason` is a CamelCase word for logs, metrics and the Status.
struct MetricFailure {
  std::string reason;
  std::string message;
};

// The external metrics API's resource.Quantity, in milli-units as the HPA reads it
// (Quantity.MilliValue): "1234560m", or "42" when whole.
struct MilliQuantity {
  int64_t milli = 0;
  std::string toString() const;
  friend bool operator==(const MilliQuantity&, const MilliQuantity&) = default;
};

// The value of one ShardSet, with the time of the query it comes from.
struct MetricValue {
  std::string shard_set;
  MilliQuantity value;
  std::string timestamp;  // status.ingestion.lastUpdate (RFC 3339)
};

// The value of `kind` for a ShardSet object as the API server returns it. Fails when the status
// has no rates, an error, rates older than the policy allows (against `now`), no target shard
// count, an active shard without a rate, or (RecommendedShards) no recommendation.
std::expected<MetricValue, MetricFailure> metricValue(const Json& shard_set, MetricKind kind,
                                                      std::chrono::system_clock::time_point now,
                                                      const StalenessPolicy& policy);

// The largest rate of one shard the API gives a value for: 10^12 samples/s, far beyond any
// Prometheus. Larger, and 1000 shards' total in milli-units would no longer fit an int64.
inline constexpr double kMaxShardSamplesPerSecond = 1e12;

// A rate as status carries it (samples/s with two decimals) in milli-units, exactly: 1234.57 ->
// 1234570. nullopt when it is not finite, negative or above kMaxShardSamplesPerSecond (status is
// written from a Prometheus answer, which may hold any number).
std::optional<int64_t> rateMilli(double samples_per_second);

// What kube-controller-manager's HPA computes for an External metric with an AverageValue target
// (replica_calculator.go GetExternalPerPodMetricReplicas, before its min/max and behaviour):
// `current` when within `tolerance` of the target, else ceil(total / target). Milli-units, as it
// reads them. For tests and the documentation's arithmetic.
int32_t hpaAverageValueReplicas(int64_t total_milli, int64_t target_milli, int32_t current,
                                double tolerance = 0.1);

// apiVersion external.metrics.k8s.io/v1beta1, kind ExternalMetricValueList, one item per value.
Json externalMetricValueList(std::string_view metric, const std::vector<MetricValue>& values);

}  // namespace shardscaler::metrics_api
