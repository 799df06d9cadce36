// The API resources the guard reads. Private to guard; controller/api_resources.h names the same
// ones for the controller (the guard may not depend on the application).
#pragma once

#include "shardscaler/api/shard_set.h"
#include "shardscaler/k8s_client/resource.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::guard::detail {

inline k8s::Resource shardSets() {
  return {std::string(api::kGroup), std::string(api::kVersion), std::string(api::kShardSetPlural),
          true};
}
inline k8s::Resource targetResource(planner::TargetKind kind) {
  return kind == planner::TargetKind::Prometheus
             ? k8s::Resource{"monitoring.coreos.com", "v1", "prometheuses", true}
             : k8s::Resource{"monitoring.coreos.com", "v1alpha1", "prometheusagents", true};
}
inline k8s::Resource validatingWebhookConfigurations() {
  return {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false};
}
inline k8s::Resource tokenReviews() {
  return {"authentication.k8s.io", "v1", "tokenreviews", false};
}

}  // namespace shardscaler::guard::detail
