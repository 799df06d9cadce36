// A Prometheus or PrometheusAgent as the Prometheus Operator's users and the operator leave it,
// as JSON. Test-only: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/planner/naming.h"
#include "shardscaler/test_objects/names.h"

namespace shardscaler::test_objects {

// Each string left empty leaves its field out.
struct TargetShape {
  planner::TargetKind kind = planner::TargetKind::Prometheus;
  std::string ns{kNamespace};
  std::string name{kTargetName};
  std::string uid{kTargetUid};
  std::string resource_version = "1001";
  std::optional<int64_t> generation = 7;
  std::string claimed_by{kShardSetName};  // the shardscaler.io/claimed-by annotation
  int64_t replicas = 2;
};

// spec: `shards` (nullopt: unset) and replicas, then `spec_patch` merged in (RFC 7386).
nlohmann::json targetJson(std::optional<int64_t> shards,
                          const nlohmann::json& spec_patch = nlohmann::json::object(),
                          const TargetShape& shape = {});

// Paused (by ShardSet `who` when not empty: the paused-by annotation); the operator's status
// acknowledges the pause at generation 7.
nlohmann::json pausedBy(nlohmann::json target, const std::string& who);

}  // namespace shardscaler::test_objects
