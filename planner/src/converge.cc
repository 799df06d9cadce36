// PlanMode::Converge: the transitions of docs/design.md, each step gated so that an operator
// acting on a stale view cannot lose a shard (docs/design/guard.md,
// docs/design/lagging-operator.md): with the admission guard enforced nothing waits; without it, a
// transition waits for the operator to acknowledge the pause, and for the settle time after the
// pause (re-attach) and after the last detach (lowering spec.shards). planConverge is a sequence of
// named steps: classify the shards, return early where a hold or an undo decides, compute the
// gates, then write what they let through, in order.
#include <algorithm>
#include <set>

#include "action_builder.h"
#include "drain.h"
#include "shardscaler/planner/duration.h"

namespace shardscaler::planner {
namespace {

using Clock = std::chrono::system_clock;
using std::chrono::nanoseconds;

// How often a transition waiting for the operator's acknowledgement looks again, beside the
// target status events that wake it.
constexpr auto kAckPoll = std::chrono::milliseconds(500);

// The Progressing condition still says a pause went unacknowledged within the timeout: do not
// pause again before that long has passed.
std::optional<nanoseconds> abandonmentHoldLeft(const PlanContext& context) {
  const Condition* progressing =
      k8s::findStatusCondition(context.input.shard_set.conditions, kConditionProgressing);
  if (progressing == nullptr || progressing->reason != kReasonPauseNotAcknowledged) {
    return std::nullopt;
  }
  const auto since = parseAnnotationTime(&progressing->last_transition_time);
  if (!since) return std::nullopt;
  const auto until = *since + pauseHold(context.input.safety.pause_ack_timeout,
                                        context.input.shard_set.unacknowledged_pauses);
  if (context.input.now >= until) return std::nullopt;
  return until - context.input.now;
}

// The target's shards, sorted by what this transition does with each.
struct ShardClassification {
  std::vector<const ShardStatefulSet*> unguarded;    // attached, without our guard label
  std::vector<const ShardStatefulSet*> to_detach;    // attached, at or above `want`, detached
  std::vector<const ShardStatefulSet*> to_reattach;  // below `want`, lowest first
  std::vector<const ShardStatefulSet*> scaled_away;  // attached above both counts, Delete
  std::vector<const ShardStatefulSet*> expired;      // retained, out of the count, past deadline
  bool needs_pause = false;
  // Latest detached-at among retained shards at or above `want`: until the settle time has passed
  // since, the operator may still see one of them attached.
  std::optional<Clock::time_point> last_detach;
  // spec.shards about to drop, and a shard in [want, cur) has no StatefulSet yet: a lagging
  // operator may still create it from the count it last saw, after spec.shards drops, and then
  // delete it as one too many (under Retain, its data; under Delete, a shard that lived for
  // nothing, after the ShardSet reported the scale-down done). spec.shards drops only once the
  // operator acknowledged the pause and the settle time has passed since it, guard or not.
  bool unseen_above_want = false;
  // An attached shard at or above the target's count but below `want` (a quick down-then-up):
  // a sync that started before the pause, with the lower count, may still delete it, and the
  // guard does not stop that: it admits the DELETE from the count it reads, and a raise of
  // spec.shards can commit between that read and the deletion. So, guard or not, spec.shards
  // rises only once the operator acknowledged the pause and the settle time has passed since it.
  bool unexpected_attached = false;

