// Whether a due shard's data has been shipped (docs/design/drain.md), read from a Prometheus that
// scrapes the shards (the PromQL of the metrics the drain rules read, drain_evidence.h, and the
// reading of their answers pod by pod) or, without one, from the shards' own pods' /metrics: the
// same metrics, judged by the same rules. Absence of evidence is never drained: a failed query, a
// pod not scraped (`up` missing or 0, or its own /metrics not read), a result that is not a vector
// or holds NaN, Inf or one queue twice. It never writes anything; DrainChecker only reads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/ingestion/drain_evidence.h"
#include "shardscaler/ingestion/ingestion_monitor.h"
#include "shardscaler/ingestion/prometheus_url_policy.h"
#include "shardscaler/ingestion/shard_pod_reader.h"
#include "shardscaler/planner/planner.h"
#include "shardscaler/promql_client/prom_query.h"

namespace shardscaler::ingestion {

// A surviving shard: an attached one below the count, whose pods take over a due shard's targets
// once they reloaded their configuration (the planner lists them beside its drain checks).
using SurvivingShard = planner::Decision::DrainSurvivor;

// One round of drain checks of a ShardSet: its target (namespace, kind, name, web TLS; the pods
// are found through it when the drain names no URL), due shards and survivors.
struct DrainRequest {
  ShardSource source;
  std::vector<DrainShard> shards;
  std::vector<SurvivingShard> survivors;
};

// <stateful_set>-<ordinal>, escaped as a PromQL regex.
std::string shardPodRegex(std::string_view stateful_set);

// min by (namespace, pod) (up{namespace="NS",pod=~"REGEX"}): who is scraped, on every target of
// the pod (a config-reloader up does not hide a Prometheus down).
std::string drainUpQuery(std::string_view ns, std::string_view pod_regex);
// Each pod's Prometheus's own process_start_time_seconds: that of the target that exports
// prometheus_build_info, so a sidecar scraped alone answers nothing.
std::string drainPrometheusQuery(std::string_view ns, std::string_view pod_regex);
// The remote-storage series the default condition reads, by metric name, pod and queue
// (remote_name, url): samples pending, highest sent timestamp, highest appended timestamp.
std::string drainQueuesQuery(std::string_view ns, std::string_view pod_regex);
// Each pod's prometheus_config_last_reload_success_timestamp_seconds.
std::string drainReloadQuery(std::string_view ns, std::string_view pod_regex);
// The user's condition with $NAMESPACE and $POD_REGEX replaced.
std::string drainConditionQuery(std::string_view condition, std::string_view ns,
                                std::string_view pod_regex);

// The answers one round read, for all due shards at once.
struct DrainAnswers {
  promql::Result<promql::QueryResult> up;
  promql::Result<promql::QueryResult> prometheus;
  // The queues query (default condition), or the user's condition.
  promql::Result<promql::QueryResult> evidence;
  // The surviving shards' reloads; nullopt when there are none to ask about.
  std::optional<promql::Result<promql::QueryResult>> reloads;
};
// Each shard's reading from the answers, by StatefulSet name (judgeDrain on what they say of its
// pods), with the surviving shards' reload. The answers are read once for all of them.
std::map<std::string, planner::DrainReading, std::less<>> readDrains(
    std::span<const DrainShard> shards, std::span<const SurvivingShard> survivors,
    const DrainAnswers& answers, bool custom_condition, std::chrono::seconds max_lag);

// Thread-safety: check() may run on several threads at once.
class DrainChecker {
 public:
  // A drain's Prometheus is user input as the ingestion's is: only URLs `url_policy` allows are
  // queried; for any other, every shard reads as not drained, with the policy's reason. A drain
  // without a URL reads the shards' own pods through `pods` (none: nothing reads as drained).
  explicit DrainChecker(PromQueryFactory factory = prometheusClientFactory(),
                        std::chrono::milliseconds timeout = std::chrono::seconds(10),
                        PrometheusUrlPolicy url_policy = PrometheusUrlPolicy::defaults(),
                        std::shared_ptr<ShardMetricsSource> pods = nullptr);
  // The readings of the request's shards under `policy`, by StatefulSet name.
  std::map<std::string, planner::DrainReading, std::less<>> check(
      const planner::DrainPolicy& policy, const DrainRequest& request);

 private:
  std::shared_ptr<promql::PromQuery> client(const std::string& url, std::string* error);
  std::map<std::string, planner::DrainReading, std::less<>> checkPods(
      const planner::DrainPolicy& policy, const DrainRequest& request);

  PromQueryFactory factory_;
  std::chrono::milliseconds timeout_;
  PrometheusUrlPolicy url_policy_;
  std::shared_ptr<ShardMetricsSource> pods_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<promql::PromQuery>> clients_;
};

}  // namespace shardscaler::ingestion
