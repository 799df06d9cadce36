#include "shardscaler/controller/status_from_plan.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "shardscaler/api/shard_set_status.h"
#include "shardscaler/ingestion/ingestion_status.h"
#include "shardscaler/planner/duration.h"

namespace shardscaler::controller {
namespace {

using k8s::Json;

// Rates in status are for people (`kubectl get shardsets`): two decimals, and the total is the
// sum of the shown per-shard rates. /metrics keeps full precision.
double centiRound(double rate) { return std::round(rate * 100.0) / 100.0; }

api::IngestionStatus ingestionStatus(const ingestion::IngestionSnapshot& snapshot) {
  api::IngestionStatus out;
  double total = 0;
  for (const ingestion::ShardRate& r : snapshot.per_shard) {
    const double shown = centiRound(r.samples_per_second);
    total += shown;
    out.per_shard.push_back({r.index, shown});
  }
  if (snapshot.per_shard.empty()) total = snapshot.total_samples_per_second;
  out.total_samples_per_second = centiRound(total);
  out.last_update = snapshot.last_update;
  out.error = snapshot.error;
  return out;
}

// The decoder's report of a field of the wrong type in spec.ingestion, if any.
const api::FieldError* ingestionError(const api::ShardSet& shard_set, std::string_view path) {
  auto it = std::ranges::find(shard_set.ingestion_errors, path, &api::FieldError::field);
  return it == shard_set.ingestion_errors.end() ? nullptr : &*it;
}

}  // namespace

std::optional<ingestion::IngestionTarget> ingestionTarget(const api::ShardSet& shard_set,
                                                          std::string* problem) {
  auto fail = [&](std::string why) -> std::optional<ingestion::IngestionTarget> {
    if (problem != nullptr) *problem = std::move(why);
    return std::nullopt;
  };
  if (const auto* e = ingestionError(shard_set, "spec.ingestion")) return fail(e->describe());
  if (!shard_set.spec.ingestion) return std::nullopt;
  const api::IngestionSpec& ingestion = *shard_set.spec.ingestion;

  ingestion::IngestionTarget t;
  t.ns = shard_set.ns;
  t.shard_set = shard_set.name;
  auto kind = planner::parseTargetKind(shard_set.spec.target_ref.kind);
  if (!kind) return fail("spec.targetRef.kind: not a Prometheus or PrometheusAgent");
  t.kind = *kind;
  t.target_name = shard_set.spec.target_ref.name;
  if (const auto* e = ingestionError(shard_set, "spec.ingestion.prometheusURL")) {
    return fail(e->describe());
  }
  // None: the shards' own pods.
  t.prometheus_url = ingestion.prometheus_url.value_or("");
  if (const auto* e = ingestionError(shard_set, "spec.ingestion.query")) return fail(e->describe());
  t.query = ingestion.query.value_or("");
  if (ingestionError(shard_set, "spec.ingestion.interval") != nullptr) {
    return fail("spec.ingestion.interval: must be a string");
  }
  if (ingestion.interval) {
    auto parsed = planner::parsePrometheusDuration(*ingestion.interval);
    if (!parsed) return fail("spec.ingestion.interval: " + parsed.error());
    if (*parsed < std::chrono::seconds(1)) return fail("spec.ingestion.interval: below 1s");
    t.interval = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  }
  if (ingestionError(shard_set, "spec.ingestion.targetSamplesPerShard") != nullptr ||
      ingestion.target_samples_per_shard.value_or(api::kTargetSamplesPerShardMinimum) <
          api::kTargetSamplesPerShardMinimum) {
    return fail("spec.ingestion.targetSamplesPerShard: must be a positive integer");
  }
  t.target_samples_per_shard = ingestion.target_samples_per_shard;
  // Clamps of the recommendation; the planner reports bad values.
  t.min_shards = shard_set.spec.min_shards;
  t.max_shards = shard_set.spec.max_shards;
  return t;
}

Json shardSetStatusJson(const planner::Plan& plan, const api::ShardSet& shard_set,
                        const std::optional<ingestion::IngestionSnapshot>& ingestion,
                        const std::optional<std::string>& apply_failure, k8s::Clock::SystemTime now,
                        std::vector<planner::Event>* events) {
  api::ShardSetStatus status = plan.status;
  const std::vector<api::Condition>& previous = shard_set.conditions;
  if (apply_failure) {
    for (api::Condition& c : status.conditions) {
      if (c.type == api::kConditionDegraded) {
        c = planner::makeCondition(previous, api::kConditionDegraded, true,
                                   planner::kReasonApplyFailed, *apply_failure,
                                   status.observed_generation, now);
      }
    }
  }
  // The snapshot is published only while spec.ingestion asks for it: the monitor forgets a
  // ShardSet after this status is written.
  std::string problem;
  const auto target = ingestionTarget(shard_set, &problem);
  const bool has_ingestion = target.has_value() || !problem.empty();
  const std::optional<ingestion::IngestionSnapshot> snapshot =
      target ? ingestion : std::optional<ingestion::IngestionSnapshot>();
  if (auto c = ingestion::ingestionCondition(previous, has_ingestion, problem, snapshot,
                                             status.observed_generation, now)) {
    if (events != nullptr) {
      auto more = ingestion::ingestionEvents(k8s::findStatusCondition(previous, c->type), *c);
      events->insert(events->end(), more.begin(), more.end());
    }
    status.conditions.push_back(std::move(*c));
  }
  status.retained_count = static_cast<int64_t>(status.retained_shards.size());
  if (snapshot) {
    status.ingestion = ingestionStatus(*snapshot);
    if (snapshot->error.empty() && snapshot->recommended_shards) {
      status.recommended_shards = *snapshot->recommended_shards;
    }
  }
  return api::toJson(status);
}

}  // namespace shardscaler::controller
