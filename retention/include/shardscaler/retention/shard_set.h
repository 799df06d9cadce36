// The parts of a ShardSet (shardscaler.io/v1alpha1) that the retention planner reads, and the
// reader that fills them from the API object. Reading never guesses: bad fields are reported.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/retention/condition.h"
#include "shardscaler/retention/field_error.h"

namespace shardscaler::retention {

struct ShardSet {
  std::string ns;
  std::string name;
  int64_t generation = 0;

  std::string target_kind;                      // spec.targetRef.kind, as written
  std::string target_name;                      // spec.targetRef.name
  std::optional<int64_t> shards;                // spec.shards
  std::optional<int64_t> min_shards;            // spec.minShards (default 1)
  std::optional<int64_t> max_shards;            // spec.maxShards (default: no limit)
  std::optional<std::string> when_scaled;       // spec.shardRetentionPolicy.whenScaled
  std::optional<std::string> retention_period;  // ...retain.retentionPeriod; "" reads as unset

  std::vector<Condition> conditions;  // status.conditions as last written
  // Spec fields of the wrong JSON type; the planner reports them as InvalidSpec.
  std::vector<FieldError> spec_errors;
};

// Fails only when the object cannot be a ShardSet at all (not an object, no metadata.name);
// problems inside spec land in ShardSet::spec_errors.
std::expected<ShardSet, FieldError> parseShardSet(const nlohmann::json& object);

}  // namespace shardscaler::retention