  // The transition moves shards between the operator and retention, or must hold it off.
  bool movesShards() const { return needs_pause || !to_detach.empty() || !to_reattach.empty(); }
};

// The operator's own retention keeps `shard` (its deadline ahead, or unreadable), and it keeps it
// for the target's own policy: while shardscaler holds the target at its policy, what the operator
// keeps it keeps for shardscaler, and the ShardSet's policy decides.
bool operatorKeeps(const PlanContext& context, const ShardStatefulSet& shard) {
  return !context.target->retention_held && !shard.operatorLetsGo(context.input.now);
}

void classifyAttached(const PlanContext& context, int32_t cur, int32_t want, bool detach_removed,
                      ShardClassification& shards) {
  const int32_t floor = std::max(cur, want);  // nothing below this is ever deleted
  for (const auto& attached : context.inventory->attached) {
    if (attached.object->being_deleted) continue;
    if (!attached.guard_labelled) shards.unguarded.push_back(&attached);
    if (attached.index >= want) {
      if (detach_removed) {
        shards.to_detach.push_back(&attached);
        shards.needs_pause = true;
      } else if (attached.index >= floor && !operatorKeeps(context, attached)) {
        // (An attached shard the operator's own retention still keeps is not deleted.)
        shards.scaled_away.push_back(&attached);
      }
      continue;
    }
    if (attached.carries_retention_marks) shards.to_reattach.push_back(&attached);
    // Visible to the operator but not expected by it yet: it would delete it.
    if (attached.index >= cur) shards.needs_pause = shards.unexpected_attached = true;
  }
}

void classifyRetained(const PlanContext& context, int32_t cur, int32_t want,
                      ShardClassification& shards) {
  for (const auto& retained : context.inventory->retained) {
    if (retained.object->being_deleted) continue;
    if (retained.index < want) {
      shards.to_reattach.push_back(&retained);
      if (retained.index >= cur) shards.needs_pause = true;
      continue;
    }
    shards.last_detach = std::max(shards.last_detach, retained.detached_at);
    if (retained.index < cur) {
      // The operator still expects it and would label it back: paused until spec.shards drops.
      shards.needs_pause = true;
    } else if (retained.deadline && retained.deadline->expiredAt(context.input.now) &&
               !operatorKeeps(context, retained)) {
      shards.expired.push_back(&retained);
    }
  }
}

bool someShardUnseen(const ShardInventory& inventory, int32_t cur, int32_t want) {
  std::set<int32_t> present;
  for (const auto& attached : inventory.attached) present.insert(attached.index);
  for (const auto& retained : inventory.retained) present.insert(retained.index);
  for (int32_t index = want; index < cur; ++index) {
    if (!present.contains(index)) return true;
  }
  return false;
}

ShardClassification classifyShards(const PlanContext& context, int32_t cur, int32_t want,
                                   bool detach_removed) {
  ShardClassification shards;
  classifyAttached(context, cur, want, detach_removed, shards);
  classifyRetained(context, cur, want, shards);
  if (cur > want && someShardUnseen(*context.inventory, cur, want)) {
    shards.unseen_above_want = shards.needs_pause = true;
  }
  std::ranges::sort(shards.to_reattach, {}, &ShardStatefulSet::index);
  return shards;
}

// What one converge plan reads of its input, once.
struct ConvergeState {
  int32_t cur = 0;   // the target's spec.shards
  int32_t want = 0;  // the ShardSet's count, clamped and rounded
  bool retain = false;
  bool guarded = false;  // the admission guard is enforced
  // The fallback's gates apply: always without the guard, and with it while shards may still
  // appear or a shard the operator does not expect yet is attached.
  bool gated = false;
  bool ours = false;  // the target is paused by this ShardSet
  Clock::time_point now;
  std::optional<Clock::time_point> paused_at;
  std::optional<Clock::time_point> scaled_down_at;
};

ConvergeState readState(const PlanContext& context, const ShardClassification& shards) {
  const Target& target = *context.target;
  const Decision& decision = context.plan.decision;
  ConvergeState state{
      .cur = target.effectiveShards(),
      .want = decision.desired->want,
      .retain = decision.policy->when_scaled == WhenScaled::Retain,
      .guarded = context.input.safety.guard_enforced,
      .ours = target.pausedBy(context.input.shard_set.name),
      .now = context.input.now,
      .paused_at = parseAnnotationTime(target.annotation(api::kPausedAtAnnotation)),
      .scaled_down_at = parseAnnotationTime(target.annotation(api::kScaledDownAtAnnotation)),
  };
  state.gated = !state.guarded || shards.unseen_above_want || shards.unexpected_attached;
  return state;
}

// This plan writes the pause: the transition needs it and the target is not paused, or the target
// is paused by us with no readable paused-at (e.g. by an older shardscaler), so that the settle
// time cannot be counted from it: it is written again, stamped now.
bool pausesNow(const Target& target, const ConvergeState& state,
               const ShardClassification& shards) {
  const bool stamp_pause = state.ours && state.gated && !state.paused_at && shards.movesShards();
  return (shards.needs_pause && !target.paused) || stamp_pause;
}

// The operator did not acknowledge our pause within the timeout: nothing was detached yet, so the
// transition is undone. nullopt: not abandoned.
std::optional<std::string> pauseAbandoned(const PlanContext& context, const ConvergeState& state,
                                          const ShardClassification& shards, bool pausing_now,
                                          const ActionBuilder& writes) {
  const Target& target = *context.target;
  if (pausing_now || !state.ours || !state.gated || !shards.movesShards()) return std::nullopt;
  if (target.pauseAcknowledged()) return std::nullopt;
  const nanoseconds timeout = context.input.safety.pause_ack_timeout;
  if (state.now - *state.paused_at < timeout) return std::nullopt;
  return "the operator did not acknowledge the pause of " + writes.targetText() + " within " +
         formatPrometheusDuration(timeout) + " (status.paused for generation " +
         std::to_string(target.generation) + ")";
}

// What may be written now, and what the plan waits for when something may not.
struct TransitionGates {
  bool may_detach = true;
  bool may_reattach = true;
  bool may_lower = true;               // spec.shards may change and the target resume
  bool may_delete_scaled_away = true;  // under Delete, the shards above the count
  std::string waiting_for;             // the first reason to wait, for the status
  std::optional<nanoseconds> requeue;  // the earliest time to look again

