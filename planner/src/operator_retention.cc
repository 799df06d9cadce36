#include "shardscaler/planner/operator_retention.h"

#include "shardscaler/api/well_known.h"

namespace shardscaler::planner {
namespace {

using Json = nlohmann::json;

// The merge patch that turns `from` into `to` (RFC 7386 merges objects: a member `to` lacks is
// set to null, so that nothing of `from` survives beside `to`).
Json replacing(const Json& from, const Json& to) {
  if (!from.is_object() || !to.is_object()) return to;
  Json patch = Json::object();
  for (const auto& [key, value] : from.items()) {
    if (!to.contains(key)) patch[key] = nullptr;
  }
  for (const auto& [key, value] : to.items()) {
    patch[key] = from.contains(key) ? replacing(from[key], value) : value;
  }
  return patch;
}

}  // namespace

const Json& heldShardRetentionPolicy() {
  static const Json policy = {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", "0"}}}};
  return policy;
}

bool needsRetentionHold(const Target& target) {
  return target.kind == TargetKind::Prometheus && !target.spec_retains &&
         target.annotation(api::kSavedShardRetentionPolicyAnnotation) == nullptr;
}

void addRetentionHold(Json& patch, const Target& target) {
  const Json& own = target.spec_shard_retention_policy;
  patch["metadata"]["annotations"][std::string(api::kSavedShardRetentionPolicyAnnotation)] =
      own.dump();
  patch["spec"]["shardRetentionPolicy"] = replacing(own, heldShardRetentionPolicy());
}

void addRetentionRelease(Json& patch, const Target& target) {
  if (target.annotation(api::kSavedShardRetentionPolicyAnnotation) == nullptr) return;
  patch["metadata"]["annotations"][std::string(api::kSavedShardRetentionPolicyAnnotation)] =
      nullptr;
  if (target.retention_held && target.saved_shard_retention_policy) {
    patch["spec"]["shardRetentionPolicy"] =
        replacing(heldShardRetentionPolicy(), *target.saved_shard_retention_policy);
  }
}

std::string describeRetentionHold(const Target& target) {
  if (target.kind != TargetKind::Prometheus) {
    return "none: a PrometheusAgent has no shard retention of its own";
  }
  if (target.retention_held) {
    return "held: spec.shardRetentionPolicy retains (Retain, no deadline) while claimed; the "
           "target's own is " +
           target.saved_shard_retention_policy->dump();
  }
  if (target.spec_retains) return "the target's own spec.shardRetentionPolicy retains";
  if (target.annotation(api::kSavedShardRetentionPolicyAnnotation) != nullptr) {
    return "lost: shardscaler set spec.shardRetentionPolicy to retain, and it no longer does (an "
           "operator CRD without the field prunes it, or another writer changed it)";
  }
  return "not held yet: written with the next claim or pause";
}

}  // namespace shardscaler::planner
