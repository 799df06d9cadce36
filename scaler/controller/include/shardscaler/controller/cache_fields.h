// What the controller's informer caches keep of each object: what maps a watch event to its
// ShardSets, what tells a change worth a reconcile from one that is not, and what a plan from the
// caches reads (docs/design/reads.md). Nothing else: every field kept is held for every cached
// object, 10,000 StatefulSets and more. Pure values; no I/O.
#pragma once

#include <memory>

#include "shardscaler/k8s_client/field_mask.h"

namespace shardscaler::controller {

std::shared_ptr<const k8s::FieldMask> shardSetCacheFields();
std::shared_ptr<const k8s::FieldMask> targetCacheFields();
std::shared_ptr<const k8s::FieldMask> statefulSetCacheFields();

}  // namespace shardscaler::controller
