#include "fixtures.h"

#include <stdexcept>

namespace shardscaler::planner::testing {

PlanInput World::input() const {
  PlanInput in;
  auto ss = api::decodeShardSet(shard_set);
  if (!ss) throw std::runtime_error("fixture ShardSet: " + ss.error().describe());
  in.shard_set = *ss;
  auto& drain = in.shard_set.spec.shard_retention_policy.drain;
  if (!drain_by_default && !drain) drain = api::DrainSpec{.enabled = false};
  if (target) {
    auto kind = parseTargetKind((*target)["kind"].get<std::string>());
    auto t = parseTarget(*target, kind.value());
    if (!t) throw std::runtime_error("fixture target: " + t.error().describe());
    in.target = *t;
  }
  for (const auto& j : stateful_sets) {
    auto s = parseStatefulSet(j);
    if (!s) throw std::runtime_error("fixture StatefulSet: " + s.error().describe());
    in.stateful_sets.push_back(*s);
  }
  in.now = now;
  in.safety = safety();
  in.purpose = purpose;
  in.hold_transitions = hold;
  in.reattach_refused = reattach_refused;
  in.claim_holder_exists = claim_holder_exists;
  in.drain_readings = drain_readings;
  in.scrape_objects = scrape_objects;
  return in;
}

std::string step(const Action& a) {
  const std::string index = a.shard_index ? " " + std::to_string(*a.shard_index) : "";
  switch (a.type) {
    case ActionType::ClaimTarget:
      return "claim";
    case ActionType::LabelStatefulSet:
      return (a.merge_patch["metadata"]["labels"]["shardscaler.io/shardset"].is_null() ? "unlabel"
                                                                                       : "label") +
             index;
    case ActionType::PauseTarget:
      return "pause";
    case ActionType::DetachStatefulSet:
      return "detach" + index;
    case ActionType::ReattachStatefulSet:
      return "reattach" + index;
    case ActionType::MarkDrainState: {
      const Json& annotations = a.merge_patch["metadata"]["annotations"];
      return (annotations.contains("shardscaler.io/drained-at") ? "drained" : "draining") + index;
    }
    case ActionType::DeleteStatefulSet:
      return "delete" + index;
    case ActionType::OrphanStatefulSet:
      return "orphan" + index;
    case ActionType::AdoptStatefulSet:
      return "adopt" + index;
    case ActionType::UpdateTarget: {
      std::string s = "update";
      const Json& p = a.merge_patch;
      if (p.contains("spec") && p["spec"].contains("shards")) {
        s += " shards=" + std::to_string(p["spec"]["shards"].get<int>());
      }
      if (p.contains("spec") && p["spec"].contains("paused")) s += " unpause";
      const Json annotations = p["metadata"].value("annotations", Json::object());
      if (!p.contains("spec") && annotations.contains("shardscaler.io/paused-by")) {
        s += " clear-paused-by";
      }
      if (annotations.contains("shardscaler.io/claimed-by")) s += " release-claim";
      // A shard-count change with no resourceVersion precondition (guarded, after a pause).
      if (p.contains("spec") && p["spec"].contains("shards") && a.resource_version.empty()) {
        s += " any-rv";
      }
      return s;
    }
  }
  return "?";
}

std::vector<std::string> steps(const Plan& plan) {
  std::vector<std::string> out;
  out.reserve(plan.actions.size());
  for (const auto& a : plan.actions) out.push_back(step(a));
  return out;
}

const Action& only(const Plan& plan, ActionType type, int index) {
  for (const auto& a : plan.actions) {
    if (a.type == type && (index < 0 || a.shard_index == index)) return a;
  }
  throw std::runtime_error("no such action in plan:\n" + describe(plan));
}

const Condition& condition(const Plan& plan, std::string_view type) {
  const Condition* c = k8s::findStatusCondition(plan.status.conditions, type);
  if (c == nullptr) throw std::runtime_error("no condition " + std::string(type));
  return *c;
}

std::string rfc3339(system_clock::time_point t) {
  return k8s::formatRfc3339(Timestamp::fromTimePoint(t));
}

}  // namespace shardscaler::planner::testing
