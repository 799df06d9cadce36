#include "shardscaler/scaler/plan_applier.h"

#include <spdlog/spdlog.h>

namespace shardscaler::scaler {

using retention::ActionType;

ApplyOutcome PlanApplier::apply(const retention::Plan& plan, const k8s::Resource& target_resource,
                                const std::string& ns, const InvolvedObject& shard_set) {
  ApplyOutcome outcome;
  for (const retention::Action& action : plan.actions) {
    auto result = applyOne(action, target_resource, ns);
    if (!result) {
      outcome.error = result.error();
      outcome.failed_action = action.summary;
      return outcome;
    }
    spdlog::info("applied shardset={}/{} action=\"{}\"", ns, shard_set.name, action.summary);
    for (const retention::Event& event : action.events) {
      events_.record(shard_set, event.type, event.reason, event.message);
    }
    ++outcome.applied;
  }
  return outcome;
}

k8s::Result<void> PlanApplier::applyOne(const retention::Action& action,
                                        const k8s::Resource& target_resource,
                                        const std::string& ns) {
  switch (action.type) {
    case ActionType::PauseTarget:
    case ActionType::UpdateTarget: {
      auto r = client_.patch(target_resource, ns, action.object_name, k8s::PatchType::Merge,
                             action.merge_patch);
      if (!r) return std::unexpected(r.error());
      return {};
    }
    case ActionType::DetachStatefulSet:
    case ActionType::ReattachStatefulSet: {
      auto r = client_.patch(k8s::resources::statefulSets(), ns, action.object_name,
                             k8s::PatchType::Merge, action.merge_patch);
      if (!r) return std::unexpected(r.error());
      return {};
    }
    case ActionType::DeleteStatefulSet: {
      k8s::DeleteOptions options{.propagation_policy = "Foreground",
                                 .precondition_uid = action.uid};
      if (!action.resource_version.empty()) {
        options.precondition_resource_version = action.resource_version;
      }
      auto r = client_.remove(k8s::resources::statefulSets(), ns, action.object_name, options);
      // Already gone (the operator deleting its excess shards races us): the goal is met.
      if (!r && !r.error().is(k8s::ErrorKind::NotFound)) return std::unexpected(r.error());
      return {};
    }
  }
  return {};
}

}  // namespace shardscaler::scaler
