// A shard StatefulSet of a target as JSON: attached (as the operator creates it), or retained (as
// shardscaler detaches it, with its deadline). Test-only: no I/O; metadata and labels only, the
// pod template is the caller's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/planner/naming.h"
#include "shardscaler/test_objects/names.h"

namespace shardscaler::test_objects {

struct ShardShape {
  planner::TargetKind kind = planner::TargetKind::Prometheus;
  std::string ns{kNamespace};
  std::string target_name{kTargetName};
  // The controller owner reference to the target; nullopt: none.
  std::optional<std::string> target_uid{kTargetUid};
  std::string shard_set{kShardSetName};
  // The shardscaler.io/shardset label on an attached shard (a retained one always has it).
  bool guard_label = true;
  // app.kubernetes.io/managed-by: prometheus-operator.
  bool managed_by_operator = true;
  // metadata.uid <uid_prefix><index> ("": none), resourceVersion <base + index> (nullopt: none).
  std::string uid_prefix = "sts-uid-";
  std::optional<int64_t> resource_version_base = 500;
  int64_t replicas = 2;
};

nlohmann::json attachedShard(int32_t index, const ShardShape& shape = {});
// Shards [from, to), attached.
std::vector<nlohmann::json> attachedShards(int32_t from, int32_t to, const ShardShape& shape = {});
// Detached by shardscaler: no operator.prometheus.io/name, retained, the detached labels, and the
// deadline in operator.prometheus.io/deletion-timestamp ("" leaves the annotation out).
nlohmann::json retainedShard(int32_t index, const std::string& deadline,
                             const ShardShape& shape = {});

}  // namespace shardscaler::test_objects
