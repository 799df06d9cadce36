// Sorts observed StatefulSets into the target's attached shards, this ShardSet's retained shards,
// and everything else. Strict on purpose: what it cannot prove is ours is never touched.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/stateful_set.h"
#include "shardscaler/planner/target.h"

namespace shardscaler::planner {

struct ShardStatefulSet {
  int32_t index = 0;
  const ObservedStatefulSet* object = nullptr;  // points into the observed list
  // Attached only: it still carries this ShardSet's retention labels/annotations (an earlier
  // detach the operator undid, or a re-attach cut short).
  bool carries_retention_marks = false;
  // It carries shardscaler.io/shardset=<this ShardSet>, the admission guard's selector.
  bool guard_labelled = false;
  // Retained only: its controller ownerReference is this ShardSet (a detach moved it there, so
  // that deleting or replacing the target does not delete it); false: still the target's.
  bool owned_by_shard_set = false;
  // shardscaler's deadline (shardscaler.io/deletion-deadline, else the older
  // operator.prometheus.io/deletion-timestamp), when present and valid.
  std::optional<DeletionDeadline> deadline;
  // The operator's own retention deadline (operator.prometheus.io/deletion-deadline), when
  // present; `operator_deadline_unreadable` when present but not a deadline. A shard is never
  // deleted while it is ahead (or unreadable), unless shardscaler holds the target's retention
  // policy (Target::retention_held): then the operator kept it for shardscaler.
  std::optional<DeletionDeadline> operator_deadline;
  bool operator_deadline_unreadable = false;
  // `operator_deadline` is the copy a detach of shardscaler's wrote (the same deadline as
  // shardscaler.io/deletion-deadline or operator.prometheus.io/deletion-timestamp beside it), not
  // one the operator's own retention set.
  bool operator_deadline_copied = false;
  // Retained only: why `deadline` is empty ("missing", or the parse error).
  std::string deadline_problem;
  // Retained only: the detached-at annotation (nullopt: absent, e.g. detached by an older
  // shardscaler, which counts as long ago).
  std::optional<std::chrono::system_clock::time_point> detached_at;
  // Retained only: the drain's marks (docs/design/drain.md), when present and readable.
  std::optional<std::chrono::system_clock::time_point> draining_since;
  std::optional<std::chrono::system_clock::time_point> drained_at;

  // The operator's retention (if any) lets it go at `now`.
  bool operatorLetsGo(std::chrono::system_clock::time_point now) const {
    return !operator_deadline_unreadable &&
           (!operator_deadline || operator_deadline->expiredAt(now));
  }
  // The deadline the operator's own retention set, which a detach keeps: an unreadable one is
  // never, as the operator reads it; nullopt when there is none, or only shardscaler's copy.
  std::optional<DeletionDeadline> operatorsOwnDeadline() const {
    if (operator_deadline_unreadable) return DeletionDeadline::never();
    if (operator_deadline_copied) return std::nullopt;
    return operator_deadline;
  }
};

struct ShardInventory {
  std::vector<ShardStatefulSet> attached;  // the operator's: by index, ascending
  std::vector<ShardStatefulSet> retained;  // detached by this ShardSet: by index, ascending
  std::vector<const ObservedStatefulSet*> ignored;  // not provably ours: never touched
};

// A StatefulSet counts as the target's shard i only when all hold: its
// operator.prometheus.io/shard label is i; its name is the operator's name for shard i of the
// target; an ownerReference has the target's uid and kind, or this ShardSet's (a retained shard
// outlives the target it was detached from, docs/design/operator.md); operator.prometheus.io/mode,
// if set, is the target's mode. It is then attached if operator.prometheus.io/name is the target's
// name, retained if that label is absent and it has shardscaler.io/retained=true and
// shardscaler.io/shardset=<this ShardSet>, and ignored otherwise.
ShardInventory takeInventory(const api::ShardSet& shard_set, const Target& target,
                             std::span<const ObservedStatefulSet> observed);

}  // namespace shardscaler::planner
