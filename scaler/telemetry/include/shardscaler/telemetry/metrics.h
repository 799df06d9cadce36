// Every metric shardscaler exports (prefix shardscaler_), behind typed methods, and their
// Prometheus text exposition. Callers never touch prometheus-cpp; nothing here blocks on I/O.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardscaler/k8s_client/reconciler.h"
#include "shardscaler/telemetry/build_info.h"

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
struct MetricFamily;
}  // namespace prometheus

namespace shardscaler::telemetry {

// The label of a reconcile is the controller runtime's own result.
using k8s::ReconcileResult;

// Thread-safe: every method may be called from any thread at any time.
class Metrics {
 public:
  explicit Metrics(const BuildInfo& build = buildInfo());
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // ---- per ShardSet ----
  void setShardSamples(std::string_view ns, std::string_view shardset, int shard,
                       double samples_per_second);
  void removeShardSamples(std::string_view ns, std::string_view shardset, int shard);
  void setTotalSamples(std::string_view ns, std::string_view shardset, double samples_per_second);
  // Drops the ingestion series of a ShardSet (rates and the recommendation), e.g. after a
  // failed query: stale values would look current.
  void clearIngestion(std::string_view ns, std::string_view shardset);
  void setRecommendedShards(std::string_view ns, std::string_view shardset, int shards);
  void setShardCounts(std::string_view ns, std::string_view shardset, int desired, int active,
                      int retained);
  // The retained shards' drain (docs/design/drain.md): each shard's phase ("Retained", "Draining",
  // "Deleting"), its last measured remote-write lag and since when it drains (Unix seconds), both
  // only while draining; the count of shards per phase, the active ones included. Series of
  // shards no longer given are dropped.
  struct RetainedShardState {
    int shard = 0;
    std::string_view stateful_set;
    std::string_view phase;
    std::optional<double> deadline;  // Unix seconds; nullopt for "never" or unreadable
    std::optional<double> lag_seconds;
    std::optional<double> draining_since;
  };
  void setRetainedShards(std::string_view ns, std::string_view shardset, int active,
                         std::span<const RetainedShardState> shards);
  // The conditions of its status, one series per type (value 1, labelled with status and
  // reason): a type's old series goes when its status or reason changes.
  struct ConditionState {
    std::string_view type;
    std::string_view status;
    std::string_view reason;
  };
  void setShardSetConditions(std::string_view ns, std::string_view shardset,
                             std::span<const ConditionState> conditions);
  // Since when (Unix seconds) this ShardSet has its target paused; nullopt: it has not.
  void setTargetPaused(std::string_view ns, std::string_view shardset, std::string_view kind,
                       std::string_view target, std::optional<double> since);
  // Whether the API server enforces the shard guard for this ShardSet's namespace.
  void setGuardEnforced(std::string_view ns, std::string_view shardset, bool enforced);
  // A transition ended: direction "up" or "down", outcome "completed" or "undone", and how long
  // it took from the pause, when known.
  void observeTransition(std::string_view ns, std::string_view shardset, std::string_view direction,
                         std::string_view outcome, std::optional<double> seconds);
  // Drops the gauges of this ShardSet (it was deleted): its state. Its counters and histograms
  // (transitions, guard denials) are history and stay until the process restarts, so that
  // increase() over a window that saw the deletion still counts them.
  void removeShardSet(std::string_view ns, std::string_view shardset);

