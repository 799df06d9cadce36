// The planner: from a ShardSet, its target, the observed StatefulSets and `now`, the
// ordered writes that move toward the desired shard count (docs/design.md), plus the status and
// Events to publish. Pure and level-triggered: no I/O, no clock, same input => same plan.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "shardscaler/api/field_error.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/api/shard_set_status.h"
#include "shardscaler/planner/action.h"
#include "shardscaler/planner/desired_shards.h"
#include "shardscaler/planner/policy.h"
#include "shardscaler/planner/reasons.h"
#include "shardscaler/planner/stateful_set.h"
#include "shardscaler/planner/target.h"
#include "shardscaler/resharding/scrape_objects.h"

namespace shardscaler::planner {

// How a transition stays safe when the operator's caches lag (docs/design.md, "Transitions under
// a lagging operator").
struct TransitionSafety {
  // The admission guard is enforced (its webhook configuration is installed with
  // failurePolicy Fail): the API server refuses the operator's writes that would lose a shard, so
  // a transition need not wait for the operator.
  bool guard_enforced = false;
  // Without the guard: the operator must have acknowledged the pause before anything is detached
  // or re-attached; this long after the pause (re-attach) or the last detach (lowering
  // spec.shards), every operator sync that could still act on an older view is assumed over.
  std::chrono::nanoseconds settle_time = std::chrono::seconds(10);
  // Without the guard: a pause the operator does not acknowledge within this time is undone
  // (nothing was detached yet) and not tried again for as long.
  std::chrono::nanoseconds pause_ack_timeout = std::chrono::seconds(30);
  // Under a drain: how long after a shard left the count its deletion may go ahead without having
  // seen every surviving shard reload its configuration. The kubelet projects a changed Secret
  // into a pod within its sync period plus its cache's (a minute each by default), and the config
  // reloader reloads Prometheus within seconds of that.
  std::chrono::nanoseconds reload_floor = std::chrono::minutes(3);
};

// After `unacknowledged` pauses in a row went unacknowledged, how long no new pause starts:
// the acknowledgement timeout, doubled for each pause after the first, at most kMaxPauseHold
// (or the timeout itself, when that is longer).
inline constexpr std::chrono::minutes kMaxPauseHold{10};
std::chrono::nanoseconds pauseHold(std::chrono::nanoseconds ack_timeout, int32_t unacknowledged);

enum class PlanPurpose {
  Converge,  // manage the target: move toward `want`, expire retained shards
  // Let go of the target (the ShardSet is being deleted, or its targetRef moved elsewhere):
  // undo an interrupted transition with the target's own shard count, resume it, drop the claim
  // and the guard labels of active shards. Retained shards stay as they are. Never scales.
  Release,
};

// What a drain check found for one due shard (the controller asks Prometheus, the planner
// decides). Absence of evidence is not drained: a failed query, a pod not scraped, a result that
// is not a vector or holds NaN, Inf or one pod twice all read as not drained, with the reason.
struct DrainReading {
  bool drained = false;
  std::optional<double> lag_seconds;  // the largest remote-write lag of its pods, when measured
  std::string reason;                 // why not drained: names the pod and the failing condition
  // Prometheus refused the drain condition as PromQL (bad_data): `reason` has its error. The spec
  // is invalid until it is fixed.
  bool invalid_condition = false;
  // Nothing could be read of the shard (a query or the StatefulSet's read failed, an answer that
  // is not a vector or not one finite value a pod, a URL the allow-list refuses): not drained,
  // and no evidence that it is undrained either, so it neither starts the drain's timeout nor
  // ends it.
  bool failed = false;
  // The earliest last successful configuration reload among the surviving shards' pods (those
  // below the count, which scrape a due shard's targets once they reloaded); nullopt when one of
  // them was not read.
  std::optional<std::chrono::system_clock::time_point> survivors_reloaded_at;
};

struct PlanInput {
  api::ShardSet shard_set;
  std::optional<Target> target;  // nullopt: GET returned 404
  // Every StatefulSet that might be the target's: list the namespace with
  // operator.prometheus.io/name=<target> and with shardscaler.io/shardset=<ShardSet> (or list
  // it all); the planner ignores what it cannot prove is the target's.
  std::vector<ObservedStatefulSet> stateful_sets;
  std::chrono::system_clock::time_point now;

