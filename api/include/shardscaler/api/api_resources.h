// The ShardSet's REST resource, defined once for every component that reads or writes one. A name
// only: nothing here talks to a server.
#pragma once

#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::api {

k8s::Resource shardSets();  // shardscaler.io/v1alpha1 shardsets

}  // namespace shardscaler::api
