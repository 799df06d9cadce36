// What the ingestion monitor makes of a query's answer: per-shard rates (series summed per pod,
// pods of one shard averaged), the failure reasons, and the recommended shard count. Pure.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/ingestion/ingestion_source.h"
#include "shardscaler/promql_client/error.h"
#include "shardscaler/promql_client/query_result.h"

namespace shardscaler::ingestion {

// Reasons of the IngestionAvailable condition when no rates could be had.
inline constexpr std::string_view kReasonPrometheusUnreachable = "PrometheusUnreachable";
inline constexpr std::string_view kReasonQueryTimeout = "QueryTimeout";
inline constexpr std::string_view kReasonInvalidQuery = "InvalidQuery";
inline constexpr std::string_view kReasonQueryFailed = "QueryFailed";
// The URL's shape (no http(s), credentials, a query, a fragment), or what the client refused.
inline constexpr std::string_view kReasonInvalidPrometheusURL = "InvalidPrometheusURL";
// Outside the admin's allow-list (prometheus_url_policy.h): shardscaler sent no request.
inline constexpr std::string_view kReasonPrometheusURLNotAllowed = "PrometheusURLNotAllowed";
// The answer was larger than shardscaler reads (promql::ClientOptions::max_response_bytes).
inline constexpr std::string_view kReasonResponseTooLarge = "ResponseTooLarge";
inline constexpr std::string_view kReasonEmptyResult = "EmptyResult";
inline constexpr std::string_view kReasonNoShardSeries = "NoShardSeries";
inline constexpr std::string_view kReasonUnexpectedResultType = "UnexpectedResultType";
// Without a URL, from the shards' own pods: their StatefulSets or pods could not be listed; no pod
// could be read; the target's web server asks for what shardscaler cannot give.
inline constexpr std::string_view kReasonShardPodsUnlisted = "ShardPodsUnlisted";
inline constexpr std::string_view kReasonShardPodsUnreadable = "ShardPodsUnreadable";
inline constexpr std::string_view kReasonUnsupportedWebTLS = "UnsupportedWebTLS";

struct IngestionFailure {
  std::string reason;   // one of the kReason* above
  std::string message;  // what a person needs to act on; goes into status and Events
  std::string detail;   // for the log line only (promql::Error::detail)
};

// A failed query: Transport -> PrometheusUnreachable; ClientTimeout, timeout, canceled ->
// QueryTimeout; bad_data -> InvalidQuery; Config -> InvalidPrometheusURL; ResponseTooLarge ->
// ResponseTooLarge; else QueryFailed. The message is the error's (never a response body).
IngestionFailure failureOfError(const promql::Error& error);

// The rates of the target's shards in a query result, by index. Each series is attributed by
// its `pod` label (shardOfPod); series of other pods, without a pod label, or with a value
// that is not a finite number >= 0 are ignored. Series of one pod are summed, and the pods of
// one shard (its replicas) averaged. Fails on a result that is not an instant vector, on an
// empty vector, and on one where no series is the target's.
std::expected<std::vector<ShardRate>, IngestionFailure> shardRates(
    const promql::QueryResult& result, planner::TargetKind kind, std::string_view target_name);

// ceil(total / targetSamplesPerShard) clamped to [minShards, maxShards] and rounded to the
// topology zones exactly as the desired shard count is (planner::desiredShards); nullopt
// when targetSamplesPerShard is unset or the clamps are invalid (the planner reports those).
std::optional<int32_t> recommendedShards(double total_samples_per_second,
                                         const IngestionTarget& target);

}  // namespace shardscaler::ingestion
