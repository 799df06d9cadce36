#include "shardscaler/telemetry/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

namespace shardscaler::telemetry {
namespace {

using prometheus::Labels;

Labels shardSetLabels(std::string_view ns, std::string_view shardset) {
  return {{"namespace", std::string(ns)}, {"shardset", std::string(shardset)}};
}

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

// The per-shard series are prometheus-cpp gauges: they exist only for shards being ingested or
// retained. The series every ShardSet has (its counts, its shards by phase, its conditions, the
// guard and its pause) are kept here as plain values and written out at each scrape
// (stateFamilies): a prometheus-cpp gauge costs about 600 bytes of heap (its label map, twice
// over, and its hash node), and a ShardSet has a dozen such series, 7 KB each, 7 MB for 1,000.
struct Metrics::ShardSetSeries {
  struct Condition {
    std::string type;
    std::string status;
    std::string reason;
  };
  struct Paused {
    std::string kind;
    std::string target;
    double since = 0;
  };
  Labels labels;
  std::map<int, prometheus::Gauge*> shard_samples;
  prometheus::Gauge* total_samples = nullptr;
  prometheus::Gauge* recommended = nullptr;
  std::map<int, prometheus::Gauge*> drain_lag;
  std::map<int, prometheus::Gauge*> draining_since;
  std::map<int, prometheus::Gauge*> deadline;
  std::optional<std::array<int, 3>> counts;         // desired, active, retained
  std::vector<std::pair<std::string, int>> phases;  // by phase, in order of appearance
  std::vector<Condition> conditions;                // one per type, in the status's order
  std::optional<Paused> paused;
  std::optional<bool> guard_enforced;
};

namespace {

// The families of the series ShardSetSeries keeps as values: name, help, and the labels after
// namespace and shardset that each series adds.
struct StateFamily {
  const char* name;
  const char* help;
};
constexpr StateFamily kDesiredShards{"shardscaler_desired_shards",
                                     "Shards the ShardSet asks for (spec.shards after clamping)."};
constexpr StateFamily kActiveShards{"shardscaler_active_shards",
                                    "Shards of the target observed active (status.shards)."};
constexpr StateFamily kRetainedShards{"shardscaler_retained_shards",
                                      "StatefulSets of removed shards kept until their deadline."};
constexpr StateFamily kShardsByPhase{
    "shardscaler_shards",
    "Shards of a ShardSet's target by phase: active, and the retained ones as Retained, Draining "
    "(due, data not shipped yet) or Deleting."};
constexpr StateFamily kShardSetCondition{
    "shardscaler_shardset_condition",
    "1 for each condition of a ShardSet as in its status (type, status True/False/Unknown, "
    "reason)."};
constexpr StateFamily kTargetPausedSince{
    "shardscaler_target_paused_since_timestamp_seconds",
    "Unix time since which the target has been paused by this ShardSet (shardscaler.io/"
    "paused-at); absent while it is not."};
constexpr StateFamily kGuardEnforced{
    "shardscaler_guard_enforced",
    "1 when the API server sends this ShardSet's StatefulSets to the shard guard (webhook "
    "configuration present, caBundle set, namespace selected), else 0."};

prometheus::MetricFamily gaugeFamily(const StateFamily& f) {
  return {.name = f.name, .help = f.help, .type = prometheus::MetricType::Gauge, .metric = {}};
}

// A sample labelled namespace, shardset and `more`, the labels sorted by name as prometheus-cpp
// writes its own.
void addSample(prometheus::MetricFamily& family, const std::string& ns, const std::string& shardset,
               std::initializer_list<std::pair<const char*, const std::string*>> more,
               double value) {
  prometheus::ClientMetric metric;
  metric.label.reserve(2 + more.size());
  metric.label.push_back({"namespace", ns});
  metric.label.push_back({"shardset", shardset});
  for (const auto& [name, text] : more) metric.label.push_back({name, *text});
  std::ranges::sort(metric.label, {}, &prometheus::ClientMetric::Label::name);
  metric.gauge.value = value;
  family.metric.push_back(std::move(metric));
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

Metrics::ShardSetSeries& Metrics::shardSetLocked(std::string_view ns, std::string_view shardset) {
  auto key = ShardSetKey(ns, shardset);
  auto it = shardsets_.find(key);
  if (it == shardsets_.end()) {
    auto series = std::make_unique<ShardSetSeries>();
    series->labels = shardSetLabels(ns, shardset);
    it = shardsets_.emplace(std::move(key), std::move(series)).first;
  }
  return *it->second;
}

void Metrics::setShardSamples(std::string_view ns, std::string_view shardset, int shard,
                              double samples_per_second) {
  std::lock_guard lock(mutex_);
  auto& s = shardSetLocked(ns, shardset);
  auto& gauge = s.shard_samples[shard];
  if (gauge == nullptr) {
    Labels labels = s.labels;
    labels.emplace("shard", std::to_string(shard));
    gauge = &shard_samples_->Add(labels);
  }
  gauge->Set(samples_per_second);
}

void Metrics::removeShardSamples(std::string_view ns, std::string_view shardset, int shard) {
  std::lock_guard lock(mutex_);
  auto it = shardsets_.find(ShardSetKey(ns, shardset));
  if (it == shardsets_.end()) return;
  auto& shards = it->second->shard_samples;
  if (auto g = shards.find(shard); g != shards.end()) {
    shard_samples_->Remove(g->second);
    shards.erase(g);
  }
}

void Metrics::setTotalSamples(std::string_view ns, std::string_view shardset,
                              double samples_per_second) {
  std::lock_guard lock(mutex_);
  auto& s = shardSetLocked(ns, shardset);
  if (s.total_samples == nullptr) s.total_samples = &total_samples_->Add(s.labels);
  s.total_samples->Set(samples_per_second);
}

void Metrics::clearIngestionLocked(ShardSetSeries& s) {
  for (auto& [shard, gauge] : s.shard_samples) shard_samples_->Remove(gauge);
  s.shard_samples.clear();
  if (s.total_samples != nullptr) total_samples_->Remove(s.total_samples);
  s.total_samples = nullptr;
  // A recommendation without current rates behind it would look current too.
  if (s.recommended != nullptr) recommended_shards_->Remove(s.recommended);
  s.recommended = nullptr;
}

void Metrics::clearIngestion(std::string_view ns, std::string_view shardset) {
  std::lock_guard lock(mutex_);
  auto it = shardsets_.find(ShardSetKey(ns, shardset));
  if (it != shardsets_.end()) clearIngestionLocked(*it->second);
}

void Metrics::setRecommendedShards(std::string_view ns, std::string_view shardset, int shards) {
  std::lock_guard lock(mutex_);
  auto& s = shardSetLocked(ns, shardset);
  if (s.recommended == nullptr) s.recommended = &recommended_shards_->Add(s.labels);
  s.recommended->Set(shards);
}

void Metrics::setShardCounts(std::string_view ns, std::string_view shardset, int desired,
                             int active, int retained) {
  std::lock_guard lock(mutex_);
  shardSetLocked(ns, shardset).counts = {desired, active, retained};
}

namespace {

// `gauges` (by shard) set from `values`, those without a value dropped from `family`.
void setPerShard(prometheus::Family<prometheus::Gauge>& family,
                 std::map<int, prometheus::Gauge*>& gauges, const std::map<int, double>& values,
                 const prometheus::Labels& labels) {
  for (auto it = gauges.begin(); it != gauges.end();) {
    if (values.contains(it->first)) {
      ++it;
      continue;
    }
    family.Remove(it->second);
    it = gauges.erase(it);
  }
  for (const auto& [shard, value] : values) {
    auto& gauge = gauges[shard];
    if (gauge == nullptr) {
      prometheus::Labels with_shard = labels;
      with_shard["shard"] = std::to_string(shard);
      gauge = &family.Add(with_shard);
    }
    gauge->Set(value);
  }
}

}  // namespace

void Metrics::setRetainedShards(std::string_view ns, std::string_view shardset, int active,
                                std::span<const RetainedShardState> shards) {
  std::lock_guard lock(mutex_);
  auto& s = shardSetLocked(ns, shardset);
  std::map<std::string, int> counts = {
      {"active", active}, {"Retained", 0}, {"Draining", 0}, {"Deleting", 0}};
  std::map<int, double> lags;
  std::map<int, double> since;
  std::map<int, double> deadlines;
  for (const RetainedShardState& shard : shards) {
    ++counts[std::string(shard.phase)];
    if (shard.lag_seconds) lags[shard.shard] = *shard.lag_seconds;
    if (shard.draining_since) since[shard.shard] = *shard.draining_since;
    if (shard.deadline) deadlines[shard.shard] = *shard.deadline;
  }
  s.phases.assign(counts.begin(), counts.end());
  setPerShard(*drain_lag_, s.drain_lag, lags, s.labels);
  setPerShard(*draining_since_, s.draining_since, since, s.labels);
  // The deadline series also names the StatefulSet: dropped and made again when that changes.
  for (auto it = s.deadline.begin(); it != s.deadline.end();) {
    retained_deadline_->Remove(it->second);
    it = s.deadline.erase(it);
  }
  for (const RetainedShardState& shard : shards) {
    if (!shard.deadline) continue;
    prometheus::Labels labels = s.labels;
    labels["shard"] = std::to_string(shard.shard);
    labels["statefulset"] = std::string(shard.stateful_set);
    auto& gauge = retained_deadline_->Add(labels);
    gauge.Set(*shard.deadline);
    s.deadline[shard.shard] = &gauge;
  }
}

void Metrics::setShardSetConditions(std::string_view ns, std::string_view shardset,
                                    std::span<const ConditionState> conditions) {
  std::lock_guard lock(mutex_);
  auto& s = shardSetLocked(ns, shardset);
  s.conditions.clear();
  for (const ConditionState& c : conditions) {
    auto same_type = std::ranges::find(s.conditions, c.type, &ShardSetSeries::Condition::type);
    ShardSetSeries::Condition condition{std::string(c.type), std::string(c.status),
                                        std::string(c.reason)};
    if (same_type != s.conditions.end()) {
      *same_type = std::move(condition);  // one series per type: the last one given
    } else {
      s.conditions.push_back(std::move(condition));
    }
  }
}

void Metrics::setTargetPaused(std::string_view ns, std::string_view shardset, std::string_view kind,
                              std::string_view target, std::optional<double> since) {
  std::lock_guard lock(mutex_);
  auto& s = shardSetLocked(ns, shardset);
  s.paused.reset();
  if (since) s.paused = ShardSetSeries::Paused{std::string(kind), std::string(target), *since};
}

void Metrics::setGuardEnforced(std::string_view ns, std::string_view shardset, bool enforced) {
  std::lock_guard lock(mutex_);
  shardSetLocked(ns, shardset).guard_enforced = enforced;
}

void Metrics::observeTransition(std::string_view ns, std::string_view shardset,
                                std::string_view direction, std::string_view outcome,
                                std::optional<double> seconds) {
  const prometheus::Labels base = {{"namespace", std::string(ns)},
                                   {"shardset", std::string(shardset)},
                                   {"direction", std::string(direction)}};
  prometheus::Labels counted = base;
  counted["outcome"] = std::string(outcome);
  transitions_->Add(counted).Increment();
  if (seconds) {
    transition_duration_
        ->Add(base, prometheus::Histogram::BucketBoundaries{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
                                                            120, 300})
        .Observe(*seconds);
  }
}

void Metrics::removeShardSet(std::string_view ns, std::string_view shardset) {
  std::lock_guard lock(mutex_);
  auto it = shardsets_.find(ShardSetKey(ns, shardset));
  if (it == shardsets_.end()) return;
  auto& s = *it->second;
  clearIngestionLocked(s);
  for (auto& [shard, gauge] : s.drain_lag) drain_lag_->Remove(gauge);
  for (auto& [shard, gauge] : s.draining_since) draining_since_->Remove(gauge);
  for (auto& [shard, gauge] : s.deadline) retained_deadline_->Remove(gauge);
  shardsets_.erase(it);
}

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

void Metrics::appendStateFamiliesLocked(std::vector<prometheus::MetricFamily>& families) const {
  prometheus::MetricFamily desired = gaugeFamily(kDesiredShards);
  prometheus::MetricFamily active = gaugeFamily(kActiveShards);
  prometheus::MetricFamily retained = gaugeFamily(kRetainedShards);
  prometheus::MetricFamily phases = gaugeFamily(kShardsByPhase);
  prometheus::MetricFamily conditions = gaugeFamily(kShardSetCondition);
  prometheus::MetricFamily paused = gaugeFamily(kTargetPausedSince);
  prometheus::MetricFamily guard = gaugeFamily(kGuardEnforced);
  for (const auto& [key, series] : shardsets_) {
    const auto& [ns, name] = key;
    const ShardSetSeries& s = *series;
    if (s.counts) {
      addSample(desired, ns, name, {}, (*s.counts)[0]);
      addSample(active, ns, name, {}, (*s.counts)[1]);
      addSample(retained, ns, name, {}, (*s.counts)[2]);
    }
    for (const auto& [phase, count] : s.phases) {
      addSample(phases, ns, name, {{"phase", &phase}}, count);
    }
    for (const ShardSetSeries::Condition& c : s.conditions) {
      addSample(conditions, ns, name,
                {{"type", &c.type}, {"status", &c.status}, {"reason", &c.reason}}, 1);
    }
    if (s.paused) {
      addSample(paused, ns, name, {{"target_kind", &s.paused->kind}, {"target", &s.paused->target}},
                s.paused->since);
    }
    if (s.guard_enforced) addSample(guard, ns, name, {}, *s.guard_enforced ? 1 : 0);
  }
  for (auto* family : {&desired, &active, &retained, &phases, &conditions, &paused, &guard}) {
    families.push_back(std::move(*family));
  }
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
