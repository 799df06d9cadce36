#include "shardscaler/telemetry/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "shard_set_series.h"

namespace shardscaler::telemetry {
namespace {

using prometheus::Labels;

// Buckets in seconds: API calls and reconciles follow client-go / controller-runtime, whose
// dashboards people already have; PromQL queries are bounded by their own timeout.
const prometheus::Histogram::BucketBoundaries& kubeBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {0.005, 0.025, 0.1, 0.25, 0.5, 1,
                                                            2,     4,     8,   15,   30,  60};
  return b;
}
const prometheus::Histogram::BucketBoundaries& reconcileBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {
      0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return b;
}
const prometheus::Histogram::BucketBoundaries& promqlBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                            0.5,   1,    2.5,   5,    10,  30};
  return b;
}

std::string_view resultLabel(ReconcileResult r) {
  switch (r) {
    case ReconcileResult::Success:
      return "success";
    case ReconcileResult::Requeue:
      return "requeue";
    case ReconcileResult::Error:
      return "error";
  }
  return "error";
}

}  // namespace

Metrics::Metrics(const BuildInfo& build) : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  shard_samples_ = &prometheus::BuildGauge()
                        .Name("shardscaler_shard_ingestion_samples_per_second")
                        .Help(
                            "Samples appended per second by one shard (replicas averaged), "
                            "from the ingestion query.")
                        .Register(r);
  total_samples_ = &prometheus::BuildGauge()
                        .Name("shardscaler_ingestion_samples_per_second")
                        .Help("Samples appended per second by all active shards of a ShardSet.")
                        .Register(r);
  recommended_shards_ = &prometheus::BuildGauge()
                             .Name("shardscaler_recommended_shards")
                             .Help(
                                 "Shard count the ingestion rate calls for, clamped to "
                                 "minShards..maxShards.")
                             .Register(r);
  drain_lag_ = &prometheus::BuildGauge()
                    .Name("shardscaler_shard_drain_lag_seconds")
                    .Help(
                        "Largest remote-write lag of a draining shard's pods, as last measured "
                        "by its drain check.")
                    .Register(r);
  draining_since_ = &prometheus::BuildGauge()
                         .Name("shardscaler_shard_draining_since_timestamp_seconds")
                         .Help(
                             "Unix time since which a due shard has waited for its drain "
                             "condition.")
                         .Register(r);
  retained_deadline_ = &prometheus::BuildGauge()
                            .Name("shardscaler_retained_shard_deadline_timestamp_seconds")
                            .Help(
                                "Deletion deadline of a retained shard's StatefulSet, as Unix "
                                "time.")
                            .Register(r);
  transitions_ = &prometheus::BuildCounter()
                      .Name("shardscaler_transitions_total")
                      .Help("Scale transitions of a ShardSet, by direction and outcome.")
                      .Register(r);
  transition_duration_ = &prometheus::BuildHistogram()
                              .Name("shardscaler_transition_duration_seconds")
                              .Help(
                                  "Time a transition took, from the pause (shardscaler.io/"
                                  "paused-at) to the resumed target.")
                              .Register(r);
  reconciles_ = &prometheus::BuildCounter()
                     .Name("shardscaler_reconciles_total")
                     .Help("Reconciles of ShardSets, by result (success, requeue, error).")
                     .Register(r);
  for (auto result : {ReconcileResult::Success, ReconcileResult::Requeue, ReconcileResult::Error}) {
    reconciles_->Add({{"result", std::string(resultLabel(result))}});
  }
  reconcile_errors_ = &prometheus::BuildCounter()
                           .Name("shardscaler_reconcile_errors_total")
                           .Help("Reconciles that ended in an error.")
                           .Register(r)
                           .Add({});
  reconcile_duration_ = &prometheus::BuildHistogram()
                             .Name("shardscaler_reconcile_duration_seconds")
                             .Help("Time one reconcile of a ShardSet took.")
                             .Register(r)
                             .Add({}, reconcileBuckets());
  watch_restarts_ = &prometheus::BuildCounter()
                         .Name("shardscaler_watch_restarts_total")
                         .Help("Watches of the API server restarted, by resource and reason.")
                         .Register(r);
  kube_requests_ = &prometheus::BuildCounter()
                        .Name("shardscaler_kube_requests_total")
                        .Help(
                            "Requests to the Kubernetes API, by verb, resource and HTTP status "
                            "code (<error> when no response came).")
                        .Register(r);
  kube_request_duration_ = &prometheus::BuildHistogram()
                                .Name("shardscaler_kube_request_duration_seconds")
                                .Help(
                                    "Latency of requests to the Kubernetes API, by verb and "
                                    "HTTP status code.")
                                .Register(r);
  promql_queries_ = &prometheus::BuildCounter()
                         .Name("shardscaler_promql_queries_total")
                         .Help("PromQL queries sent for ingestion rates.")
                         .Register(r)
                         .Add({});
  promql_query_errors_ = &prometheus::BuildCounter()
                              .Name("shardscaler_promql_query_errors_total")
                              .Help("PromQL queries that failed, by kind of failure.")
                              .Register(r);
  promql_query_duration_ = &prometheus::BuildHistogram()
                                .Name("shardscaler_promql_query_duration_seconds")
                                .Help("Latency of PromQL queries, failed ones included.")
                                .Register(r)
                                .Add({}, promqlBuckets());
  workqueue_depth_ = &prometheus::BuildGauge()
                          .Name("shardscaler_workqueue_depth")
                          .Help("Keys waiting in the work queue.")
                          .Register(r);
  workqueue_adds_ = &prometheus::BuildCounter()
                         .Name("shardscaler_workqueue_adds_total")
                         .Help("Keys added to the work queue.")
                         .Register(r);
  workqueue_retries_ = &prometheus::BuildCounter()
                            .Name("shardscaler_workqueue_retries_total")
                            .Help("Keys re-added to the work queue with backoff after a failure.")
                            .Register(r);
  leader_ = &prometheus::BuildGauge()
                 .Name("shardscaler_leader")
                 .Help("1 while this replica holds the leader Lease, else 0.")
                 .Register(r)
                 .Add({});
  prometheus::BuildGauge()
      .Name("shardscaler_build_info")
      .Help("Always 1; the labels say which build is running.")
      .Register(r)
      .Add({{"version", build.version}, {"commit", build.commit}})
      .Set(1);
  degraded_ = &prometheus::BuildCounter()
                   .Name("shardscaler_degraded_events_total")
                   .Help("Degraded paths taken (each also logged at warn or above), by reason.")
                   .Register(r);
  guard_reviews_ = &prometheus::BuildCounter()
                        .Name("shardscaler_guard_reviews_total")
                        .Help(
                            "Admission reviews the shard guard answered, by operation and result "
                            "(allowed, denied, bad_request).")
                        .Register(r);
  guard_denials_ = &prometheus::BuildCounter()
                        .Name("shardscaler_guard_denials_total")
                        .Help(
                            "Requests the shard guard refused, by rule, requester class and "
                            "ShardSet.")
                        .Register(r);
  guard_review_duration_ = &prometheus::BuildHistogram()
                                .Name("shardscaler_guard_review_duration_seconds")
                                .Help(
                                    "Time the shard guard took to answer a review, its live "
                                    "reads included.")
                                .Register(r)
                                .Add({}, reconcileBuckets());
  external_metrics_requests_ =
      &prometheus::BuildCounter()
           .Name("shardscaler_external_metrics_requests_total")
           .Help(
               "Requests to the external metrics API, by route, HTTP code and the reason of a "
               "refusal (StaleRates, QueryFailed, Unauthorized, Forbidden, ...).")
           .Register(r);
  external_metrics_request_duration_ =
      &prometheus::BuildHistogram()
           .Name("shardscaler_external_metrics_request_duration_seconds")
           .Help(
               "Time shardscaler took to answer an external metrics request, its review and "
               "reads included.")
           .Register(r);
  external_metrics_api_owner_ =
      &prometheus::BuildGauge()
           .Name("shardscaler_external_metrics_api_owner")
           .Help(
               "1 for who owns the APIService v1beta1.external.metrics.k8s.io: ours, other (KEDA, "
               "prometheus-adapter, ...), local or missing.")
           .Register(r);
  external_metrics_api_available_ =
      &prometheus::BuildGauge()
           .Name("shardscaler_external_metrics_api_available")
           .Help("1 when that APIService is shardscaler's and its Available condition is True.")
           .Register(r)
           .Add({});
}

