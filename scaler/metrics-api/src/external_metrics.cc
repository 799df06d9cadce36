#include "shardscaler/metrics_api/external_metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>

#include "shardscaler/api/field_names.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/duration.h"

namespace shardscaler::metrics_api {
namespace {

namespace field = api::field;

constexpr std::array<MetricInfo, 3> kMetrics = {{
    {MetricKind::SamplesPerSecond, "shardscaler_samples_per_second",
     "samples/s appended by the ShardSet's active shards together; an HPA with an AverageValue "
     "target of T samples/s per shard wants ceil(total / T) shards"},
    {MetricKind::MaxShardSamplesPerSecond, "shardscaler_max_shard_samples_per_second",
     "samples/s of the ShardSet's busiest active shard; an HPA with a Value target V wants "
     "ceil(shards x busiest / V) shards"},
    {MetricKind::RecommendedShards, "shardscaler_recommended_shards",
     "status.recommendedShards: ceil(total / spec.ingestion.targetSamplesPerShard), clamped and "
     "rounded like spec.shards; an HPA with an AverageValue target of 1 wants exactly that"},
}};

constexpr auto kDefaultInterval = std::chrono::seconds(30);

// object[key] when it is a string, else "": a ShardSet is read back from the API server, where
// anyone with write access to its status could have put any type.
std::string stringAt(const Json& object, std::string_view key) {
  if (!object.is_object()) return "";
  auto value = object.find(key);
  return value != object.end() && value->is_string() ? value->get<std::string>() : "";
}

// metadata.namespace/name, "" for what is missing or not a string.
std::string metadataField(const Json& shard_set, std::string_view name) {
  auto metadata = shard_set.find(field::kMetadata);
  return metadata == shard_set.end() ? "" : stringAt(*metadata, name);
}

std::string keyOf(const Json& shard_set) {
  return metadataField(shard_set, field::kNamespace) + "/" + metadataField(shard_set, field::kName);
}

std::string seconds(std::chrono::nanoseconds d) {
  const double s = std::chrono::duration<double>(d).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0fs", s);
  return buf;
}

// "2", "2 and 3", "1, 2 and 3".
std::string indexList(const std::vector<int64_t>& indices) {
  std::string out;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i > 0) out += i + 1 == indices.size() ? " and " : ", ";
    out += std::to_string(indices[i]);
  }
  return out;
}

std::chrono::nanoseconds intervalOf(const Json& shard_set) {
  const Json* spec = shard_set.contains(field::kSpec) ? &shard_set[field::kSpec] : nullptr;
  if (spec == nullptr || !spec->is_object()) return kDefaultInterval;
  auto ingestion = spec->find(field::kIngestion);
  if (ingestion == spec->end() || !ingestion->is_object()) return kDefaultInterval;
  auto interval = ingestion->find(field::kInterval);
  if (interval == ingestion->end() || !interval->is_string()) return kDefaultInterval;
  auto parsed = planner::parsePrometheusDuration(interval->get<std::string>());
  if (!parsed || *parsed <= std::chrono::nanoseconds(0)) return kDefaultInterval;
  return *parsed;
}

MetricFailure failure(std::string reason, std::string message) {
  return {std::move(reason), std::move(message)};
}

}  // namespace

std::span<const MetricInfo> metricInfos() { return kMetrics; }

std::optional<MetricKind> metricKindOf(std::string_view name) {
  for (const MetricInfo& m : kMetrics) {
    if (m.name == name) return m.kind;
  }
  return std::nullopt;
}

std::string_view metricName(MetricKind kind) {
  for (const MetricInfo& m : kMetrics) {
    if (m.kind == kind) return m.name;
  }
  return "";
}

std::string metricNameList() {
  std::string out;
  for (size_t i = 0; i < kMetrics.size(); ++i) {
    if (i > 0) out += i + 1 == kMetrics.size() ? " and " : ", ";
    out += kMetrics[i].name;
  }
  return out;
}

std::chrono::nanoseconds maxRateAge(std::chrono::nanoseconds interval,
                                    const StalenessPolicy& policy) {
  const auto scaled =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double, std::nano>(
          static_cast<double>(interval.count()) * policy.intervals));
  return std::max(scaled, policy.floor);
}

