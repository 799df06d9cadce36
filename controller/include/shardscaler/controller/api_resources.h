// The API resources shardscaler reads and writes, and the mapping from a ShardSet's
// targetRef kind to the operator's resource. Names only: nothing here talks to a server.
#pragma once

#include "shardscaler/k8s_client/resource.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::controller {

k8s::Resource shardSets();         // shardscaler.io/v1alpha1 shardsets
k8s::Resource prometheuses();      // monitoring.coreos.com/v1 prometheuses
k8s::Resource prometheusAgents();  // monitoring.coreos.com/v1alpha1 prometheusagents
k8s::Resource targetResource(planner::TargetKind kind);

}  // namespace shardscaler::controller
