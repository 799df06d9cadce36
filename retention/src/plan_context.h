// What the planner's two halves share: the input, what was observed of it, and the plan being
// built. Private to retention.
#pragma once

#include <optional>
#include <string>

#include "shardscaler/retention/planner.h"
#include "shardscaler/retention/shard_inventory.h"

namespace shardscaler::retention {

struct PlanContext {
  PlanContext(const PlanInput& in, Plan& out) : input(in), plan(out) {}

  const PlanInput& input;
  Plan& plan;
  const Target* target = nullptr;           // the ShardSet's target, when found
  std::optional<ShardInventory> inventory;  // when the target is found
  // Set by the action half in InvalidSpec mode when the target stays paused.
  std::string kept_paused_because;
};

// Status, conditions, Degraded-transition events and requeue time; runs after the actions.
void fillStatus(PlanContext& context);

}  // namespace shardscaler::retention
