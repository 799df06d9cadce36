#include "shardscaler/controller/shard_set_status.h"

#include <cmath>
#include <vector>

#include "shardscaler/ingestion/ingestion_status.h"
#include "shardscaler/retention/duration.h"
#include "shardscaler/retention/shard_set.h"

namespace shardscaler::controller {
namespace {

using k8s::Json;

std::vector<retention::Condition> previousConditions(const Json& shard_set) {
  std::vector<retention::Condition> out;
  auto status = shard_set.find("status");
  if (status == shard_set.end() || !status->is_object()) return out;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return out;
  for (const Json& c : *conditions) {
    if (auto parsed = retention::conditionFromJson(c)) out.push_back(std::move(*parsed));
  }
  return out;
}

// Rates in status are for people (`kubectl get shardsets`): two decimals, and the total is the
// sum of the shown per-shard rates. /metrics keeps full precision.
double centiRound(double rate) { return std::round(rate * 100.0) / 100.0; }

Json ingestionJson(const ingestion::IngestionSnapshot& snapshot) {
  Json per_shard = Json::array();
  double total = 0;
  for (const ingestion::ShardRate& r : snapshot.per_shard) {
    const double shown = centiRound(r.samples_per_second);
    total += shown;
    per_shard.push_back({{"index", r.index}, {"samplesPerSecond", shown}});
  }
  if (snapshot.per_shard.empty()) total = snapshot.total_samples_per_second;
  return Json{{"totalSamplesPerSecond", centiRound(total)},
              {"perShard", std::move(per_shard)},
              {"lastUpdate", snapshot.last_update},
              {"error", snapshot.error}};
}

}  // namespace

std::optional<ingestion::IngestionTarget> ingestionTarget(const Json& shard_set,
                                                          std::string* problem) {
  auto fail = [&](std::string why) -> std::optional<ingestion::IngestionTarget> {
    if (problem != nullptr) *problem = std::move(why);
    return std::nullopt;
  };
  const Json* spec = shard_set.contains("spec") ? &shard_set["spec"] : nullptr;
  if (spec == nullptr || !spec->is_object() || !spec->contains("ingestion")) return std::nullopt;
  const Json& ingestion = (*spec)["ingestion"];
  if (!ingestion.is_object()) return fail("spec.ingestion: must be an object");

  ingestion::IngestionTarget t;
  const Json& metadata = shard_set["metadata"];
  t.ns = metadata.value("namespace", "");
  t.shard_set = metadata.value("name", "");
  const Json& ref = spec->value("targetRef", Json::object());
  auto kind = retention::parseTargetKind(ref.value("kind", ""));
  if (!kind) return fail("spec.targetRef.kind: not a Prometheus or PrometheusAgent");
  t.kind = *kind;
  t.target_name = ref.value("name", "");
  t.prometheus_url = ingestion.value("prometheusURL", "");
  if (t.prometheus_url.empty()) return fail("spec.ingestion.prometheusURL: required");
  t.query = ingestion.value("query", "");
  if (auto interval = ingestion.find("interval"); interval != ingestion.end()) {
    if (!interval->is_string()) return fail("spec.ingestion.interval: must be a string");
    auto parsed = retention::parsePrometheusDuration(interval->get<std::string>());
    if (!parsed) return fail("spec.ingestion.interval: " + parsed.error());
    if (*parsed < std::chrono::seconds(1)) return fail("spec.ingestion.interval: below 1s");
    t.interval = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  }
  if (auto target = ingestion.find("targetSamplesPerShard"); target != ingestion.end()) {
    if (!target->is_number_integer() || target->get<int64_t>() < 1) {
      return fail("spec.ingestion.targetSamplesPerShard: must be a positive integer");
    }
    t.target_samples_per_shard = target->get<int64_t>();
  }
  // Clamps of the recommendation; the planner reports bad values.
  for (auto [name, into] : {std::pair{"minShards", &t.min_shards}, {"maxShards", &t.max_shards}}) {
    if (auto v = spec->find(name); v != spec->end() && v->is_number_integer()) {
      *into = v->get<int64_t>();
    }
  }
  return t;
}

Json shardSetStatusJson(const retention::Plan& plan, const Json& shard_set,
                        const std::optional<ingestion::IngestionSnapshot>& ingestion,
                        const std::optional<std::string>& apply_failure, k8s::Clock::SystemTime now,
                        std::vector<retention::Event>* events) {
  retention::ShardSetStatus status = plan.status;
  const auto previous = previousConditions(shard_set);
  if (apply_failure) {
    for (retention::Condition& c : status.conditions) {
      if (c.type == retention::kConditionDegraded) {
        c = retention::makeCondition(previous, retention::kConditionDegraded, true,
                                     retention::kReasonApplyFailed, *apply_failure,
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
      auto more = ingestion::ingestionEvents(retention::findCondition(previous, c->type), *c);
      events->insert(events->end(), more.begin(), more.end());
    }
    status.conditions.push_back(std::move(*c));
  }
  Json j = retention::toJson(status);
  j["retainedCount"] = status.retained_shards.size();
  if (snapshot) {
    j["ingestion"] = ingestionJson(*snapshot);
    if (snapshot->error.empty() && snapshot->recommended_shards) {
      j["recommendedShards"] = *snapshot->recommended_shards;
    }
  }
  return j;
}

}  // namespace shardscaler::controller
