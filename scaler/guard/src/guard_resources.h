// The built-in API resources the guard reads. Private to guard; the ShardSet and targets are
// api::shardSets() and planner::targetResource().
#pragma once

#include "shardscaler/api/api_resources.h"
#include "shardscaler/k8s_meta/resource.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::guard::detail {

inline k8s::Resource validatingWebhookConfigurations() {
  return {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false};
}
inline k8s::Resource tokenReviews() {
  return {"authentication.k8s.io", "v1", "tokenreviews", false};
}

}  // namespace shardscaler::guard::detail
