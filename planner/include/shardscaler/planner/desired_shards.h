// The shard count a ShardSet asks for: spec.shards clamped to [minShards, maxShards] and, in
// Topology mode, moved to a multiple of the zone count (docs/design.md). Pure arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/api/field_error.h"

namespace shardscaler::planner {

struct DesiredShards {
  int32_t requested = 0;      // spec.shards
  int32_t clamped = 0;        // after [minShards, maxShards]
  int32_t want = 0;           // after Topology rounding
  std::string clamp_note;     // non-empty when clamped != requested
  std::string rounding_note;  // non-empty when want != clamped
};

// min defaults to 1 (and must be >= 1), max to no limit; requested must be >= 0.
// With zones: want is the smallest multiple of zones >= clamped and >= zones; when that passes
// max, the largest multiple <= max (said so in rounding_note); when no multiple of zones lies in
// [max(min, zones), max], an error.
std::expected<DesiredShards, std::vector<api::FieldError>> desiredShards(
    std::optional<int64_t> requested, std::optional<int64_t> min_shards,
    std::optional<int64_t> max_shards, std::optional<size_t> zones);

}  // namespace shardscaler::planner