Metrics::~Metrics() = default;

void Metrics::observeReconcile(ReconcileResult result, double seconds) {
  reconciles_->Add({{"result", std::string(resultLabel(result))}}).Increment();
  if (result == ReconcileResult::Error) reconcile_errors_->Increment();
  reconcile_duration_->Observe(seconds);
}

void Metrics::incWatchRestart(std::string_view resource, std::string_view reason) {
  watch_restarts_->Add({{"resource", std::string(resource)}, {"reason", std::string(reason)}})
      .Increment();
}

void Metrics::observeKubeRequest(std::string_view verb, std::string_view resource, int code,
                                 double seconds) {
  const Labels labels = {{"verb", std::string(verb)},
                         {"code", code == 0 ? "<error>" : std::to_string(code)}};
  Labels with_resource = labels;
  with_resource.emplace("resource", std::string(resource));
  kube_requests_->Add(with_resource).Increment();
  kube_request_duration_->Add(labels, kubeBuckets()).Observe(seconds);
}

void Metrics::observePromQuery(double seconds, std::optional<std::string_view> error_kind) {
  promql_queries_->Increment();
  promql_query_duration_->Observe(seconds);
  if (error_kind) promql_query_errors_->Add({{"kind", std::string(*error_kind)}}).Increment();
}

