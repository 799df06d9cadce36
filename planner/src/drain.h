// Due shards and the drain (docs/design/drain.md): which are deleted, marked or kept. Private to
// the planner.
#pragma once

#include <span>

#include "action_builder.h"

namespace shardscaler::planner {

// `due`: retained shards out of the count whose deadline passed, none being deleted.
void planDueShards(PlanContext& context, ActionBuilder& writes,
                   std::span<const ShardStatefulSet* const> due);

}  // namespace shardscaler::planner
