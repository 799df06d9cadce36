// The JSON merge-patch bodies of the planner's writes. Private to retention: each body carries
// its own uid (and, for the pause, resourceVersion) precondition.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/retention/deadline.h"
#include "shardscaler/retention/stateful_set.h"
#include "shardscaler/retention/target.h"

namespace shardscaler::retention::patches {

nlohmann::json pauseTarget(const Target& target, const std::string& shard_set_name);
// Any combination; the caller only asks when at least one is set.
nlohmann::json updateTarget(const Target& target, std::optional<int32_t> shards, bool unpause,
                            bool clear_paused_by);
nlohmann::json detach(const ObservedStatefulSet& sts, const Target& target,
                      const std::string& shard_set_name, const DeletionDeadline& deadline);
nlohmann::json reattach(const ObservedStatefulSet& sts, const Target& target);

}  // namespace shardscaler::retention::patches
