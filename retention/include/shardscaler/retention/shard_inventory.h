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
#include "shardscaler/retention/deadline.h"
#include "shardscaler/retention/stateful_set.h"
#include "shardscaler/retention/target.h"

namespace shardscaler::retention {

struct ShardStatefulSet {
  int32_t index = 0;
  const ObservedStatefulSet* object = nullptr;  // points into the observed list
  // Attached only: it still carries this ShardSet's retention labels/annotations (an earlier
  // detach the operator undid, or a re-attach cut short).
  bool carries_retention_marks = false;
  // It carries shardscaler.io/shardset=<this ShardSet>, the admission guard's selector.
  bool guard_labelled = false;
  // The deletion-timestamp annotation, when present and valid.
  std::optional<DeletionDeadline> deadline;
  // Retained only: why `deadline` is empty ("missing", or the parse error).
  std::string deadline_problem;
  // Retained only: the detached-at annotation (nullopt: absent, e.g. detached by an older
  // shardscaler, which counts as long ago).
  std::optional<std::chrono::system_clock::time_point> detached_at;
};

struct ShardInventory {
  std::vector<ShardStatefulSet> attached;  // the operator's: by index, ascending
  std::vector<ShardStatefulSet> retained;  // detached by this ShardSet: by index, ascending
  std::vector<const ObservedStatefulSet*> ignored;  // not provably ours: never touched
};

// A StatefulSet counts as the target's shard i only when all hold: its
// operator.prometheus.io/shard label is i; its name is the operator's name for shard i of the
// target; an ownerReference has the target's uid and kind; operator.prometheus.io/mode, if set,
// is the target's mode. It is then attached if operator.prometheus.io/name is the target's
// name, retained if that label is absent and it has shardscaler.io/retained=true and
// shardscaler.io/shardset=<this ShardSet>, and ignored otherwise.
ShardInventory takeInventory(const api::ShardSet& shard_set, const Target& target,
                             std::span<const ObservedStatefulSet> observed);

}  // namespace shardscaler::retention
