#include "shardscaler/retention/policy.h"

#include "shardscaler/retention/duration.h"

namespace shardscaler::retention {
namespace {

constexpr std::string_view kShardSetPeriodField =
    "spec.shardRetentionPolicy.retain.retentionPeriod";
constexpr std::string_view kShardSetWhenScaledField = "spec.shardRetentionPolicy.whenScaled";

api::FieldError badWhenScaled(std::string field, const std::string& value) {
  return api::FieldError{std::move(field), "must be Retain or Delete, got \"" + value + "\""};
}

}  // namespace

std::string_view toString(WhenScaled w) {
  return w == WhenScaled::Retain ? api::kWhenScaledRetain : api::kWhenScaledDelete;
}

std::optional<WhenScaled> parseWhenScaled(std::string_view text) {
  if (text == api::kWhenScaledRetain) return WhenScaled::Retain;
  if (text == api::kWhenScaledDelete) return WhenScaled::Delete;
  return std::nullopt;
}

std::vector<api::FieldError> validateShardSetPolicy(const api::ShardSet& shard_set) {
  std::vector<api::FieldError> errors;
  if (shard_set.spec.shard_retention_policy.when_scaled &&
      !parseWhenScaled(*shard_set.spec.shard_retention_policy.when_scaled)) {
    errors.push_back(badWhenScaled(std::string(kShardSetWhenScaledField),
                                   *shard_set.spec.shard_retention_policy.when_scaled));
  }
  if (shard_set.spec.shard_retention_policy.retain.retention_period) {
    if (auto d =
            parsePrometheusDuration(*shard_set.spec.shard_retention_policy.retain.retention_period);
        !d) {
      errors.push_back(api::FieldError{std::string(kShardSetPeriodField), d.error()});
    }
  }
  return errors;
}

std::expected<RetentionPolicy, std::vector<api::FieldError>> resolveRetentionPolicy(
    const api::ShardSet& shard_set, const Target& target) {
  std::vector<api::FieldError> errors = validateShardSetPolicy(shard_set);
  RetentionPolicy policy;
  if (shard_set.spec.shard_retention_policy.when_scaled) {
    policy.when_scaled = parseWhenScaled(*shard_set.spec.shard_retention_policy.when_scaled)
                             .value_or(WhenScaled::Delete);
    policy.when_scaled_source = "ShardSet";
  } else if (target.when_scaled) {
    if (auto w = parseWhenScaled(*target.when_scaled)) {
      policy.when_scaled = *w;
    } else {
      errors.push_back(
          badWhenScaled("target.spec.shardRetentionPolicy.whenScaled", *target.when_scaled));
    }
    policy.when_scaled_source = "target";
  } else {
    policy.when_scaled = WhenScaled::Delete;
    policy.when_scaled_source = "default";
  }

  if (policy.when_scaled == WhenScaled::Retain) {
    const auto use = [&](const std::string& text, std::string field) {
      if (auto d = parsePrometheusDuration(text)) {
        if (d->count() > 0) policy.period = *d;  // 0 means never, as in the operator
      } else {
        errors.push_back(api::FieldError{field, d.error()});
      }
      policy.period_source = std::move(field);
    };
    if (shard_set.spec.shard_retention_policy.retain.retention_period) {
      use(*shard_set.spec.shard_retention_policy.retain.retention_period,
          std::string(kShardSetPeriodField));
    } else if (target.has_retain && !target.retain_period.empty()) {  // "" means unset
      use(target.retain_period, "target.spec.shardRetentionPolicy.retain.retentionPeriod");
    } else if (!target.retention_size.value_or("").empty() &&
               target.retention.value_or("").empty()) {
      policy.period_source = "size-only retention";
    } else if (!target.retention.value_or("").empty()) {
      use(*target.retention, "target.spec.retention");
    } else {
      policy.period = kDefaultRetentionPeriod;
      policy.period_source = "default";
    }
  }
  if (!errors.empty()) return std::unexpected(std::move(errors));
  return policy;
}

}  // namespace shardscaler::retention
