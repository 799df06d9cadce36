// What the planner's parts share: the input, what was observed of it, and the plan being built.
// Private to the planner.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "shardscaler/planner/planner.h"
#include "shardscaler/planner/shard_inventory.h"
#include "shardscaler/resharding/resharding.h"

namespace shardscaler::planner {

struct PlanContext {
  PlanContext(const PlanInput& in, Plan& out) : input(in), plan(out) {}

  const PlanInput& input;
  Plan& plan;
  const Target* target = nullptr;           // the ShardSet's target, when found
  std::optional<ShardInventory> inventory;  // when the target is found
  // Set by the action half in InvalidSpec mode when the target stays paused.
  std::string kept_paused_because;
  // What spec.resharding asks of the target's scrape classes for the last target write this plan
  // considered, and whether that write carries it.
  std::optional<resharding::ReshardingOutcome> resharding;
  bool resharding_written = false;

  // Come back after `wait` at the latest (keeps the earliest of several).
  void requeueWithin(std::chrono::nanoseconds wait);
};

// Move toward `want`: PlanMode::Converge.
void planConverge(PlanContext& context);
// Why an interrupted transition is undone: it is abandoned (a pause not acknowledged, a write
// refused for good, an invalid spec), or the ShardSet lets go of the target.
enum class UndoFor { Abandon, Release };
// Undo an interrupted transition at the target's current shard count, write nothing else:
// re-attach shards the operator expects, keep (detach) attached shards it would delete if they
// were re-attached by us, resume a target this ShardSet paused. A release also drops the claim
// and the guard labels of active shards.
void planUndo(PlanContext& context, UndoFor why);

// Status, conditions, Degraded-transition events and requeue time; runs after the actions.
void fillStatus(PlanContext& context);

// spec.resharding for a target write that leaves spec.shards at `shards_after` (the ShardSet
// releasing the target: the operator's sharding); kept as context.resharding.
const resharding::ReshardingOutcome& planResharding(PlanContext& context, int32_t shards_after,
                                                    bool release = false);
// The Resharding condition, when it is worth stating.
std::optional<Condition> reshardingCondition(PlanContext& context);

}  // namespace shardscaler::planner
