#include "shardscaler/controller/api_resources.h"

#include "shardscaler/api/shard_set.h"

namespace shardscaler::controller {

k8s::Resource shardSets() {
  return {std::string(api::kGroup), std::string(api::kVersion), std::string(api::kShardSetPlural),
          true};
}
k8s::Resource prometheuses() { return {"monitoring.coreos.com", "v1", "prometheuses", true}; }
k8s::Resource prometheusAgents() {
  return {"monitoring.coreos.com", "v1alpha1", "prometheusagents", true};
}
k8s::Resource targetResource(planner::TargetKind kind) {
  return kind == planner::TargetKind::Prometheus ? prometheuses() : prometheusAgents();
}

}  // namespace shardscaler::controller