  PlanPurpose purpose = PlanPurpose::Converge;
  TransitionSafety safety;
  // Other writers of the target's spec.shards/spec.paused: its field managers other than
  // shardscaler and the operator (from a live read's managedFields; the caches drop them), and
  // the HorizontalPodAutoscalers whose scaleTargetRef is the target itself. Reported in the
  // OtherWriters condition; never acted on.
  std::vector<SpecWriter> target_writers;
  std::vector<std::string> target_hpas;
  // A write was refused for good a short while ago: start no transition, only undo one.
  bool hold_transitions = false;
  // When the target is claimed by another ShardSet: whether that ShardSet exists (a claim left
  // by a ShardSet that is gone is taken over). nullopt: not looked up (counts as existing).
  std::optional<bool> claim_holder_exists;
  // StatefulSets whose re-attach the API server refused for good while transitions are held (no
  // update on the target's finalizers, say): an undo resumes the target without re-attaching them
  // rather than keep it paused; they stay retained.
  std::set<std::string, std::less<>> reattach_refused;
  // The drain checks of due shards, by StatefulSet name (Decision::drain_checks asks for them).
  std::map<std::string, DrainReading, std::less<>> drain_readings;
  // The ServiceMonitors, PodMonitors, Probes and ScrapeConfigs the target selects, read live
  // when spec.resharding is LowChurn or the target carries shardscaler's scrape-class rules;
  // nullopt when not read (scrape_objects_error says why a read failed).
  std::optional<std::vector<resharding::ScrapeObject>> scrape_objects;
  std::string scrape_objects_error;
};

enum class PlanMode {
  Converge,        // spec valid, target found: move toward `want`, expire retained shards
  InvalidSpec,     // only restoring writes (see planShardSet)
  TargetNotFound,  // no writes
  TargetDeleting,  // target has a deletionTimestamp: no writes
  TargetClaimed,   // another ShardSet manages the target: no writes
  Release,         // PlanPurpose::Release: only restoring writes
};
std::string_view toString(PlanMode mode);

// What the planner concluded, for logs and `shardscaler plan`.
struct Decision {
  PlanMode mode = PlanMode::Converge;
  std::optional<DesiredShards> desired;   // set when the shard fields are valid
  std::optional<int32_t> current_shards;  // target spec.shards as the operator reads it
  std::optional<RetentionPolicy> policy;
  // Deadline a shard detached now would get (Retain, or Delete with a drain: now).
  std::optional<DeletionDeadline> new_deadline;
  std::optional<DrainPolicy> drain;  // when the drain fields are valid
  // Due shards whose drain must be read before the plan can decide (none in drain_readings):
  // the caller reads them and plans again with the readings.
  struct DrainCheck {
    std::string stateful_set;
    int32_t index = 0;
    // Its shardscaler.io/detached-at (nullopt: absent or unreadable).
    std::optional<std::chrono::system_clock::time_point> detached_at;
    // The remote-write queues its configuration has: the target's spec.remoteWrite.
    int32_t remote_writes = 0;
  };
  std::vector<DrainCheck> drain_checks;
  // With drain checks: the target's attached shards below its count, read for their reload.
  struct DrainSurvivor {
    std::string stateful_set;
    int32_t replicas = 1;  // the target's spec.replicas, as the operator gives each shard
  };
  std::vector<DrainSurvivor> drain_survivors;
  // Due shards kept because their data is not shipped yet ("<shard>: <reason>"): the transition
  // is over, the drain is not (Progressing, reason Draining).
  std::vector<std::string> draining;
  // Those still not drained past the drain's timeout, kept under onTimeout Keep: Degraded.
  std::vector<std::string> drain_timed_out;
  bool target_paused_by_us = false;
  // When this ShardSet paused the target (its paused-at annotation), while it holds the pause.
  std::optional<std::chrono::system_clock::time_point> paused_by_us_since;
  bool target_paused_by_others = false;
  std::string claimed_by;  // the target's claim ("" = unclaimed)
  // Whether the operator's own retention keeps what a foreign lowering of spec.shards removes
  // (operator_retention.h), for `shardscaler plan`; "" without a target.
  std::string operator_retention;
  // Why the transition waits instead of writing ("" = it does not): the operator has not
  // acknowledged the pause yet, or the settle time has not passed.
  std::string waiting_for;
  // The transition was given up: the pause was not acknowledged in time, or a write was refused
  // for good; what was undone is in the actions.
  std::string abandoned_because;
  // Pauses in a row the operator did not acknowledge (status.unacknowledgedPauses): carried over,
  // one more when this plan gives one up, 0 once one is acknowledged or the guard is enforced.
  int32_t unacknowledged_pauses = 0;
  std::vector<api::FieldError> problems;  // InvalidSpec reasons
  // spec.resharding on the target: what the plan does with the scrape classes, in a line.
  std::string resharding;
  // The plan was made without the scrape objects, and they would decide what to write (enable
  // low-churn rules, replace unreadable ones): a plan from the caches is not at rest.
  bool resharding_needs_objects = false;
};

struct Plan {
  // Apply in order, stopping at the first failure (then re-read and re-plan; 409 Conflict is
  // the expected outcome of a stale precondition). Order: ClaimTarget (alone), LabelStatefulSet...,
  // PauseTarget, DetachStatefulSet..., ReattachStatefulSet... (lowest index first), UpdateTarget,
  // DeleteStatefulSet....
  std::vector<Action> actions;
  api::ShardSetStatus status;  // from what was observed, not from what the actions will do
  // Events not tied to an action (transitions of Degraded): publish with the status.
  std::vector<Event> events;
  // Reconcile again after this long (the next retention deadline, the end of a settle time, the
  // next look at the operator's acknowledgement); nullopt = only on change.
  std::optional<std::chrono::nanoseconds> requeue_after;
  Decision decision;
};

// docs/design.md, level-triggered: any interrupted sequence is finished by the next plan.
// Never deleted, whatever the input: a StatefulSet with index < the target's spec.shards or
// < want; a retained one before its deadline, or with a missing/garbage deadline, or with
// index < want (it is re-attached instead); anything takeInventory() does not attribute to
// the target. InvalidSpec: the only writes are re-attaching retained shards below the
// target's current shards and resuming a target this ShardSet paused (kept paused, and said
// so, while an attached StatefulSet at index >= spec.shards exists, since the operator would
// delete it). Nothing is written while the target is missing or being deleted, or claimed by
// another ShardSet. spec.shards is lowered only from an observation in which every excess shard
// is already detached (and, without the guard, has been for the settle time).
Plan planShardSet(const PlanInput& input);

// Multi-line human-readable account: the decision and each action's summary.
std::string describe(const Plan& plan);

// The RetainedShardsOrphaned Event's message: `shard_set` let go of its target, and the retained
// StatefulSets `names` (comma-separated) stay with no one to delete them.
std::string orphanedShardsMessage(const api::ShardSet& shard_set, const std::string& names);

}  // namespace shardscaler::planner