  // ---- controller ----
  // Counts the reconcile under its result; Error also counts in reconcile_errors_total.
  void observeReconcile(ReconcileResult result, double seconds);
  void incWatchRestart(std::string_view resource, std::string_view reason);
  // code: the HTTP status, or 0 when no response came (exported as "<error>", as client-go does).
  // resource: k8s::Resource::describe() ("statefulsets.apps/v1"), "" for a path that is not one;
  // the request counter carries it, so that what a claim or a transition costs per resource can be
  // counted (the request budget test); the latency histogram does not, to keep its series few.
  void observeKubeRequest(std::string_view verb, std::string_view resource, int code,
                          double seconds);
  // error_kind: nullopt on success, else e.g. "timeout", "bad_data", "transport".
  void observePromQuery(double seconds, std::optional<std::string_view> error_kind = std::nullopt);
  void setWorkQueueDepth(std::string_view queue, std::size_t depth);
  void incWorkQueueAdds(std::string_view queue);
  void incWorkQueueRetries(std::string_view queue);
  void setLeader(bool is_leader);
  // ---- shard guard ----
  // One admission review: operation "DELETE"/"UPDATE"/... ("unknown" when undecodable), result
  // "allowed", "denied" or "bad_request". A denial also counts by its rule, the requester's class
  // (guard::requesterClass), the StatefulSet's namespace and the ShardSet ("" when unknown).
  struct GuardDenial {
    std::string_view rule;
    std::string_view requester;
    std::string_view ns;
    std::string_view shardset;
  };
  void observeGuardReview(std::string_view operation, std::string_view result,
                          std::optional<GuardDenial> denial, double seconds);

  // ---- external metrics API ----
  // One request: route "metric", "discovery", "openapi" or "none", the HTTP status, and the
  // reason of a refusal ("" when answered).
  void observeExternalMetricsRequest(std::string_view route, int code, std::string_view reason,
                                     double seconds);
  // Who owns the APIService v1beta1.external.metrics.k8s.io: "ours", "other", "local",
  // "missing" (one series at 1, the others 0), and whether it is Available.
  void setExternalMetricsApiOwner(std::string_view owner, bool available);

  // Every degraded path calls this next to its warning log.
  void incDegraded(std::string_view reason);

  // The Prometheus text format (version 0.0.4) of every family.
  std::string serialize() const;

 private:
  using ShardSetKey = std::pair<std::string, std::string>;
  struct ShardSetSeries;

  ShardSetSeries& shardSetLocked(std::string_view ns, std::string_view shardset);
  // The families of the series ShardSetSeries keeps as values, one sample per series.
  void appendStateFamiliesLocked(std::vector<prometheus::MetricFamily>& families) const;
  void clearIngestionLocked(ShardSetSeries& series);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>* shard_samples_;
  prometheus::Family<prometheus::Gauge>* total_samples_;
  prometheus::Family<prometheus::Gauge>* recommended_shards_;
  prometheus::Family<prometheus::Gauge>* drain_lag_;
  prometheus::Family<prometheus::Gauge>* draining_since_;
  prometheus::Family<prometheus::Gauge>* retained_deadline_;
  prometheus::Family<prometheus::Counter>* transitions_;
  prometheus::Family<prometheus::Histogram>* transition_duration_;
  prometheus::Family<prometheus::Counter>* reconciles_;
  prometheus::Counter* reconcile_errors_;
  prometheus::Histogram* reconcile_duration_;
  prometheus::Family<prometheus::Counter>* watch_restarts_;
  prometheus::Family<prometheus::Counter>* kube_requests_;
  prometheus::Family<prometheus::Histogram>* kube_request_duration_;
  prometheus::Counter* promql_queries_;
  prometheus::Family<prometheus::Counter>* promql_query_errors_;
  prometheus::Histogram* promql_query_duration_;
  prometheus::Family<prometheus::Gauge>* workqueue_depth_;
  prometheus::Family<prometheus::Counter>* workqueue_adds_;
  prometheus::Family<prometheus::Counter>* workqueue_retries_;
  prometheus::Gauge* leader_;
  prometheus::Family<prometheus::Counter>* degraded_;
  prometheus::Family<prometheus::Counter>* guard_reviews_;
  prometheus::Family<prometheus::Counter>* guard_denials_;
  prometheus::Histogram* guard_review_duration_;
  prometheus::Family<prometheus::Counter>* external_metrics_requests_;
  prometheus::Family<prometheus::Histogram>* external_metrics_request_duration_;
  prometheus::Family<prometheus::Gauge>* external_metrics_api_owner_;
  prometheus::Gauge* external_metrics_api_available_;

  // The per-ShardSet series that exist, so removeShardSet can drop them all. Guarded by mutex_,
  // which also keeps a set racing a remove from leaving half a ShardSet behind.
  mutable std::mutex mutex_;
  std::map<ShardSetKey, std::unique_ptr<ShardSetSeries>> shardsets_;
};

}  // namespace shardscaler::telemetry
