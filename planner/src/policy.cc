#include "shardscaler/planner/policy.h"

#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/duration.h"

namespace shardscaler::planner {
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

namespace {

// A retention period as the operator reads it: 0 means never deleted.
using Period = std::optional<std::chrono::nanoseconds>;

// The period a field gives, or an error naming the field.
std::optional<Period> parsePeriod(const std::string& text, const std::string& field,
                                  std::vector<api::FieldError>& errors) {
  auto d = parsePrometheusDuration(text);
  if (!d) {
    errors.push_back(api::FieldError{field, d.error()});
    return std::nullopt;
  }
  return d->count() > 0 ? Period(*d) : Period();
}

// gracePeriodForPrometheusStorage of the operator: the target's retain.retentionPeriod, else
// never with size-only retention, else spec.retention, else 24h. Sets *source to the field used.
Period targetPeriod(const Target& target, std::string* source,
                    std::vector<api::FieldError>& errors) {
  if (target.has_retain && !target.retain_period.empty()) {  // "" means unset
    *source = "target.spec.shardRetentionPolicy.retain.retentionPeriod";
    return parsePeriod(target.retain_period, *source, errors).value_or(Period());
  }
  if (!target.retention_size.value_or("").empty() && target.retention.value_or("").empty()) {
    *source = "size-only retention";
    return std::nullopt;
  }
  if (!target.retention.value_or("").empty()) {
    *source = "target.spec.retention";
    return parsePeriod(*target.retention, *source, errors).value_or(Period());
  }
  *source = "default";
  return kDefaultRetentionPeriod;
}

// Whether `a` keeps a shard at least as long as `b` (never is the longest).
bool keepsLonger(const Period& a, const Period& b) { return !a || (b && *a >= *b); }

}  // namespace

std::expected<RetentionPolicy, std::vector<api::FieldError>> resolveRetentionPolicy(
    const api::ShardSet& shard_set, const Target& target) {
  std::vector<api::FieldError> errors = validateShardSetPolicy(shard_set);
  const auto& own = shard_set.spec.shard_retention_policy;
  const std::optional<WhenScaled> mine =
      own.when_scaled ? parseWhenScaled(*own.when_scaled) : std::nullopt;
  std::optional<WhenScaled> theirs;
  if (target.when_scaled) {
    theirs = parseWhenScaled(*target.when_scaled);
    if (!theirs) {
      errors.push_back(
          badWhenScaled("target.spec.shardRetentionPolicy.whenScaled", *target.when_scaled));
    }
  }

  RetentionPolicy policy;
  const bool target_retains = theirs == WhenScaled::Retain;
  if (mine == WhenScaled::Retain || target_retains) {
    policy.when_scaled = WhenScaled::Retain;
    policy.when_scaled_source = mine == WhenScaled::Retain ? "ShardSet" : "target";
    if (own.when_scaled && mine != WhenScaled::Retain) {
      policy.when_scaled_source = "target (it keeps what the ShardSet's Delete would not)";
    }
  } else {
    policy.when_scaled = WhenScaled::Delete;
    policy.when_scaled_source = own.when_scaled      ? "ShardSet"
                                : target.when_scaled ? "target"
                                                     : "default";
  }

  if (policy.when_scaled == WhenScaled::Retain) {
    std::string target_source;
    const Period from_target = targetPeriod(target, &target_source, errors);
    if (own.retain.retention_period) {
      const std::string field(kShardSetPeriodField);
      std::vector<api::FieldError> reported;  // validateShardSetPolicy named it already
      const Period from_shard_set =
          parsePeriod(*own.retain.retention_period, field, reported).value_or(Period());
      // The operator's own retention keeps its shards for its period: a shorter one here would
      // delete what it keeps.
      if (target_retains && !keepsLonger(from_shard_set, from_target)) {
        policy.period = from_target;
        policy.period_source = target_source + " (longer than " + field + ")";
      } else {
        policy.period = from_shard_set;
        policy.period_source = field;
      }
    } else {
      policy.period = from_target;
      policy.period_source = std::move(target_source);
    }
  }
  if (!errors.empty()) return std::unexpected(std::move(errors));
  return policy;
}

std::string_view toString(OnTimeout on_timeout) {
  return on_timeout == OnTimeout::Keep ? api::kOnTimeoutKeep : api::kOnTimeoutDelete;
}

namespace {

constexpr std::string_view kDrainField = "spec.shardRetentionPolicy.drain";

std::string drainField(std::string_view name) {
  return std::string(kDrainField) + "." + std::string(name);
}

// An integer field of the drain within its CRD bounds, for objects that skipped validation.
std::optional<std::chrono::seconds> boundedSeconds(std::optional<int64_t> value, int64_t fallback,
                                                   int64_t minimum, int64_t maximum,
                                                   std::string_view name,
                                                   std::vector<api::FieldError>& errors) {
  const int64_t seconds = value.value_or(fallback);
  if (seconds < minimum || seconds > maximum) {
    errors.push_back({drainField(name), "must be between " + std::to_string(minimum) + " and " +
                                            std::to_string(maximum) + ", got " +
                                            std::to_string(seconds)});
    return std::nullopt;
  }
  return std::chrono::seconds(seconds);
}

}  // namespace

std::expected<DrainPolicy, std::vector<api::FieldError>> resolveDrainPolicy(
    const api::ShardSet& shard_set) {
  const api::DrainSpec spec =
      shard_set.spec.shard_retention_policy.drain.value_or(api::DrainSpec{});
  std::vector<api::FieldError> errors;
  DrainPolicy policy;
  if (auto lag = boundedSeconds(spec.max_lag_seconds, api::kMaxLagSecondsDefault,
                                api::kMaxLagSecondsMinimum, api::kMaxLagSecondsMaximum,
                                "maxLagSeconds", errors)) {
    policy.max_lag = *lag;
  }
  if (auto timeout = boundedSeconds(spec.timeout_seconds, api::kDrainTimeoutSecondsDefault,
                                    api::kDrainTimeoutSecondsMinimum,
                                    api::kDrainTimeoutSecondsMaximum, "timeoutSeconds", errors)) {
    policy.timeout = *timeout;
  }
  if (spec.on_timeout) {
    if (*spec.on_timeout == api::kOnTimeoutDelete) {
      policy.on_timeout = OnTimeout::Delete;
    } else if (*spec.on_timeout != api::kOnTimeoutKeep) {
      errors.push_back(
          {drainField("onTimeout"), "must be Keep or Delete, got \"" + *spec.on_timeout + "\""});
    }
  }
  if (spec.condition) {
    if (spec.condition->find(kDrainPodRegexPlaceholder) == std::string::npos) {
      errors.push_back(
          {drainField("condition"),
           "must select the due shard's pods with " + std::string(kDrainPodRegexPlaceholder) +
               " (e.g. pod=~\"$POD_REGEX\"), or it cannot tell one shard from another"});
    }
    policy.condition = spec.condition;
  }
  const auto& ingestion = shard_set.spec.ingestion;
  policy.prometheus_url = spec.prometheus_url.value_or(
      ingestion && ingestion->prometheus_url ? *ingestion->prometheus_url : "");
  const bool opted_out = spec.enabled == false;
  if (spec.condition && policy.prometheus_url.empty() && !opted_out) {
    errors.push_back(
        {drainField("condition"),
         "is PromQL, which a Prometheus that scrapes the shards answers: set "
         "spec.shardRetentionPolicy.drain.prometheusURL (without a URL the shards' own pods are "
         "read, with the default condition)"});
  }
  if (!errors.empty()) return std::unexpected(std::move(errors));
  policy.enabled = !opted_out;
  return policy;
}

std::chrono::system_clock::time_point DrainPolicy::givesUpAt(
    std::chrono::system_clock::time_point draining_since) const {
  return addSaturating(draining_since, timeout);
}

}  // namespace shardscaler::planner
