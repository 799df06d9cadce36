#include "shardscaler/controller/api_resources.h"

namespace shardscaler::controller {

k8s::Resource shardSets() { return {"shardscaler.io", "v1alpha1", "shardsets", true}; }
k8s::Resource prometheuses() { return {"monitoring.coreos.com", "v1", "prometheuses", true}; }
k8s::Resource prometheusAgents() {
  return {"monitoring.coreos.com", "v1alpha1", "prometheusagents", true};
}
k8s::Resource targetResource(retention::TargetKind kind) {
  return kind == retention::TargetKind::Prometheus ? prometheuses() : prometheusAgents();
}

}  // namespace shardscaler::controller
