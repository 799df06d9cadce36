// While a ShardSet claims a Prometheus, the target's own spec.shardRetentionPolicy retains, so
// that an operator with native shard retention (v0.92+) keeps the shards a foreign lowering of
// spec.shards removes, until shardscaler writes its count back (docs/design.md §16). The target's
// own policy is saved beside it and given back with the claim. Pure: it builds patch parts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/planner/target.h"

namespace shardscaler::planner {

// The policy a claimed Prometheus is held at: Retain with no deadline ("0"), so that the operator
// deletes none of the shards it keeps; shardscaler decides each one's fate by the ShardSet's
// policy (a shard the operator keeps is not retained for the operator's sake).
const nlohmann::json& heldShardRetentionPolicy();

// The target is to be held: a Prometheus whose spec.shardRetentionPolicy does not retain, with
// no policy saved yet. Written once per claim: a spec that loses it again (a CRD without the
// field prunes it, or another writer removes it) is not fought over.
bool needsRetentionHold(const Target& target);

// Adds the hold to a patch of `target` (the claim, or a pause): spec.shardRetentionPolicy and
// its own policy in api::kSavedShardRetentionPolicyAnnotation.
void addRetentionHold(nlohmann::json& patch, const Target& target);

// Adds the hold's end to the patch that releases the claim: the target's own policy back, when
// the spec still holds shardscaler's (a policy someone wrote since stays), and the saved one
// dropped. Nothing when no policy is saved.
void addRetentionRelease(nlohmann::json& patch, const Target& target);

// One line on the hold for `shardscaler plan` and the logs.
std::string describeRetentionHold(const Target& target);

}  // namespace shardscaler::planner
