#include "shardscaler/planner/desired_shards.h"

#include <algorithm>

#include "shardscaler/api/shard_set.h"

namespace shardscaler::planner {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

std::string tooMany(int64_t v) {
  return "must be at most " + str(api::kShardCountMaximum) + ", got " + str(v);
}

}  // namespace

std::expected<DesiredShards, std::vector<api::FieldError>> desiredShards(
    std::optional<int64_t> requested, std::optional<int64_t> min_shards,
    std::optional<int64_t> max_shards, std::optional<size_t> zones) {
  std::vector<api::FieldError> errors;
  if (!requested) {
    errors.push_back({"spec.shards", "required"});
  } else if (*requested < api::kShardsMinimum) {
    errors.push_back({"spec.shards", "must not be negative, got " + str(*requested)});
  } else if (*requested > api::kShardCountMaximum) {
    errors.push_back({"spec.shards", tooMany(*requested)});
  }
  const int64_t min = min_shards.value_or(api::kMinShardsDefault);
  const int64_t max = max_shards.value_or(api::kMaxShardsDefault);
  if (min < api::kMinShardsMinimum) {
    errors.push_back({"spec.minShards",
                      "must be at least " + str(api::kMinShardsMinimum) + ", got " + str(min)});
  }
  if (min > api::kShardCountMaximum) errors.push_back({"spec.minShards", tooMany(min)});
  if (max < api::kMaxShardsMinimum) {
    errors.push_back({"spec.maxShards",
                      "must be at least " + str(api::kMaxShardsMinimum) + ", got " + str(max)});
  }
  if (max > api::kShardCountMaximum) errors.push_back({"spec.maxShards", tooMany(max)});
  if (min >= api::kMinShardsMinimum && max >= api::kMaxShardsMinimum && max < min) {
    errors.push_back({"spec.maxShards",
                      "must not be below spec.minShards (" + str(max) + " < " + str(min) + ")"});
  }
  if (zones && *zones == 0) {
    errors.push_back(
        {"target.spec.shardingStrategy.topology.values", "Topology mode needs at least one zone"});
  }
  if (!errors.empty()) return std::unexpected(std::move(errors));

  DesiredShards d;
  d.requested = static_cast<int32_t>(*requested);
  d.clamped = static_cast<int32_t>(std::clamp<int64_t>(*requested, min, max));
  if (d.clamped != d.requested) {
    d.clamp_note =
        "spec.shards " + str(d.requested) + " is " +
        (d.requested < min ? "below minShards " + str(min) : "above maxShards " + str(max)) +
        "; using " + str(d.clamped);
  }
  d.want = d.clamped;
  if (zones) {
    const auto z = static_cast<int64_t>(*zones);
    const int64_t lowest = ((std::max(min, z) + z - 1) / z) * z;  // smallest valid count
    const int64_t highest = (max / z) * z;                        // largest valid count
    if (lowest > highest) {
      return std::unexpected(std::vector<api::FieldError>{
          {"spec.maxShards", "no multiple of the " + str(z) + " topology zones lies within [" +
                                 str(std::max(min, z)) + ", " + str(max) + "]"}});
    }
    const int64_t up = std::max(((d.clamped + z - 1) / z) * z, lowest);
    if (up <= highest) {
      d.want = static_cast<int32_t>(up);
      if (d.want != d.clamped) {
        d.rounding_note = str(d.clamped) + " shards rounded up to " + str(d.want) +
                          ", a multiple of the " + str(z) + " topology zones";
      }
    } else {
      d.want = static_cast<int32_t>(highest);
      d.rounding_note = str(d.clamped) + " shards rounded down to " + str(d.want) +
                        ", a multiple of the " + str(z) + " topology zones (rounding up to " +
                        str(up) + " would pass maxShards " + str(max) + ")";
    }
  }
  return d;
}

}  // namespace shardscaler::planner
