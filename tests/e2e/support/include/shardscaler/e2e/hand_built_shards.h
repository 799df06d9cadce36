// A target, its ShardSet and shard StatefulSets built by hand in a namespace no controller
// watches, labelled as shardscaler and the operator label them, so that nothing but the shard
// guard acts there. For the guard's end-to-end tests; it asserts nothing.
#pragma once

#include <string>

#include "shardscaler/e2e/cluster.h"

namespace shardscaler::e2e {

// "prometheus-main" for shard 0, "prometheus-main-shard-<i>" after.
std::string handBuiltShardName(int index);
// Prometheus main with `shards` and ShardSet main asking for as many (whenScaled Retain, 1h).
void buildTargetByHand(const std::string& ns, int shards);
// Shard `index` of Prometheus main as the operator makes it, labelled for ShardSet main.
Json handBuiltShard(const std::string& ns, int index);
// Creates it as the admin; throws std::runtime_error when the API server refuses.
void createActiveShard(const std::string& ns, int index);
// Detached as shardscaler detaches: no operator.prometheus.io/name, retained, the deadline.
void createRetainedShard(const std::string& ns, int index, const std::string& deadline);
// The StatefulSet exists and no deletion has started.
bool intact(const std::string& ns, const std::string& name);

}  // namespace shardscaler::e2e
