#include "shardscaler/ingestion/ingestion_result.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/ingestion/ingestion_query.h"
#include "shardscaler/planner/desired_shards.h"

namespace shardscaler::ingestion {
namespace {

// The CRD caps shard counts (api::kShardCountMaximum): a need above it asks for the cap, which
// maxShards then clamps like any spec.shards.
constexpr auto kMaxRequestedShards = static_cast<double>(api::kShardCountMaximum);

}  // namespace

IngestionFailure failureOfError(const promql::Error& error) {
  std::string_view reason = kReasonQueryFailed;
  switch (error.kind) {
    case promql::ErrorKind::Transport:
      reason = kReasonPrometheusUnreachable;
      break;
    case promql::ErrorKind::ClientTimeout:
    case promql::ErrorKind::Timeout:
    case promql::ErrorKind::Canceled:
      reason = kReasonQueryTimeout;
      break;
    case promql::ErrorKind::BadData:
      reason = kReasonInvalidQuery;
      break;
    case promql::ErrorKind::Config:
      reason = kReasonInvalidPrometheusURL;
      break;
    case promql::ErrorKind::ResponseTooLarge:
      reason = kReasonResponseTooLarge;
      break;
    default:
      break;
  }
  return {std::string(reason), error.describe(), error.detail};
}

std::expected<std::vector<ShardRate>, IngestionFailure> shardRates(
    const promql::QueryResult& result, planner::TargetKind kind, std::string_view target_name) {
  const promql::Vector* vector = result.vector();
  if (vector == nullptr) {
    return std::unexpected(IngestionFailure{std::string(kReasonUnexpectedResultType),
                                            "the query returned a " +
                                                std::string(promql::toString(result.type())) +
                                                ", not an instant vector of per-pod rates"});
  }
  if (vector->empty()) {
    return std::unexpected(IngestionFailure{
        std::string(kReasonEmptyResult),
        "the query returned no series: no pod of " + std::string(planner::toString(kind)) + " " +
            std::string(target_name) + " has samples in the queried Prometheus"});
  }
  std::map<std::string, std::pair<int32_t, double>, std::less<>> per_pod;
  std::string ignored;
  int ignored_count = 0;
  for (const promql::VectorSample& sample : *vector) {
    const std::string_view pod = sample.metric.get("pod");
    const auto shard = shardOfPod(kind, target_name, pod);
    const double v = sample.point.value;
    if (!shard || !std::isfinite(v) || v < 0) {
      if (++ignored_count <= 3) ignored += " " + sample.metric.toString();
      continue;
    }
    auto [it, inserted] = per_pod.try_emplace(std::string(pod), *shard, 0.0);
    it->second.second += v;
  }
  if (per_pod.empty()) {
    return std::unexpected(IngestionFailure{
        std::string(kReasonNoShardSeries),
        std::to_string(vector->size()) + " series, none with a pod label of a shard of " +
            std::string(planner::toString(kind)) + " " + std::string(target_name) +
            " and a finite rate; e.g." + ignored});
  }
  std::map<int32_t, std::pair<double, int>> per_shard;  // sum over replicas, replica count
  for (const auto& [pod, shard_rate] : per_pod) {
    auto& [sum, replicas] = per_shard[shard_rate.first];
    sum += shard_rate.second;
    ++replicas;
  }
  std::vector<ShardRate> rates;
  rates.reserve(per_shard.size());
  for (const auto& [index, sum_count] : per_shard) {
    rates.push_back({index, sum_count.first / sum_count.second});
  }
  return rates;
}

std::optional<int32_t> recommendedShards(double total_samples_per_second,
                                         const IngestionTarget& target) {
  if (!target.target_samples_per_shard || *target.target_samples_per_shard <= 0) {
    return std::nullopt;
  }
  if (!std::isfinite(total_samples_per_second) || total_samples_per_second < 0) {
    return std::nullopt;
  }
  const double needed =
      std::ceil(total_samples_per_second / static_cast<double>(*target.target_samples_per_shard));
  auto desired = planner::desiredShards(static_cast<int64_t>(std::min(needed, kMaxRequestedShards)),
                                        target.min_shards, target.max_shards, target.zones);
  if (!desired) return std::nullopt;
  return desired->want;
}

}  // namespace shardscaler::ingestion
