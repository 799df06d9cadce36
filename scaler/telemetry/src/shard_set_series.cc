#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shard_set_series.h"
#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::telemetry {
namespace {

using prometheus::Labels;

Labels shardSetLabels(std::string_view ns, std::string_view shardset) {
  return {{"namespace", std::string(ns)}, {"shardset", std::string(shardset)}};
}

// Index of `phase` in kShardPhases; kShardPhases.size() for a phase it does not count.
std::size_t phaseIndex(std::string_view phase) {
  return static_cast<std::size_t>(std::ranges::find(kShardPhases, phase) - kShardPhases.begin());
}

}  // namespace

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

Metrics::ShardSetSeries& Metrics::shardSetLocked(std::string_view ns, std::string_view shardset) {
  auto key = ShardSetKey(ns, shardset);
  auto it = shardsets_.find(key);
  if (it == shardsets_.end()) {
    it = shardsets_.emplace(std::move(key), std::make_unique<ShardSetSeries>()).first;
  }
  return *it->second;
}

void Metrics::setShardSamples(std::string_view ns, std::string_view shardset, int shard,
                              double samples_per_second) {
  std::lock_guard lock(mutex_);
  auto& s = shardSetLocked(ns, shardset);
  auto& gauge = s.shard_samples[shard];
  if (gauge == nullptr) {
    Labels labels = shardSetLabels(ns, shardset);
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
  if (s.total_samples == nullptr)
    s.total_samples = &total_samples_->Add(shardSetLabels(ns, shardset));
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
  if (s.recommended == nullptr)
    s.recommended = &recommended_shards_->Add(shardSetLabels(ns, shardset));
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
  const Labels labels = shardSetLabels(ns, shardset);
  std::array<int, kShardPhases.size()> counts{};
  counts[phaseIndex("active")] = active;
  std::map<int, double> lags;
  std::map<int, double> since;
  std::map<int, double> deadlines;
  for (const RetainedShardState& shard : shards) {
    if (auto i = phaseIndex(shard.phase); i < counts.size()) ++counts[i];
    if (shard.lag_seconds) lags[shard.shard] = *shard.lag_seconds;
    if (shard.draining_since) since[shard.shard] = *shard.draining_since;
    if (shard.deadline) deadlines[shard.shard] = *shard.deadline;
  }
  s.phases = counts;
  setPerShard(*drain_lag_, s.drain_lag, lags, labels);
  setPerShard(*draining_since_, s.draining_since, since, labels);
  // The deadline series also names the StatefulSet: dropped and made again when that changes.
  for (auto it = s.deadline.begin(); it != s.deadline.end();) {
    retained_deadline_->Remove(it->second);
    it = s.deadline.erase(it);
  }
  for (const RetainedShardState& shard : shards) {
    if (!shard.deadline) continue;
    prometheus::Labels with_shard = labels;
    with_shard["shard"] = std::to_string(shard.shard);
    with_shard["statefulset"] = std::string(shard.stateful_set);
    auto& gauge = retained_deadline_->Add(with_shard);
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
    if (s.phases) {
      for (std::size_t i = 0; i < kShardPhases.size(); ++i) {
        const std::string phase(kShardPhases[i]);
        addSample(phases, ns, name, {{"phase", &phase}}, (*s.phases)[i]);
      }
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

}  // namespace shardscaler::telemetry
