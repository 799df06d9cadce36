// Whether a due shard's data has been shipped (docs/design.md §15): the PromQL of the default
// condition (remote write caught up) and of a user's condition, and the reading of their answers
// pod by pod. Absence of evidence is never drained: a failed query, a pod not scraped (`up`
// missing or 0), a result that is not a vector or holds NaN, Inf or one pod twice. An answer that
// cannot be read at all fails the reading (DrainReading::failed). It never writes anything;
// DrainChecker only queries.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "shardscaler/ingestion/ingestion_monitor.h"
#include "shardscaler/ingestion/prometheus_url_policy.h"
#include "shardscaler/promql_client/prom_query.h"
#include "shardscaler/retention/planner.h"

namespace shardscaler::ingestion {

// A due shard: its StatefulSet and how many replicas (pods <stateful_set>-0..replicas-1) it runs.
struct DrainShard {
  std::string stateful_set;
  int32_t replicas = 1;
};

// <stateful_set>-<ordinal>, escaped as a PromQL regex.
std::string shardPodRegex(std::string_view stateful_set);

// min by (namespace, pod) (up{namespace="NS",pod=~"REGEX"}): who is scraped, on every target of
// the pod (a config-reloader up does not hide a Prometheus down).
std::string drainUpQuery(std::string_view ns, std::string_view pod_regex);
// The largest remote-write lag of each pod's queues, per pod. A queue with samples pending lags by
// the age of the newest sample it sent (now minus its highest sent timestamp), so a lag that froze
// when the shard stopped appending keeps growing while the receiver is down; a queue with none
// pending lags by its highest appended timestamp minus its highest sent one. A queue that never
// sent counts as lagging by all it holds while it has pending samples, and as caught up when it
// has none; a pod without any queue is absent.
std::string drainLagQuery(std::string_view ns, std::string_view pod_regex);
// The user's condition with $NAMESPACE and $POD_REGEX replaced.
std::string drainConditionQuery(std::string_view condition, std::string_view ns,
                                std::string_view pod_regex);

// One shard's reading from the answers: `up` per pod, and either the lag per pod (default) or the
// condition's series per pod (custom: a pod drained has exactly one finite series).
struct DrainAnswers {
  promql::Result<promql::QueryResult> up;
  promql::Result<promql::QueryResult> evidence;
};
retention::DrainReading readDrain(const DrainShard& shard, const DrainAnswers& answers,
                                  bool custom_condition, std::chrono::seconds max_lag);

// Thread-safety: check() may run on several threads at once.
class DrainChecker {
 public:
  // A drain's Prometheus is user input as the ingestion's is: only URLs `url_policy` allows are
  // queried; for any other, every shard reads as not drained, with the policy's reason.
  explicit DrainChecker(PromQueryFactory factory = prometheusClientFactory(),
                        std::chrono::milliseconds timeout = std::chrono::seconds(10),
                        PrometheusUrlPolicy url_policy = PrometheusUrlPolicy::defaults());
  // The readings of `shards` (in namespace `ns`) under `policy`, by StatefulSet name.
  std::map<std::string, retention::DrainReading, std::less<>> check(
      const retention::DrainPolicy& policy, const std::string& ns,
      std::span<const DrainShard> shards);

 private:
  std::shared_ptr<promql::PromQuery> client(const std::string& url, std::string* error);

  PromQueryFactory factory_;
  std::chrono::milliseconds timeout_;
  PrometheusUrlPolicy url_policy_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<promql::PromQuery>> clients_;
};

}  // namespace shardscaler::ingestion
