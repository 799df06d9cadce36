#include "shardscaler/planner/planner.h"

#include <algorithm>

#include "shardscaler/planner/duration.h"
#include "shardscaler/planner/operator_retention.h"

#include "action_builder.h"
#include "patches.h"
#include "plan_context.h"

namespace shardscaler::planner {
namespace {

void addProblems(std::vector<api::FieldError>& into, const std::vector<api::FieldError>& from) {
  for (const auto& e : from) {
    if (std::ranges::find(into, e) == into.end()) into.push_back(e);
  }
}

}  // namespace

void PlanContext::requeueWithin(std::chrono::nanoseconds wait) {
  wait = std::max<std::chrono::nanoseconds>(wait, std::chrono::milliseconds(1));
  if (!plan.requeue_after || wait < *plan.requeue_after) plan.requeue_after = wait;
}

std::string_view toString(PlanMode mode) {
  switch (mode) {
    case PlanMode::Converge:
      return "Converge";
    case PlanMode::InvalidSpec:
      return "InvalidSpec";
    case PlanMode::TargetNotFound:
      return "TargetNotFound";
    case PlanMode::TargetDeleting:
      return "TargetDeleting";
    case PlanMode::TargetClaimed:
      return "TargetClaimed";
    case PlanMode::Release:
      return "Release";
  }
  return "Unknown";
}

std::string_view toString(ActionType type) {
  switch (type) {
    case ActionType::ClaimTarget:
      return "ClaimTarget";
    case ActionType::LabelStatefulSet:
      return "LabelStatefulSet";
    case ActionType::PauseTarget:
      return "PauseTarget";
    case ActionType::UpdateTarget:
      return "UpdateTarget";
    case ActionType::DetachStatefulSet:
      return "DetachStatefulSet";
    case ActionType::MarkDrainState:
      return "MarkDrainState";
    case ActionType::OrphanStatefulSet:
      return "OrphanStatefulSet";
    case ActionType::AdoptStatefulSet:
      return "AdoptStatefulSet";
    case ActionType::ReattachStatefulSet:
      return "ReattachStatefulSet";
    case ActionType::DeleteStatefulSet:
      return "DeleteStatefulSet";
  }
  return "Unknown";
}

namespace {

// The ShardSet's own problems (its targetRef, policy and resharding mode); its target's kind when
// it names one.
std::optional<TargetKind> checkSpec(const api::ShardSet& ss,
                                    std::vector<api::FieldError>& problems) {
  const auto kind = parseTargetKind(ss.spec.target_ref.kind);
  if (ss.spec.target_ref.kind.empty()) {
    addProblems(problems, {{"spec.targetRef.kind", "required"}});
  } else if (!kind) {
    addProblems(problems, {{"spec.targetRef.kind", "must be Prometheus or PrometheusAgent, got \"" +
                                                       ss.spec.target_ref.kind + "\""}});
  }
  if (ss.spec.target_ref.name.empty()) {
    addProblems(problems, {{"spec.targetRef.name", "required"}});
  }
  addProblems(problems, validateShardSetPolicy(ss));
  if (ss.spec.resharding && std::ranges::find(api::kReshardingValues, *ss.spec.resharding) ==
                                api::kReshardingValues.end()) {
    addProblems(problems, {{"spec.resharding",
                            "must be Operator or LowChurn, got \"" + *ss.spec.resharding + "\""}});
  }
  return kind;
}

// The spec's problems, the target (when it is the one the ShardSet names), and what the decision
// reads of it: shard count, pause, inventory, policy and the desired count.
void decideInputs(PlanContext& c) {
  const PlanInput& input = c.input;
  const api::ShardSet& ss = input.shard_set;
  Decision& d = c.plan.decision;
  d.problems = ss.spec_errors;
  d.unacknowledged_pauses = ss.unacknowledged_pauses;
  const auto kind = checkSpec(ss, d.problems);
  if (kind && input.target && input.target->kind == *kind &&
      input.target->name == ss.spec.target_ref.name &&
      (input.target->ns.empty() || ss.ns.empty() || input.target->ns == ss.ns)) {
    c.target = &*input.target;
  }
  std::optional<size_t> zones;
  if (c.target != nullptr) {
    const Target& t = *c.target;
    for (const auto& e : t.spec_errors) addProblems(d.problems, {{"target." + e.field, e.message}});
    if (t.mode == "DaemonSet") {
      addProblems(d.problems,
                  {{"target.spec.mode",
                    "DaemonSet: the agent runs one pod per node and has no shards to scale (its "
                    "API server refuses spec.shards > 1 from operator v0.84); point the "
                    "ShardSet at a StatefulSet-mode agent"}});
    }
    zones = t.topologyZones();
    d.current_shards = t.effectiveShards();
    d.target_paused_by_us = t.pausedBy(ss.name);
    if (d.target_paused_by_us) {
      d.paused_by_us_since = parseAnnotationTime(t.annotation(api::kPausedAtAnnotation));
    }
    d.target_paused_by_others = t.paused && !d.target_paused_by_us;
    d.operator_retention = describeRetentionHold(t);
    c.inventory = takeInventory(ss, t, input.stateful_sets);
    if (auto p = resolveRetentionPolicy(ss, t)) {
      d.policy = *p;
    } else {
      addProblems(d.problems, p.error());
    }
  }
  if (auto drain = resolveDrainPolicy(ss)) {
    d.drain = *drain;
  } else {
    addProblems(d.problems, drain.error());
  }
  for (const auto& [name, reading] : input.drain_readings) {
    if (reading.invalid_condition) {
      addProblems(d.problems, {{"spec.shardRetentionPolicy.drain.condition",
                                "Prometheus refused it: " + reading.reason}});
    }
  }
  if (d.policy && d.policy->when_scaled == WhenScaled::Retain) {
    d.new_deadline = deadlineAfter(input.now, d.policy->period);
  } else if (d.policy && d.drain && d.drain->enabled) {
    // Delete with a drain: detached like Retain, due at once, deleted once drained.
    d.new_deadline = DeletionDeadline::at(k8s::Timestamp::fromTimePoint(input.now));
  }
  if (auto w = desiredShards(ss.spec.shards, ss.spec.min_shards, ss.spec.max_shards, zones)) {
    d.desired = *w;
  } else {
    addProblems(d.problems, w.error());
  }
  const std::string* claim =
      c.target != nullptr ? c.target->annotation(api::kClaimedByAnnotation) : nullptr;
  d.claimed_by = claim != nullptr ? *claim : "";
}

// A released ShardSet's retained shards would otherwise go with it (garbage collection follows
// the ownerReference a detach moved to it): each loses that reference, whether or not the target
// still exists, and stays until a user deletes it (the RetainedShardsOrphaned Event says how).
void planOrphans(PlanContext& c) {
  const api::ShardSet& ss = c.input.shard_set;
  if (ss.uid.empty()) return;
  std::string names;
  for (const ObservedStatefulSet& sts : c.input.stateful_sets) {
    const std::string* retained = sts.label(api::kRetainedLabel);
    const std::string* owner = sts.label(api::kShardSetLabel);
    if (sts.being_deleted || retained == nullptr || *retained != "true" || owner == nullptr ||
        *owner != ss.name ||
        std::ranges::none_of(sts.owner_references,
                             [&](const OwnerReference& ref) { return ref.uid == ss.uid; })) {
      continue;
    }
    Action a;
    a.type = ActionType::OrphanStatefulSet;
    a.object_name = sts.name;
    if (const std::string* index = sts.label(api::kOperatorShardLabel)) {
      a.shard_index = parseShardIndex(*index);
    }
    a.uid = sts.uid;
    a.merge_patch = patches::orphan(sts, {ss.name, ss.uid});
    a.summary = "drop ShardSet " + ss.name + "'s ownerReference from retained StatefulSet " +
                sts.name + ", which stays";
    c.plan.actions.push_back(std::move(a));
    names += (names.empty() ? "" : ", ") + sts.name;
  }
  // Once, with the last of them: the next round no longer finds them (nothing owns them now).
  if (!names.empty()) {
    c.plan.actions.back().events.push_back({EventType::Warning,
                                            std::string(kReasonRetainedShardsOrphaned),
                                            orphanedShardsMessage(ss, names)});
  }
}

}  // namespace

std::string orphanedShardsMessage(const api::ShardSet& shard_set, const std::string& names) {
  return "ShardSet no longer manages " + shard_set.spec.target_ref.kind + "/" +
         shard_set.spec.target_ref.name +
         "; its retained StatefulSets stay and will not be deleted at their deadline: " + names +
         " (kubectl delete statefulset -l " + std::string(api::kShardSetLabel) + "=" +
         shard_set.name + " removes them)";
}

std::chrono::nanoseconds pauseHold(std::chrono::nanoseconds ack_timeout, int32_t unacknowledged) {
  const std::chrono::nanoseconds cap =
      std::max<std::chrono::nanoseconds>(kMaxPauseHold, ack_timeout);
  std::chrono::nanoseconds hold = ack_timeout;
  for (int32_t i = 1; i < unacknowledged && hold < cap; ++i) hold *= 2;
  return std::min(hold, cap);
}

namespace {

// Claimed first, as the only target write of its plan: it carries the read's resourceVersion,
// so a second ShardSet racing for the target loses with 409, and the applier stops there. Behind
// it in the same plan, the guard label on each shard the read found attached to the target (by
// owner reference): what the next round would label, one read round sooner. Any transition waits
// for that round, which reads again after both.
void planClaim(PlanContext& c) {
  ActionBuilder b(c);
  b.claim();
  for (const auto& shard : c.inventory->attached) {
    if (!shard.object->being_deleted && !shard.guard_labelled) b.guard(shard);
  }
}

}  // namespace

Plan planShardSet(const PlanInput& input) {
  const api::ShardSet& ss = input.shard_set;
  Plan plan;
  PlanContext c(input, plan);
  Decision& d = plan.decision;
  decideInputs(c);
  const bool claimed_by_other = !d.claimed_by.empty() && d.claimed_by != ss.name;
  if (input.purpose == PlanPurpose::Release) {
    d.mode = PlanMode::Release;
    // Another ShardSet holds the target now: nothing of it is ours to undo.
    if (c.target != nullptr && !c.target->being_deleted && !claimed_by_other) {
      planUndo(c, UndoFor::Release);
    }
    planOrphans(c);
  } else if (c.target != nullptr && claimed_by_other && input.claim_holder_exists != false) {
    d.mode = PlanMode::TargetClaimed;
  } else if (!d.problems.empty()) {
    d.mode = PlanMode::InvalidSpec;
    if (c.target != nullptr && !c.target->being_deleted) planUndo(c, UndoFor::Abandon);
  } else if (c.target == nullptr) {
    d.mode = PlanMode::TargetNotFound;
  } else if (c.target->being_deleted) {
    d.mode = PlanMode::TargetDeleting;
  } else if (d.claimed_by != ss.name) {
    d.mode = PlanMode::Converge;
    planClaim(c);
  } else {
    d.mode = PlanMode::Converge;
    planConverge(c);
  }
  fillStatus(c);
  return plan;
}

std::string describe(const Plan& plan) {
  const Decision& d = plan.decision;
  std::string out = "mode: " + std::string(toString(d.mode)) + "\n";
  if (d.current_shards) out += "target shards: " + std::to_string(*d.current_shards) + "\n";
  if (d.desired) {
    out += "desired shards: " + std::to_string(d.desired->want) + " (spec.shards " +
           std::to_string(d.desired->requested) + ")\n";
    if (!d.desired->clamp_note.empty()) out += "  " + d.desired->clamp_note + "\n";
    if (!d.desired->rounding_note.empty()) out += "  " + d.desired->rounding_note + "\n";
  }
  if (d.policy) {
    out += "whenScaled: " + std::string(toString(d.policy->when_scaled)) + " (from " +
           d.policy->when_scaled_source + ")\n";
    if (d.new_deadline) {
      out +=
          "retention: " +
          (d.policy->period ? formatPrometheusDuration(*d.policy->period) : std::string("never")) +
          " (from " + d.policy->period_source + "), a shard detached now is kept until " +
          d.new_deadline->toAnnotation() + "\n";
    }
  }
  if (!d.operator_retention.empty()) out += "operator retention: " + d.operator_retention + "\n";
  if (!d.resharding.empty()) out += d.resharding + "\n";
  for (const auto& p : d.problems) out += "problem: " + p.describe() + "\n";
  if (!d.abandoned_because.empty()) out += "given up: " + d.abandoned_because + "\n";
  if (plan.actions.empty()) out += "no changes\n";
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    out += std::to_string(i + 1) + ". " + plan.actions[i].summary + "\n";
  }
  if (!d.waiting_for.empty()) out += "waiting for: " + d.waiting_for + "\n";
  return out;
}

}  // namespace shardscaler::planner