void Metrics::setWorkQueueDepth(std::string_view queue, std::size_t depth) {
  workqueue_depth_->Add({{"name", std::string(queue)}}).Set(static_cast<double>(depth));
}

void Metrics::incWorkQueueAdds(std::string_view queue) {
  workqueue_adds_->Add({{"name", std::string(queue)}}).Increment();
}

void Metrics::incWorkQueueRetries(std::string_view queue) {
  workqueue_retries_->Add({{"name", std::string(queue)}}).Increment();
}

void Metrics::setLeader(bool is_leader) { leader_->Set(is_leader ? 1 : 0); }

void Metrics::observeGuardReview(std::string_view operation, std::string_view result,
                                 std::optional<GuardDenial> denial, double seconds) {
  guard_reviews_->Add({{"operation", std::string(operation)}, {"result", std::string(result)}})
      .Increment();
  if (denial) {
    guard_denials_
        ->Add({{"rule", std::string(denial->rule)},
               {"requester", std::string(denial->requester)},
               {"namespace", std::string(denial->ns)},
               {"shardset", std::string(denial->shardset)}})
        .Increment();
  }
  guard_review_duration_->Observe(seconds);
}

void Metrics::observeExternalMetricsRequest(std::string_view route, int code,
                                            std::string_view reason, double seconds) {
  external_metrics_requests_
      ->Add({{"route", std::string(route)},
             {"code", std::to_string(code)},
             {"reason", std::string(reason)}})
      .Increment();
  external_metrics_request_duration_->Add({{"route", std::string(route)}}, reconcileBuckets())
      .Observe(seconds);
}

void Metrics::setExternalMetricsApiOwner(std::string_view owner, bool available) {
  for (std::string_view state : {"ours", "other", "local", "missing"}) {
    external_metrics_api_owner_->Add({{"owner", std::string(state)}})
        .Set(state == owner ? 1.0 : 0.0);
  }
  external_metrics_api_available_->Set(owner == "ours" && available ? 1.0 : 0.0);
}

void Metrics::incDegraded(std::string_view reason) {
  degraded_->Add({{"reason", std::string(reason)}}).Increment();
}

std::string Metrics::serialize() const {
  std::vector<prometheus::MetricFamily> families;
  {
    // So one scrape never shows a ShardSet half removed.
    std::lock_guard lock(mutex_);
    families = registry_->Collect();
    appendStateFamiliesLocked(families);
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace shardscaler::telemetry
