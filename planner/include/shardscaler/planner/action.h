// One write the controller performs to carry out a plan: which object, which preconditions, and
// the exact JSON merge patch. Values only; applying them is the controller's job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/reasons.h"

namespace shardscaler::planner {

enum class ActionType {
  // Target (Prometheus/PrometheusAgent), merge patch:
  ClaimTarget,   // annotation shardscaler.io/claimed-by=<ShardSet> (resourceVersion precondition)
  PauseTarget,   // spec.paused=true + annotations shardscaler.io/paused-by, paused-at
  UpdateTarget,  // spec.shards and/or unpause (paused=false, paused-by removed), release the claim
  // StatefulSet, merge patch:
  LabelStatefulSet,     // add (or, on release, remove) the guard label shardscaler.io/shardset
  DetachStatefulSet,    // hide from the operator, mark retained, set the deletion deadline
  ReattachStatefulSet,  // restore the operator's labels, drop the retention marks
  MarkDrainState,       // a due shard's drain: annotate draining-since or drained-at
  OrphanStatefulSet,    // release: drop the ShardSet's ownerReference from a retained shard
  AdoptStatefulSet,     // a retained shard the target still owns: its controller reference
                        // moves to the ShardSet (shards detached before the detach moved it)
  // StatefulSet, DELETE with propagationPolicy=Foreground:
  DeleteStatefulSet,
};
std::string_view toString(ActionType type);

struct Action {
  ActionType type = ActionType::UpdateTarget;
  std::string object_name;             // metadata.name (target or StatefulSet), same namespace
  std::optional<int32_t> shard_index;  // StatefulSet actions
  // Preconditions. uid is always set. Patches carry them inside the body too (metadata.uid,
  // and metadata.resourceVersion when set), so the API server rejects a stale write with
  // 409 Conflict; DeleteStatefulSet must send both as DeleteOptions.preconditions.
  std::string uid;
  std::string resource_version;  // "" = no resourceVersion precondition
  // application/merge-patch+json body; null for DeleteStatefulSet.
  nlohmann::json merge_patch;
  std::optional<DeletionDeadline> deadline;  // DetachStatefulSet: what it writes;
                                             // DeleteStatefulSet: the deadline that passed
  std::string summary;                       // one line for logs and `shardscaler plan`
  std::vector<Event> events;                 // publish only after this action succeeded

  bool isTargetAction() const {
    return type == ActionType::ClaimTarget || type == ActionType::PauseTarget ||
           type == ActionType::UpdateTarget;
  }
};

}  // namespace shardscaler::planner
