// Which shard-retention policy applies to a ShardSet: its own fields, else its target's, else
// the defaults (docs/design.md, as the operator's gracePeriodForPrometheusStorage). Pure lookup.
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/api/field_error.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/planner/target.h"

namespace shardscaler::planner {

enum class WhenScaled { Retain, Delete };
std::string_view toString(WhenScaled w);
// Exactly "Retain" or "Delete", as the CRD enums.
std::optional<WhenScaled> parseWhenScaled(std::string_view text);

inline constexpr std::chrono::hours kDefaultRetentionPeriod{24};

struct RetentionPolicy {
  WhenScaled when_scaled = WhenScaled::Delete;
  std::string when_scaled_source;  // "ShardSet", "target" or "default"
  // How long a detached shard is kept; nullopt = never deleted (size-only retention, or a period
  // of 0 as in the operator). Only resolved for Retain; nullopt for Delete.
  std::optional<std::chrono::nanoseconds> period;
  std::string period_source;  // the field it came from, or "default" / "size-only retention"
};

// whenScaled: ShardSet spec, else target spec.shardRetentionPolicy, else Delete.
// Period (Retain only): ShardSet retain.retentionPeriod, else target retain.retentionPeriod, else
// never when the target has retentionSize but no retention, else target spec.retention, else 24h.
// Every bad field consulted is returned (target fields are named "target.spec...."); the
// ShardSet's own fields are always checked, the target's only when they are used.
std::expected<RetentionPolicy, std::vector<api::FieldError>> resolveRetentionPolicy(
    const api::ShardSet& shard_set, const Target& target);

// The ShardSet's own policy fields alone (no target needed).
std::vector<api::FieldError> validateShardSetPolicy(const api::ShardSet& shard_set);

enum class OnTimeout { Keep, Delete };
std::string_view toString(OnTimeout on_timeout);

// Placeholders of a drain condition, as of spec.ingestion.query: the ShardSet's namespace and a
// regex of the due shard's pods, each escaped for the inside of a double-quoted PromQL string.
inline constexpr std::string_view kDrainNamespacePlaceholder = "$NAMESPACE";
inline constexpr std::string_view kDrainPodRegexPlaceholder = "$POD_REGEX";

// spec.shardRetentionPolicy.drain as it applies (docs/design/drain.md): whether a due shard must
// drain before it is deleted, and how that is checked.
struct DrainPolicy {
  // A drain is checked before every deletion, unless the spec opts out.
  bool enabled = false;
  // The Prometheus the drain asks; "" = each due shard's own pods (their /metrics).
  std::string prometheus_url;
  // The user's condition (placeholders still in it); nullopt: remote write caught up.
  std::optional<std::string> condition;
  std::chrono::seconds max_lag{api::kMaxLagSecondsDefault};
  std::chrono::seconds timeout{api::kDrainTimeoutSecondsDefault};
  OnTimeout on_timeout = OnTimeout::Keep;

  // When the drain of a shard first found undrained at `draining_since` (its draining-since mark)
  // times out. The timeout counts from that first reading, never from the shard's deadline: a
  // shard that became due long before it was first checked (shardscaler down, the ShardSet
  // invalid, an adopted deadline) still gets the whole timeout. Held at the end of time rather
  // than wrapping. The planner and the guard both judge by it.
  std::chrono::system_clock::time_point givesUpAt(
      std::chrono::system_clock::time_point draining_since) const;
};

// Enabled unless spec.shardRetentionPolicy.drain.enabled is false; asks drain.prometheusURL, else
// spec.ingestion.prometheusURL, else the shards' own pods. A condition (PromQL) needs one of the
// URLs. Every bad drain field is returned.
std::expected<DrainPolicy, std::vector<api::FieldError>> resolveDrainPolicy(
    const api::ShardSet& shard_set);

}  // namespace shardscaler::planner
