// spec.resharding in the planner: the scrape classes a target write carries
// (docs/design/resharding.md), and the Resharding condition. The decision itself is
// resharding::planResharding's; this reads the ShardSet and the target for it.
#include "plan_context.h"

namespace shardscaler::planner {
namespace {

resharding::Mode modeOf(const api::ShardSet& ss) {
  return ss.spec.resharding == api::kReshardingLowChurn ? resharding::Mode::LowChurn
                                                        : resharding::Mode::Operator;
}

}  // namespace

const resharding::ReshardingOutcome& planResharding(PlanContext& c, int32_t shards_after,
                                                    bool release) {
  const api::ShardSet& ss = c.input.shard_set;
  const Target& target = *c.target;
  resharding::ReshardingInput in{
      .mode = modeOf(ss),
      .target = target.scrape,
      .current_shards = target.effectiveShards(),
      .shards = shards_after,
      .max_shards = ss.spec.max_shards.value_or(api::kMaxShardsDefault),
      .objects = c.input.scrape_objects,
      .objects_error = c.input.scrape_objects_error,
      .release = release,
  };
  if (const Condition* was = k8s::findStatusCondition(ss.conditions, api::kConditionResharding)) {
    in.previous_reason = was->reason;
    in.previous_message = was->message;
  }
  c.resharding = resharding::planResharding(in);
  c.resharding_written = false;
  c.plan.decision.resharding = c.resharding->summary;
  c.plan.decision.resharding_needs_objects = c.resharding->needs_objects;
  return *c.resharding;
}

std::optional<Condition> reshardingCondition(PlanContext& c) {
  if (c.target == nullptr || c.plan.decision.mode != PlanMode::Converge) {
    // Nothing is decided for the target now: the condition stays as it was.
    const Condition* was =
        k8s::findStatusCondition(c.input.shard_set.conditions, api::kConditionResharding);
    return was != nullptr ? std::optional(*was) : std::nullopt;
  }
  if (!c.resharding) planResharding(c, c.target->effectiveShards());
  const resharding::ReshardingOutcome& r = *c.resharding;
  if (!r.relevant) return std::nullopt;
  const api::ShardSet& ss = c.input.shard_set;
  if (r.scrape_classes && !c.resharding_written) {
    // Wanted, not written by this plan: the target write that carries it comes later (the
    // transition's, once its gates open).
    return makeCondition(ss.conditions, api::kConditionResharding, api::kConditionUnknown, r.reason,
                         "pending, with the next target update: " + r.message, ss.generation,
                         c.input.now);
  }
  return makeCondition(ss.conditions, api::kConditionResharding, r.condition, r.reason, r.message,
                       ss.generation, c.input.now);
}

}  // namespace shardscaler::planner
