#include "shardscaler/api/shard_set_schema.h"

#include <string>

#include "shardscaler/api/condition_types.h"
#include "shardscaler/api/field_names.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/api/shard_set_status.h"

namespace shardscaler::api {
namespace {

std::string path(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty() && p != "[]") out += '.';
    out += p;
  }
  return out;
}

template <size_t N>
std::vector<std::string> strings(const std::array<std::string_view, N>& values) {
  return {values.begin(), values.end()};
}

std::vector<FieldSchema> buildFields() {
  using namespace field;
  using T = JsonType;
  const auto f = [](std::initializer_list<std::string_view> parts, JsonType type) {
    return FieldSchema{.path = path(parts), .type = type};
  };
  std::vector<FieldSchema> out;
  out.push_back(f({kSpec}, T::Object));
  out.push_back(f({kSpec, kTargetRef}, T::Object));
  out.push_back(f({kSpec, kTargetRef, kKind}, T::String));
  out.back().enum_values = strings(kTargetKindValues);
  out.push_back(f({kSpec, kTargetRef, kName}, T::String));
  out.push_back(f({kSpec, kShards}, T::Integer));
  out.back().minimum = kShardsMinimum;
  out.back().maximum = kShardCountMaximum;
  out.push_back(f({kSpec, kMinShards}, T::Integer));
  out.back().minimum = kMinShardsMinimum;
  out.back().maximum = kShardCountMaximum;
  out.back().default_value = std::to_string(kMinShardsDefault);
  out.push_back(f({kSpec, kMaxShards}, T::Integer));
  out.back().minimum = kMaxShardsMinimum;
  out.back().maximum = kShardCountMaximum;
  out.back().default_value = std::to_string(kMaxShardsDefault);
  out.push_back(f({kSpec, kShardRetentionPolicy}, T::Object));
  out.push_back(f({kSpec, kShardRetentionPolicy, kWhenScaled}, T::String));
  out.back().enum_values = strings(kWhenScaledValues);
  out.push_back(f({kSpec, kShardRetentionPolicy, kRetain}, T::Object));
  out.push_back(f({kSpec, kShardRetentionPolicy, kRetain, kRetentionPeriod}, T::String));
  out.push_back(f({kSpec, kShardRetentionPolicy, kDrain}, T::Object));
  out.push_back(f({kSpec, kShardRetentionPolicy, kDrain, kEnabled}, T::Boolean));
  out.push_back(f({kSpec, kShardRetentionPolicy, kDrain, kPrometheusURL}, T::String));
  out.push_back(f({kSpec, kShardRetentionPolicy, kDrain, kCondition}, T::String));
  out.push_back(f({kSpec, kShardRetentionPolicy, kDrain, kMaxLagSeconds}, T::Integer));
  out.back().minimum = kMaxLagSecondsMinimum;
  out.back().maximum = kMaxLagSecondsMaximum;
  out.back().default_value = std::to_string(kMaxLagSecondsDefault);
  out.push_back(f({kSpec, kShardRetentionPolicy, kDrain, kTimeoutSeconds}, T::Integer));
  out.back().minimum = kDrainTimeoutSecondsMinimum;
  out.back().maximum = kDrainTimeoutSecondsMaximum;
  out.back().default_value = std::to_string(kDrainTimeoutSecondsDefault);
  out.push_back(f({kSpec, kShardRetentionPolicy, kDrain, kOnTimeout}, T::String));
  out.back().enum_values = strings(kOnTimeoutValues);
  out.back().default_value = "\"" + std::string(kOnTimeoutKeep) + "\"";
  out.push_back(f({kSpec, kResharding}, T::String));
  out.back().enum_values = strings(kReshardingValues);
  out.back().default_value = "\"" + std::string(kReshardingOperator) + "\"";
  out.push_back(f({kSpec, kIngestion}, T::Object));
  out.push_back(f({kSpec, kIngestion, kPrometheusURL}, T::String));
  out.push_back(f({kSpec, kIngestion, kQuery}, T::String));
  out.push_back(f({kSpec, kIngestion, kInterval}, T::String));
  out.push_back(f({kSpec, kIngestion, kTargetSamplesPerShard}, T::Integer));
  out.back().minimum = kTargetSamplesPerShardMinimum;

  // Status states its fields like spec, unknown ones are pruned: Kubernetes 1.20 publishes no
  // field of an object that keeps unknown fields, and `kubectl explain shardset.status` must
  // describe every one. The CRD and the binary are released together.
  out.push_back(f({kStatus}, T::Object));
  out.push_back(f({kStatus, kObservedGeneration}, T::Integer));
  out.push_back(f({kStatus, kShards}, T::Integer));
  out.push_back(f({kStatus, kSelector}, T::String));
  out.push_back(f({kStatus, kTargetShards}, T::Integer));
  out.push_back(f({kStatus, kRetainedCount}, T::Integer));
  out.push_back(f({kStatus, kDrainingCount}, T::Integer));
  out.push_back(f({kStatus, kUnacknowledgedPauses}, T::Integer));
  out.push_back(f({kStatus, kRecommendedShards}, T::Integer));
  out.push_back(f({kStatus, kRetainedShards}, T::Array));
  out.push_back(f({kStatus, kRetainedShards, "[]"}, T::Object));
  out.push_back(f({kStatus, kRetainedShards, "[]", kIndex}, T::Integer));
  out.push_back(f({kStatus, kRetainedShards, "[]", kStatefulSet}, T::String));
  out.push_back(f({kStatus, kRetainedShards, "[]", kDeletionTimestamp}, T::String));
  out.push_back(f({kStatus, kRetainedShards, "[]", kPhase}, T::String));
  out.back().enum_values = strings(kRetainedShardPhases);
  out.push_back(f({kStatus, kRetainedShards, "[]", kLagSeconds}, T::Number));
  out.push_back(f({kStatus, kRetainedShards, "[]", kDrainingSince}, T::String));
  out.push_back(f({kStatus, kRetainedShards, "[]", kDrainedAt}, T::String));
  out.push_back(f({kStatus, kIngestion}, T::Object));
  out.push_back(f({kStatus, kIngestion, kTotalSamplesPerSecond}, T::Number));
  out.push_back(f({kStatus, kIngestion, kPerShard}, T::Array));
  out.push_back(f({kStatus, kIngestion, kPerShard, "[]"}, T::Object));
  out.push_back(f({kStatus, kIngestion, kPerShard, "[]", kIndex}, T::Integer));
  out.push_back(f({kStatus, kIngestion, kPerShard, "[]", kSamplesPerSecond}, T::Number));
  out.push_back(f({kStatus, kIngestion, kLastUpdate}, T::String));
  out.push_back(f({kStatus, kIngestion, kError}, T::String));
  out.push_back(f({kStatus, kConditions}, T::Array));
  out.push_back(f({kStatus, kConditions, "[]"}, T::Object));
  out.push_back(f({kStatus, kConditions, "[]", kType}, T::String));
  out.push_back(f({kStatus, kConditions, "[]", kConditionStatus}, T::String));
  out.back().enum_values = strings(kConditionStatuses);
  out.push_back(f({kStatus, kConditions, "[]", kObservedGeneration}, T::Integer));
  out.push_back(f({kStatus, kConditions, "[]", kLastTransitionTime}, T::String));
  out.push_back(f({kStatus, kConditions, "[]", kReason}, T::String));
  out.push_back(f({kStatus, kConditions, "[]", kMessage}, T::String));
  return out;
}

}  // namespace

std::string_view toString(JsonType type) {
  switch (type) {
    case JsonType::Object:
      return "object";
    case JsonType::Array:
      return "array";
    case JsonType::String:
      return "string";
    case JsonType::Integer:
      return "integer";
    case JsonType::Number:
      return "number";
    case JsonType::Boolean:
      return "boolean";
  }
  return "unknown";
}

std::span<const FieldSchema> shardSetFields() {
  static const std::vector<FieldSchema> fields = buildFields();
  return fields;
}

}  // namespace shardscaler::api
