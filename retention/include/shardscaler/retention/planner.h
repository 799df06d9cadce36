// The retention planner: from a ShardSet, its target, the observed StatefulSets and `now`, the
// ordered writes that move toward the desired shard count (DESIGN.md §3), plus the status and
// Events to publish. Pure and level-triggered: no I/O, no clock, same input => same plan.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/retention/action.h"
#include "shardscaler/retention/condition.h"
#include "shardscaler/retention/desired_shards.h"
#include "shardscaler/retention/field_error.h"
#include "shardscaler/retention/policy.h"
#include "shardscaler/retention/shard_set.h"
#include "shardscaler/retention/stateful_set.h"
#include "shardscaler/retention/status.h"
#include "shardscaler/retention/target.h"

namespace shardscaler::retention {

struct PlanInput {
  ShardSet shard_set;
  std::optional<Target> target;  // nullopt: GET returned 404
  // Every StatefulSet that might be the target's: list the namespace with
  // operator.prometheus.io/name=<target> and with shardscaler.io/shardset=<ShardSet> (or list
  // it all); the planner ignores what it cannot prove is the target's.
  std::vector<ObservedStatefulSet> stateful_sets;
  std::chrono::system_clock::time_point now;
};

enum class PlanMode {
  Converge,        // spec valid, target found: move toward `want`, expire retained shards
  InvalidSpec,     // only restoring writes (see planShardSet)
  TargetNotFound,  // no writes
  TargetDeleting,  // target has a deletionTimestamp: no writes
};
std::string_view toString(PlanMode mode);

// What the planner concluded, for logs and `shardscaler plan`.
struct Decision {
  PlanMode mode = PlanMode::Converge;
  std::optional<DesiredShards> desired;   // set when the shard fields are valid
  std::optional<int32_t> current_shards;  // target spec.shards as the operator reads it
  std::optional<RetentionPolicy> policy;
  // Deadline a shard detached now would get (Retain only).
  std::optional<DeletionDeadline> new_deadline;
  bool target_paused_by_us = false;
  bool target_paused_by_others = false;
  std::vector<FieldError> problems;  // InvalidSpec reasons
};

struct Plan {
  // Apply in order, stopping at the first failure (then re-read and re-plan; 409 Conflict is
  // the expected outcome of a stale precondition). Order: PauseTarget, DetachStatefulSet...,
  // ReattachStatefulSet... (lowest index first), UpdateTarget, DeleteStatefulSet....
  std::vector<Action> actions;
  ShardSetStatus status;  // from what was observed, not from what the actions will do
  // Events not tied to an action (transitions of Degraded): publish with the status.
  std::vector<Event> events;
  // Reconcile again after this long (the next retention deadline); nullopt = only on change.
  std::optional<std::chrono::seconds> requeue_after;
  Decision decision;
};

// DESIGN.md §3, level-triggered: any interrupted sequence is finished by the next plan.
// Never deleted, whatever the input: a StatefulSet with index < the target's spec.shards or
// < want; a retained one before its deadline, or with a missing/garbage deadline, or with
// index < want (it is re-attached instead); anything takeInventory() does not attribute to
// the target. InvalidSpec: the only writes are re-attaching retained shards below the
// target's current shards and resuming a target this ShardSet paused (kept paused, and said
// so, while an attached StatefulSet at index >= spec.shards exists, since the operator would
// delete it). Nothing is written while the target is missing or being deleted.
Plan planShardSet(const PlanInput& input);

// Multi-line human-readable account: the decision and each action's summary.
std::string describe(const Plan& plan);

}  // namespace shardscaler::retention
