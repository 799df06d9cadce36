#include "shardscaler/retention/shard_set.h"

#include "json_fields.h"

namespace shardscaler::retention {

std::expected<ShardSet, FieldError> parseShardSet(const nlohmann::json& object) {
  using json_fields::member;
  if (!object.is_object()) return std::unexpected(FieldError{"", "a ShardSet must be an object"});
  std::vector<FieldError> meta_errors;
  json_fields::FieldReader meta(meta_errors);
  const auto* metadata = meta.object(object, "metadata", "metadata");
  ShardSet s;
  if (metadata != nullptr) {
    s.name = meta.string(*metadata, "name", "metadata.name").value_or("");
    s.ns = meta.string(*metadata, "namespace", "metadata.namespace").value_or("");
    s.generation = meta.integer(*metadata, "generation", "metadata.generation").value_or(0);
  }
  if (!meta_errors.empty()) return std::unexpected(meta_errors.front());
  if (s.name.empty()) return std::unexpected(FieldError{"metadata.name", "required"});

  json_fields::FieldReader spec_reader(s.spec_errors);
  const nlohmann::json empty = nlohmann::json::object();
  const auto* spec = spec_reader.object(object, "spec", "spec");
  if (spec == nullptr) spec = &empty;
  if (const auto* ref = spec_reader.object(*spec, "targetRef", "spec.targetRef")) {
    s.target_kind = spec_reader.string(*ref, "kind", "spec.targetRef.kind").value_or("");
    s.target_name = spec_reader.string(*ref, "name", "spec.targetRef.name").value_or("");
  }
  s.shards = spec_reader.integer(*spec, "shards", "spec.shards");
  s.min_shards = spec_reader.integer(*spec, "minShards", "spec.minShards");
  s.max_shards = spec_reader.integer(*spec, "maxShards", "spec.maxShards");
  if (const auto* policy =
          spec_reader.object(*spec, "shardRetentionPolicy", "spec.shardRetentionPolicy")) {
    s.when_scaled =
        spec_reader.string(*policy, "whenScaled", "spec.shardRetentionPolicy.whenScaled");
    if (const auto* retain =
            spec_reader.object(*policy, "retain", "spec.shardRetentionPolicy.retain")) {
      s.retention_period = spec_reader.string(*retain, "retentionPeriod",
                                              "spec.shardRetentionPolicy.retain.retentionPeriod");
      // The CRD pattern admits "", and the operator reads an empty Duration as unset.
      if (s.retention_period && s.retention_period->empty()) s.retention_period.reset();
    }
  }

  // Previous conditions only steer transitions; a malformed entry is dropped, not fatal.
  if (const auto* status = member(object, "status")) {
    if (const auto* conditions = member(*status, "conditions");
        conditions && conditions->is_array()) {
      for (const auto& c : *conditions) {
        if (auto parsed = conditionFromJson(c)) s.conditions.push_back(std::move(*parsed));
      }
    }
  }
  return s;
}

}  // namespace shardscaler::retention
