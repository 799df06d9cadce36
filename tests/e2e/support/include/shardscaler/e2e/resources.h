// The custom resources e2e tests and benchmarks read and write, named once. Names only: the tests
// treat shardscaler as a black box and never link its application code for these.
#pragma once

#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::e2e {

inline const k8s::Resource kShardSets{"shardscaler.io", "v1alpha1", "shardsets", true};
inline const k8s::Resource kPrometheuses{"monitoring.coreos.com", "v1", "prometheuses", true};

}  // namespace shardscaler::e2e
