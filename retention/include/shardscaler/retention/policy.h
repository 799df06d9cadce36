// Which shard-retention policy applies to a ShardSet: its own fields, else its target's, else
// the defaults (docs/design.md §1, as the operator's gracePeriodForPrometheusStorage). Pure lookup.
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/api/field_error.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/retention/target.h"

namespace shardscaler::retention {

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

}  // namespace shardscaler::retention
