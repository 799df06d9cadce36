// The API resources the external metrics API reads and writes. Private to metrics_api;
// controller/api_resources.h names the ShardSet for the controller (metrics_api may not depend on
// the application).
#pragma once

#include "shardscaler/api/shard_set.h"
#include "shardscaler/k8s_client/resource.h"

namespace shardscaler::metrics_api::detail {

inline k8s::Resource shardSets() {
  return {std::string(api::kGroup), std::string(api::kVersion), std::string(api::kShardSetPlural),
          true};
}
inline k8s::Resource configMaps() { return {"", "v1", "configmaps", true}; }
inline k8s::Resource subjectAccessReviews() {
  return {"authorization.k8s.io", "v1", "subjectaccessreviews", false};
}
inline k8s::Resource apiServices() {
  return {"apiregistration.k8s.io", "v1", "apiservices", false};
}

}  // namespace shardscaler::metrics_api::detail