  void wait(std::string why, nanoseconds left) {
    if (waiting_for.empty()) waiting_for = std::move(why);
    requeue = requeue ? std::min(*requeue, left) : left;
  }
};

// The fallback's gates after the pause. The operator's status says its target view has the pause;
// the settle time covers its StatefulSet view and any sync that started before the pause.
void gatePause(const PlanContext& context, const ConvergeState& state,
               const ShardClassification& shards, bool pausing_now, TransitionGates& gates) {
  const TransitionSafety& safety = context.input.safety;
  if (pausing_now) {
    if (!state.gated) return;  // with the guard, spec.shards and the resume follow in this plan
    gates.may_detach = gates.may_reattach = gates.may_lower = false;
    gates.wait("the operator to acknowledge the pause", kAckPoll);
    return;
  }
  if (!state.ours || !state.gated || !shards.movesShards()) return;
  if (!context.target->pauseAcknowledged()) {
    const nanoseconds waited = state.now - *state.paused_at;
    gates.may_detach = gates.may_reattach = gates.may_lower = false;
    gates.wait("the operator to acknowledge the pause",
               std::min<nanoseconds>(kAckPoll, safety.pause_ack_timeout - waited));
    return;
  }
  if (!state.paused_at || state.now >= *state.paused_at + safety.settle_time) return;
  const bool shards_may_appear = shards.unseen_above_want || shards.unexpected_attached;
  if (!shards.to_reattach.empty()) gates.may_reattach = false;
  if (shards_may_appear) gates.may_lower = false;
  if (!shards.to_reattach.empty() || shards_may_appear) {
    gates.wait("the settle time after the pause",
               *state.paused_at + safety.settle_time - state.now);
  }
}

TransitionGates transitionGates(const PlanContext& context, const ConvergeState& state,
                                const ShardClassification& shards, bool pausing_now) {
  const nanoseconds settle_time = context.input.safety.settle_time;
  TransitionGates gates;
  gatePause(context, state, shards, pausing_now, gates);
  // The wait holds back the spec.shards write and the resume, nothing else: with neither left
  // (the count already lowered, the target not paused by us) it would only report Ready late.
  const bool lowering_left = state.cur != state.want || state.ours || pausing_now;
  if (!state.guarded && lowering_left && shards.last_detach &&
      state.now < *shards.last_detach + settle_time) {
    gates.may_lower = false;
    gates.wait("the settle time after the last detach",
               *shards.last_detach + settle_time - state.now);
  }
  // Under Delete the shards above the count go only once the settle time has passed since
  // spec.shards dropped, guard or not: an operator sync that started before, from the higher
  // count, would create a shard deleted under it again, after the ShardSet reported the
  // scale-down done. The operator, once it sees the count, deletes them itself in the meantime.
  if (!shards.scaled_away.empty() && state.scaled_down_at &&
      state.now < *state.scaled_down_at + settle_time) {
    gates.may_delete_scaled_away = false;
    gates.wait("the settle time after lowering spec.shards",
               *state.scaled_down_at + settle_time - state.now);
  }
  return gates;
}

// Without the guard, spec.shards changes and the target resumes only from an observation in which
// every detach and re-attach has already held: these writes act on what was just read. With it,
// they follow this plan's pause, detaches and re-attaches, which the applier runs in order and
// stops at the first that fails; the API server then keeps a detached shard detached and an
// active one undeleted whatever the operator does, so nothing needs to be seen again.
bool settledInObservation(const Target& target, const ConvergeState& state,
                          const ShardClassification& shards, bool pausing_now) {
  if (!state.gated) return !shards.needs_pause || target.paused || pausing_now;
  return shards.to_detach.empty() && shards.to_reattach.empty() &&
         (!shards.needs_pause || target.paused);
}

// The scrape classes spec.resharding asks for, when a target write at `shards_after` must change
// them, with their Events.
std::optional<nlohmann::json> reshardingWrite(PlanContext& context, int32_t shards_after,
                                              std::vector<Event>& events) {
  const resharding::ReshardingOutcome& r = planResharding(context, shards_after);
  if (!r.scrape_classes) return std::nullopt;
  for (const auto& e : r.events) {
    events.push_back({e.warning ? EventType::Warning : EventType::Normal, e.reason, e.message});
  }
  return r.scrape_classes;
}

// spec.shards and the resume in one update, with the scrape classes that go with the new count
// (low-churn re-sharding: the table for a shard count is written with that count, never before
// or after it). After a pause in this plan the update is conditional on the uid only: the pause
// itself was conditional on the observed resourceVersion, and the operator's status write
// acknowledging it changes the resourceVersion before the update is sent, for nothing that
// matters here. Scrape classes are a whole list written over the list as read, so an update that
// carries them is conditional on the read's resourceVersion, and waits for the round after a
// pause of this plan. Without another write to ride on, the classes are written alone, unless a
// transition of ours holds the target (its update will carry them).
void writeTargetUpdate(PlanContext& context, ActionBuilder& writes, const ConvergeState& state,
                       const ShardClassification& shards, const TransitionGates& gates,
                       bool pausing_now) {
  const Decision& decision = context.plan.decision;
  std::optional<int32_t> shard_count;
  bool unpause = false;
  if (settledInObservation(*context.target, state, shards, pausing_now) && gates.may_lower) {
    if (state.cur != state.want) shard_count = state.want;
    unpause = state.ours || pausing_now;
  }
  const bool stale = context.target->stalePausedBy(context.input.shard_set.name);
  std::vector<Event> events;
  if (!shard_count && !unpause && !stale) {
    if (state.ours || pausing_now) return;
    auto classes = reshardingWrite(context, state.cur, events);
    if (!classes) return;
    writes.update({.precondition_resource_version = true, .scrape_classes = std::move(classes)},
                  std::move(events));
    context.resharding_written = true;
    return;
  }
  auto classes = reshardingWrite(context, shard_count.value_or(state.cur), events);
  if (classes && pausing_now) return;
  if (shard_count && !decision.desired->clamp_note.empty()) {
    events.push_back(
        {EventType::Normal, std::string(kReasonScaleClamped), decision.desired->clamp_note});
  }
  if (shard_count && !decision.desired->rounding_note.empty()) {
    events.push_back({EventType::Normal, std::string(kReasonRoundedToZoneMultiple),
                      decision.desired->rounding_note});
  }
  const bool lowered = shard_count && *shard_count < state.cur;
  const bool with_classes = classes.has_value();
  writes.update(
      {.shards = shard_count,
       .unpause = unpause,
       .clear_paused_by = unpause || stale,
       .scaled_down_at = lowered ? std::optional(state.now) : std::nullopt,
       .precondition_resource_version = (shard_count.has_value() || with_classes) && !pausing_now,
       .scrape_classes = std::move(classes)},
      std::move(events));
  context.resharding_written = with_classes;
}

void deleteExpired(PlanContext& context, ActionBuilder& writes, const ShardClassification& shards) {
  planDueShards(context, writes, shards.expired);
}

// What every plan fixes whether or not it scales: the guard label on each attached shard, and the
// ShardSet's ownerReference on each retained one (not one this plan re-attaches: its re-attach,
// read from the same observation, would leave the reference with the ShardSet).
void writeFixUps(const PlanContext& context, ActionBuilder& writes, const ConvergeState& state,
                 const ShardClassification& shards) {
  for (const auto* attached : shards.unguarded) writes.guard(*attached);
  for (const auto& retained : context.inventory->retained) {
    if (!retained.object->being_deleted && !retained.owned_by_shard_set &&
        retained.index >= state.want) {
      writes.adopt(retained);
    }
  }
}

// Under Delete without a drain: the attached shards above the count, once the gates allow.
void deleteScaledAway(ActionBuilder& writes, const ConvergeState& state,
                      const ShardClassification& shards) {
  for (const auto* attached : shards.scaled_away) {
    writes.remove(
        *attached, std::nullopt,
        "scaled down to " + std::to_string(state.want) + " shards with whenScaled=Delete");
  }
}

}  // namespace

void planConverge(PlanContext& context) {
  Decision& decision = context.plan.decision;
  // Under Retain, or under Delete with a drain, a removed shard is detached first: it stops
  // scraping and keeps shipping until it is deleted.
  const bool detach_removed = decision.policy->when_scaled == WhenScaled::Retain ||
                              (decision.drain && decision.drain->enabled);
  const ShardClassification shards = classifyShards(context, context.target->effectiveShards(),
                                                    decision.desired->want, detach_removed);
  const ConvergeState state = readState(context, shards);
  ActionBuilder writes(context);
  writeFixUps(context, writes, state, shards);

  const bool transition = shards.movesShards() || state.cur != state.want;
  if (transition && !state.ours) {
    // Held: a write refused for good, or a pause not acknowledged lately; only expiry goes on.
    const std::optional<nanoseconds> hold = abandonmentHoldLeft(context);
    if (context.input.hold_transitions || hold) {
      decision.waiting_for = context.input.hold_transitions
                                 ? "a write refused for good to be retried"
                                 : "the hold after an unacknowledged pause to end";
      if (hold) context.requeueWithin(*hold);
      deleteExpired(context, writes, shards);
      return;
    }
  }
  if (state.ours && context.input.hold_transitions) {
    // Our transition met a write refused for good: undone, not left paused.
    decision.abandoned_because = "a write was refused for good";
    planUndo(context, UndoFor::Abandon);
    return;
  }
  if (state.guarded || (state.ours && context.target->pauseAcknowledged())) {
    decision.unacknowledged_pauses = 0;
  }
  const bool pausing_now = pausesNow(*context.target, state, shards);
  if (auto abandoned = pauseAbandoned(context, state, shards, pausing_now, writes)) {
    // The operator never acknowledged our pause: nothing was detached yet, undone.
    decision.abandoned_because = std::move(*abandoned);
    decision.unacknowledged_pauses = context.input.shard_set.unacknowledged_pauses + 1;
    planUndo(context, UndoFor::Abandon);
    return;
  }

  const TransitionGates gates = transitionGates(context, state, shards, pausing_now);
  if (pausing_now) writes.pause();
  if (gates.may_detach) {
    // A shard detached again (the operator labelled it back) starts a fresh retention period; one
    // the operator's own retention kept keeps the operator's deadline, unless that retention is
    // the one shardscaler holds the target at (the builder's rule).
    for (const auto* attached : shards.to_detach) writes.detach(*attached, *decision.new_deadline);
  }
  if (gates.may_reattach) {
    for (const auto* shard : shards.to_reattach) writes.reattach(*shard);
  }
  writeTargetUpdate(context, writes, state, shards, gates, pausing_now);
  if (gates.may_delete_scaled_away) deleteScaledAway(writes, state, shards);
  deleteExpired(context, writes, shards);
  if (!gates.waiting_for.empty() && decision.waiting_for.empty()) {
    decision.waiting_for = gates.waiting_for;
  }
  if (gates.requeue) context.requeueWithin(*gates.requeue);
}

}  // namespace shardscaler::planner