std::string MilliQuantity::toString() const {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::optional<int64_t> rateMilli(double samples_per_second) {
  // The bound is checked first: llround of a value past int64's range is unspecified, and the
  // product past it undefined.
  if (!std::isfinite(samples_per_second) || samples_per_second < 0 ||
      samples_per_second > kMaxShardSamplesPerSecond) {
    return std::nullopt;
  }
  return std::llround(samples_per_second * 100.0) * 10;
}

namespace {

// status.ingestion when it holds rates young enough to act on, with its lastUpdate.
struct FreshIngestion {
  Json ingestion;
  std::string last_update;
};
std::expected<FreshIngestion, MetricFailure> freshIngestion(
    const Json& shard_set, const Json& status, const std::string& who,
    std::chrono::system_clock::time_point now, const StalenessPolicy& policy) {
  Json ingestion = status.is_object() ? status.value(field::kIngestion, Json()) : Json();
  if (!ingestion.is_object()) {
    return std::unexpected(failure(
        "NoRates", who + " has no ingestion rates in its status: set spec.ingestion, and wait "
                         "for shardscaler's first query"));
  }
  if (const std::string error = stringAt(ingestion, field::kError); !error.empty()) {
    return std::unexpected(
        failure("QueryFailed", "the last ingestion query of " + who + " failed: " + error));
  }
  const std::string last_update = stringAt(ingestion, field::kLastUpdate);
  const auto updated = k8s::parseRfc3339(last_update);
  // Years 0000..9999 parse, but only 1677..2262 fit a time_point in nanoseconds.
  const auto updated_at = updated ? updated->toTimePoint() : std::nullopt;
  if (!updated_at) {
    return std::unexpected(failure(
        "NoRates", who + " has no valid status.ingestion.lastUpdate (\"" + last_update + "\")"));
  }
  const auto interval = intervalOf(shard_set);
  const auto max_age = maxRateAge(interval, policy);
  // In seconds: the difference of two such time points may not fit in nanoseconds.
  const auto age = std::chrono::floor<std::chrono::seconds>(now) -
                   std::chrono::floor<std::chrono::seconds>(*updated_at);
  if (age > std::chrono::ceil<std::chrono::seconds>(max_age)) {
    return std::unexpected(failure(
        "StaleRates", "the rates of " + who + " are from " + last_update + ", " +
                          std::to_string(age.count()) + "s ago, older than " + seconds(max_age) +
                          " (spec.ingestion.interval " + seconds(interval) +
                          "): shardscaler has written no newer status"));
  }
  return FreshIngestion{std::move(ingestion), last_update};
}

// The total and the busiest of the active shards' rates (indexes below `active`, at most
// api::kShardCountMaximum), in milli samples/s; every active shard must have one, within
// kMaxShardSamplesPerSecond, so that the total fits.
struct ActiveRates {
  int64_t total_milli = 0;
  int64_t max_milli = 0;
};
std::expected<ActiveRates, MetricFailure> activeRates(const Json& ingestion, int64_t active,
                                                      const std::string& who) {
  // Rates by shard index, in centi-samples/s as status carries them.
  std::map<int64_t, int64_t> milli_by_index;
  for (const Json& entry : ingestion.value(field::kPerShard, Json::array())) {
    if (!entry.is_object() || !entry.contains(field::kIndex) ||
        !entry[field::kIndex].is_number_integer()) {
      continue;
    }
    const auto rate = entry.find(field::kSamplesPerSecond);
    if (rate == entry.end() || !rate->is_number()) continue;
    const double v = rate->get<double>();
    if (!std::isfinite(v) || v < 0) continue;
    const int64_t index = entry[field::kIndex].get<int64_t>();
    const auto milli = rateMilli(v);
    if (!milli) {
      if (index < 0 || index >= active) continue;  // a retained shard's rate counts for nothing
      char shown[32];
      std::snprintf(shown, sizeof shown, "%.3g", v);
      return std::unexpected(failure(
          "RateOutOfRange", "shard " + std::to_string(index) + " of " + who + " has a rate of " +
                                shown + " samples/s, more than the 1e12 a value is given for"));
    }
    milli_by_index[index] = *milli;
  }
  std::vector<int64_t> missing;
  ActiveRates rates;
  for (int64_t index = 0; index < active; ++index) {
    auto it = milli_by_index.find(index);
    if (it == milli_by_index.end()) {
      missing.push_back(index);
      continue;
    }
    rates.total_milli += it->second;
    rates.max_milli = std::max(rates.max_milli, it->second);
  }
  if (!missing.empty()) {
    return std::unexpected(failure(
        "MissingShardRates", std::string(missing.size() == 1 ? "active shard " : "active shards ") +
                                 indexList(missing) + " of " + who + " (of " +
                                 std::to_string(active) +
                                 ") had no rate in the last query; a total without " +
                                 (missing.size() == 1 ? "it" : "them") + " would undercount"));
  }
  return rates;
}

}  // namespace

std::expected<MetricValue, MetricFailure> metricValue(const Json& shard_set, MetricKind kind,
                                                      std::chrono::system_clock::time_point now,
                                                      const StalenessPolicy& policy) {
  const std::string who = "ShardSet " + keyOf(shard_set);
  const Json status =
      shard_set.is_object() ? shard_set.value(field::kStatus, Json::object()) : Json::object();
  auto fresh = freshIngestion(shard_set, status, who, now, policy);
  if (!fresh) return std::unexpected(fresh.error());
  const auto target_shards = status.find(field::kTargetShards);
  if (target_shards == status.end() || !target_shards->is_number_integer()) {
    return std::unexpected(failure(
        "TargetShardsUnknown",
        who + " does not report its target's shard count (status.targetShards), so it is not "
              "known which shards are active"));
  }
  const int64_t active = target_shards->get<int64_t>();
  if (active <= 0) {
    return std::unexpected(failure(
        "TargetShardsUnknown",
        who + " reports no active shard (status.targetShards " + std::to_string(active) + ")"));
  }
  // The work of one request is bounded by what a ShardSet may have, not by what its status says.
  if (active > api::kShardCountMaximum) {
    return std::unexpected(failure(
        "TargetShardsUnknown", who + " reports status.targetShards " + std::to_string(active) +
                                   ", more than the " + std::to_string(api::kShardCountMaximum) +
                                   " shards a ShardSet may have"));
  }
  auto rates = activeRates(fresh->ingestion, active, who);
  if (!rates) return std::unexpected(rates.error());

  MetricValue value{.shard_set = metadataField(shard_set, field::kName),
                    .value = {},
                    .timestamp = fresh->last_update};
  switch (kind) {
    case MetricKind::SamplesPerSecond:
      value.value.milli = rates->total_milli;
      break;
    case MetricKind::MaxShardSamplesPerSecond:
      value.value.milli = rates->max_milli;
      break;
    case MetricKind::RecommendedShards: {
      const auto recommended = status.find(field::kRecommendedShards);
      if (recommended == status.end() || !recommended->is_number_integer()) {
        return std::unexpected(failure(
            "NoRecommendation",
            who + " has no status.recommendedShards: spec.ingestion.targetSamplesPerShard is "
                  "not set"));
      }
      const int64_t shards = recommended->get<int64_t>();
      if (shards < 0 || shards > api::kShardCountMaximum) {
        return std::unexpected(failure(
            "NoRecommendation", who + " has status.recommendedShards " + std::to_string(shards) +
                                    ", outside 0.." + std::to_string(api::kShardCountMaximum)));
      }
      value.value.milli = shards * 1000;
      break;
    }
  }
  return value;
}

int32_t hpaAverageValueReplicas(int64_t total_milli, int64_t target_milli, int32_t current,
                                double tolerance) {
  // Float arithmetic on purpose: it is the HPA's, and the claim to test is that it agrees.
  const double usage_ratio = static_cast<double>(total_milli) /
                             (static_cast<double>(target_milli) * static_cast<double>(current));
  if (std::abs(1.0 - usage_ratio) <= tolerance) return current;
  return static_cast<int32_t>(
      std::ceil(static_cast<double>(total_milli) / static_cast<double>(target_milli)));
}

Json externalMetricValueList(std::string_view metric, const std::vector<MetricValue>& values) {
  Json items = Json::array();
  for (const MetricValue& v : values) {
    items.push_back({{"metricName", metric},
                     {"metricLabels", {{std::string(kShardSetLabel), v.shard_set}}},
                     {"timestamp", v.timestamp},
                     {"value", v.value.toString()}});
  }
  return {{"kind", "ExternalMetricValueList"},
          {"apiVersion", kGroupVersion},
          {"metadata", Json::object()},
          {"items", std::move(items)}};
}

}  // namespace shardscaler::metrics_api
