// The built-in API resources the external metrics API reads and writes. Private to metrics_api;
// the ShardSet is api::shardSets().
#pragma once

#include "shardscaler/api/api_resources.h"
#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::metrics_api::detail {

inline k8s::Resource configMaps() { return {"", "v1", "configmaps", true}; }
inline k8s::Resource subjectAccessReviews() {
  return {"authorization.k8s.io", "v1", "subjectaccessreviews", false};
}
inline k8s::Resource apiServices() {
  return {"apiregistration.k8s.io", "v1", "apiservices", false};
}

}  // namespace shardscaler::metrics_api::detail
