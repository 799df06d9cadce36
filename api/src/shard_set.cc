#include "shardscaler/api/shard_set.h"

#include <algorithm>
#include <limits>

#include "shardscaler/api/field_names.h"
#include "shardscaler/api/field_reader.h"
#include "shardscaler/k8s_meta/time.h"

namespace shardscaler::api {
namespace {

using Json = nlohmann::json;

std::string join(std::string_view parent, std::string_view key) {
  return std::string(parent) + "." + std::string(key);
}

std::optional<IngestionSpec> decodeIngestion(const Json& spec, std::vector<FieldError>& errors) {
  FieldReader r(errors);
  const std::string path = join(field::kSpec, field::kIngestion);
  const Json* ingestion = r.object(spec, field::kIngestion, path);
  if (ingestion == nullptr) return std::nullopt;
  IngestionSpec out;
  out.prometheus_url =
      r.string(*ingestion, field::kPrometheusURL, join(path, field::kPrometheusURL));
  out.query = r.string(*ingestion, field::kQuery, join(path, field::kQuery));
  out.interval = r.string(*ingestion, field::kInterval, join(path, field::kInterval));
  out.target_samples_per_shard = r.integer(*ingestion, field::kTargetSamplesPerShard,
                                           join(path, field::kTargetSamplesPerShard));
  return out;
}

std::optional<DrainSpec> decodeDrain(const Json& policy, const std::string& policy_path,
                                     std::vector<FieldError>& errors) {
  FieldReader r(errors);
  const std::string path = join(policy_path, field::kDrain);
  const Json* drain = r.object(policy, field::kDrain, path);
  if (drain == nullptr) return std::nullopt;
  DrainSpec out;
  out.enabled = r.boolean(*drain, field::kEnabled, join(path, field::kEnabled));
  out.prometheus_url = r.string(*drain, field::kPrometheusURL, join(path, field::kPrometheusURL));
  out.condition = r.string(*drain, field::kCondition, join(path, field::kCondition));
  out.max_lag_seconds = r.integer(*drain, field::kMaxLagSeconds, join(path, field::kMaxLagSeconds));
  out.timeout_seconds =
      r.integer(*drain, field::kTimeoutSeconds, join(path, field::kTimeoutSeconds));
  out.on_timeout = r.string(*drain, field::kOnTimeout, join(path, field::kOnTimeout));
  // "" reads as unset, as the CRD's defaults do.
  if (out.prometheus_url && out.prometheus_url->empty()) out.prometheus_url.reset();
  if (out.condition && out.condition->empty()) out.condition.reset();
  return out;
}

ShardSetSpec decodeSpec(const Json& spec, std::vector<FieldError>& errors) {
  FieldReader r(errors);
  ShardSetSpec out;
  const std::string spec_path(field::kSpec);
  const std::string ref_path = join(spec_path, field::kTargetRef);
  if (const Json* ref = r.object(spec, field::kTargetRef, ref_path)) {
    out.target_ref.kind = r.string(*ref, field::kKind, join(ref_path, field::kKind)).value_or("");
    out.target_ref.name = r.string(*ref, field::kName, join(ref_path, field::kName)).value_or("");
  }
  out.shards = r.integer(spec, field::kShards, join(spec_path, field::kShards));
  out.min_shards = r.integer(spec, field::kMinShards, join(spec_path, field::kMinShards));
  out.max_shards = r.integer(spec, field::kMaxShards, join(spec_path, field::kMaxShards));
  const std::string policy_path = join(spec_path, field::kShardRetentionPolicy);
  if (const Json* policy = r.object(spec, field::kShardRetentionPolicy, policy_path)) {
    ShardRetentionPolicy& p = out.shard_retention_policy;
    p.when_scaled = r.string(*policy, field::kWhenScaled, join(policy_path, field::kWhenScaled));
    const std::string retain_path = join(policy_path, field::kRetain);
    if (const Json* retain = r.object(*policy, field::kRetain, retain_path)) {
      p.retain.retention_period =
          r.string(*retain, field::kRetentionPeriod, join(retain_path, field::kRetentionPeriod));
      // The CRD pattern admits "", and the operator reads an empty Duration as unset.
      if (p.retain.retention_period && p.retain.retention_period->empty()) {
        p.retain.retention_period.reset();
      }
    }
    p.drain = decodeDrain(*policy, policy_path, errors);
  }
  out.resharding = r.string(spec, field::kResharding, join(spec_path, field::kResharding));
  return out;
}

}  // namespace

std::expected<ShardSet, FieldError> decodeShardSet(const Json& object) {
  if (!object.is_object()) return std::unexpected(FieldError{"", "a ShardSet must be an object"});
  std::vector<FieldError> meta_errors;
  FieldReader meta(meta_errors);
  const std::string meta_path(field::kMetadata);
  const Json* metadata = meta.object(object, field::kMetadata, meta_path);
  ShardSet s;
  if (metadata != nullptr) {
    s.name = meta.string(*metadata, field::kName, join(meta_path, field::kName)).value_or("");
    s.ns =
        meta.string(*metadata, field::kNamespace, join(meta_path, field::kNamespace)).value_or("");
    s.generation = meta.integer(*metadata, field::kGeneration, join(meta_path, field::kGeneration))
                       .value_or(0);
    s.uid = meta.string(*metadata, field::kUid, join(meta_path, field::kUid)).value_or("");
    if (const Json* created = member(*metadata, field::kCreationTimestamp);
        created != nullptr && created->is_string()) {
      if (auto t = k8s::parseRfc3339(created->get<std::string>())) s.created = t->toTimePoint();
    }
  }
  if (!meta_errors.empty()) return std::unexpected(meta_errors.front());
  if (s.name.empty()) return std::unexpected(FieldError{join(meta_path, field::kName), "required"});

  FieldReader spec_reader(s.spec_errors);
  const Json* spec = spec_reader.object(object, field::kSpec, field::kSpec);
  const Json empty = Json::object();
  if (spec == nullptr) spec = &empty;
  s.spec = decodeSpec(*spec, s.spec_errors);
  s.spec.ingestion = decodeIngestion(*spec, s.ingestion_errors);

  // Previous conditions only steer transitions; a malformed entry is dropped, not fatal.
  if (const Json* status = member(object, field::kStatus)) {
    if (const Json* conditions = member(*status, field::kConditions);
        conditions && conditions->is_array()) {
      for (const Json& c : *conditions) {
        if (auto parsed = conditionFromJson(c)) s.conditions.push_back(std::move(*parsed));
      }
    }
    if (const Json* pauses = member(*status, field::kUnacknowledgedPauses);
        pauses && pauses->is_number_integer()) {
      s.unacknowledged_pauses = static_cast<int32_t>(
          std::clamp<int64_t>(pauses->get<int64_t>(), 0, std::numeric_limits<int32_t>::max()));
    }
  }
  return s;
}

Json toJson(const ShardSetSpec& spec) {
  Json j = Json::object();
  j[field::kTargetRef] = {{field::kKind, spec.target_ref.kind},
                          {field::kName, spec.target_ref.name}};
  if (spec.shards) j[field::kShards] = *spec.shards;
  if (spec.min_shards) j[field::kMinShards] = *spec.min_shards;
  if (spec.max_shards) j[field::kMaxShards] = *spec.max_shards;
  const ShardRetentionPolicy& p = spec.shard_retention_policy;
  if (p.when_scaled || p.retain.retention_period || p.drain) {
    Json& policy = j[field::kShardRetentionPolicy] = Json::object();
    if (p.when_scaled) policy[field::kWhenScaled] = *p.when_scaled;
    if (p.retain.retention_period) {
      policy[field::kRetain] = {{field::kRetentionPeriod, *p.retain.retention_period}};
    }
    if (p.drain) {
      const DrainSpec& d = *p.drain;
      Json& drain = policy[field::kDrain] = Json::object();
      if (d.enabled) drain[field::kEnabled] = *d.enabled;
      if (d.prometheus_url) drain[field::kPrometheusURL] = *d.prometheus_url;
      if (d.condition) drain[field::kCondition] = *d.condition;
      if (d.max_lag_seconds) drain[field::kMaxLagSeconds] = *d.max_lag_seconds;
      if (d.timeout_seconds) drain[field::kTimeoutSeconds] = *d.timeout_seconds;
      if (d.on_timeout) drain[field::kOnTimeout] = *d.on_timeout;
    }
  }
  if (spec.resharding) j[field::kResharding] = *spec.resharding;
  if (spec.ingestion) {
    const IngestionSpec& in = *spec.ingestion;
    Json& ingestion = j[field::kIngestion] = Json::object();
    if (in.prometheus_url) ingestion[field::kPrometheusURL] = *in.prometheus_url;
    if (in.query) ingestion[field::kQuery] = *in.query;
    if (in.interval) ingestion[field::kInterval] = *in.interval;
    if (in.target_samples_per_shard) {
      ingestion[field::kTargetSamplesPerShard] = *in.target_samples_per_shard;
    }
  }
  return j;
}

}  // namespace shardscaler::api
